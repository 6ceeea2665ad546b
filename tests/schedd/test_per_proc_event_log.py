"""Each proc's events go to the event log its own ad names (HTCondor: the shadow and
schedd write a job's events to the UserLog of that job's ad, relative to its Iwd;
condor_submit manual, ``log`` and ``initialdir``)."""

from __future__ import annotations

from bindings.eventlog import JobEventLog, JobEventType
from tests.schedd.test_service import call, schedd, submit  # noqa: F401 - fixtures

PER_DIRECTORY = "executable = /bin/sleep\narguments = 60\ninitialdir = run$(Process)\nlog = x.log\nqueue 3\n"


def _events(path):
    return [(e.type, e.cluster, e.proc) for e in JobEventLog(str(path)).events(stop_after=0)]


def test_initialdir_per_proc_puts_one_log_in_each_directory(call, tmp_path):  # noqa: F811
    """``initialdir = run$(Process)`` with ``log = x.log``: run0/x.log holds only proc 0's
    events, run1/x.log only proc 1's, and so on, for submit and later actions alike."""
    for proc in range(3):
        (tmp_path / f"run{proc}").mkdir()
    assert submit(call, tmp_path, PER_DIRECTORY, who="me").status == 200
    call("/v1/jobs/act", {"action": "Hold", "ids": ["1.1"], "reason": "look"}, "me")
    assert _events(tmp_path / "run0" / "x.log") == [(JobEventType.SUBMIT, 1, 0)]
    assert _events(tmp_path / "run1" / "x.log") == [(JobEventType.SUBMIT, 1, 1), (JobEventType.JOB_HELD, 1, 1)]
    assert _events(tmp_path / "run2" / "x.log") == [(JobEventType.SUBMIT, 1, 2)]


def test_a_shared_log_still_gets_every_procs_events(call, tmp_path):  # noqa: F811
    """One ``log`` and one ``initialdir`` for all procs: all events in that one file, in order."""
    assert submit(call, tmp_path, "executable = /bin/sleep\nlog = all.log\nqueue 2\n", who="me").status == 200
    assert _events(tmp_path / "all.log") == [(JobEventType.SUBMIT, 1, 0), (JobEventType.SUBMIT, 1, 1)]
