"""``roost q -analyze`` and ``roost q -better-analyze`` (condor_q's analysis): for
each chosen job, which clauses of its Requirements the pool's slots meet, and how
many slots could run it. ``roost q`` hands its command line here when it holds
either option."""

from __future__ import annotations

import sys

from attrs import define, field

from bindings.analyze import analyze_job, render_analysis
from bindings.cli.q import QueueRequest
from bindings.cli.q import parse_arguments as parse_queue_arguments
from bindings.cli.schedd_session import current_user, normalized, run_reporting

USAGE = """usage: roost q -analyze | -better-analyze [options] [owner | cluster | cluster.proc ...]

  -analyze            why the chosen jobs do not run, in short
  -better-analyze     the same, with each Requirements clause counted against the slots
  -allusers           every user's jobs (by default, only yours)
  -constraint EXPR    only jobs for which EXPR is true
  -pool HOST:PORT     the pool to ask
(the display options of `roost q` are accepted and make no difference)
"""

ANALYZE_OPTIONS = ("-analyze", "-better-analyze", "-better-analyse", "-analyse")


def _is_analysis_option(arg: str) -> bool:
    return arg.startswith("-") and normalized(arg) in ANALYZE_OPTIONS


def wants_analysis(argv: list[str]) -> bool:
    """True when ``argv`` (a ``roost q`` command line) asks for an analysis."""
    return any(_is_analysis_option(arg) for arg in argv)


@define
class AnalyzeRequest:
    """What a ``roost q -analyze`` command line asks for: which jobs, and how much detail."""

    jobs: QueueRequest = field(factory=QueueRequest)
    better: bool = False


def parse_arguments(argv: list[str]) -> AnalyzeRequest:
    """The jobs asked about (read as ``roost q`` reads them) and whether ``-better-analyze``.

    Raises:
        UsageError: an unknown option, or one missing its argument.
    """
    better = any(_is_analysis_option(arg) and normalized(arg).startswith("-better") for arg in argv)
    return AnalyzeRequest(parse_queue_arguments([arg for arg in argv if not _is_analysis_option(arg)]), better)


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
