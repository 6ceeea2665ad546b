"""``roost rm``, ``roost hold`` and ``roost release`` (condor_rm, condor_hold,
condor_release): act on jobs named by id, by owner, by ``-constraint`` or ``-all``,
with ``-reason``, and report each as HTCondor's tools do."""

from __future__ import annotations

import sys

from bindings.cli.schedd_session import UsageError, normalized, option_value, run_reporting

#: command -> (JobAction name, past tense used in the report)
VERBS = {"rm": ("Remove", "marked for removal"), "hold": ("Hold", "held"), "release": ("Release", "released")}


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_targets(argv: list[str], prog: str) -> tuple[list[str], list[str], str | None, str | None]:
    """The ids, the constraints (owners, ``-constraint``, ``-all``), the reason and the pool.

    Raises:
        UsageError: an unknown option, a missing argument, or nothing named.
    """
    ids, constraints, reason, pool = [], [], None, None
    index = 0
    while index < len(argv):
        arg = argv[index]
        option = normalized(arg) if arg.startswith("-") else None
        if option in ("-reason",):
            reason, index = option_value(argv, index, arg)
        elif option in ("-constraint", "-const"):
            text, index = option_value(argv, index, arg)
            constraints.append(text)
        elif option == "-all":
            constraints.append("true")
        elif option == "-pool":
            pool, index = option_value(argv, index, arg)
        elif option == "-name":
            _, index = option_value(argv, index, arg)
        elif option is not None:
            raise UsageError(f"unknown option {arg}; usage: {prog} [-reason TEXT] "
                             f"(cluster | cluster.proc | owner | -constraint EXPR | -all) ...")
        else:
            cluster, _, proc = arg.partition(".")
            if cluster.isdigit() and (not proc or proc.isdigit()):
                ids.append(arg)
            else:
                constraints.append(f"Owner == {_quoted(arg)}")
        index += 1
    if not ids and not constraints:
        raise UsageError(f"name the jobs: {prog} cluster[.proc] ..., an owner, -constraint EXPR or -all")
    return ids, constraints, reason, pool


def run_action(command: str, argv: list[str]) -> int:
    """Run ``roost rm|hold|release`` with ``argv``."""
    prog = f"roost {command}"
    return run_reporting(prog, lambda: _run(command, argv, prog))


def _run(command: str, argv: list[str], prog: str) -> int:
    from bindings.schedd import JobAction, Schedd
    from daemoncore.wire.errors import RemoteError

    action_name, done = VERBS[command]
    ids, constraints, reason, pool = parse_targets(argv, prog)
    schedd = Schedd(pool=pool)
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
