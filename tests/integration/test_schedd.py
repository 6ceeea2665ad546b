"""The schedd in a real personal pool (`roost pool up`): submitting a real submit
file, queries, hold/release/remove with reasons, refused edits, another user's jobs,
periodic_remove, the event log, history, and a kill -9 during a stream of submits."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import bindings as htcondor
from daemoncore.security import issue_token, load_signing_key
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.daemon_routes import PING
from daemoncore.wire.errors import RemoteError, Unreachable
from tests.integration.conftest import roost
from tests.support.waiting import wait_for

#: Periodic expressions run every second, and ads go out every two.
POOL_ENV = {"_ROOST_PERIODIC_EXPR_INTERVAL": "1", "_ROOST_SCHEDD_INTERVAL": "2"}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_submit_file_then_query_with_constraints_and_projections(pool, workdir):
    (workdir / "job.sub").write_text("executable = /bin/sleep\narguments = 600\nlog = job.log\n"
                                     "request_memory = 64M\nqueue 4\n")
    done = roost(pool["env"], "submit", "job.sub", "-batch-name", "naps")
    assert "4 job(s) submitted to cluster" in done.stdout
    cluster = int(done.stdout.strip().rsplit(" ", 1)[1].rstrip("."))
    schedd = htcondor.Schedd()
    ads = schedd.query(f"ClusterId == {cluster} && ProcId >= 2", ["ProcId", "JobStatus", "JobBatchName"])
    assert [(ad["ProcId"], ad["JobStatus"], ad["JobBatchName"]) for ad in ads] == [(2, 1, "naps"), (3, 1, "naps")]
    q = roost(pool["env"], "q", "-af", "ClusterId", "ProcId", "-constraint", f"ClusterId == {cluster}")
    assert q.stdout.split("\n")[:4] == [f"{cluster} {p}" for p in range(4)]
    batch = roost(pool["env"], "q").stdout
    assert "naps" in batch and "Total for query:" in batch


def test_hold_release_remove_with_reasons_then_event_log_and_history(pool, workdir):
    schedd = htcondor.Schedd()
    result = schedd.submit(htcondor.Submit("executable = /bin/sleep\narguments = 600\nlog = events.log\nqueue 2\n"))
    cluster = result.cluster()
    assert result.num_procs() == 2
    roost(pool["env"], "hold", f"{cluster}.0", "-reason", "disk is full")
    [held] = schedd.query(f"ClusterId == {cluster} && ProcId == 0", ["JobStatus", "HoldReason"])
    assert (held["JobStatus"], held["HoldReason"]) == (5, "disk is full")
    assert "disk is full" in roost(pool["env"], "q", "-hold").stdout
    schedd.act(htcondor.JobAction.Release, f"{cluster}.0", "disk freed")
    roost(pool["env"], "rm", str(cluster), "-reason", "no longer needed")
    assert schedd.query(f"ClusterId == {cluster}") == []
    gone = list(schedd.history(f"ClusterId == {cluster}", ["ProcId", "RemoveReason", "JobStatus"]))
    assert sorted((ad["ProcId"], ad["RemoveReason"], ad["JobStatus"]) for ad in gone) == [
        (0, "no longer needed", 3), (1, "no longer needed", 3)]
    history_cli = roost(pool["env"], "history", "-af", "ProcId", "RemoveReason", "-constraint", f"ClusterId == {cluster}")
    assert "no longer needed" in history_cli.stdout
    events = [(e.type, e.proc) for e in htcondor.JobEventLog(str(workdir / "events.log")).events(stop_after=0)]
    T = htcondor.JobEventType
    assert events == [(T.SUBMIT, 0), (T.SUBMIT, 1), (T.JOB_HELD, 0), (T.JOB_RELEASED, 0),
                      (T.JOB_ABORTED, 0), (T.JOB_ABORTED, 1)]


def test_protected_edits_are_refused_and_others_allowed(pool, workdir):
    schedd = htcondor.Schedd()
    cluster = schedd.submit(htcondor.Submit("executable = /bin/sleep\nqueue\n")).cluster()
    assert schedd.edit(f"{cluster}.0", "JobPrio", "7") == 1
    with pytest.raises(RemoteError) as refused:
        schedd.edit(f"{cluster}.0", "Owner", '"mallory"')
    assert refused.value.status == 403 and "protected" in refused.value.message
    [ad] = schedd.query(f"ClusterId == {cluster}", ["JobPrio", "Owner"])
    assert ad["JobPrio"] == 7 and ad["Owner"] != "mallory"
    cli = roost(pool["env"], "qedit", f"{cluster}.0", "ClusterId", "5", check=False)
    assert cli.returncode == 1 and "protected" in cli.stderr


def test_another_users_jobs_are_untouchable(pool, workdir, monkeypatch):
    """Eve can neither remove, hold nor edit bob's jobs. They never match (requirements
    = false), so they stay Idle whatever the negotiator does meanwhile."""
    key = load_signing_key(str(pool["dir"] / "passwords.d" / "POOL"))
    bob_token = workdir / "bob.token"
    bob_token.write_text(issue_token(key, "bob@pool", ["WRITE"]) + "\n")
    monkeypatch.setenv("ROOST_TOKEN", str(bob_token))
    bob = htcondor.Schedd()
    cluster = bob.submit(htcondor.Submit("executable = /bin/sleep\n+Owner = \"alice\"\n"
                                     "requirements = false\nqueue 2\n")).cluster()
    assert {ad["Owner"] for ad in bob.query(f"ClusterId == {cluster}", ["Owner"])} == {"bob"}
    eve_token = workdir / "eve.token"
    eve_token.write_text(issue_token(key, "eve@pool", ["WRITE"]) + "\n")
    monkeypatch.setenv("ROOST_TOKEN", str(eve_token))
    eve = htcondor.Schedd()
    with pytest.raises(RemoteError) as refused:
        eve.act(htcondor.JobAction.Remove, f"{cluster}.0")
    assert refused.value.status == 403 and "bob" in refused.value.message
    assert eve.act(htcondor.JobAction.Hold, f"ClusterId == {cluster}")["TotalSuccess"] == 0
    with pytest.raises(RemoteError):
        eve.edit(str(cluster), "JobPrio", "1")
    env = dict(pool["env"], ROOST_TOKEN=str(eve_token))
    assert roost(env, "rm", f"{cluster}.1", check=False).returncode == 1
    monkeypatch.delenv("ROOST_TOKEN")
    ads = htcondor.Schedd().query(f"ClusterId == {cluster}", ["JobStatus", "JobPrio"])
    assert [(ad["JobStatus"], ad["JobPrio"]) for ad in ads] == [(1, 0), (1, 0)]


def test_periodic_remove_fires(pool, workdir):
    schedd = htcondor.Schedd()
    cluster = schedd.submit(htcondor.Submit(
        "executable = /bin/sleep\nlog = policy.log\nperiodic_remove = (time() - QDate) >= 1\nqueue\n")).cluster()
    wait_for(lambda: schedd.query(f"ClusterId == {cluster}") == [])
    [gone] = schedd.history(f"ClusterId == {cluster}", ["RemoveReason"])
    assert "periodic" in gone["RemoveReason"].lower()
    events = [e.type for e in htcondor.JobEventLog(str(workdir / "policy.log")).events(stop_after=0)]
    assert events == [htcondor.JobEventType.SUBMIT, htcondor.JobEventType.JOB_ABORTED]


def test_submitter_and_scheduler_ads_reach_the_collector(pool, workdir):
    schedd = htcondor.Schedd()
    schedd.submit(htcondor.Submit("executable = /bin/sleep\nqueue\n"))
    collector = htcondor.Collector()
    submitters = wait_for(lambda: collector.query(htcondor.AdType.Submitter))
    assert all("IdleJobs" in ad and "ScheddIpAddr" in ad for ad in submitters)
    [scheduler] = collector.query(htcondor.AdType.Schedd)
    assert scheduler["TotalIdleJobs"] >= 1


def _schedd_pid(schedd) -> int:
    return BlockingClient(schedd.address, timeout=5).call(PING)["pid"]


def test_kill_9_during_submits_loses_no_acknowledged_job(pool, workdir):
    """Every acknowledged cluster is there after the master restarts the schedd; at
    most the one submit in flight at the kill may also be there, whole."""
    text = "executable = /bin/sleep\nqueue 5\n"
    acknowledged: list[int] = []
    stop = threading.Event()
    attempts = {"n": 0}

    def submit_forever():
        schedd = htcondor.Schedd()
        while not stop.is_set():
            attempts["n"] += 1
            try:
                acknowledged.append(schedd.submit(htcondor.Submit(text)).cluster())
            except (Unreachable, RemoteError, OSError, ValueError):
                time.sleep(0.1)
                try:
                    schedd = htcondor.Schedd()
                except Exception:
                    pass

    before = {ad["ClusterId"] for ad in htcondor.Schedd().query("true", ["ClusterId"])}
    pid = _schedd_pid(htcondor.Schedd())
    worker = threading.Thread(target=submit_forever, daemon=True)
    worker.start()
    wait_for(lambda: len(acknowledged) >= 5, seconds=30, step=0.05)
    os.kill(pid, signal.SIGKILL)
    count_at_kill = len(acknowledged)
    wait_for(lambda: len(acknowledged) >= count_at_kill + 3, seconds=60)
    stop.set()
    worker.join(timeout=30)
    assert _schedd_pid(htcondor.Schedd()) != pid
    ads = htcondor.Schedd().query("true", ["ClusterId", "ProcId"])
    present: dict[int, set[int]] = {}
    for ad in ads:
        present.setdefault(ad["ClusterId"], set()).add(ad["ProcId"])
    new = set(present) - before
    assert set(acknowledged) <= new
    assert len(new - set(acknowledged)) <= 1
    assert all(present[cluster] == set(range(5)) for cluster in new)
