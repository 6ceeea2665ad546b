"""Job arguments in HTCondor's two syntaxes.

Old syntax (a value not wrapped in double quotes) is split on blanks, ``\\"`` is a
literal quote, and the result goes to ``Args``. New syntax (``"..."``) uses single
quotes to group, doubled quotes to escape, and goes to ``Arguments``, written back
with the least quoting that reads back the same.
"""

from __future__ import annotations

import re

from schedd.submit.errors import SubmitError

_BLANKS = " \t"


def is_new_syntax(value: str) -> bool:
    """Whether a value uses the new (double-quoted) syntax."""
    return value.strip().startswith('"')


def split_old(value: str) -> list[str]:
    """Arguments in the old syntax; an unescaped double quote is an error."""
    words: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(value):
        ch = value[i]
        if ch == "\\" and value.startswith('\\"', i):
            current.append('"')
            i += 2
            continue
        if ch == '"':
            raise SubmitError(f"{value!r}: a double quote in old-syntax arguments must be "
                              'written \\" (or wrap the whole value in double quotes to use '
                              "the new syntax)")
        if ch in _BLANKS:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
        i += 1
    if current:
        words.append("".join(current))
    return words


def unwrap_new(value: str) -> str:
    """The text between the outer double quotes of a new-syntax value."""
    text = value.strip()
    i = 1
    while i < len(text):
        if text[i] == '"':
            if text.startswith('""', i):
                i += 2
                continue
            if text[i + 1:].strip():
                raise SubmitError(f"{value!r}: nothing may follow the closing double quote")
            return text[1:i]
        i += 1
    raise SubmitError(f"{value!r}: the opening double quote is never closed")


def split_new(inner: str) -> list[str]:
    """Words of the new syntax (the text inside the outer double quotes)."""
    words: list[str] = []
    current: list[str] = []
    started = False
    i = 0
    while i < len(inner):
        ch = inner[i]
        if inner.startswith('""', i):
            current.append('"')
            started = True
            i += 2
        elif ch == "'":
            started = True
            i += 1
            while True:
                if i >= len(inner):
                    raise SubmitError(f"{inner!r}: a single quote is never closed")
                if inner.startswith("''", i):
                    current.append("'")
                    i += 2
                elif inner[i] == "'":
                    i += 1
                    break
                else:
                    current.append(inner[i])
                    i += 1
        elif ch in _BLANKS:
            if started:
                words.append("".join(current))
                current, started = [], False
            i += 1
        else:
            current.append(ch)
            started = True
            i += 1
    if started:
        words.append("".join(current))
    return words


_NEEDS_QUOTES = re.compile(r"[ \t']+")


def quote_new(word: str) -> str:
    """One word in the new syntax with the least quoting: runs of blanks and single
    quotes are wrapped in single quotes, a quote inside doubled."""
    if word == "":
        return "''"
    return _NEEDS_QUOTES.sub(lambda m: "'" + m.group(0).replace("'", "''") + "'", word)


def join_new(words: list[str]) -> str:
    return " ".join(quote_new(w) for w in words)


def job_arguments(arguments: str | None, arguments2: str | None,
                  allow_v1: bool) -> tuple[str, str]:
    """The attribute (``Args`` or ``Arguments``) and its value for the job ad."""
    if arguments is not None and arguments2 is not None and not allow_v1:
        raise SubmitError("both 'arguments' and 'arguments2' are given; keep one, or set "
                          "allow_arguments_v1 = true", command="arguments2")
    if arguments2 is not None:
        text = arguments2.strip()
        inner = unwrap_new(text) if is_new_syntax(text) else text
        return "Arguments", join_new(split_new(inner))
    text = (arguments or "").strip()
    if not text:
        return "Arguments", ""
    if is_new_syntax(text):
        return "Arguments", join_new(split_new(unwrap_new(text)))
    return "Args", " ".join(split_old(text))
