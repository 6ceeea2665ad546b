"""Gangs on a pool of five hosts (network namespaces): a central manager, a submit
host and three execute hosts of one core each. A parallel universe job of
``machine_count = 3``:

- with exec3 drained (two free slots) no piece ever starts;
- once exec3 is back all three start together, each told its node number, the gang's
  size and every piece's place (``_CONDOR_PROCNO``, ``_CONDOR_NPROCS``,
  ``ROOST_GANG_HOSTS``, ``_CONDOR_CONTACT_FILE``);
- stopping the startd of one piece's host sends that piece back to Idle, and after
  ``GANG_STALE_GRACE`` the schedd vacates the other two: the whole gang is Idle again
  (004 for each piece), and with two slots left it stays so.
"""

from __future__ import annotations

import collections
import os
import time

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.netns import netns_pool
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

HOSTS = {"cm": ["CentralManager"], "submit": ["Submit"], "exec1": ["Execute"], "exec2": ["Execute"],
         "exec3": ["Execute"]}
POOL_CONFIG = {"NUM_CPUS": "1", "MEMORY": "1024", "ALIVE_INTERVAL": "2", "STARTER_UPDATE_INTERVAL": "2",
               "GANG_STALE_GRACE": "6"}

#: Each piece writes what it was told into the shared directory, then sleeps.
PIECE = """#!/bin/sh
echo "$_CONDOR_PROCNO $_CONDOR_NPROCS $ROOST_GANG_HOSTS $(hostname)" > "$1/env-$_CONDOR_PROCNO"
cat "$_CONDOR_CONTACT_FILE" > "$1/contact-$_CONDOR_PROCNO"
echo $$ > "$1/pid-$_CONDOR_PROCNO"
exec sleep 600
"""


def events(log) -> dict[int, list[tuple[JobEventType, float]]]:
    found = collections.defaultdict(list)
    if log.exists():
        for event in JobEventLog(str(log)).events(stop_after=0):
            found[event.proc].append((event.type, event.timestamp))
    return found


def kinds(log, proc) -> list[JobEventType]:
    return [kind for kind, _ in events(log)[proc]]


def states(pool, cluster) -> list[str]:
    done = pool.roost("submit", "q", "-af", "JobStatus", "-constraint", f"ClusterId == {cluster}", check=False)
    return sorted(done.stdout.split())


def running(pid_file) -> bool:
    try:
        os.kill(int(pid_file.read_text()), 0)
    except (ProcessLookupError, FileNotFoundError, ValueError):
        return False
    return True


@pytest.fixture(scope="module")
def pool():
    with netns_pool(HOSTS, POOL_CONFIG) as pool:
        wait_for(lambda: set(pool.roost("submit", "status", "-af", "Machine", check=False).stdout.split())
                 == {"exec1", "exec2", "exec3"}, 60, "the three execute hosts in `roost status`")
        yield pool


def test_a_gang_starts_whole_or_not_at_all_and_is_vacated_whole(pool, tmp_path, shared_dir):
    pool.roost("submit", "drain", "exec3")
    (tmp_path / "piece.sh").write_text(PIECE)
    (tmp_path / "piece.sh").chmod(0o755)
    (tmp_path / "gang.sub").write_text(
        f"universe = parallel\nexecutable = piece.sh\narguments = {shared_dir}\nmachine_count = 3\n"
        "request_cpus = 1\nrequest_memory = 32M\nlog = gang.log\nqueue\n")
    cluster = submitted_cluster(pool.roost("submit", "submit", "gang.sub", cwd=tmp_path))
    log = tmp_path / "gang.log"
    assert states(pool, cluster) == ["1", "1", "1"]

    time.sleep(12)  # several negotiation cycles with two free slots
    assert all(JobEventType.EXECUTE not in kinds(log, proc) for proc in range(3)), events(log)
    assert states(pool, cluster) == ["1", "1", "1"]
    assert not list(shared_dir.glob("env-*"))

    pool.roost("submit", "drain", "-cancel", "exec3")
    wait_for(lambda: all(JobEventType.EXECUTE in kinds(log, proc) for proc in range(3)), 60, "all three pieces executing")
    started = [next(t for kind, t in events(log)[proc] if kind is JobEventType.EXECUTE) for proc in range(3)]
    assert max(started) - min(started) <= 3, started
    wait_for(lambda: all((shared_dir / f"contact-{proc}").exists() for proc in range(3)), 20, "every piece's report")
    told = [(shared_dir / f"env-{proc}").read_text().split() for proc in range(3)]
    hosts = told[0][2]
    assert [(t[0], t[1], t[2]) for t in told] == [("0", "3", hosts), ("1", "3", hosts), ("2", "3", hosts)]
    places = hosts.split(",")
    assert sorted(place.split(":")[0] for place in places) == ["exec1", "exec2", "exec3"]
    assert [t[3] for t in told] == [place.split(":")[0] for place in places]
    contact = (shared_dir / "contact-1").read_text().splitlines()
    assert contact == [f"{n} {place.replace(':', ' ')}" for n, place in enumerate(places)]

    lost_host = told[1][3]
    pool.stop(lost_host)
    wait_for(lambda: all(JobEventType.JOB_EVICTED in kinds(log, proc) for proc in range(3)), 60,
             "every piece evicted (the lost one, then the others after GANG_STALE_GRACE)")
    wait_for(lambda: states(pool, cluster) == ["1", "1", "1"], 20, "the whole gang Idle")
    others = [proc for proc in range(3) if told[proc][3] != lost_host]
    wait_for(lambda: not any(running(shared_dir / f"pid-{proc}") for proc in others), 20,
             "the other pieces' processes gone")
    time.sleep(8)  # two slots left: the gang never starts in part
    assert states(pool, cluster) == ["1", "1", "1"]
    assert all(kinds(log, proc).count(JobEventType.EXECUTE) == 1 for proc in range(3)), events(log)
