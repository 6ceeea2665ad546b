"""Expanding a queue statement into a cluster ad plus, per proc, only what differs.

The job ad is built by an ordered list of *rules*. Each rule reads commands (expanded
for the proc at hand) and attributes set by earlier rules, and sets attributes. While
proc 0 is built every read is recorded; for every later proc only the rules that read
a command whose expansion depends on per-proc macros (``$(Process)``, ``$(Item)``, ...),
or an attribute that changed for this proc, run again. ``queue 100000`` with
per-proc arguments therefore re-runs one rule per proc, not all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable, Iterable, Iterator, Mapping

import attrs

from schedd.submit.description import Command
from schedd.submit.errors import SubmitError
from schedd.submit.macros import MacroScope

DELETED = object()  # marks an attribute a proc does not have although proc 0 has it


class RuleReader:
    """What one rule sees for one proc: expanded commands, attributes so far, and
    where its own attributes go."""

    def __init__(self, proc: "ProcState", attrs_so_far: Callable[[str], object]):
        self._proc = proc
        self._attrs = attrs_so_far
        self.command_reads: set[str] = set()
        self.attr_reads: set[str] = set()
        self.writes: dict[str, tuple[str, object]] = {}

    def get(self, name: str) -> str | None:
        """The expanded value of command ``name``, or None when it is not given."""
        key = name.lower()
        self.command_reads.add(key)
        return self._proc.expanded(key)

    def line_of(self, name: str) -> Command | None:
        return self._proc.commands.get(name.lower())

    def keys(self) -> Iterable[str]:
        """Every command key given (the set is the same for every proc)."""
        return self._proc.commands.keys()

    def attr(self, name: str) -> object:
        """An attribute set by an earlier rule (None when unset)."""
        key = name.lower()
        self.attr_reads.add(key)
        if key in self.writes:
            return self.writes[key][1]
        return self._attrs(key)

    def __setitem__(self, name: str, value: object) -> None:
        self.writes[name.lower()] = (name, value)

    def delete(self, name: str) -> None:
        self.writes[name.lower()] = (name, DELETED)

    @property
    def context(self) -> "BuildContext":
        return self._proc.context


@attrs.frozen
class BuildContext:
    """What the rules need besides commands: the submit directory, the submitting
    user, the environment to import from, the host and the time of submission."""

    cwd: str
    owner: str | None
    environ: Mapping[str, str]
    predefined: Mapping[str, str]
    #: the schedd's mode: no file, command or environment of the host is consulted
    self_contained: bool = False
    #: in that mode, file sizes (KiB by absolute path) the submitting client measured
    file_sizes: Mapping[str, int] = attrs.field(factory=dict)


class ProcState:
    """Expanded command values for one proc, and which commands depend on the proc."""

    def __init__(self, commands: Mapping[str, Command], raw: Mapping[str, str],
                 live: Mapping[str, str], items: Mapping[str, str], context: BuildContext,
                 per_proc: set[str], shared: dict[str, str | None]):
        self.commands = commands
        self.raw = raw
        self.live = live
        self.items = items
        self.context = context
        self.per_proc = per_proc
        self.shared = shared
        self.mine: dict[str, str | None] = {}

    def expanded(self, key: str) -> str | None:
        """A command's value for this proc. A queue loop variable named like a
        command (``queue input, arguments from ...``) is that command for its row,
        as in HTCondor, where loop variables are set into the submit hash."""
        if key in self.mine:
            return self.mine[key]
        if key in self.items:
            self.per_proc.add(key)
            self.mine[key] = self._expand(key, self.items[key])
            return self.mine[key]
        if key in self.shared and key not in self.per_proc:
            return self.shared[key]
        raw = self.raw.get(key)
        if raw is None:
            self.shared[key] = None
            return None
        return self._expand(key, raw)

    def _expand(self, key: str, raw: str) -> str:
        scope = MacroScope(self.raw, live=self.live, items=self.items,
                           predefined=self.context.predefined, cwd=self.context.cwd,
                           environ=self.context.environ,
                           self_contained=self.context.self_contained)
        try:
            value = scope.expand(raw)
        except SubmitError as exc:
            command = self.commands.get(key)
            if command is None:
                raise exc.located(command=key) from None
            raise exc.located(file=command.file, line=command.line, command=command.name) from None
        if key in self.items:
            return value
        if scope.touched:
            self.per_proc.add(key)
            self.mine[key] = value
        else:
            self.shared[key] = value
        return value


Rule = Callable[[RuleReader], None]


# Mutable: filled in proc by proc while the queue statement expands.
class ProcDiffs(Sequence):
    """Each proc's differences from its cluster, in proc order: as made for a proc a
    rule looked at, and made only when read for a proc that differs in nothing but its
    ProcId (:meth:`add_plain`), so a plain ``queue 100000`` holds no 100,000 dicts."""

    def __init__(self, diffs: Iterable[dict] = ()) -> None:
        self._made: dict[int, dict[str, tuple[str, object]]] = dict(enumerate(diffs))
        self._count = len(self._made)
        #: The ProcId of index 0, known once a plain proc is added (procs are numbered on).
        self._first_proc = 0

    def append(self, diff: dict[str, tuple[str, object]]) -> None:
        """Add a proc with these differences."""
        self._made[self._count] = diff
        self._count += 1

    def add_plain(self, proc_ids: range) -> None:
        """Add procs differing only in their ProcId, numbered on from the procs before."""
        if proc_ids:
            self._first_proc = proc_ids.start - self._count
            self._count += len(proc_ids)

    def is_plain(self, index: int) -> bool:
        """Whether proc ``index`` differs from its cluster in nothing but its ProcId."""
        return index not in self._made

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(f"proc index {index} out of range for {self._count} procs")
        made = self._made.get(index)
        return made if made is not None else {"procid": ("ProcId", self._first_proc + index)}

    def __iter__(self) -> Iterator[dict[str, tuple[str, object]]]:
        for index in range(self._count):
            made = self._made.get(index)
            yield made if made is not None else {"procid": ("ProcId", self._first_proc + index)}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __repr__(self) -> str:
        return f"ProcDiffs({list(self)!r})"


@attrs.define
class ExpandedCluster:
    """A cluster ad and, per proc, the attributes that differ from it."""

    # mutable: filled in proc by proc while the queue statement expands
    cluster: dict[str, tuple[str, object]]
    procs: ProcDiffs = attrs.field(factory=ProcDiffs, converter=lambda diffs: diffs if isinstance(
        diffs, ProcDiffs) else ProcDiffs(diffs))

    def proc_attrs(self, index: int) -> dict[str, tuple[str, object]]:
        """The complete attributes of proc ``index`` (cluster plus differences)."""
        merged = dict(self.cluster)
        for key, entry in self.procs[index].items():
            if entry[1] is DELETED:
                merged.pop(key, None)
            else:
                merged[key] = entry
        return merged


class ClusterBuilder:
    """Runs the rules for proc 0, then only the affected rules for each later proc."""

    def __init__(self, rules: list[Rule], commands: Mapping[str, Command], context: BuildContext):
        self.rules = rules
        self.commands = commands
        self.raw = {k: c.value for k, c in commands.items()}
        self.context = context
        self.per_proc: set[str] = set()
        self.shared: dict[str, str | None] = {}
        self.command_deps: list[set[str]] = [set() for _ in rules]
        self.attr_deps: list[set[str]] = [set() for _ in rules]
        self.writer: dict[str, int] = {}
        self.wrote: list[set[str]] = [set() for _ in rules]
        self.result: ExpandedCluster | None = None

    def add_proc(self, live: Mapping[str, str], items: Mapping[str, str],
                 fixed: Mapping[str, object]) -> None:
        """Expand one more proc; ``fixed`` holds attributes set outside the rules (ProcId)."""
        state = ProcState(self.commands, self.raw, live, items, self.context,
                          self.per_proc, self.shared)
        if self.result is None:
            self.result = ExpandedCluster(self._first(state))
            self.result.procs.append({k.lower(): (k, v) for k, v in fixed.items()})
            return
        diff = self._again(state)
        for k, v in fixed.items():
            diff[k.lower()] = (k, v)
        self.result.procs.append(diff)

    def reads_procs(self, items: Mapping[str, str]) -> bool:
        """Whether a proc with these items may differ from the cluster in more than what
        :meth:`add_proc` is given as fixed: always for proc 0, else only when a rule
        read a per-proc macro or the proc has items of its own (otherwise its live
        macros need not even be made)."""
        return self.result is None or bool(self.per_proc) or bool(items)

    def add_plain_procs(self, proc_ids: range) -> None:
        """Add procs whose only difference from the cluster is their ProcId (call only
        when :meth:`reads_procs` is false for them)."""
        self.result.procs.add_plain(proc_ids)

    def _run(self, rule: Rule, state: ProcState, so_far: Callable[[str], object]) -> RuleReader:
        """Run one rule, recording what it read; errors get the command's line."""
        i = self.rules.index(rule)
        reader = RuleReader(state, so_far)
        try:
            rule(reader)
        except SubmitError as exc:
            command = self.commands.get((exc.command or "").lower())
            if command is None or exc.line is not None:
                raise
            raise exc.located(file=command.file, line=command.line, command=command.name) from None
        self.command_deps[i] |= reader.command_reads
        self.attr_deps[i] |= reader.attr_reads
        return reader

    def _first(self, state: ProcState) -> dict[str, tuple[str, object]]:
        ad: dict[str, tuple[str, object]] = {}

        def so_far(key: str) -> object:
            entry = ad.get(key)
            return None if entry is None or entry[1] is DELETED else entry[1]

        for i, rule in enumerate(self.rules):
            reader = self._run(rule, state, so_far)
            for key, entry in reader.writes.items():
                ad[key] = entry
                self.writer[key] = i
                self.wrote[i].add(key)
        return {k: v for k, v in ad.items() if v[1] is not DELETED}

    def _again(self, state: ProcState) -> dict[str, tuple[str, object]]:
        cluster = self.result.cluster
        changed: dict[str, tuple[str, object]] = {}
        if not self.per_proc:
            return changed

        def so_far(key: str) -> object:
            entry = changed.get(key) or cluster.get(key)
            return None if entry is None or entry[1] is DELETED else entry[1]

        for i, rule in enumerate(self.rules):
            if not (self.command_deps[i] & self.per_proc or self.attr_deps[i] & changed.keys()):
                continue
            reader = self._run(rule, state, so_far)
            for key in self.wrote[i] | reader.writes.keys():
                if self.writer.get(key, i) > i:
                    continue
                entry = reader.writes.get(key, (key, DELETED))
                base = cluster.get(key)
                if base is not None and _same(base[1], entry[1]):
                    changed.pop(key, None)
                elif base is None and entry[1] is DELETED:
                    changed.pop(key, None)
                else:
                    changed[key] = (base[0] if base else entry[0], entry[1])
        return changed


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b
