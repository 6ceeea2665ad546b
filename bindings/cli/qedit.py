"""``roost qedit`` (condor_qedit): set attributes of jobs named by id, owner or
``-constraint``, on the pool's schedd or the one ``-name`` names:
``roost qedit 12.0 JobPrio 10 [Attr Value ...]``."""

from __future__ import annotations

import sys

import classad
from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from bindings.cli.schedd_session import located_schedd, run_reporting

USAGE = """usage: roost qedit [options] (cluster[.proc] | owner | -constraint EXPR) ATTR VALUE [ATTR VALUE ...]

  -constraint EXPR    the jobs for which EXPR is true
  -pool HOST:PORT     the pool whose schedd to ask
  -name NAME          the schedd of that name (as the collector knows it)
(options come before the jobs; a VALUE is a ClassAd expression: 10, "text", Memory * 2)
"""
COMMAND = CommandLine("roost qedit", USAGE, [Option("-constraint", 1), Option("-pool", 1), Option("-name", 1)],
                      options_first=True)


def parse_arguments(argv: list[str]) -> tuple[str, list[tuple[str, str]], str | None]:
    """The job spec, the (attribute, value) pairs and the pool.

    Raises:
        UsageError: no jobs named, or an attribute without a value.
    """
    reading = COMMAND.read(argv)
    return (*edits_of(reading), reading.last("-pool"))


def edits_of(reading: Reading) -> tuple[str, list[tuple[str, str]]]:
    """The job spec (an id, or a constraint) and the (attribute, value) pairs.

    Raises:
        UsageError: no jobs named, or an attribute without a value.
    """
    spec, rest = reading.last("-constraint"), list(reading.operands)
    if spec is None:
        if not rest:
            raise UsageError("name the jobs: roost qedit cluster[.proc] ATTR VALUE")
        target = rest.pop(0)
        cluster, _, proc = target.partition(".")
        spec = target if cluster.isdigit() and (not proc or proc.isdigit()) else f"Owner == {classad.quote(target)}"
    if not rest or len(rest) % 2:
        raise UsageError("give attribute and value pairs: roost qedit 12.0 JobPrio 10")
    return spec, list(zip(rest[0::2], rest[1::2]))


def main(argv: list[str]) -> int:
    """Run ``roost qedit``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, _run)


def _run(reading: Reading) -> int:
    spec, pairs = edits_of(reading)
    return run_reporting("roost qedit", lambda: _edit(located_schedd(reading.last("-pool"), reading.last("-name")),
                                                      spec, pairs))


def _edit(schedd, spec: str, pairs: list[tuple[str, str]]) -> int:
    for attr, value in pairs:
        changed = schedd.edit(spec, attr, value)
        print(f"Set attribute \"{attr}\" for {changed} matching jobs.")
    return 0


def condor_qedit() -> int:
    """The ``condor_qedit`` console entry point."""
    return main(sys.argv[1:])
