"""A run whose inputs came inside ACTIVATE unpacks them without asking the schedd
(no JOB_INPUT round trip); a damaged one holds the job as a fetched one would. A job
that ends within the execute report's delay has its start told inside its exit report."""

import os
from types import SimpleNamespace

from twisted.internet import defer, task

import classad
from startd.job_run import FAILED_TO_CREATE_PROCESS, Ending, JobRun, RunSettings
from startd.starter import JobOutcome
from startd.usage import Usage
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

    def update(self, event: str, attrs: dict, takes_activation: bool = False):
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


class OutputLink(NoFetchLink):
    """A link that also records output sent, among the reports, in order."""

    def send_output(self, tar):
        self.reports.append(("output", {}))
        return defer.succeed(None)


def _timed_run(tmp_path, delay: float, output: bool = False):
    """A run whose job is started by a stand-in (its end fired by the test) on a
    ``task.Clock``, with ``execute_report_delay`` of ``delay``; (clock, link, end, ended)."""
    tmp_path.mkdir(exist_ok=True)
    job = _job(tmp_path, Cmd="/bin/true", **({"TransferOutput": "result.txt"} if output else {}))
    execute = tmp_path / "execute"
    execute.mkdir()
    clock, link, finished = task.Clock(), OutputLink(), defer.Deferred()
    run = JobRun(clock, link, "1.0", job, classad.ClassAd({"Name": "slot1_1@host"}),
                 RunSettings(execute_dir=str(execute), execute_report_delay=delay), run_blocking=None,
                 execute_attrs={"RemoteHost": "slot1_1@host"}, inline_input=b"".join(send_input(job).stream))
    run._start = lambda _job: finished

    def end(stopped: bool = False) -> None:
        if output:
            (execute / os.listdir(execute)[0] / "result.txt").write_text("made\n")
        finished.callback(JobOutcome(0, False, None, Usage(), run.sandbox, "/dev/null", "/dev/null", stopped))
    link.run = run
    ended: list = []
    run.run().addCallback(ended.append)
    return clock, link, end, ended


def test_a_job_that_ends_within_the_delay_reports_its_start_inside_its_exit(tmp_path):
    """No execute report of its own: the exit report carries its attributes (the
    shadow records the start, then the exit)."""
    clock, link, end, ended = _timed_run(tmp_path, 0.05)
    clock.advance(0.01)
    assert link.reports == []
    end()
    assert ended == [Ending.EXITED]
    [(event, attrs)] = link.reports
    assert event == "exit" and attrs["RemoteHost"] == "slot1_1@host" and attrs["ExitCode"] == 0


def test_a_job_that_outlasts_the_delay_reports_its_start_when_it_runs_out(tmp_path):
    """The execute report goes once the delay is over, the exit report later on its own."""
    clock, link, end, ended = _timed_run(tmp_path, 0.05)
    clock.advance(0.05)
    assert link.reports == [("execute", {"RemoteHost": "slot1_1@host"})]
    end()
    assert ended == [Ending.EXITED]
    assert [event for event, _ in link.reports] == ["execute", "exit"]
    assert "RemoteHost" not in link.reports[1][1]


def test_a_short_job_with_output_reports_its_start_before_the_output(tmp_path):
    """A held-back execute report goes before any other word of the run: the output
    never reaches the schedd before the job's start."""
    clock, link, end, ended = _timed_run(tmp_path, 0.05, output=True)
    end()
    assert ended == [Ending.EXITED]
    assert [event for event, _ in link.reports] == ["execute", "output", "exit"]


def test_without_a_delay_the_execute_report_goes_at_once(tmp_path):
    """A delay of 0 (the default) sends the execute report as the job starts."""
    clock, link, end, ended = _timed_run(tmp_path, 0.0)
    assert [event for event, _ in link.reports] == ["execute"]
    end()
    assert [event for event, _ in link.reports] == ["execute", "exit"]


class CheckpointLink(OutputLink):
    """A link that also records checkpoints sent."""

    def send_checkpoint(self, tar):
        self.reports.append(("checkpoint-files", {}))
        return defer.succeed(None)


def test_a_short_first_segment_reports_its_start_before_its_checkpoint_and_then_usage(tmp_path):
    """A self-checkpointing job whose first segment ends within the delay: the execute
    report goes before the checkpoint, and the segment restarted in place reports its
    usage (which keeps the shadow's lease alive) as an at-once start would."""
    job = _job(tmp_path, Cmd="/bin/true", WantFTOnCheckpoint=True, SuccessCheckpointExitCode=85)
    execute = tmp_path / "execute"
    execute.mkdir()
    clock, link = task.Clock(), CheckpointLink()
    segments = [defer.Deferred(), defer.Deferred()]
    run = JobRun(clock, link, "1.0", job, classad.ClassAd({"Name": "slot1_1@host"}),
                 RunSettings(execute_dir=str(execute), execute_report_delay=0.05, usage_interval=10),
                 run_blocking=defer.maybeDeferred, execute_attrs={"RemoteHost": "slot1_1@host"},
                 inline_input=b"".join(send_input(job).stream))

    def start(_job):
        run.starter = SimpleNamespace(usage=Usage(), pid=4321, kill=lambda: None, vacate=lambda: None)
        return segments[len([s for s in segments if s.called])]
    run._start = start
    run.run()
    segments[0].callback(JobOutcome(85, False, None, Usage(), run.sandbox, "/dev/null", "/dev/null"))
    assert [event for event, _ in link.reports] == ["execute", "checkpoint-files", "checkpoint"]
    clock.advance(10)
    assert [event for event, _ in link.reports][-1] == "usage"
    segments[1].callback(JobOutcome(0, False, None, Usage(), run.sandbox, "/dev/null", "/dev/null"))
    assert [event for event, _ in link.reports][-1] == "exit"



class RidingLink(OutputLink):
    """A link whose schedd answers an exit report that takes an activation with the next job's."""

    def update(self, event: str, attrs: dict, takes_activation: bool = False):
        self.reports.append((event, {"takes_activation": takes_activation}))
        if event == "exit" and takes_activation:
            return defer.succeed({"job_status": 4, "activate": {"job_id": "1.1"}})
        return defer.succeed({"job_status": 2})


def test_the_exit_report_takes_the_next_activation_and_the_run_keeps_it(tmp_path):
    """Only the exit report offers to take the claim's next job; what comes back is
    kept on the run for the startd to start once the run is over."""
    job = _job(tmp_path, Cmd="/bin/true")
    execute = tmp_path / "execute"
    execute.mkdir()
    clock, link, finished = task.Clock(), RidingLink(), defer.Deferred()
    run = JobRun(clock, link, "1.0", job, classad.ClassAd({"Name": "slot1_1@host"}),
                 RunSettings(execute_dir=str(execute), execute_report_delay=0.05), run_blocking=None,
                 execute_attrs={"RemoteHost": "slot1_1@host"}, inline_input=b"".join(send_input(job).stream))
    run._start = lambda _job: finished
    ended: list = []
    run.run().addCallback(ended.append)
    clock.advance(0.1)  # outlasts the delay: an execute report of its own first
    assert run.next_activation is None
    finished.callback(JobOutcome(0, False, None, Usage(), run.sandbox, "/dev/null", "/dev/null"))
    assert ended == [Ending.EXITED]
    assert link.reports == [("execute", {"takes_activation": False}), ("exit", {"takes_activation": True})]
    assert run.next_activation == {"job_id": "1.1"}


def test_a_run_killed_unreported_sends_no_word_of_its_end(tmp_path):
    """Killed with ``reported=False`` (its claim was released by its holder), the run ends
    evicted without an evicted report; killed plainly, it reports one."""
    for reported, expected in ((False, ["execute"]), (True, ["execute", "evicted"])):
        clock, link, end, ended = _timed_run(tmp_path / str(reported), 0.0)
        link.run.kill("the claim was released", reported=reported)
        end(stopped=True)
        assert ended == [Ending.EVICTED]
        assert [event for event, _ in link.reports] == expected


class HeldSetups:
    """A ``setup_blocking`` that records each call and runs it once the test says so."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.results: list = []

    def __call__(self, function, *args):
        done = defer.Deferred()
        self.calls.append((function, args, done))
        return done

    def names(self) -> list[str]:
        return [args[1].__name__ if function.__name__ == "_as" else function.__name__
                for function, args, _ in self.calls]

    def run_next(self) -> None:
        function, args, done = next(call for call in self.calls if not call[2].called)
        result = defer.maybeDeferred(function, *args)
        result.addCallback(lambda value: (self.results.append(value), value)[1]).chainDeferred(done)


def _setup_run(tmp_path):
    """A run with its sandbox's file work held by :class:`HeldSetups`; (run, setups, started, ended)."""
    job = _job(tmp_path, Cmd="/bin/true")
    execute = tmp_path / "execute"
    execute.mkdir()
    setups, started, ended = HeldSetups(), [], []
    run = JobRun(task.Clock(), NoFetchLink(), "1.0", job, classad.ClassAd({"Name": "slot1_1@host"}),
                 RunSettings(execute_dir=str(execute)), run_blocking=None,
                 execute_attrs={"RemoteHost": "slot1_1@host"}, inline_input=b"".join(send_input(job).stream),
                 setup_blocking=setups)

    def start(_job):  # the prepared start is taken, as the real one takes it
        started.append(run._prepared)
        run._prepared = None
        return defer.Deferred()
    run._start = start
    run.run().addCallback(ended.append)
    return run, setups, started, ended


def test_the_sandbox_file_work_goes_to_the_setup_runner_and_the_reactor_starts_the_job(tmp_path):
    """Making the sandbox, unpacking a small input and writing the starter's files each go
    through ``setup_blocking`` in turn (a worker thread in the startd); the job starts once they are done."""
    run, setups, started, _ = _setup_run(tmp_path)
    for made in (1, 2, 3):
        assert len(setups.calls) == made and not started
        setups.run_next()
    assert setups.names() == ["create_reachable_sandbox", "receive_input", "prepare"]
    [(_starter, launch)] = started
    assert sorted(os.listdir(run.sandbox)) == [".job.ad", ".machine.ad", "_condor_stderr", "_condor_stdout",
                                               "data.txt"]
    assert len(launch.fds) == 3
    launch.close()


def test_a_run_stopped_while_its_files_are_made_starts_no_job_and_closes_its_streams(tmp_path):
    """Vacated while the starter's files are made, the run reports its eviction without
    starting the job, and the standard streams opened for it are closed."""
    run, setups, started, ended = _setup_run(tmp_path)
    setups.run_next()
    setups.run_next()
    run.vacate("the schedd vacated the claim")
    setups.run_next()
    assert started == [] and ended == [Ending.EVICTED]
    assert [event for event, _ in run.link.reports] == ["evicted"]
    launch = setups.results[-1]
    for fd in launch.fds:
        try:
            os.fstat(fd)
        except OSError:
            continue
        raise AssertionError(f"fd {fd} of the start given up is still open")
