"""Replacing a submit description's queue statements: what ``Schedd.submit(count=...,
queue=..., itemdata=...)``, ``roost submit -queue`` and the schedd's submit route do
to a description before expanding it. Pure text, so a client can use it without the
schedd's queue modules."""

from __future__ import annotations


def with_queue_args(description: str, queue_args: str) -> str:
    """``description`` with its queue statements (and their inline item lines)
    replaced by one with ``queue_args``."""
    kept: list[str] = []
    lines = iter(description.splitlines())
    for line in lines:
        if not is_queue_line(line):
            kept.append(line)
        elif "(" in line and ")" not in line[line.index("("):]:
            next((item for item in lines if ")" in item), None)
    return "\n".join(kept) + f"\nqueue {queue_args}\n"


def is_queue_line(line: str) -> bool:
    """Whether ``line`` is a ``queue`` statement (not a macro named queue being set)."""
    word = line.strip().split(None, 1)
    return bool(word) and word[0].lower() == "queue" and not line.strip()[5:].lstrip().startswith("=")
