"""``Submit``: a submit description as a mapping of commands, with the methods of
HTCondor's ``htcondor2.Submit`` plus ``jobs()``, which returns the job ads exactly as
the schedd will store them."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, MutableMapping

from schedd.submit import SubmitOptions, expand, host_predefined, parse_description, to_classads
from schedd.submit.cluster import BuildContext
from schedd.submit.description import Description, command_key
from schedd.submit.jobs import parse_statement, queue_statements
from schedd.submit.macros import MacroScope
from schedd.submit.queue_statement import item_rows


class Submit(MutableMapping):
    """A submit description: commands by name (case-insensitive), plus the arguments of
    its queue statement."""

    def __init__(self, input: str | Mapping[str, str] | None = None, **kwargs: str) -> None:
        self._commands: dict[str, tuple[str, str]] = {}
        self._qargs = ""
        self._text: str | None = None
        if isinstance(input, str):
            description = self._parse(input)
            for key, command in description.commands.items():
                if description.queues:
                    first = description.queues[0].commands
                    if key not in first:
                        continue
                    command = first[key]
                self._commands[key] = (command.name, command.value)
            if description.queues:
                self._qargs = description.queues[0].args
            self._text = input
        elif input is not None:
            for name, value in input.items():
                self[name] = value
        for name, value in kwargs.items():
            self[name] = value

    @staticmethod
    def _parse(text: str) -> Description:
        return parse_description(text, cwd=os.getcwd(), predefined=host_predefined())

    # --- mapping of commands -----------------------------------------------
    def __getitem__(self, name: str) -> str:
        return self._commands[command_key(name)[0]][1]

    def __setitem__(self, name: str, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"submit command values are strings, not {type(value).__name__}")
        key, keep = command_key(name)
        old = self._commands.get(key)
        self._commands[key] = (old[0] if old else keep, value)
        self._text = None

    def __delitem__(self, name: str) -> None:
        del self._commands[command_key(name)[0]]
        self._text = None

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._commands.values())

    def __len__(self) -> int:
        return len(self._commands)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"Submit({self.text()!r})"

    def text(self) -> str:
        """The description as submit-file text."""
        if self._text is not None:
            return self._text
        lines = []
        for name, value in self._commands.values():
            if "\n" in value:
                lines.append(f"{name} @=end\n{value}\n@end")
            else:
                lines.append(f"{name} = {value}")
        lines.append(f"queue {self._qargs}".rstrip())
        return "\n".join(lines) + "\n"

    # --- queue arguments and items -----------------------------------------
    def getQArgs(self) -> str:
        """The arguments of the queue statement (everything after ``queue``)."""
        return self._qargs.strip()

    def setQArgs(self, args: str) -> None:
        """Replace the queue statement's arguments (``"3"``, ``"x in (a, b)"`` ...)."""
        self._qargs = args
        self._text = None

    def expand(self, name: str) -> str:
        """The value of command or macro ``name`` with its macros expanded."""
        scope = MacroScope({k: v for k, (_, v) in self._commands.items()},
                           predefined=host_predefined(), cwd=os.getcwd())
        return scope.value(name) or ""

    def itemdata(self) -> Iterator[dict[str, str]]:
        """The items of the queue statement, one dict of item variables per item."""
        description = self._parse(self.text())
        context = BuildContext(os.getcwd(), None, dict(os.environ), host_predefined())
        statement = queue_statements(description)[0]
        rows = item_rows(parse_statement(statement, context), os.getcwd())
        for row in rows or []:
            yield dict(row.values)

    # --- job ads -----------------------------------------------------------
    def jobs(self, clusterid: int = 1, procid: int = 0, qdate: int | None = None,
             owner: str | None = None) -> list:
        """The job ads this description makes, complete (cluster and proc attributes
        merged), in proc order. Raises ``SubmitError`` and makes nothing on bad input."""
        return list(to_classads(self.clusters(clusterid, procid, qdate, owner)))

    def clusters(self, clusterid: int = 1, procid: int = 0, qdate: int | None = None,
                 owner: str | None = None):
        """The expanded form the schedd stores: per queue statement a cluster ad and
        each proc's differences from it."""
        description = self._parse(self.text())
        options = SubmitOptions(cluster_id=clusterid, proc_id=procid,
                                qdate=int(time.time()) if qdate is None else qdate,
                                owner=owner, cwd=os.getcwd(), environ=dict(os.environ))
        return expand(description, options)
