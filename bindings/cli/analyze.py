"""``roost q -analyze`` and ``roost q -better-analyze`` (condor_q's analysis): for
each chosen job, which clauses of its Requirements the pool's slots meet, and how
many slots could run it. ``roost q`` reads the command line (the jobs are chosen as
it chooses them; its display options make no difference) and hands the request here."""

from __future__ import annotations

import sys

from bindings.analyze import analyze_job, render_analysis
from bindings.cli.q import QueueRequest
from bindings.cli.schedd_session import current_user, located_schedd


def run(request: QueueRequest) -> int:
    """Print the analysis of the jobs ``request`` chooses; 0."""
    from bindings.collector import Collector
    from bindings.enums import AdType

    pool = request.pool
    jobs = located_schedd(pool, request.name).query(request.constraint(current_user(pool)))
    if not jobs:
        print("No jobs match; nothing to analyze.")
        return 0
    slots = Collector(pool).query(AdType.Startd)
    for job in sorted(jobs, key=lambda ad: (ad.get("ClusterId", 0), ad.get("ProcId", 0))):
        sys.stdout.write(render_analysis(analyze_job(job, slots), better=request.analysis == "better"))
    return 0
