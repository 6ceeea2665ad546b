"""Removing jobs straight from their stored text, one plan per cluster and status."""

import json

from jobmodel import states
from jobmodel.states import JobId, JobStatus
from schedd.queue.db import JobRow
from schedd.queue.stored import ChangeTexts, encode_texts
from schedd.queue.text_removal import removed

CLUSTER = {"owner": ("Owner", '"alice"'), "cmd": ("Cmd", '"/bin/true"')}


def row(proc: int, status: JobStatus, pairs) -> JobRow:
    return JobRow(1, proc, int(status), "alice", encode_texts(pairs), "alice")


def test_a_plan_writes_what_reading_each_text_writes():
    """A job removed by its cluster's plan gets the transition and history text the
    job read pair by pair gets (its own pairs, then the changed ones)."""
    plans: dict = {}
    for proc in range(3):
        job = row(proc, JobStatus.IDLE, [["ProcId", str(proc)], ["Args", '"x"']])
        by_plan = removed(job, CLUSTER, "bye", 100, ChangeTexts(), plans)
        by_text = removed(job, CLUSTER, "bye", 100, ChangeTexts())
        assert by_plan[0] == by_text[0] == states.removal(
            states.JobFacts(JobId(1, proc), JobStatus.IDLE, None, None), "bye", 100)
        assert json.loads(by_plan[1]) == [list(pair) for pair in by_text[1]]
    assert list(plans) == [(1, int(JobStatus.IDLE))]


def test_a_job_naming_what_removal_reads_is_read_for_itself():
    """A proc whose text sets its own RemoteHost, or a cluster keeping its jobs
    (LeaveJobInQueue = true), takes the slower way or none at all."""
    plans: dict = {}
    stale = row(0, JobStatus.HELD, [["ProcId", "0"], ["RemoteHost", '"slot1@gone"']])
    transition, history = removed(stale, CLUSTER, "bye", 100, ChangeTexts(), plans)
    assert transition.changes["LastRemoteHost"] == "slot1@gone"
    assert "remotehost" not in {name.lower() for name, _ in history}
    kept = {**CLUSTER, "leavejobinqueue": ("LeaveJobInQueue", "true")}
    assert removed(row(1, JobStatus.IDLE, [["ProcId", "1"]]), kept, "bye", 100, ChangeTexts(), {}) is None
    assert removed(row(2, JobStatus.RUNNING, [["ProcId", "2"]]), CLUSTER, "bye", 100, ChangeTexts(), {}) is None
