"""Split a raw configuration value into literal text and ``$(NAME)`` / ``$ENV(NAME)`` references.

A value is parsed once, when it is set, so syntax errors point at the line that set
it; expansion (:mod:`daemoncore.config.expansion`) walks the parsed pieces later.
``$$(...)`` is left as it is: HTCondor expands it at match time, not in the config.
Other ``$WORD(...)`` functions are also kept verbatim.
"""

from __future__ import annotations

import re

import attrs

from daemoncore.config.errors import ConfigError

NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_.]*"
_NAME = re.compile(NAME_PATTERN)
_FUNCTION = re.compile(r"\$([A-Za-z_]+)\(")


@attrs.frozen
class MacroRef:
    """``$(NAME)`` or ``$(NAME:default)``; ``default`` is itself parsed."""

    name: str
    default: tuple | None = None


@attrs.frozen
class EnvRef:
    """``$ENV(NAME)`` or ``$ENV(NAME:default)``: an environment variable."""

    name: str
    default: tuple | None = None


Segment = str | MacroRef | EnvRef


def parse_value(text: str) -> tuple[Segment, ...]:
    """Parse ``text`` into literal strings and references, in order.

    Raises:
        ConfigError: a ``$(`` is never closed, or holds something other than a name.
    """
    segments: list[Segment] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        start = text.find("$", i)
        if start < 0:
            literal.append(text[i:])
            break
        literal.append(text[i:start])
        i, piece = _parse_dollar(text, start)
        if isinstance(piece, str):
            literal.append(piece)
        else:
            segments += _flush(literal)
            segments.append(piece)
    segments += _flush(literal)
    return tuple(segments)


def referenced_names(segments: tuple[Segment, ...]) -> set[str]:
    """Every macro name (upper case) a parsed value refers to, defaults included."""
    names: set[str] = set()
    for seg in segments:
        if isinstance(seg, MacroRef):
            names.add(seg.name.upper())
        if isinstance(seg, (MacroRef, EnvRef)) and seg.default:
            names |= referenced_names(seg.default)
    return names


def _flush(literal: list[str]) -> list[Segment]:
    text = "".join(literal)
    literal.clear()
    return [text] if text else []


def _parse_dollar(text: str, start: int) -> tuple[int, Segment]:
    """Parse the reference that starts at ``text[start] == "$"``; return (next index, piece)."""
    if text.startswith("$$(", start):
        end = _closing_paren(text, start + 2)
        return end + 1, text[start : end + 1]
    if text.startswith("$(", start):
        end = _closing_paren(text, start + 1)
        name, default = _split_body(text[start + 2 : end], text[start : end + 1])
        return end + 1, MacroRef(name, default)
    function = _FUNCTION.match(text, start)
    if function is None:
        return start + 1, "$"
    end = _closing_paren(text, function.end() - 1)
    if function.group(1).upper() != "ENV":
        return end + 1, text[start : end + 1]
    name, default = _split_body(text[function.end() : end], text[start : end + 1])
    return end + 1, EnvRef(name, default)


def _closing_paren(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ConfigError(f"unclosed reference {text[open_at - 1:]!r}: expected a closing ')'")


def _split_body(body: str, whole: str) -> tuple[str, tuple[Segment, ...] | None]:
    name, colon, default = body.partition(":")
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise ConfigError(f"bad reference {whole!r}: expected a name such as $(LOCAL_DIR)")
    return name, parse_value(default) if colon else None
