"""Read config text statement by statement into a :class:`MacroTable`.

The reader follows HTCondor's order of events: ``if`` tests and ``include`` paths
are expanded with what has been set so far, while ordinary values stay raw until
lookup. Each file keeps its own ``if`` nesting and must close it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

import attrs

from daemoncore.config.conditions import evaluate_condition
from daemoncore.config.errors import ConfigError
from daemoncore.config.expansion import Expander
from daemoncore.config.lines import LogicalLine, logical_lines
from daemoncore.config.origin import Origin
from daemoncore.config.references import NAME_PATTERN, parse_value
from daemoncore.config.table import MacroTable
from daemoncore.config.templates import template_text

MAX_INCLUDE_DEPTH = 20
EXPECTED_STATEMENT = ("expected 'NAME = value', 'include : FILE', 'use CATEGORY : NAME' "
                      "or if/elif/else/endif")

_ASSIGN = re.compile(rf"({NAME_PATTERN})\s*=(.*)", re.DOTALL)
_INCLUDE = re.compile(r"include(\s+\w+)*\s*:(.*)", re.IGNORECASE)
_USE = re.compile(r"use\s+(\w+)\s*:(.*)", re.IGNORECASE)
_CONTROL = re.compile(r"(if|elif|else|endif)\b(.*)", re.IGNORECASE)

#: reads a file's text; raises OSError (FileNotFoundError when missing)
FileReader = Callable[[str], str]


def read_text_file(path: str) -> str:
    """Read a config file as UTF-8 text."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@attrs.define
class _Branch:
    """One open ``if``: whether its parent is live, whether a branch was taken yet."""

    # mutable: elif/else move it along
    line: int
    parent_active: bool
    active: bool
    taken: bool
    seen_else: bool = False


class ConfigReader:
    """Feeds config text into ``table``; ``read_file`` opens included files; ``version``
    gives the version ``if version >= X.Y`` compares with, asked only when a line tests it."""

    def __init__(self, table: MacroTable, env: Mapping[str, str], version: Callable[[], str],
                 read_file: FileReader = read_text_file) -> None:
        self.table = table
        self.env = env
        self.version = version
        self.read_file = read_file
        self.sources: list[str] = []
        self._include_stack: list[str] = []

    def read_path(self, path: str, *, if_exists: bool = False) -> None:
        """Read the config file at ``path``.

        Raises:
            ConfigError: the file cannot be read (unless ``if_exists`` and it is missing),
                or it has an error.
        """
        real = os.path.realpath(path)
        if real in self._include_stack:
            raise ConfigError(f"{path} includes itself")
        if len(self._include_stack) >= MAX_INCLUDE_DEPTH:
            raise ConfigError(f"includes nested deeper than {MAX_INCLUDE_DEPTH} at {path}")
        try:
            text = self.read_file(path)
        except FileNotFoundError:
            if if_exists:
                return
            raise ConfigError(f"config file {path} does not exist") from None
        except (OSError, UnicodeDecodeError) as err:
            raise ConfigError(f"cannot read config file {path}: {err}") from None
        self.sources.append(path)
        self._include_stack.append(real)
        try:
            self.read_text(text, path)
        finally:
            self._include_stack.pop()

    def read_text(self, text: str, source: str, via: str | None = None, at_line: int | None = None) -> None:
        """Read config ``text`` named ``source``; template text passes its ``use`` line as ``at_line``.

        Raises:
            ConfigError: a syntax error or bad ``if``/``include``/``use``, naming file and line.
        """
        branches: list[_Branch] = []
        for line in logical_lines(text, source):
            origin = Origin(source, at_line if at_line is not None else line.line, via)
            try:
                self._statement(line, origin, branches)
            except ConfigError as err:
                if err.source is not None:
                    raise
                raise ConfigError(err.reason, origin.source, origin.line) from None
        if branches:
            raise ConfigError("this 'if' is never closed: expected 'endif' before the end of the file",
                              source, at_line or branches[-1].line)

    def _statement(self, line: LogicalLine, origin: Origin, branches: list[_Branch]) -> None:
        control = _CONTROL.fullmatch(line.text) if line.block is None else None
        if control and not control.group(2).lstrip().startswith("="):
            self._control(control.group(1).lower(), control.group(2), line.line, branches)
            return
        if branches and not branches[-1].active:
            return
        if line.block is not None:
            self.table.set(line.text.split("@=")[0].strip(), line.block, origin)
        elif match := _INCLUDE.fullmatch(line.text):
            self._include(match.group(1), match.group(2), origin)
        elif match := _USE.fullmatch(line.text):
            self._use(match.group(1), match.group(2), origin)
        elif match := _ASSIGN.fullmatch(line.text):
            self.table.set(match.group(1), match.group(2).strip(), origin)
        else:
            raise ConfigError(f"{EXPECTED_STATEMENT}; found {line.text!r}")

    def _control(self, word: str, rest: str, line: int, branches: list[_Branch]) -> None:
        rest = rest.strip()
        if word == "if":
            live = not branches or branches[-1].active
            taken = live and self._decide(rest, word)
            branches.append(_Branch(line, live, taken, taken))
            return
        if not branches:
            raise ConfigError(f"'{word}' without an open 'if'")
        branch = branches[-1]
        if word == "endif":
            branches.pop()
        elif branch.seen_else:
            raise ConfigError(f"'{word}' after 'else' (the 'if' is at line {branch.line})")
        elif word == "else":
            branch.seen_else = True
            branch.active = branch.parent_active and not branch.taken
        else:
            branch.active = branch.parent_active and not branch.taken and self._decide(rest, word)
            branch.taken = branch.taken or branch.active

    def _decide(self, test: str, word: str) -> bool:
        if not test:
            raise ConfigError(f"'{word}' needs a test: 'defined NAME', 'version >= X.Y' or true/false")
        return evaluate_condition(self._expand_now(test), self._defined_now, self.version)

    def _include(self, modifiers: str | None, target: str, origin: Origin) -> None:
        words = (modifiers or "").lower().split()
        if "command" in words:
            raise ConfigError("'include command' is not supported: Roost never runs programs from config")
        if any(w != "ifexist" for w in words):
            raise ConfigError(f"unknown include option {modifiers.strip()!r}: expected 'include ifexist : FILE'")
        path = self._expand_now(target).strip()
        if not path:
            raise ConfigError("include needs a file: expected 'include : FILE'")
        if not os.path.isabs(path) and os.path.isfile(origin.source):
            path = os.path.join(os.path.dirname(origin.source), path)
        self.read_path(path, if_exists="ifexist" in words)

    def _use(self, category: str, names: str, origin: Origin) -> None:
        for name in (n for n in re.split(r"[\s,]+", names.strip()) if n):
            text = template_text(category, name)
            self.read_text(text, origin.source, f"use {category.upper()}:{name}", origin.line)

    def _expand_now(self, text: str) -> str:
        """Expand ``text`` with the values set so far (for ``if`` tests and ``include`` paths)."""
        return Expander(self.table.segments, self.env).expand(parse_value(text))

    def _defined_now(self, name: str) -> bool:
        value = Expander(self.table.segments, self.env).expand_name(name)
        return bool(value)
