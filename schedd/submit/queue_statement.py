"""The ``queue`` statement in all its forms, and the item rows it expands to.

``queue [count] [vars] [in|from|matching [files|dirs]] [slice] [items]``: items come from
an inline list, a file, a command's output (``cmd |``) or a glob in the submit
directory. A slice picks items by position but each keeps its index for
``$(ItemIndex)``/``$(Row)``.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Iterator

import attrs

from schedd.submit.errors import SubmitError, client_only
from schedd.submit.host_commands import command_output
from schedd.submit.values import long_param

_MODE = re.compile(r"(?<![\w.])(in|from|matching)(?![\w.])", re.I)
_VARS_AT_END = re.compile(r"((?:[A-Za-z_][\w.]*)(?:\s*,\s*[A-Za-z_][\w.]*|\s+[A-Za-z_][\w.]*)*)\s*$")
_SLICE = re.compile(r"^\s*\[([^\]]*)\]")


@attrs.frozen
class QueueSpec:
    """A parsed ``queue`` statement (after macro expansion)."""

    count: int = 1
    variables: tuple[str, ...] = ("Item",)
    mode: str | None = None  # None (count only), "in", "from", "matching"
    kind: str = ""  # for matching: "", "files" or "dirs"
    slice: tuple[int | None, int | None, int | None] | None = None
    source: str = ""  # the item text: an inline list, a file name, "cmd |" or patterns
    inline: bool = False  # items written in parentheses in the description


@attrs.frozen
class Row:
    """One item: its position in the full list and the values of the item variables."""

    index: int
    values: tuple[tuple[str, str], ...]


#: HTCondor's largest count (an int).
MAX_COUNT = (1 << 31) - 2


def evaluate_count(text: str) -> int:
    """The proc count of ``queue N``, read as HTCondor's ``string_is_long_param``
    reads it (an expression; a real is truncated, so ``queue 1.5`` is 1), not negative."""
    stripped = text.strip()
    if not stripped:
        return 1
    try:
        if "#" in stripped:
            raise ValueError("a comment may not follow the count")
        value = long_param(stripped)
    except ValueError:
        raise SubmitError(f"{stripped!r} is not a count: expected a number or an integer "
                          "expression such as 2*3 (nothing may follow it on the line)",
                          command="queue") from None
    if value > MAX_COUNT:
        raise SubmitError(f"the count {stripped!r} is larger than {MAX_COUNT}", command="queue")
    if value < 0:
        raise SubmitError(f"the count {stripped!r} is negative", command="queue")
    return int(value)


def parse_queue_args(text: str) -> QueueSpec:
    """Parse the (macro-expanded) text after ``queue``."""
    mode = _MODE.search(text)
    if not mode:
        if "(" in text:
            raise SubmitError(f"cannot read {text.strip()!r}: an item list needs "
                              "'in', 'from' or 'matching' before it", command="queue")
        return QueueSpec(count=evaluate_count(text))
    head, rest = text[: mode.start()], text[mode.end():]
    variables: tuple[str, ...] = ("Item",)
    names = _VARS_AT_END.search(head)
    if names and names.group(1).strip():
        variables = tuple(v for v in re.split(r"[\s,]+", names.group(1).strip()) if v)
        head = head[: names.start()]
    count = evaluate_count(head)
    kind = ""
    word = mode.group(1).lower()
    if word == "matching":
        m = re.match(r"\s*(files|dirs)(?![\w.])", rest, re.I)
        if m:
            kind, rest = m.group(1).lower(), rest[m.end():]
    selection = None
    s = _SLICE.match(rest)
    if s:
        selection = parse_slice(s.group(1))
        rest = rest[s.end():]
    source = rest.strip()
    inline = source.startswith("(")
    if inline:
        if not source.endswith(")"):
            raise SubmitError("the item list opened with '(' has no closing ')' "
                              "(nothing may follow it)", command="queue")
        source = source[1:-1]
    elif not source:
        raise SubmitError(f"'queue ... {word}' needs items after it", command="queue")
    return QueueSpec(count=count, variables=variables, mode=word, kind=kind,
                     slice=selection, source=source, inline=inline)


def parse_slice(text: str) -> tuple[int | None, int | None, int | None]:
    """``start:stop:step`` with Python's meaning; the step must be positive."""
    parts = text.split(":")
    if len(parts) > 3:
        raise SubmitError(f"[{text}] is not a slice: expected [start:stop:step]", command="queue")
    values: list[int | None] = []
    for p in parts + [""] * (3 - len(parts)):
        p = p.strip()
        try:
            values.append(int(p) if p else None)
        except ValueError:
            raise SubmitError(f"[{text}] is not a slice: {p!r} is not an integer",
                              command="queue") from None
    if values[2] is not None and values[2] <= 0:
        raise SubmitError(f"[{text}]: the slice step must be positive", command="queue")
    return values[0], values[1], values[2]


def _split_in_items(source: str) -> list[str]:
    items = []
    for line in source.splitlines():
        if line.strip().startswith("#"):
            continue
        if '"' in line or "'" in line:
            raise SubmitError(f"queue items may not contain quotes: {line.strip()!r}",
                              command="queue")
        items.extend(x for x in re.split(r"[\s,]+", line) if x)
    return items


def split_row(line: str, count: int) -> list[str]:
    """Split one ``from`` line over ``count`` variables: commas or blanks separate the
    values, the last variable takes the rest of the line."""
    values = []
    rest = line.strip()
    for _ in range(count - 1):
        if not rest:
            break
        m = re.match(r"([^\s,]*)[\s,]*", rest)
        values.append(m.group(1))
        rest = rest[m.end():]
    if rest or len(values) < count:
        values.append(rest.strip())
    return values + [""] * (count - len(values))


def _lines_of_file(name: str, cwd: str) -> list[str]:
    try:
        with open(os.path.join(cwd, name), encoding="utf-8", errors="surrogateescape",
                  newline="") as f:
            text = f.read()
    except OSError as exc:
        raise SubmitError(f"cannot read the item file {name!r}: {exc.strerror}",
                          command="queue") from None
    return _split_lines(text)


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _lines_of_command(command: str, cwd: str) -> list[str]:
    return _split_lines(command_output(command, cwd, what="queue ... from cmd |", submit_command="queue"))


def _matching(patterns: str, kind: str, cwd: str) -> list[str]:
    found: list[str] = []
    for pattern in (p for p in re.split(r"[\s,]+", patterns) if p):
        names = []
        for path in glob.glob(pattern, root_dir=cwd):
            is_dir = os.path.isdir(os.path.join(cwd, path))
            if kind == "files" and is_dir or kind == "dirs" and not is_dir:
                continue
            names.append(path + "/" if is_dir and not kind == "files" else path)
        found.extend(sorted(names))
    return found


def reads_host(spec: QueueSpec) -> bool:
    """True when the statement's items come from a file, a command or a glob of the
    submitting machine, so only that machine may expand it."""
    return spec.mode == "matching" or spec.mode == "from" and not spec.inline


def refuse_host_items(spec: QueueSpec) -> None:
    """Raise the schedd's refusal of a statement whose items are on the client's machine.

    Raises:
        SubmitError: items from a file, a command or a glob.
    """
    if spec.mode == "matching":
        raise client_only(f"queue ... matching {spec.source}", "lists files")
    if spec.mode == "from" and not spec.inline:
        if spec.source.endswith("|"):
            raise client_only(f"queue ... from {spec.source}", "runs a command")
        raise client_only(f"queue ... from {spec.source}", "reads a file")


def item_rows(spec: QueueSpec, cwd: str, *, self_contained: bool = False) -> list[Row] | None:
    """The selected item rows of a queue statement, or None for a count-only queue.

    An empty list (an unmatched pattern) gives one row of empty values. In the
    schedd's ``self_contained`` mode, items from a file, command or glob are refused."""
    if self_contained:
        refuse_host_items(spec)
    if spec.mode is None:
        return None
    names = spec.variables
    rows: list[tuple[str, ...]]
    if spec.mode == "in":
        rows = [(item,) + ("",) * (len(names) - 1) for item in _split_in_items(spec.source)]
    elif spec.mode == "matching":
        rows = [(item,) + ("",) * (len(names) - 1)
                for item in _matching(spec.source, spec.kind, cwd)]
    else:
        rows = _from_rows(spec, cwd)
    if not rows:
        rows = [("",) * len(names)]
    indexed = list(enumerate(rows))
    if spec.slice is not None:
        indexed = indexed[slice(*spec.slice)]
    return [Row(i, tuple(zip(names, values))) for i, values in indexed]


def _from_rows(spec: QueueSpec, cwd: str) -> list[tuple[str, ...]]:
    if spec.inline:
        lines = [line for line in spec.source.splitlines()
                 if line.strip() and not line.strip().startswith("#")]
    elif spec.source.endswith("|"):
        lines = _lines_of_command(spec.source[:-1].strip(), cwd)
    else:
        lines = _lines_of_file(spec.source, cwd)
    rows = []
    previous = ("",) * len(spec.variables)
    for line in lines:
        if not line.strip():
            rows.append(previous)
            continue
        previous = tuple(split_row(line, len(spec.variables)))
        rows.append(previous)
    return rows


def proc_count(spec: QueueSpec, rows: list[Row] | None) -> int:
    """How many procs the statement makes: its count times its items."""
    return max(spec.count, 1) * (1 if rows is None else len(rows))


def proc_rows(spec: QueueSpec, rows: list[Row] | None) -> Iterator[tuple[int, Row | None]]:
    """(step, row) for every proc the statement makes from its ``rows``, in proc order."""
    count = max(spec.count, 1)
    if rows is None:
        for step in range(count):
            yield step, None
        return
    for row in rows:
        for step in range(count):
            yield step, row
