"""``roost qedit`` (condor_qedit): set attributes of jobs named by id, owner or
``-constraint``: ``roost qedit 12.0 JobPrio 10 [Attr Value ...]``."""

from __future__ import annotations

import sys

from bindings.cli.schedd_session import UsageError, normalized, option_value, run_reporting


def parse_arguments(argv: list[str]) -> tuple[str, list[tuple[str, str]], str | None]:
    """The job spec, the (attribute, value) pairs and the pool.

    Raises:
        UsageError: no jobs named, or an attribute without a value.
    """
    args, index, pool, spec = list(argv), 0, None, None
    while index < len(args) and args[index].startswith("-"):
        option = normalized(args[index])
        if option in ("-constraint", "-const"):
            spec, index = option_value(args, index, args[index])
        elif option == "-pool":
            pool, index = option_value(args, index, args[index])
        elif option == "-name":
            _, index = option_value(args, index, args[index])
        else:
            raise UsageError(f"unknown option {args[index]}; usage: roost qedit (cluster[.proc] | owner | "
                             f"-constraint EXPR) ATTR VALUE [ATTR VALUE ...]")
        index += 1
    if spec is None:
        if index >= len(args):
            raise UsageError("name the jobs: roost qedit cluster[.proc] ATTR VALUE")
        target = args[index]
        cluster, _, proc = target.partition(".")
        spec = target if cluster.isdigit() and (not proc or proc.isdigit()) else f'Owner == "{target}"'
        index += 1
    rest = args[index:]
    if not rest or len(rest) % 2:
        raise UsageError("give attribute and value pairs: roost qedit 12.0 JobPrio 10")
    return spec, list(zip(rest[0::2], rest[1::2])), pool


def main(argv: list[str]) -> int:
    return run_reporting("roost qedit", lambda: _run(argv))


def _run(argv: list[str]) -> int:
    from bindings.schedd import Schedd

    spec, pairs, pool = parse_arguments(argv)
    schedd = Schedd(pool=pool)
    for attr, value in pairs:
        changed = schedd.edit(spec, attr, value)
        print(f"Set attribute \"{attr}\" for {changed} matching jobs.")
    return 0


def condor_qedit() -> int:
    """The ``condor_qedit`` console entry point."""
    return main(sys.argv[1:])
