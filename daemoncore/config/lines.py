"""Turn config text into logical lines: comments dropped, ``\\`` continuations joined,
and ``NAME @=TAG ... @TAG`` blocks gathered into one value."""

from __future__ import annotations

import re
from collections.abc import Iterator

import attrs

from daemoncore.config.errors import ConfigError
from daemoncore.config.references import NAME_PATTERN

_BLOCK_START = re.compile(rf"\s*({NAME_PATTERN})\s*@=\s*(\S+)\s*$")


@attrs.frozen
class LogicalLine:
    """One statement: its text, the line it starts on, and a ``@=`` block's body if any."""

    text: str
    line: int
    block: str | None = None


def logical_lines(text: str, source: str) -> Iterator[LogicalLine]:
    """Yield the statements of ``text`` (from ``source``, for error messages) in order.

    Raises:
        ConfigError: a ``@=TAG`` block is never closed by ``@TAG``.
    """
    physical = text.splitlines()
    i = 0
    while i < len(physical):
        start = i
        line = physical[i]
        i += 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        block = _BLOCK_START.match(line)
        if block:
            body, i = _read_block(physical, i, block.group(2), source, start + 1)
            yield LogicalLine(f"{block.group(1)} @={block.group(2)}", start + 1, body)
            continue
        while line.endswith("\\") and i < len(physical):
            line, i = _join(line[:-1], physical[i]), i + 1
        if line.endswith("\\"):
            line = line[:-1]
        yield LogicalLine(line.strip(), start + 1)


def _join(head: str, nxt: str) -> str:
    """Join a continued line with the next one, dropping a continued comment line."""
    if nxt.strip().startswith("#"):
        return head + "\\"
    gap = " " if nxt[:1].isspace() and not head[-1:].isspace() else ""
    return head + gap + nxt.lstrip()


def _read_block(physical: list[str], i: int, tag: str, source: str, first: int) -> tuple[str, int]:
    end_marker = "@" + tag
    body: list[str] = []
    while i < len(physical):
        if physical[i].strip() == end_marker:
            return "\n".join(body), i + 1
        body.append(physical[i])
        i += 1
    raise ConfigError(f"the value started with @={tag} is never closed: expected a line '{end_marker}'",
                      source, first)
