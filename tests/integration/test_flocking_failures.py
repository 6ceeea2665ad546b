"""Flocking when things go wrong, and along a chain, on namespace pools
(tests/integration/test_flocking.py has the working case).

- Pool B's central manager stopped while jobs flocked there run: they finish (the
  schedd's claims on B's startds are direct), new jobs run at home while the schedd
  avoids the dead collector (``DEAD_COLLECTOR_MAX_AVOIDANCE_TIME``), and once B is back
  jobs flock to it again.
- ``FLOCK_TO = B, C`` with B unable to run anything (``START = false``): jobs reach C
  only after B's negotiator left them idle, and none runs in B.
- ``MIN_FLOCK_LEVEL = 0`` and few jobs on enough home slots: A's submitter never
  appears in another pool's collector.
"""

from __future__ import annotations

import time

import pytest

from tests.integration.test_flocking import machines, pool_name, remote_pools, trust_string, write_jobs
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.netns import netns_pools
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

#: Pool B is the second pool given to netns_pools (198.18.1.*), C the third; the central
#: manager is each pool's first host (.2).
B_CENTRAL_MANAGER = "198.18.1.2"
C_CENTRAL_MANAGER = "198.18.2.2"
#: Seconds the schedd keeps away from a flock collector whose update failed.
AVOIDANCE = "4"


def sleeping_job(seconds: int) -> str:
    """job.sh copying its input to its output, naming the host, then sleeping."""
    return ("#!/bin/sh\n"
            'cat "in_$1.txt" > "out_$1.txt"\n'
            'echo "ran on $(hostname)" >> "out_$1.txt"\n'
            f"sleep {seconds}\n")


def submit(pool, directory, count: int, seconds: int) -> int:
    """``count`` jobs of ``seconds`` submitted on A's submit host from ``directory``; the cluster."""
    directory.mkdir(parents=True, exist_ok=True)
    write_jobs(directory, count)
    (directory / "job.sh").write_text(sleeping_job(seconds))
    return submitted_cluster(pool.roost("submit-a", "submit", "job.sub", cwd=directory))


def wait_done(pool, directory, seconds: int = 120) -> None:
    """Every job of the cluster submitted from ``directory`` has finished."""
    pool.roost("submit-a", "wait", "-wait", str(seconds), "job.log", cwd=directory, timeout=seconds + 20)


def running_in(pool, cluster: int) -> list[str]:
    """``RemotePool`` of each running job of the cluster ("undefined" for those at home)."""
    done = pool.roost("submit-a", "q", "-af", "RemotePool", "-constraint",
                      f"ClusterId == {cluster} && JobStatus == 2", check=False)
    return done.stdout.split() if done.returncode == 0 else []


def trust_each_other(home, home_cm: str, other, other_cm: str) -> None:
    """`roost pool trust`: the offer made on ``home`` accepted on ``other``, the answer given back."""
    offer = trust_string(home.roost(home_cm, "pool", "trust").stdout, "offer")
    answer = trust_string(other.roost(other_cm, "pool", "trust", offer).stdout, "answer")
    home.roost(home_cm, "pool", "trust", answer)


def schedd_log(pool) -> str:
    return (pool["submit-a"].log_dir / "ScheddLog").read_text(errors="replace")


# --- B's central manager goes away and comes back ---

TWO_POOLS = {
    "A": {"cm-a": ["CentralManager"], "submit-a": ["Submit"], "exec-a": ["Execute"]},
    "B": {"cm-b": ["CentralManager"], "exec-b": ["Execute"]},
}
TWO_POOLS_CONFIG = {
    "exec-a": {"NUM_CPUS": "1", "MEMORY": "512"},
    "exec-b": {"NUM_CPUS": "2", "MEMORY": "1024"},
    "submit-a": {"FLOCK_TO": B_CENTRAL_MANAGER, "DEAD_COLLECTOR_MAX_AVOIDANCE_TIME": AVOIDANCE},
    "cm-b": {"FLOCK_FROM": "submit-a"},
}


@pytest.fixture(scope="module")
def two_pools():
    with netns_pools(TWO_POOLS, host_config=TWO_POOLS_CONFIG) as made:
        a, b = made["A"], made["B"]
        wait_for(lambda: machines(a, "submit-a") == {"exec-a"}, 60, "exec-a in pool A's `roost status`")
        wait_for(lambda: machines(b, "cm-b") == {"exec-b"}, 60, "exec-b in pool B's `roost status`")
        trust_each_other(a, "cm-a", b, "cm-b")
        yield made


def test_flocked_jobs_outlive_the_remote_central_manager_and_flocking_resumes(two_pools, tmp_path):
    """Jobs running in B finish after B's central manager stops; jobs submitted while it
    is gone run at home; once it is back, jobs flock to B again."""
    a, b = two_pools["A"], two_pools["B"]
    first = submit(a, tmp_path / "first", 3, 12)
    wait_for(lambda: running_in(a, first).count(pool_name(b)) == 2, 60, "two jobs running in pool B")
    b.stop("cm-b")
    wait_done(a, tmp_path / "first")
    assert remote_pools(a, first).count(pool_name(b)) == 2

    during = submit(a, tmp_path / "during", 3, 1)
    wait_done(a, tmp_path / "during")
    assert set(remote_pools(a, during)) == {"undefined"}
    assert f"pool {pool_name(b)}" in schedd_log(a)  # the failed update, naming the pool

    b.start("cm-b")
    b.wait_ready("cm-b")
    wait_for(lambda: machines(b, "cm-b") == {"exec-b"}, 60, "exec-b in pool B's `roost status` again")
    after = submit(a, tmp_path / "after", 6, 3)
    wait_done(a, tmp_path / "after")
    assert pool_name(b) in remote_pools(a, after), "no job flocked to B after it came back"


# --- three pools: a chain, and a pool that needs no help ---

THREE_POOLS = {
    "A": {"cm-a": ["CentralManager"], "submit-a": ["Submit"], "exec-a": ["Execute"]},
    "B": {"cm-b": ["CentralManager"], "exec-b": ["Execute"]},
    "C": {"cm-c": ["CentralManager"], "exec-c": ["Execute"]},
}
THREE_POOLS_CONFIG = {
    "exec-a": {"NUM_CPUS": "2", "MEMORY": "512"},
    "exec-b": {"NUM_CPUS": "2", "MEMORY": "1024", "START": "false"},
    "exec-c": {"NUM_CPUS": "2", "MEMORY": "1024"},
    "submit-a": {"FLOCK_TO": f"{B_CENTRAL_MANAGER}, {C_CENTRAL_MANAGER}", "MIN_FLOCK_LEVEL": "0"},
    "cm-b": {"FLOCK_FROM": "submit-a"},
    "cm-c": {"FLOCK_FROM": "submit-a"},
}


@pytest.fixture(scope="module")
def three_pools():
    with netns_pools(THREE_POOLS, host_config=THREE_POOLS_CONFIG) as made:
        a, b, c = made["A"], made["B"], made["C"]
        wait_for(lambda: machines(a, "submit-a") == {"exec-a"}, 60, "exec-a in pool A's `roost status`")
        wait_for(lambda: machines(b, "cm-b") == {"exec-b"}, 60, "exec-b in pool B's `roost status`")
        wait_for(lambda: machines(c, "cm-c") == {"exec-c"}, 60, "exec-c in pool C's `roost status`")
        trust_each_other(a, "cm-a", b, "cm-b")
        trust_each_other(a, "cm-a", c, "cm-c")
        yield made


def own_submitters(a, pool, host: str) -> list[str]:
    """The submitters A's schedd advertised to ``pool``'s collector (``ScheddName`` submit-a)."""
    done = pool.roost(host, "status", "-submitters", "-af", "Name", "ScheddName", check=False)
    rows = [line.split() for line in done.stdout.splitlines()] if done.returncode == 0 else []
    return [row[0] for row in rows if len(row) == 2 and "submit-a" in row[1]]


def test_a_pool_that_runs_everything_never_advertises_elsewhere(three_pools, tmp_path):
    """MIN_FLOCK_LEVEL = 0 and two short jobs for A's two slots: while they run, neither
    B's nor C's collector ever holds A's submitter, and both jobs ran at home."""
    a, b, c = three_pools["A"], three_pools["B"], three_pools["C"]
    directory = tmp_path / "home"
    cluster = submit(a, directory, 2, 4)
    seen: set[str] = set()
    deadline = time.monotonic() + 60
    while not (directory / "out_0.txt").exists() or not (directory / "out_1.txt").exists():
        assert time.monotonic() < deadline, "the two jobs did not finish in 60 s"
        seen.update(own_submitters(a, b, "cm-b"), own_submitters(a, c, "cm-c"))
        time.sleep(0.5)
    wait_done(a, directory)
    assert not seen, f"A's submitters reached another pool: {seen}"
    assert set(remote_pools(a, cluster)) == {"undefined"}


def test_jobs_reach_the_second_pool_only_after_the_first_left_them_idle(three_pools, tmp_path):
    """FLOCK_TO = B, C and B runs nothing: A's submitter is advertised to B first (its
    collector holds it), A's schedd logs going on to C because B's negotiator left its
    jobs idle before any job is claimed in C, and every job ran at home or in C."""
    a, b, c = three_pools["A"], three_pools["B"], three_pools["C"]
    directory = tmp_path / "chain"
    cluster = submit(a, directory, 10, 3)
    wait_for(lambda: own_submitters(a, b, "cm-b"), 60, "A's submitter in pool B's collector")
    wait_done(a, directory, 150)
    where = remote_pools(a, cluster)
    assert pool_name(b) not in where, where
    assert pool_name(c) in where, f"no job reached pool C: {where}"
    assert set(where) <= {"undefined", pool_name(c)}, where
    log = schedd_log(a)
    to_c = log.find(f"to 2 ({C_CENTRAL_MANAGER}:9618): the negotiator of level 1 left")
    assert to_c >= 0, "A's schedd did not log flocking on to C because B's negotiator left jobs idle"
    assert to_c < log.find(f" in pool {pool_name(c)}"), "a job was claimed in C before B's level failed"
