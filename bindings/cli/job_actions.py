"""``roost rm``, ``roost hold`` and ``roost release`` (condor_rm, condor_hold,
condor_release): act on jobs named by id, by owner, by ``-constraint`` or ``-all``,
with ``-reason``, on the pool's schedd or the one ``-name`` names, and report each
as HTCondor's tools do."""

from __future__ import annotations

import sys

import classad
from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from bindings.cli.schedd_session import located_schedd, run_reporting

#: command -> (JobAction name, past tense used in the report)
VERBS = {"rm": ("Remove", "marked for removal"), "hold": ("Hold", "held"), "release": ("Release", "released")}


def command_line(command: str) -> CommandLine:
    """The options of ``roost rm|hold|release``."""
    prog = f"roost {command}"
    usage = (f"usage: {prog} [options] (cluster | cluster.proc | owner | -constraint EXPR | -all) ...\n\n"
             "  -constraint EXPR    the jobs for which EXPR is true\n"
             "  -all                every job you may act on\n"
             "  -reason TEXT        why (shown in the job's hold or remove reason)\n"
             "  -pool HOST:PORT     the pool whose schedd to ask\n"
             "  -name NAME          the schedd of that name (as the collector knows it)\n")
    return CommandLine(prog, usage, [Option("-reason", 1), Option("-constraint", 1), Option("-all"),
                                     Option("-pool", 1), Option("-name", 1)])


def parse_targets(reading: Reading, prog: str) -> tuple[list[str], list[str]]:
    """The ids and the constraints (owners, ``-constraint``, ``-all``) a command line names.

    Raises:
        UsageError: nothing named.
    """
    ids = [arg for arg in reading.operands if _is_id(arg)]
    constraints = [given.value if given.name == "-constraint" else "true"
                   for given in reading.options if given.name in ("-constraint", "-all")]
    constraints += [f"Owner == {classad.quote(arg)}" for arg in reading.operands if not _is_id(arg)]
    if not ids and not constraints:
        raise UsageError(f"name the jobs: {prog} cluster[.proc] ..., an owner, -constraint EXPR or -all")
    return ids, constraints


def _is_id(text: str) -> bool:
    cluster, _, proc = text.partition(".")
    return cluster.isdigit() and (not proc or proc.isdigit())


def run_action(command: str, argv: list[str]) -> int:
    """Run ``roost rm|hold|release`` with ``argv``."""
    line = command_line(command)
    return run_command(line, argv, lambda reading: _run(command, reading, line.prog))


def _run(command: str, reading: Reading, prog: str) -> int:
    ids, constraints = parse_targets(reading, prog)
    return run_reporting(prog, lambda: _act(command, prog, reading, ids, constraints))


def _act(command: str, prog: str, reading: Reading, ids: list[str], constraints: list[str]) -> int:
    from bindings.schedd import JobAction
    from daemoncore.wire.errors import RemoteError

    action_name, done = VERBS[command]
    reason = reading.last("-reason")
    schedd = located_schedd(reading.last("-pool"), reading.last("-name"))
    action = JobAction[action_name]
    status = 0
    for job in ids:
        try:
            schedd.act(action, job, reason)
        except RemoteError as exc:
            print(f"{prog}: job {job}: {exc.message}", file=sys.stderr)
            status = 1
            continue
        print(f"Job {job} {done}" if "." in job else f"All jobs in cluster {job} have been {done}")
    for constraint in constraints:
        result = schedd.act(action, constraint, reason)
        count = result["TotalSuccess"]
        if constraint.startswith("Owner == "):
            print(f"All jobs of user {constraint[len('Owner == '):].strip(chr(34))} have been {done}." if count
                  else f"{prog}: no jobs of that user to act on", file=sys.stdout if count else sys.stderr)
        else:
            print(f"All jobs matching constraint ({constraint}) have been {done}." if count
                  else f"{prog}: no jobs matching constraint ({constraint}) to act on",
                  file=sys.stdout if count else sys.stderr)
        if not count:
            status = 1
    return status
