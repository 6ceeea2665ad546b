"""condor_drain on a personal pool: a graceful drain lets the running job finish and
starts no other, the slots show Drained, and -cancel lets the queued jobs run; a fast
drain kills the running job, which goes back to Idle and runs once the drain is cancelled."""

from __future__ import annotations

import time

import pytest

from bindings.collector import Collector
from bindings.enums import AdType
from bindings.eventlog import JobEventType
from bindings.schedd import Schedd
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import event_types, submitted_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_NUM_CPUS": "2", "_ROOST_STARTER_UPDATE_INTERVAL": "2"}

#: Says it started (by its process number), then runs for a while; a second run of the
#: same job ends at once.
JOB = """#!/bin/sh
if [ -e "$1/started-$2" ]; then exit 0; fi
echo started > "$1/started-$2"
sleep "$3"
"""

IDLE = 1


def machine() -> str:
    [name] = {ad["Machine"] for ad in Collector().query(AdType.Startd, projection=["Machine"])}
    return name


def slot_states() -> dict[str, str]:
    ads = Collector().query(AdType.Startd, projection=["Name", "State", "Activity"])
    return {ad["Name"]: f"{ad['State']}/{ad['Activity']}" for ad in ads}


def submit(env, tmp_path, name, seconds, count, shared_dir):
    (tmp_path / "job.sh").write_text(JOB)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / f"{name}.sub").write_text(
        f"executable = job.sh\narguments = {shared_dir} {name}$(Process) {seconds}\nlog = {name}.log\n"
        f"request_cpus = 2\nrequest_memory = 32M\nqueue {count}\n")
    return submitted_cluster(roost(env, "submit", f"{name}.sub"))


def started(shared_dir, name) -> list[str]:
    return sorted(p.name for p in shared_dir.glob(f"started-{name}*"))


def test_graceful_drain_lets_the_job_finish_starts_no_other_and_cancel_lets_them_run(pool, tmp_path, monkeypatch,
                                                                                      shared_dir):
    """Three jobs that each take the whole machine: drained while the first runs, it
    finishes, the others stay idle, the slot is Drained; -cancel runs them."""
    monkeypatch.chdir(tmp_path)
    env = pool["env"]
    submit(env, tmp_path, "g", 4, 3, shared_dir)
    wait_for(lambda: len(started(shared_dir, "g")) == 1, seconds=60)
    host = machine()
    done = roost(env, "drain", "-reason", "disk swap", host)
    assert done.stdout.startswith(f"Sent request to drain {host} (graceful)")
    wait_for(lambda: event_types(tmp_path / "g.log").count(JobEventType.JOB_TERMINATED) == 1, seconds=30)
    wait_for(lambda: set(slot_states().values()) == {"Drained/Idle"}, seconds=10)
    [ad] = Collector().query(AdType.Startd, projection=["Draining", "DrainReason", "Start"])
    assert ad["Draining"] is True and ad["DrainReason"] == "disk swap"
    time.sleep(4)  # several negotiation cycles: nothing may start on a drained machine
    assert len(started(shared_dir, "g")) == 1
    assert event_types(tmp_path / "g.log").count(JobEventType.EXECUTE) == 1
    assert roost(env, "drain", "-cancel", host).stdout == f"Sent request to cancel draining on {host}\n"
    wait_for(lambda: event_types(tmp_path / "g.log").count(JobEventType.JOB_TERMINATED) == 3, seconds=60)
    assert len(started(shared_dir, "g")) == 3
    again = roost(env, "drain", "-cancel", host, check=False)
    assert again.returncode == 1 and "not draining" in again.stderr


def test_fast_drain_kills_the_running_job_which_goes_back_to_idle(pool, tmp_path, monkeypatch, shared_dir):
    """-fast: the job is killed at once (evicted, Idle again), the slot Drained; after -cancel it completes."""
    monkeypatch.chdir(tmp_path)
    env = pool["env"]
    cluster = submit(env, tmp_path, "f", 300, 1, shared_dir)
    wait_for(lambda: started(shared_dir, "f") and JobEventType.EXECUTE in event_types(tmp_path / "f.log"),
             seconds=60)
    host = machine()
    roost(env, "drain", "-fast", host)
    wait_for(lambda: JobEventType.JOB_EVICTED in event_types(tmp_path / "f.log"), seconds=20)
    wait_for(lambda: [ad["JobStatus"] for ad in Schedd().query(f"ClusterId == {cluster}", ["JobStatus"])] == [IDLE],
             seconds=20)
    wait_for(lambda: set(slot_states().values()) == {"Drained/Idle"}, seconds=10)
    roost(env, "drain", "-cancel", host)
    wait_for(lambda: JobEventType.JOB_TERMINATED in event_types(tmp_path / "f.log"), seconds=60)


def test_draining_an_unknown_machine_says_so(pool):
    """A machine the collector does not know: one line naming it, status 1, nothing drained."""
    done = roost(pool["env"], "drain", "no-such-host.example", check=False)
    assert done.returncode == 1 and "knows no machine named 'no-such-host.example'" in done.stderr
    assert "Drained" not in " ".join(slot_states().values())
