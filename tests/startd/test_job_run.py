"""A run whose inputs came inside ACTIVATE unpacks them without asking the schedd
(no JOB_INPUT round trip); a damaged one holds the job as a fetched one would."""

from twisted.internet import defer, task

import classad
from startd.job_run import FAILED_TO_CREATE_PROCESS, Ending, JobRun, RunSettings
from transfer import send_input


class NoFetchLink:
    """The schedd link of a run whose inputs came with the activation: fetching fails
    the test; reports are recorded."""

    def __init__(self) -> None:
        self.fetched = 0
        self.reports: list[tuple[str, dict]] = []

    def fetch_input(self, into):
        self.fetched += 1
        return defer.fail(AssertionError("the inputs came inside ACTIVATE"))

    def update(self, event: str, attrs: dict):
        self.reports.append((event, attrs))
        return defer.succeed(None)

    def send_output(self, tar):
        return defer.succeed(None)


def _job(tmp_path, **extra) -> classad.ClassAd:
    iwd = tmp_path / "iwd"
    iwd.mkdir(exist_ok=True)
    (iwd / "data.txt").write_text("the input\n")
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "me", "Iwd": str(iwd),
                            "TransferInput": "data.txt", "TransferExecutable": False, **extra})


def _run(tmp_path, job, inline: bytes) -> tuple[Ending, NoFetchLink]:
    link = NoFetchLink()
    execute = tmp_path / "execute"
    execute.mkdir()
    run = JobRun(task.Clock(), link, "1.0", job, classad.ClassAd({"Name": "slot1_1@host"}),
                 RunSettings(execute_dir=str(execute)), run_blocking=None,
                 execute_attrs={"RemoteHost": "slot1_1@host"}, inline_input=inline)
    ended = []
    run.run().addCallback(ended.append)
    return ended[0], link


def test_inputs_sent_inside_activate_are_unpacked_without_a_fetch(tmp_path):
    """The run takes the tar it was given: no JOB_INPUT, and it gets as far as starting the job."""
    job = _job(tmp_path, Cmd=str(tmp_path / "no-such-program"))
    tar = b"".join(send_input(job).stream)
    ending, link = _run(tmp_path, job, tar)
    assert link.fetched == 0
    [(event, attrs)] = link.reports
    assert (ending, event) == (Ending.HELD, "hold")
    assert attrs["HoldReasonCode"] == FAILED_TO_CREATE_PROCESS and "no-such-program" in attrs["HoldReason"]


def test_a_damaged_inline_input_holds_the_job_without_a_fetch(tmp_path):
    """Bytes that are not a transfer stream hold the job with the transfer's reason."""
    ending, link = _run(tmp_path, _job(tmp_path, Cmd="/bin/true"), b"\x01" * 1024)
    assert link.fetched == 0
    [(event, attrs)] = link.reports
    assert (ending, event) == (Ending.HELD, "hold")
    assert attrs["HoldReasonCode"] != FAILED_TO_CREATE_PROCESS
