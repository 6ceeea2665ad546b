"""``roost transfer_data`` (condor_transfer_data): fetch the spooled outputs of completed
jobs submitted with ``-spool`` into their submit directories, naming the jobs by
``cluster``, ``cluster.proc``, owner, ``-constraint EXPR`` or ``-all`` as HTCondor's tool
does, with ``-pool``, ``-name`` and ``-addr`` to choose the schedd."""

from __future__ import annotations

import sys

from bindings.cli.job_actions import parse_targets
from bindings.cli.options import CommandLine, Option, Reading, run_command
from bindings.cli.schedd_session import located_schedd, run_reporting

PROG = "roost transfer_data"
USAGE = f"""usage: {PROG} [options] (cluster | cluster.proc | user | -constraint EXPR | -all) ...

  -constraint EXPR    the jobs for which EXPR is true
  -all                every job you may fetch from
  -pool HOST:PORT     the pool whose schedd to ask
  -name NAME          the schedd of that name (as the collector knows it)
  -addr "<a.b.c.d:port>"  the schedd at that address
"""
COMMAND = CommandLine(PROG, USAGE, [Option("-constraint", 1), Option("-all"), Option("-pool", 1),
                                    Option("-name", 1), Option("-addr", 1)])
#: Only jobs that kept their outputs in the spool have anything to fetch.
SPOOLED = "SUBMIT_Iwd =!= undefined"


def main(argv: list[str]) -> int:
    return run_command(COMMAND, argv, lambda reading: run_reporting(PROG, lambda: _fetch(reading)))


def _schedd(reading: Reading):
    from bindings.schedd import Schedd

    address = reading.last("-addr")
    if address is not None:
        return Schedd(address.strip().strip("<>"), pool=reading.last("-pool"))
    return located_schedd(reading.last("-pool"), reading.last("-name"))


def _fetch(reading: Reading) -> int:
    from bindings.spooling import job_id_text, spec_constraint
    from daemoncore.wire.errors import RemoteError

    ids, constraints = parse_targets(reading, PROG)
    wanted = [spec_constraint(job) for job in ids] + [f"({constraint})" for constraint in constraints]
    schedd = _schedd(reading)
    jobs = [job_id_text(ad) for ad in schedd.xquery(f"({' || '.join(wanted)}) && {SPOOLED}",
                                                     ["ClusterId", "ProcId"])]
    if not jobs:
        print(f"{PROG}: no spooled jobs match; only jobs submitted with -spool keep their outputs "
              "in the spool", file=sys.stderr)
        return 1
    print("Fetching data files...")
    status = 0
    for job in jobs:
        try:
            schedd.retrieve(job)
        except RemoteError as exc:
            print(f"{PROG}: {exc.message}", file=sys.stderr)
            status = 1
    return status


def condor_transfer_data() -> int:
    """The ``condor_transfer_data`` console entry point."""
    return main(sys.argv[1:])
