"""Concurrency limits on a real 4-slot personal pool: with LICENSE_LIMIT = 3, jobs with
`concurrency_limits = LICENSE:2` run one at a time (each records when it started and
ended; no two spans overlap) although three slots stay free, `roost userprio -l` shows
the limit's use while one runs, and the negotiator's log says why the others wait."""

from __future__ import annotations

import pytest

from tests.integration.conftest import roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_NUM_CPUS": "4", "_ROOST_LICENSE_LIMIT": "3"}
JOBS = 3

SCRIPT = """#!/bin/sh
echo "start $(date +%s.%N)" >> {shared}/span.$1
sleep 4
echo "end $(date +%s.%N)" >> {shared}/span.$1
"""

SUBMIT = """executable = {shared}/job.sh
arguments = $(Process)
request_cpus = 1
request_memory = 32M
concurrency_limits = LICENSE:2
queue {count}
"""


def spans(shared) -> list[tuple[float, float]]:
    """Each finished job's (start, end), in start order."""
    found = []
    for path in shared.glob("span.*"):
        times = dict(line.split() for line in path.read_text().splitlines() if line.strip())
        if "end" in times:
            found.append((float(times["start"]), float(times["end"])))
    return sorted(found)


def test_license_jobs_never_overlap_and_userprio_shows_the_use(pool, shared_dir):
    """Three LICENSE:2 jobs under LICENSE_LIMIT = 3 on four slots run one at a time; while one
    runs userprio -l shows ConcurrencyLimit_license = 2, and the negotiator logs the limit used up."""
    env = pool["env"]
    (shared_dir / "job.sh").write_text(SCRIPT.format(shared=shared_dir))
    (shared_dir / "job.sh").chmod(0o755)
    (shared_dir / "job.sub").write_text(SUBMIT.format(shared=shared_dir, count=JOBS))
    cluster = roost(env, "submit", str(shared_dir / "job.sub")).stdout.split("cluster")[-1].strip(" .\n")
    try:
        wait_for(lambda: "2" in roost(env, "q", "-af", "JobStatus", "-constraint",
                                      f"ClusterId == {cluster}").stdout.split(), seconds=60,
                 what="a LICENSE job running", step=0.5)
        wait_for(lambda: "ConcurrencyLimit_license = 2.000000" in roost(env, "userprio", "-l").stdout,
                 seconds=30, what="roost userprio -l showing the license in use", step=0.5)
        wait_for(lambda: len(spans(shared_dir)) == JOBS, seconds=120, what="every LICENSE job finished",
                 step=0.5)
    finally:
        roost(env, "rm", cluster, check=False)
    ran = spans(shared_dir)
    for (_, first_end), (second_start, _) in zip(ran, ran[1:], strict=False):
        assert second_start >= first_end, f"two LICENSE jobs ran at once: {ran}"
    log = (pool["dir"] / "log" / "NegotiatorLog").read_text(errors="replace")
    assert "waits: concurrency limit license is used up: 2 of 3 in use and the job needs 2" in log
