"""Queues on a real 4-slot personal pool: group_a and group_b each have a quota of 2
slots and accept surplus. group_a, alone, runs 4 jobs (2 in quota, 2 surplus); when
group_b submits, the negotiator reclaims group_a's surplus (its two youngest jobs are
evicted, 004) and group_b runs 2, while group_a's in-quota jobs run on untouched. On a
pool where GROUP_LIMIT_group_a = 1, group_a never runs more than one job although the
rest of the pool stays idle."""

from __future__ import annotations

import time

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from tests.integration.conftest import personal_pool, roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

GROUPS = {"_ROOST_NUM_CPUS": "4", "_ROOST_MEMORY": "2048", "_ROOST_GROUP_NAMES": "group_a, group_b",
          "_ROOST_GROUP_QUOTA_group_a": "2", "_ROOST_GROUP_QUOTA_group_b": "2",
          "_ROOST_GROUP_ACCEPT_SURPLUS": "true"}

SUBMIT = """executable = /bin/sleep
arguments = 300
request_cpus = 1
request_memory = 32M
accounting_group = {group}
initialdir = {work}
log = {group}.log
queue {count}
"""


def submit(pool, group: str, count: int) -> str:
    work = pool["home"] / "work"
    work.mkdir(exist_ok=True)
    (work / f"{group}.sub").write_text(SUBMIT.format(group=group, count=count, work=work))
    done = roost(pool["env"], "submit", str(work / f"{group}.sub"))
    return done.stdout.split("cluster")[-1].strip(" .\n")


def running(pool, cluster: str) -> list[str]:
    """The procs of ``cluster`` now running."""
    out = roost(pool["env"], "q", "-af", "ProcId", "-constraint",
                f"ClusterId == {cluster} && JobStatus == 2").stdout.split()
    return sorted(out)


def evicted_procs(pool, group: str) -> set[int]:
    log = pool["home"] / "work" / f"{group}.log"
    if not log.exists():
        return set()
    return {event.proc for event in JobEventLog(str(log)).events(stop_after=0)
            if event.type == JobEventType.JOB_EVICTED}


def test_a_group_under_its_quota_reclaims_the_surplus_of_another_and_nothing_in_quota(tmp_path_factory):
    with personal_pool(tmp_path_factory.mktemp("home"), GROUPS) as pool:
        a = submit(pool, "group_a", 4)
        try:
            wait_for(lambda: len(running(pool, a)) == 4, 60, "group_a running 4 jobs on the idle pool", 0.5)
            time.sleep(1)
            b = submit(pool, "group_b", 2)
            wait_for(lambda: len(running(pool, b)) == 2, 90, "group_b's two jobs running after the reclaim", 0.5)
            kept = running(pool, a)
            assert len(kept) == 2, kept
            evicted = evicted_procs(pool, "group_a")
            assert len(evicted) == 2 and not evicted & {int(p) for p in kept}, (evicted, kept)
            assert not evicted_procs(pool, "group_b")
            time.sleep(12)  # a few more cycles: nothing moves once both groups are at their quota
            assert running(pool, a) == kept and len(running(pool, b)) == 2
            assert evicted_procs(pool, "group_a") == evicted
        finally:
            roost(pool["env"], "rm", "-all", check=False)


def test_a_group_limit_holds_even_when_the_pool_is_idle(tmp_path_factory):
    limited = {**GROUPS, "_ROOST_GROUP_LIMIT_group_a": "1"}
    with personal_pool(tmp_path_factory.mktemp("home"), limited) as pool:
        a = submit(pool, "group_a", 3)
        try:
            wait_for(lambda: len(running(pool, a)) == 1, 60, "one group_a job running", 0.5)
            for _ in range(12):  # over two negotiation cycles of 5 s
                assert len(running(pool, a)) <= 1
                time.sleep(1)
            assert len(running(pool, a)) == 1
        finally:
            roost(pool["env"], "rm", "-all", check=False)
