"""Reading a submit description: lines, continuations, comments, ``name @=TAG`` multi-line
values, ``if``/``elif``/``else``/``endif``, ``include``, and the ``queue`` statements.

The result is a :class:`Description`: the commands in the order they were given (last
assignment wins, names case-insensitive) and, for each ``queue`` statement, the commands
as they stood when it was reached.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

import attrs

from schedd.submit.errors import SubmitError, client_only
from schedd.submit.host_commands import command_output
from schedd.submit.macros import MacroScope

_ASSIGNMENT = re.compile(r"^([+]?[A-Za-z_][\w.]*)\s*=\s*(.*)$", re.S)
_MULTILINE = re.compile(r"^([+]?[A-Za-z_][\w.]*)\s*@=\s*(\S+)\s*$")
_KEYWORD = re.compile(r"^(if|elif|else|endif|include|queue)\b\s*(.*)$", re.I | re.S)
_VERSION = re.compile(r"^version\s*(==|!=|>=|<=|>|<)\s*(\d+(?:\.\d+)*)$", re.I)
_DEFINED = re.compile(r"^(!\s*)?defined\s+(\S+)$", re.I)
#: The HTCondor version whose behaviour this module reproduces (``if version ...``).
VERSION = (23, 10, 29)
_TRUE = {"true", "yes", "t", "y", "on"}
_FALSE = {"false", "no", "f", "n", "off", ""}
_MAX_INCLUDE_DEPTH = 20
_ENV_CALL = re.compile(r"(?<!\$)\$ENV\(", re.I)


@attrs.frozen
class Command:
    """One command as written: its name (first spelling), raw value and where it was set."""

    name: str
    value: str
    line: int
    file: str | None = None


@attrs.frozen
class QueueStatement:
    """A ``queue`` statement: its raw arguments (with any inline item lines) and the
    commands in effect when it was reached."""

    args: str
    line: int
    commands: Mapping[str, Command]
    file: str | None = None


@attrs.frozen
class Description:
    """A parsed submit description."""

    commands: Mapping[str, Command]
    queues: tuple[QueueStatement, ...]
    #: the files ``include`` read, in order
    includes: tuple[str, ...] = ()


def command_key(name: str) -> tuple[str, str]:
    """The case-insensitive key of a command and the name to keep: ``+Attr`` is ``MY.Attr``."""
    if name.startswith("+"):
        name = "MY." + name[1:]
    elif name[:3].lower() == "my.":
        name = "MY." + name[3:]
    return name.lower(), name


@attrs.define
class _Frame:
    # mutable: tracks one open if-block while its lines are read
    active: bool
    taken: bool
    seen_else: bool = False
    line: int = 0


class _Reader:
    """Reads lines into commands and queue statements, one file (and its includes) at a time."""

    def __init__(self, cwd: str, predefined: Mapping[str, str], environ: Mapping[str, str] | None,
                 self_contained: bool = False):
        self.cwd = cwd
        self.predefined = predefined
        self.environ = environ
        self.self_contained = self_contained
        self.commands: dict[str, Command] = {}
        self.queues: list[QueueStatement] = []
        self.frames: list[_Frame] = []
        self.includes: list[str] = []

    def active(self) -> bool:
        return all(f.active for f in self.frames)

    def read(self, text: str, file: str | None, depth: int = 0) -> None:
        lines = text.splitlines()
        if self.self_contained:
            _refuse_env(lines, file)
        i = 0
        while i < len(lines):
            number = i + 1
            line = lines[i]
            i += 1
            while line.endswith("\\"):
                line = line[:-1]
                if i >= len(lines):
                    break
                line += lines[i].lstrip()
                i += 1
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            try:
                i = self.statement(stripped, number, lines, i, file, depth)
            except SubmitError as exc:
                raise exc.located(file=file, line=number) from None

    def statement(self, text: str, number: int, lines: list[str], i: int,
                  file: str | None, depth: int) -> int:
        keyword = _KEYWORD.match(text)
        if keyword and not _ASSIGNMENT.match(text):
            word, rest = keyword.group(1).lower(), keyword.group(2).strip()
            if word in ("if", "elif", "else", "endif"):
                self.conditional(word, rest, number)
                return i
            if not self.active():
                return i
            if word == "include":
                self.include(rest, depth)
                return i
            return self.queue(rest, number, lines, i, file)
        if not self.active():
            return i
        multi = _MULTILINE.match(text)
        if multi:
            tag = "@" + multi.group(2)
            body = []
            while i < len(lines) and lines[i].strip() != tag:
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                raise SubmitError(f"multi-line value has no closing {tag} line",
                                  command=multi.group(1))
            self.assign(multi.group(1), "\n".join(body), number, file)
            return i + 1
        assignment = _ASSIGNMENT.match(text)
        if not assignment:
            # An included file may be anything the user can read: name its line, never echo it.
            shown = "this line" if file is not None else repr(text)
            raise SubmitError(f"cannot read {shown}: expected 'name = value', 'queue ...', "
                              "'include : file' or if/elif/else/endif (a continued line "
                              "needs a backslash at the end of the line before)")
        self.assign(assignment.group(1), assignment.group(2).strip(), number, file)
        return i

    def assign(self, name: str, value: str, number: int, file: str | None) -> None:
        key, keep = command_key(name)
        previous = self.commands.get(key)
        self_ref = re.compile(r"\$\(\s*" + re.escape(name.lstrip("+")) + r"\s*\)", re.I)
        if self_ref.search(value):
            before = previous.value if previous else ""
            value = self_ref.sub(lambda _m: before, value)
        if previous is not None:
            keep = previous.name
        self.commands[key] = Command(keep, value, number, file)

    def include(self, rest: str, depth: int) -> None:
        """``include : file`` reads a file; ``include : cmd |`` reads what a command
        prints (condor_submit.rst, "include"), on the submitting side only."""
        if self.self_contained:
            runs = rest.rstrip().endswith("|")
            raise client_only(f"include {rest}", "runs a command" if runs else "reads a file")
        target = rest[1:].strip() if rest.startswith(":") else rest
        target = self.scope().expand(target)
        if not target:
            raise SubmitError("include needs a file name: 'include : other.sub'")
        if depth >= _MAX_INCLUDE_DEPTH:
            raise SubmitError(f"include of {target!r} nests too deep (a file including itself?)")
        if target.endswith("|"):
            text = command_output(target[:-1], self.cwd, what="include : cmd |", submit_command="include")
            self.includes.append(target)
            self.read(text, target, depth + 1)
            return
        path = os.path.join(self.cwd, target)
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
        except OSError as exc:
            raise SubmitError(f"cannot read included file {target!r}: {exc.strerror}") from None
        self.includes.append(target)
        self.read(text, target, depth + 1)

    def queue(self, rest: str, number: int, lines: list[str], i: int, file: str | None) -> int:
        parts = [rest]
        if "(" in rest and ")" not in rest[rest.index("("):]:
            while i < len(lines):
                parts.append(lines[i])
                i += 1
                if ")" in parts[-1]:
                    break
            else:
                raise SubmitError("the item list opened with '(' has no closing ')'",
                                  command="queue")
        self.queues.append(QueueStatement("\n".join(parts), number, dict(self.commands), file))
        return i

    def scope(self) -> MacroScope:
        return MacroScope({k: c.value for k, c in self.commands.items()},
                          predefined=self.predefined, cwd=self.cwd,
                          environ=self.environ, self_contained=self.self_contained)

    def conditional(self, word: str, rest: str, number: int) -> None:
        if word == "if":
            parent = self.active()
            truth = parent and self.condition(rest)
            self.frames.append(_Frame(active=truth, taken=truth, line=number))
            return
        if not self.frames:
            raise SubmitError(f"'{word}' without an 'if' before it")
        frame = self.frames[-1]
        parent = all(f.active for f in self.frames[:-1])
        if word == "endif":
            self.frames.pop()
        elif word == "else":
            if frame.seen_else:
                raise SubmitError("a second 'else' in the same 'if'")
            frame.seen_else = True
            frame.active = parent and not frame.taken
            frame.taken = True
        else:
            if frame.seen_else:
                raise SubmitError("'elif' after 'else'")
            truth = parent and not frame.taken and self.condition(rest)
            frame.active = truth
            frame.taken = frame.taken or truth

    def condition(self, text: str) -> bool:
        expanded = self.scope().expand(text).strip()
        defined = _DEFINED.match(expanded)
        if defined:
            name = defined.group(2)
            present = self.scope().defined(name)
            return not present if defined.group(1) else present
        version = _VERSION.match(expanded)
        if version:
            return _compare_version(version.group(1), version.group(2))
        word = expanded.lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        try:
            return float(word) != 0
        except ValueError:
            raise SubmitError(f"if condition {text!r} is not something 'if' understands: "
                              "use 'defined NAME', '! defined NAME', 'version >= x.y' or a "
                              "true/false value (comparisons and && are not allowed)") from None


def _refuse_env(lines: list[str], file: str | None) -> None:
    """The schedd's refusal of any ``$ENV(...)``, used or not, at its line."""
    for number, line in enumerate(lines, 1):
        found = _ENV_CALL.search(line)
        if found and not line.lstrip().startswith("#"):
            end = line.find(")", found.end())
            call = line[found.start(): end + 1 if end >= 0 else len(line)]
            raise client_only(call, "reads the environment").located(file=file, line=number)


def _compare_version(op: str, text: str) -> bool:
    wanted = tuple(int(p) for p in text.split("."))
    ours = VERSION[: len(wanted)]
    return {"==": ours == wanted, "!=": ours != wanted, ">=": ours >= wanted,
            "<=": ours <= wanted, ">": ours > wanted, "<": ours < wanted}[op]


def parse_description(text: str, *, cwd: str | None = None, file: str | None = None,
                      predefined: Mapping[str, str] | None = None,
                      environ: Mapping[str, str] | None = None,
                      self_contained: bool = False,
                      assignments: Mapping[str, str] | None = None) -> Description:
    """Read a whole submit description; raises :class:`SubmitError` on the first problem.

    ``self_contained`` is the schedd's mode: ``include`` and ``$ENV`` are refused
    (naming the line) instead of reading a file or the environment. ``assignments``
    are ``condor_submit NAME=value file`` settings: made before the first line is
    read, so ``if``/``else`` in the file sees them and the file's own lines win."""
    reader = _Reader(cwd or os.getcwd(), predefined or {}, environ, self_contained)
    for name, value in (assignments or {}).items():
        if not _ASSIGNMENT.match(f"{name}={value}"):
            raise SubmitError(f"{name!r} is not a name a command-line assignment can set")
        reader.assign(name, value, 0, "<command line>")
    reader.read(text, file)
    if reader.frames:
        raise SubmitError("'if' has no matching 'endif'", file=file, line=reader.frames[-1].line)
    return Description(dict(reader.commands), tuple(reader.queues), tuple(reader.includes))
