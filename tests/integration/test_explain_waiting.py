"""roost q -better-analyze on a real personal pool says in its last sentence why an idle
job waits, from the negotiator's last cycle: here a concurrency limit (LICENSE_LIMIT = 1
with two LICENSE jobs on a 4-slot pool) and a job no slot can hold; roost userprio
-quotas reads the same route. The pool's one partitionable slot has 4 cpus."""

from __future__ import annotations

import time

import pytest

from tests.integration.conftest import roost

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_NUM_CPUS": "4", "_ROOST_LICENSE_LIMIT": "1"}

LICENSED = """executable = /bin/sleep
arguments = 120
request_cpus = 1
request_memory = 32M
concurrency_limits = LICENSE
queue 2
"""


def last_sentence(env, job: str) -> str:
    lines = [line for line in roost(env, "q", "-better-analyze", job).stdout.splitlines() if line.strip()]
    return lines[-1]


def wait_for_sentence(env, job: str, words: str, seconds: float = 60) -> str:
    """-better-analyze's last line for ``job`` once it holds ``words`` (cycles come every few seconds)."""
    deadline = time.monotonic() + seconds
    sentence = ""
    while time.monotonic() < deadline:
        sentence = last_sentence(env, job)
        if words in sentence:
            return sentence
        time.sleep(1)
    raise AssertionError(f"after {seconds} s the last line for {job} is still: {sentence}")


def test_a_job_waiting_for_a_concurrency_limit_says_which_and_how_used(pool):
    """With LICENSE_LIMIT = 1 one of two LICENSE jobs runs; the other's sentence names the limit, 1 of 1 in use."""
    env = pool["env"]
    work = pool["home"] / "licensed"
    work.mkdir()
    (work / "job.sub").write_text(LICENSED)
    cluster = roost(env, "submit", str(work / "job.sub")).stdout.split("cluster")[-1].strip(" .\n")
    try:
        deadline = time.monotonic() + 60
        while sorted(roost(env, "q", "-af", "JobStatus", "-constraint", f"ClusterId == {cluster}").stdout.split()) \
                != ["1", "2"]:
            assert time.monotonic() < deadline, "one LICENSE job never ran while the other waited"
            time.sleep(0.5)
        idle = roost(env, "q", "-af", "ProcId", "-constraint", f"ClusterId == {cluster} && JobStatus == 1").stdout.split()
        sentence = wait_for_sentence(env, f"{cluster}.{idle[0]}", "concurrency limit license")
        assert sentence.startswith(f"Job {cluster}.{idle[0]} waits: concurrency limit license is used up: 1 of 1 in use")
        time.sleep(3)
        states = roost(env, "q", "-af", "JobStatus", "-constraint", f"ClusterId == {cluster}").stdout.split()
        assert sorted(states) == ["1", "2"], "the limit let a second LICENSE job run"
    finally:
        roost(env, "rm", cluster, check=False)


def test_a_job_no_slot_can_hold_says_so_and_userprio_quotas_answers(pool):
    """A job asking more memory than any slot has waits for a slot that matches, naming the clause;
    roost userprio -quotas answers from the same route (no groups in this pool)."""
    env = pool["env"]
    work = pool["home"] / "huge"
    work.mkdir()
    (work / "job.sub").write_text("executable = /bin/true\nrequest_memory = 900000G\nqueue\n")
    cluster = roost(env, "submit", str(work / "job.sub")).stdout.split("cluster")[-1].strip(" .\n")
    try:
        sentence = last_sentence(env, f"{cluster}.0")
        assert sentence.startswith(f"Job {cluster}.0 waits for a slot that matches: none of the ")
        assert sentence.endswith("slot(s) can run it (no slot satisfies TARGET.Memory >= RequestMemory).")
        assert "No accounting groups with a quota" in roost(env, "userprio", "-quotas").stdout
    finally:
        roost(env, "rm", cluster, check=False)
