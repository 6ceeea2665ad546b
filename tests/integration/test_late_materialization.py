"""Late materialisation on a real personal pool (HTCondor's job factory: the manual's
"Submitting many similar jobs with late materialization", condor_submit's
max_materialize): a factory cluster never has more than max_materialize procs in the
queue and completes all of them; condor_rm of the cluster stops it; a schedd killed and
restarted by the master resumes it where it was."""

from __future__ import annotations

import os
import signal
import time

import pytest

import bindings as htcondor
from bindings.eventlog import JobEventLog, JobEventType
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import event_types, submitted_cluster
from tests.integration.test_jobs_restart import daemon_pids
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_NUM_CPUS": "4", "_ROOST_MASTER_BACKOFF_CONSTANT": "1"}


def submit(env, tmp_path, name: str, seconds: int, count: int, limit: int) -> int:
    (tmp_path / f"{name}.sub").write_text(
        f"executable = /bin/sleep\narguments = {seconds}\nlog = {name}.log\nrequest_memory = 16M\n"
        f"max_materialize = {limit}\nqueue {count}\n")
    done = roost(env, "submit", f"{name}.sub")
    assert f"{count} job(s) submitted" in done.stdout, done.stdout
    return submitted_cluster(done)


def present(cluster: int) -> list[int]:
    return sorted(ad["ProcId"] for ad in htcondor.Schedd().query(f"ClusterId == {cluster}", ["ProcId"]))


def most_in_queue(log_path) -> int:
    """The most procs the event log ever shows in the queue at once (submitted, not yet
    terminated or aborted): the log is written in the order things happened."""
    most = alive = 0
    for event in event_types(log_path):
        if event == JobEventType.SUBMIT:
            alive += 1
        elif event in (JobEventType.JOB_TERMINATED, JobEventType.JOB_ABORTED):
            alive -= 1
        most = max(most, alive)
    return most


def test_twenty_jobs_run_three_at_a_time_and_all_complete(pool, tmp_path, monkeypatch):
    """queue 20 with max_materialize = 3 on 4 slots: never more than 3 procs in the
    queue (polled and in the log's order), and all 20 complete."""
    monkeypatch.chdir(tmp_path)
    cluster = submit(pool["env"], tmp_path, "twenty", 1, 20, 3)
    seen = 0

    def finished() -> bool:
        nonlocal seen
        seen = max(seen, len(present(cluster)))
        return event_types(tmp_path / "twenty.log").count(JobEventType.JOB_TERMINATED) == 20
    wait_for(finished, seconds=180, step=0.2)
    assert seen <= 3
    types = event_types(tmp_path / "twenty.log")
    assert types.count(JobEventType.SUBMIT) == 20, types
    assert most_in_queue(tmp_path / "twenty.log") <= 3
    wait_for(lambda: present(cluster) == [], seconds=30)
    # the factory's cluster events (schedd.cpp WriteClusterSubmitToUserLog / WriteClusterRemoveToUserLog)
    wait_for(lambda: event_types(tmp_path / "twenty.log")[-1] == JobEventType.CLUSTER_REMOVE, seconds=30,
             what="036 Cluster removed once the last proc left")
    log = list(JobEventLog(str(tmp_path / "twenty.log")).events(stop_after=0))
    assert log[0].type == JobEventType.CLUSTER_SUBMIT and (log[0].cluster, log[0].proc) == (cluster, -1)
    assert [e.type for e in log].count(JobEventType.CLUSTER_REMOVE) == 1
    assert (log[-1]["NextProcId"], log[-1]["Completion"]) == (20, 1)


def test_removing_the_cluster_stops_the_factory(pool, tmp_path, monkeypatch):
    """condor_rm of the cluster removes the three present procs and no fourth is made."""
    monkeypatch.chdir(tmp_path)
    cluster = submit(pool["env"], tmp_path, "removed", 60, 20, 3)
    wait_for(lambda: present(cluster) == [0, 1, 2], seconds=30)
    roost(pool["env"], "rm", str(cluster))
    wait_for(lambda: present(cluster) == [], seconds=60)
    time.sleep(3)
    assert present(cluster) == []
    types = event_types(tmp_path / "removed.log")
    assert types[0] == JobEventType.CLUSTER_SUBMIT and types[-1] == JobEventType.CLUSTER_REMOVE, types
    assert event_types(tmp_path / "removed.log").count(JobEventType.SUBMIT) == 3


def test_a_killed_schedd_resumes_the_factory(pool, tmp_path, monkeypatch):
    """SIGKILL the schedd once two of six procs completed: the master restarts it and
    the factory goes on from the next proc id; every proc is submitted once and completes."""
    monkeypatch.chdir(tmp_path)
    env = pool["env"]
    cluster = submit(env, tmp_path, "resumed", 2, 6, 2)
    log = tmp_path / "resumed.log"
    wait_for(lambda: event_types(log).count(JobEventType.JOB_TERMINATED) >= 2, seconds=90)
    old = daemon_pids(env)["SCHEDD"]
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: daemon_pids(env).get("SCHEDD") not in (None, old), seconds=60)
    wait_for(lambda: event_types(log).count(JobEventType.JOB_TERMINATED) == 6, seconds=180)
    types = event_types(log)
    assert types.count(JobEventType.SUBMIT) == 6, types
    assert most_in_queue(log) <= 2
    wait_for(lambda: present(cluster) == [], seconds=30)
