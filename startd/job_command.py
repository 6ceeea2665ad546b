"""The job's command line and environment, read from its ad as HTCondor writes them.

``Arguments`` (new syntax: blanks separate words, single quotes group, a doubled
quote is a literal one) wins over ``Args`` (old syntax: blanks separate, ``\\"`` is
a quote). ``Environment`` (new syntax words ``NAME=VALUE``) wins over ``Env``
(old syntax, split at ``EnvDelim``, default ``;``).
"""

from __future__ import annotations

import classad
from startd.errors import StarterError

_BLANK = " \t\r\n"


def split_new_syntax(text: str, what: str = "Arguments") -> list[str]:
    """Words of new-syntax text; a value wrapped in double quotes is unwrapped first.

    Raises:
        StarterError: a single quote is not closed.
    """
    text = text.strip()
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1].replace('""', '"')
    words: list[str] = []
    word: list[str] | None = None
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if quoted:
            if text.startswith("''", i):
                word.append("'")  # type: ignore[union-attr]
                i += 2
                continue
            if ch == "'":
                quoted = False
            else:
                word.append(ch)  # type: ignore[union-attr]
        elif ch in _BLANK:
            if word is not None:
                words.append("".join(word))
                word = None
        elif ch == "'":
            word = word if word is not None else []
            quoted = True
        elif text.startswith('""', i):
            word = (word or []) + ['"']
            i += 1
        else:
            word = (word or []) + [ch]
        i += 1
    if quoted:
        raise StarterError(f"{what} = {text!r}: a single quote is never closed")
    if word is not None:
        words.append("".join(word))
    return words


def split_old_syntax(text: str) -> list[str]:
    """Words of old-syntax arguments: split at blanks, ``\\"`` is a double quote."""
    return [w.replace('\\"', '"') for w in text.split()]


def _string(ad: classad.ClassAd, attr: str) -> str | None:
    if attr not in ad:
        return None
    value = ad.eval(attr)
    if not isinstance(value, str):
        raise StarterError(f"the job's {attr} is {ad.lookup(attr)}, not a string")
    return value


def job_argv(ad: classad.ClassAd) -> list[str]:
    """The job's arguments (after the executable) from ``Arguments`` or ``Args``.

    Raises:
        StarterError: the attribute is not a string or is malformed.
    """
    new = _string(ad, "Arguments")
    if new is not None:
        return split_new_syntax(new)
    old = _string(ad, "Args")
    return split_old_syntax(old) if old else []


def job_environment(ad: classad.ClassAd) -> dict[str, str]:
    """The job's own variables from ``Environment`` or ``Env``.

    Raises:
        StarterError: an entry is not NAME=VALUE, or the attribute is not a string.
    """
    new = _string(ad, "Environment")
    if new is not None:
        entries = split_new_syntax(new, "Environment")
        attr = "Environment"
    else:
        old = _string(ad, "Env") or ""
        delim = _string(ad, "EnvDelim") or ";"
        entries = [e.strip() for e in old.split(delim) if e.strip()]
        attr = "Env"
    variables: dict[str, str] = {}
    for entry in entries:
        name, sep, value = entry.partition("=")
        if not sep or not name:
            raise StarterError(f"the job's {attr}: {entry!r} is not NAME=VALUE")
        variables[name] = value
    return variables
