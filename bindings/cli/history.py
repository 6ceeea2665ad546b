"""``roost history`` (condor_history): jobs that left the queue, newest first, one
line each or as ``-af``, ``-l`` or ``-json``; ``-limit``, ``-constraint``, owner and
id arguments."""

from __future__ import annotations

import os
import sys

import classad
from bindings.cli.options import WORDS, CommandLine, Option, Reading, run_command, whole_number
from bindings.cli.q_tables import STATUS_LETTERS, run_time, short_time
from bindings.cli.schedd_session import run_reporting
from bindings.cli.status_format import AutoformatOptions, autoformat, autoformat_options, json_form, long_form

HEADING = " ID     OWNER          SUBMITTED   RUN_TIME     ST  COMPLETED   CMD"
USAGE = """usage: roost history [options] [owner | cluster | cluster.proc ...]

  -constraint EXPR    only jobs for which EXPR is true
  -limit N, -match N  at most N jobs, newest first
  -af[:lhVr,tng] A..  the values of attributes or expressions
  -l, -long           whole job ads
  -json               job ads as JSON
  -pool HOST:PORT     the pool whose schedd to ask
"""
COMMAND = CommandLine("roost history", USAGE, [
    Option("-limit", 1, aliases=("-match",)), Option("-constraint", 1), Option("-long", aliases=("-l",)),
    Option("-json"), Option("-pool", 1), Option("-autoformat", WORDS, aliases=("-af",), qualified=True),
])


def parse_arguments(argv: list[str]) -> dict:
    """The request of ``argv`` as a dict of constraint, match, display and its options.

    Raises:
        UsageError: an unknown option or a missing argument.
    """
    return request_of(COMMAND.read(argv))


def request_of(reading: Reading) -> dict:
    """The request a read command line makes; operands are job ids or owners."""
    request = {"constraints": [], "match": -1, "display": "table", "af": [], "af_options": AutoformatOptions(),
               "pool": reading.last("-pool")}
    for given in reading.options:
        if given.name == "-limit":
            request["match"] = whole_number(given)
        elif given.name == "-constraint":
            request["constraints"].append(f"({given.value})")
        elif given.name in ("-long", "-json"):
            request["display"] = given.name[1:]
        elif given.name == "-autoformat":
            request["af_options"] = autoformat_options(given)
            request["af"].extend(given.values)
            request["display"] = "autoformat"
    request["constraints"] += [_operand_test(arg) for arg in reading.operands]
    return request


def _operand_test(arg: str) -> str:
    """The constraint an operand stands for: a cluster, a job, or an owner (quoted as a ClassAd string)."""
    cluster, _, proc = arg.partition(".")
    if cluster.isdigit() and proc.isdigit():
        return f"(ClusterId == {cluster} && ProcId == {proc})"
    if cluster.isdigit() and not proc:
        return f"ClusterId == {cluster}"
    return f"Owner == {classad.quote(arg)}"


def table(ads: list) -> str:
    """condor_history's one line per job."""
    lines = [HEADING]
    for ad in ads:
        get = ad.get
        cmd = f"{os.path.basename(str(get('Cmd', '')))} {get('Args', '') or ''}".strip()
        finished = get("CompletionDate") or get("EnteredCurrentStatus")
        lines.append(f"{get('ClusterId', '?'):>4}.{get('ProcId', '?'):<3} {str(get('Owner', '')):<14} "
                     f"{short_time(get('QDate')):>11} {run_time(get('RemoteWallClockTime', 0)):>12} "
                     f"{STATUS_LETTERS.get(get('JobStatus'), '?'):<3} {short_time(finished):>11} {cmd}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Run ``roost history``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: run_reporting("roost history",
                                                                    lambda: _run(request_of(reading))))


def _run(request: dict) -> int:
    from bindings.schedd import Schedd

    schedd = Schedd(pool=request["pool"])
    ads = list(schedd.history(" && ".join(request["constraints"]) or "true", [], request["match"]))
    display = request["display"]
    if display == "long":
        sys.stdout.write(long_form(ads))
    elif display == "json":
        sys.stdout.write(json_form(ads))
    elif display == "autoformat":
        sys.stdout.write(autoformat(ads, request["af"], request["af_options"]))
    else:
        sys.stdout.write(table(ads))
    return 0


def condor_history() -> int:
    """The ``condor_history`` console entry point."""
    return main(sys.argv[1:])
