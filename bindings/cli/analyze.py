"""``roost q -analyze`` and ``roost q -better-analyze`` (condor_q's analysis): for
each chosen job, which clauses of its Requirements the pool's slots meet, and how
many slots could run it. ``roost q`` hands its command line here when it holds
either option."""

from __future__ import annotations

import sys

from attrs import define, field

from bindings.analyze import analyze_job, render_analysis
from bindings.cli.q import QueueRequest
from bindings.cli.q import _is_id as is_job_id
from bindings.cli.schedd_session import UsageError, current_user, normalized, option_value, run_reporting

USAGE = """usage: roost q -analyze | -better-analyze [options] [owner | cluster | cluster.proc ...]

  -analyze            why the chosen jobs do not run, in short
  -better-analyze     the same, with each Requirements clause counted against the slots
  -allusers           every user's jobs (by default, only yours)
  -constraint EXPR    only jobs for which EXPR is true
  -pool HOST:PORT     the pool to ask
"""

ANALYZE_OPTIONS = ("-analyze", "-better-analyze", "-better-analyse", "-analyse")


def wants_analysis(argv: list[str]) -> bool:
    """True when ``argv`` (a ``roost q`` command line) asks for an analysis."""
    return any(arg.startswith("-") and normalized(arg) in ANALYZE_OPTIONS for arg in argv)


@define
class AnalyzeRequest:
    """What a ``roost q -analyze`` command line asks for: which jobs, and how much detail."""

    jobs: QueueRequest = field(factory=QueueRequest)
    better: bool = False


def parse_arguments(argv: list[str]) -> AnalyzeRequest:
    """The jobs asked about (ids, owners, constraints, pool) and whether ``-better-analyze``.

    Raises:
        UsageError: an option this command does not take, or one missing its argument.
    """
    request = AnalyzeRequest()
    jobs = request.jobs
    index = 0
    while index < len(argv):
        arg = argv[index]
        option = normalized(arg) if arg.startswith("-") else None
        if option in ("-h", "-help"):
            jobs.help = True
        elif option in ANALYZE_OPTIONS:
            request.better = request.better or option.startswith("-better")
        elif option in ("-allusers", "-all"):
            jobs.all_users = True
        elif option in ("-constraint", "-const"):
            text, index = option_value(argv, index, arg)
            jobs.constraints.append(text)
        elif option == "-pool":
            jobs.pool, index = option_value(argv, index, arg)
        elif option in ("-nobatch", "-batch", "-reverse", "-verbose"):
            pass  # display options that do not change an analysis
        elif option is not None:
            raise UsageError(f"{arg} does not go with -analyze; run `roost q -analyze -help` for the options")
        elif is_job_id(arg):
            jobs.ids.append(arg)
        else:
            jobs.owners.append(arg)
        index += 1
    return request


def main(argv: list[str]) -> int:
    """Run ``roost q -analyze``; 0 on success, 1 on an error it explains in one line."""
    return run_reporting("roost q", lambda: _run(argv))


def _run(argv: list[str]) -> int:
    from bindings.collector import Collector
    from bindings.enums import AdType
    from bindings.schedd import Schedd

    request = parse_arguments(argv)
    pool = request.jobs.pool
    if request.jobs.help:
        print(USAGE, end="")
        return 0
    jobs = Schedd(pool=pool).query(request.jobs.constraint(current_user(pool)))
    if not jobs:
        print("No jobs match; nothing to analyze.")
        return 0
    slots = Collector(pool).query(AdType.Startd)
    for job in sorted(jobs, key=lambda ad: (ad.get("ClusterId", 0), ad.get("ProcId", 0))):
        sys.stdout.write(render_analysis(analyze_job(job, slots), better=request.better))
    return 0
