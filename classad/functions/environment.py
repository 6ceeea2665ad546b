"""Job argument and environment strings: ``argsToList``, ``listToArgs``, ``envV1ToV2``,
``mergeEnvironment``.

HTCondor's "V2" syntax separates items by whitespace; a single-quoted section keeps
whitespace, and inside it ``''`` stands for one quote. The old "V1" syntax has no
quoting: arguments are split at whitespace and environment entries at ``;``.
"""

from __future__ import annotations

from classad import limits
from classad.functions import builtin
from classad.values import ERROR, UNDEFINED

_SPACE = " \t\n\r\v\f"
_QUOTED_CHARS = " \t\n\r'"


def parse_v2_words(text: str) -> list[str] | None:
    """The words of a V2 string, or None when a quoted section is not closed."""
    words: list[str] = []
    current: list[str] | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in _SPACE:
            if current is not None:
                words.append("".join(current))
                current = None
            i += 1
            continue
        current = [] if current is None else current
        if ch != "'":
            current.append(ch)
            i += 1
            continue
        i = _read_quoted(text, i + 1, current)
        if i < 0:
            return None
    if current is not None:
        words.append("".join(current))
    return words


def _read_quoted(text: str, i: int, out: list[str]) -> int:
    """Read a quoted section starting after its opening quote; the index after the
    closing quote, or -1 if there is none."""
    while i < len(text):
        if text[i] == "'":
            if text[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return i + 1
        out.append(text[i])
        i += 1
    return -1


def quote_v2_word(word: str) -> str:
    """One word in V2 syntax: whitespace and quotes go inside single quotes (a quote
    doubled), adjacent ones sharing one quoted section; an empty word is ``''``."""
    if not word:
        return "''"
    out: list[str] = []
    quoting = False
    for ch in word:
        special = ch in _QUOTED_CHARS
        if special and not quoting:
            out.append("'")
        elif not special and quoting:
            out.append("'")
        quoting = special
        out.append("''" if ch == "'" else ch)
    if quoting:
        out.append("'")
    return "".join(out)


def _version(v: object) -> int | None:
    return v if type(v) is int and v in (1, 2) else None


@builtin("argsToList", 1, 2)
def args_to_list(text: object, version: object = 2) -> object:
    """The arguments of an argument string (V2 by default, V1 if asked) as a list."""
    if type(text) is not str or _version(version) is None:
        return ERROR
    words = text.split() if version == 1 else parse_v2_words(text)
    return ERROR if words is None else words


@builtin("listToArgs", 1, 2)
def list_to_args(items: object, version: object = 2) -> object:
    """A list of strings as one argument string (V2 by default)."""
    if type(items) is not list or _version(version) is None:
        return ERROR
    if any(type(item) is not str for item in items):
        return ERROR
    limits.check_length(sum(len(item) + 1 for item in items))
    if version == 1:
        if any(not item or any(c in _SPACE for c in item) for item in items):
            return ERROR
        return " ".join(items)
    return " ".join(quote_v2_word(item) for item in items)


def _entry(text: str) -> tuple[str, str] | None:
    name, eq, value = text.partition("=")
    return (name, value) if eq and name else None


def _merge_entries(env: dict, entries: list[str]) -> bool:
    for text in entries:
        pair = _entry(text)
        if pair is None:
            return False
        env[pair[0]] = pair[1]
    return True


def env_v2_text(env: dict) -> str:
    """An environment in V2 syntax, variables in name order."""
    return " ".join(quote_v2_word(f"{name}={env[name]}") for name in sorted(env))


@builtin("envV1ToV2", 1)
def env_v1_to_v2(text: object) -> object:
    """An old ``A=1;B=2`` environment in the new syntax; undefined stays undefined."""
    if text is UNDEFINED:
        return UNDEFINED
    if type(text) is not str:
        return ERROR
    env: dict = {}
    if not _merge_entries(env, [e for e in text.split(";") if e]):
        return ERROR
    return env_v2_text(env)


@builtin("mergeEnvironment", 0, None)
def merge_environment(*texts: object) -> object:
    """V2 environments merged left to right (later values win); undefined ones skipped."""
    env: dict = {}
    for text in texts:
        if text is UNDEFINED:
            continue
        if type(text) is not str:
            return ERROR
        words = parse_v2_words(text)
        if words is None or not _merge_entries(env, words):
            return ERROR
    return env_v2_text(env)
