"""Jobs survive a cut link, on four hosts (network namespaces): a central manager, a
submit host and two execute hosts. Jobs run on exec1 (exec2 is drained meanwhile):

- exec1's link cut for less than the jobs' JobLeaseDuration: they keep running there
  and finish, each with 022 (disconnected) and 023 (reconnected) in the user log;
- cut for longer than the lease: 024 (reconnect failed), the jobs run again and
  complete on exec2, and when the link returns exec1 holds no claim and no process of
  theirs (its startd killed the orphaned runs when its own lease on the claims ran out).
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

HOSTS = {"cm": ["CentralManager"], "submit": ["Submit"], "exec1": ["Execute"], "exec2": ["Execute"]}
#: The schedd renews its claims every 2 s, so a cut shows as 022 within seconds.
POOL_CONFIG = {"NUM_CPUS": "4", "MEMORY": "2048", "ALIVE_INTERVAL": "2", "STARTER_UPDATE_INTERVAL": "2"}
LEASE = 20
SHORT_CUT = 9

#: The first run records its process and where it ran, then sleeps; a later run of the
#: same job ends at once, saying where it ran.
JOB = """#!/bin/sh
if [ -e "$1/pid-$2" ]; then echo "rerun on $(hostname)" > "$1/rerun-$2"; exit 0; fi
echo "$(hostname)" > "$1/host-$2"
echo $$ > "$1/pid-$2"
exec sleep "$3"
"""


def submit(pool, directory, shared, name, seconds):
    """Two jobs of two cores each (exec1's four cores hold both), with a short lease."""
    (directory / "job.sh").write_text(JOB)
    (directory / "job.sh").chmod(0o755)
    (directory / f"{name}.sub").write_text(
        f"executable = job.sh\narguments = {shared} {name}$(Process) {seconds}\nlog = {name}.log\n"
        f"job_lease_duration = {LEASE}\nrequest_cpus = 2\nrequest_memory = 32M\nqueue 2\n")
    return submitted_cluster(pool.roost("submit", "submit", f"{name}.sub", cwd=directory))


def events(log) -> dict[int, list[JobEventType]]:
    """Each proc's event types, in order."""
    found = collections.defaultdict(list)
    if log.exists():
        for event in JobEventLog(str(log)).events(stop_after=0):
            found[event.proc].append(event.type)
    return found


def all_have(log, event_type, count=2) -> bool:
    return sum(1 for types in events(log).values() if event_type in types) == count


def claimed_on(pool, host) -> list[str]:
    """The dynamic slots of ``host`` the collector knows (seen from the submit host)."""
    done = pool.roost("submit", "status", "-af", "Name", "-constraint",
                      f'Machine == "{host}" && DynamicSlot =?= true', check=False)
    return done.stdout.split() if done.returncode == 0 else ["(status failed)"]


def running(pid_file) -> bool:
    try:
        os.kill(int(pid_file.read_text()), 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def hosts():
    """The four hosts, exec2 drained so jobs start on exec1."""
    with netns_pool(HOSTS, POOL_CONFIG) as pool:
        wait_for(lambda: set(pool.roost("submit", "status", "-af", "Machine", check=False).stdout.split())
                 == {"exec1", "exec2"}, 60, "both execute hosts in `roost status`")
        pool.roost("submit", "drain", "exec2")
        yield pool


def test_a_cut_shorter_than_the_lease_costs_nothing(hosts, tmp_path, shared_dir):
    """exec1 cut for 9 s of a 20 s lease: both jobs finish on exec1, with 022 then 023."""
    submit(hosts, tmp_path, shared_dir, "short", 14)
    log = tmp_path / "short.log"
    wait_for(lambda: all_have(log, JobEventType.EXECUTE), 60, "both jobs executing")
    wait_for(lambda: all((shared_dir / f"pid-short{n}").exists() for n in range(2)), 20, "both jobs started")
    hosts.cut("exec1")
    try:
        wait_for(lambda: all_have(log, JobEventType.JOB_DISCONNECTED), SHORT_CUT, "022 for both jobs")
        time.sleep(max(0.0, SHORT_CUT - 6))
    finally:
        hosts.restore("exec1")
    wait_for(lambda: all_have(log, JobEventType.JOB_TERMINATED), 40, "both jobs terminated")
    for proc, types in events(log).items():
        assert types.count(JobEventType.EXECUTE) == 1, (proc, types)
        after = types[types.index(JobEventType.JOB_DISCONNECTED):]
        assert JobEventType.JOB_RECONNECTED in after, (proc, types)
        assert JobEventType.JOB_RECONNECT_FAILED not in types and JobEventType.JOB_EVICTED not in types
        assert (shared_dir / f"host-short{proc}").read_text().strip() == "exec1"
        assert not (shared_dir / f"rerun-short{proc}").exists()


def test_a_cut_longer_than_the_lease_moves_the_jobs_and_the_orphans_are_killed(hosts, tmp_path, shared_dir):
    """exec1 cut past the lease: 024, the jobs complete on exec2; after the restore exec1
    holds none of their claims and their processes there are gone."""
    submit(hosts, tmp_path, shared_dir, "long", 300)
    log = tmp_path / "long.log"
    wait_for(lambda: all_have(log, JobEventType.EXECUTE), 60, "both jobs executing")
    wait_for(lambda: all((shared_dir / f"pid-long{n}").exists() for n in range(2)), 20, "both jobs started")
    assert {(shared_dir / f"host-long{n}").read_text().strip() for n in range(2)} == {"exec1"}
    hosts.roost("submit", "drain", "-cancel", "exec2")
    hosts.cut("exec1")
    try:
        wait_for(lambda: all_have(log, JobEventType.JOB_RECONNECT_FAILED), LEASE + 15, "024 for both jobs")
        wait_for(lambda: all_have(log, JobEventType.JOB_TERMINATED), 30, "both jobs completed elsewhere")
        for n in range(2):
            assert (shared_dir / f"rerun-long{n}").read_text().strip() == "rerun on exec2"
        wait_for(lambda: not any(running(shared_dir / f"pid-long{n}") for n in range(2)), 10,
                 "exec1's startd killing the orphaned runs at the end of its lease")
    finally:
        hosts.restore("exec1")
    wait_for(lambda: claimed_on(hosts, "exec1") == [], 20, "exec1 advertising no claimed slot")
    for proc, types in events(log).items():
        assert JobEventType.JOB_DISCONNECTED in types and types.count(JobEventType.EXECUTE) == 2, (proc, types)
