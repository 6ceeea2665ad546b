"""Flocking between two pools on six namespace hosts: pool A (central manager, submit
host, one execute host with one slot) and pool B (central manager, two execute hosts
with two slots each), each with its own CA, key and name. The central managers trust
each other with `roost pool trust` (offer on A, answer on B, answer back on A); A's
submit host has ``FLOCK_TO = <B's central manager>`` and B's ``FLOCK_FROM`` names A's
submit host. Jobs that A's one slot leaves idle run in B and come home with their
outputs; B charges A's user the remote priority factor. With B's FLOCK_FROM not
naming A's schedd, nothing runs in B."""

from __future__ import annotations

import collections
import json
import re

import pytest

from tests.integration.test_jobs_files import submitted_cluster
from tests.integration.test_multihost_pool import submit_file
from tests.support.netns import netns_pools
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOLS = {
    "A": {"cm-a": ["CentralManager"], "submit-a": ["Submit"], "exec-a": ["Execute"]},
    "B": {"cm-b": ["CentralManager"], "exec-b1": ["Execute"], "exec-b2": ["Execute"]},
}
#: Pool B is the second pool: its central manager, its first host, is 198.18.1.2.
B_CENTRAL_MANAGER = "198.18.1.2"
HOST_CONFIG = {
    "exec-a": {"NUM_CPUS": "1", "MEMORY": "512"},
    "exec-b1": {"NUM_CPUS": "2", "MEMORY": "1024"},
    "exec-b2": {"NUM_CPUS": "2", "MEMORY": "1024"},
    "submit-a": {"FLOCK_TO": B_CENTRAL_MANAGER},
    "cm-b": {"FLOCK_FROM": "submit-a"},
}
JOBS = 40
#: A trust offer or answer as `roost pool trust` prints it.
TRUST_STRING = re.compile(r"roosttrust\d+\.[A-Za-z0-9_=-]+")
#: HTCondor's REMOTE_PRIO_FACTOR default.
REMOTE_PRIO_FACTOR = 1e7

JOB = """#!/bin/sh
cat "in_$1.txt" > "out_$1.txt"
echo "ran on $(hostname)" >> "out_$1.txt"
sleep 1
"""


def trust_string(output: str, what: str) -> str:
    """The last trust string `roost pool trust` printed."""
    found = TRUST_STRING.findall(output)
    if not found:
        raise AssertionError(f"`roost pool trust` printed no {what}: {output!r}")
    return found[-1]


def exchange_trust(a, b) -> None:
    """The three steps of `roost pool trust`: the offer made on A is accepted on B, whose
    answer is given back to A."""
    offer = trust_string(a.roost("cm-a", "pool", "trust").stdout, "offer")
    answer = trust_string(b.roost("cm-b", "pool", "trust", offer).stdout, "answer")
    a.roost("cm-a", "pool", "trust", answer)


@pytest.fixture(scope="module")
def pools():
    """Both pools up, their execute hosts in `roost status`, trust exchanged."""
    with netns_pools(POOLS, host_config=HOST_CONFIG) as made:
        a, b = made["A"], made["B"]
        assert b["cm-b"].address == B_CENTRAL_MANAGER
        wait_for(lambda: machines(a, "submit-a") == {"exec-a"}, 60, "exec-a in pool A's `roost status`")
        wait_for(lambda: machines(b, "cm-b") == {"exec-b1", "exec-b2"}, 60, "pool B's execute hosts")
        exchange_trust(a, b)
        yield made


def machines(pool, host: str) -> set[str]:
    """The machines whose slots `roost status` on ``host`` lists."""
    done = pool.roost(host, "status", "-af", "Machine", check=False)
    return set(done.stdout.split()) if done.returncode == 0 else set()


def pool_name(pool) -> str:
    """A pool's name: its TRUST_DOMAIN, the central manager's namespace."""
    return pool.central_manager.namespace


def write_jobs(directory, count: int) -> None:
    (directory / "job.sh").write_text(JOB)
    (directory / "job.sh").chmod(0o755)
    for index in range(count):
        (directory / f"in_{index}.txt").write_text(f"input {index}\n")
    (directory / "job.sub").write_text(submit_file(count))


def run_jobs(a, directory, count: int) -> tuple[int, collections.Counter]:
    """Submit ``count`` jobs on A's submit host, wait for all; the cluster and where each ran
    (from its output file, which must have come home with its input's text)."""
    write_jobs(directory, count)
    cluster = submitted_cluster(a.roost("submit-a", "submit", "job.sub", cwd=directory))
    a.roost("submit-a", "wait", "-wait", "300", "job.log", cwd=directory, timeout=320)
    ran_on = collections.Counter()
    for index in range(count):
        lines = (directory / f"out_{index}.txt").read_text().splitlines()
        assert lines[0] == f"input {index}"
        ran_on[lines[1].removeprefix("ran on ")] += 1
    return cluster, ran_on


def remote_pools(a, cluster: int) -> list[str]:
    """``LastRemotePool`` of each of the cluster's jobs in A's history ("undefined" when it ran at home)."""
    out = a.roost("submit-a", "history", "-af", "LastRemotePool", "-constraint", f"ClusterId == {cluster}").stdout
    return out.split()


def job_users(a, cluster: int) -> set[str]:
    """The ``User`` of the cluster's jobs in A's history: ``owner@UID_DOMAIN`` of A's
    submit host, the name its Submitter ads have and its usage is charged by."""
    out = a.roost("submit-a", "history", "-af", "User", "-constraint", f"ClusterId == {cluster}").stdout
    return set(out.split())


def priorities(pool, host: str) -> dict[str, dict]:
    rows = json.loads(pool.roost(host, "userprio", "-allusers", "-json").stdout)
    rows = rows["priorities"] if isinstance(rows, dict) else rows
    return {row["Name"]: row for row in rows}


def test_idle_jobs_flock_to_the_trusted_pool_and_come_home(pools, tmp_path):
    """40 one-second jobs on A's single slot: some run on B's execute hosts (their
    LastRemotePool is B), every output comes back to A's Iwd, and B's negotiator shows
    A's user with the remote priority factor."""
    a, b = pools["A"], pools["B"]
    cluster, ran_on = run_jobs(a, tmp_path, JOBS)
    assert sum(ran_on.values()) == JOBS
    assert set(ran_on) <= {"exec-a", "exec-b1", "exec-b2"}, ran_on
    flocked = ran_on["exec-b1"] + ran_on["exec-b2"]
    assert flocked > 0, f"no job ran in pool B: {dict(ran_on)}"
    history = remote_pools(a, cluster)
    assert len(history) == JOBS
    assert history.count(pool_name(b)) == flocked, (history, dict(ran_on))
    users = priorities(b, "cm-b")
    a_users = job_users(a, cluster)
    remote = {name: row for name, row in users.items() if name in a_users}
    assert remote, f"pool B's accountant does not know A's user {sorted(a_users)}: {sorted(users)}"
    assert {row["PriorityFactor"] for row in remote.values()} == {REMOTE_PRIO_FACTOR}
    print(f"{JOBS} jobs: {dict(ran_on)}")


def test_a_schedd_not_in_flock_from_runs_everything_at_home(pools, tmp_path):
    """With B's FLOCK_FROM naming another host, B takes no Submitter ad from A's schedd:
    nothing runs in B, and every job still finishes on A's own slot."""
    a, b = pools["A"], pools["B"]
    wait_for(lambda: claimed_slots(b) == 0, 120, "pool B's slots released by A's schedd")
    cm_b = b["cm-b"]
    with open(cm_b.test_config_file, "a", encoding="utf-8") as config:
        config.write("FLOCK_FROM = elsewhere-*\n")
    b.stop("cm-b")
    b.start("cm-b")
    b.wait_ready("cm-b")
    wait_for(lambda: machines(b, "cm-b") == {"exec-b1", "exec-b2"}, 60, "pool B's execute hosts again")
    cluster, ran_on = run_jobs(a, tmp_path, 8)
    assert set(ran_on) == {"exec-a"}, dict(ran_on)
    assert set(remote_pools(a, cluster)) == {"undefined"}
    submitters = b.roost("cm-b", "status", "-submitters", "-af", "Name").stdout.split()
    assert not set(submitters) & job_users(a, cluster), submitters


def claimed_slots(pool) -> int:
    done = pool.roost("cm-b", "status", "-af", "State", check=False)
    return done.stdout.split().count("Claimed") if done.returncode == 0 else -1



def test_better_analyze_counts_the_slots_at_home_and_in_the_flock_pool(pools, tmp_path):
    """A job too big for A's execute host (512 MB) but not for B's (1024 MB each): `roost q
    -better-analyze` on A's submit host says no slot at home and both of B's can run it
    (B is asked with the CA and token pool B gave A, through the host's daemon token)."""
    a, b = pools["A"], pools["B"]
    (tmp_path / "big.sub").write_text("executable = /bin/true\nrequest_memory = 800M\nlog = big.log\nqueue\n")
    cluster = submitted_cluster(a.roost("submit-a", "submit", "big.sub", cwd=tmp_path))
    try:
        report = a.roost("submit-a", "q", "-better-analyze", str(cluster)).stdout
    finally:
        a.roost("submit-a", "rm", str(cluster), check=False)
    assert re.search(r"\(home\)\s+0 of 1\b", report), report
    assert re.search(rf"{pool_name(b)} \({B_CENTRAL_MANAGER}:9618\)\s+2 of 2\b", report), report
