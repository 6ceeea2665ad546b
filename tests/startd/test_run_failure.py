"""A run that fails unexpectedly inside the starter still reports: the schedd hears
"evicted" at once (the job runs again) instead of waiting out the job's lease."""

from twisted.internet import defer, task

import classad
from startd.job_run import Ending, JobRun, RunSettings


class RecordingLink:
    """The starter's side of the schedd link, kept in memory: input fetching fails with
    ``failure``; every report is recorded."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure
        self.reports: list[tuple[str, dict]] = []

    def fetch_input(self, into):
        return defer.fail(self.failure)

    def update(self, event: str, attrs: dict, takes_activation: bool = False):
        self.reports.append((event, attrs))
        return defer.succeed(None)

    def send_output(self, tar):
        return defer.succeed(None)


def _run(tmp_path, link) -> tuple[Ending, JobRun]:
    job = classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Cmd": "/bin/true", "Owner": "me"})
    run = JobRun(task.Clock(), link, "1.0", job, classad.ClassAd({"Name": "slot1_1@host"}),
                 RunSettings(execute_dir=str(tmp_path)), run_blocking=None,
                 execute_attrs={"RemoteHost": "slot1_1@host"})
    ended = []
    run.run().addCallback(ended.append)
    return ended[0], run


def test_an_unexpected_failure_is_reported_as_an_eviction_naming_it(tmp_path):
    link = RecordingLink(RuntimeError("disk controller on fire"))
    ending, run = _run(tmp_path, link)
    assert ending is Ending.EVICTED
    [(event, attrs)] = link.reports
    assert event == "evicted"
    assert "RuntimeError: disk controller on fire" in attrs["Reason"]
    assert "slot1_1@host" in attrs["Reason"]


def test_the_sandbox_is_removed_after_an_unexpected_failure(tmp_path):
    ending, run = _run(tmp_path, RecordingLink(KeyError("x")))
    assert ending is Ending.EVICTED
    assert run.sandbox is not None and not any(tmp_path.iterdir())
