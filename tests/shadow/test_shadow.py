"""Tests for shadow.shadow: the starter's reports turned into job attributes and
events, and one job's shadow serving input, receiving output and keeping its lease,
on task.Clock with a real queue and real files."""

import io
import os
import tarfile

import pytest

import classad
from daemoncore.security.accounts import current_account
from daemoncore.wire.errors import BadRequest, Conflict, Forbidden
from jobmodel.eventlog import EventType
from jobmodel.states import JobId, JobStatus
from shadow import Ending, Shadow
from shadow.shadow import (
    INLINE_INPUT_BYTES,
    exit_record_of,
    maybe_call,
    record_run,
    record_run_end,
    record_usage,
    terminated_event,
    usage_of,
)
from tests.support.deferreds import resolved
from tests.support.schedd_queue import START, clock, queue  # noqa: F401 (fixtures)
from transfer import send_output
from transfer.packed_inputs import PackedInputs


class Host:
    """The schedd side a shadow talks to: a real queue, recorded events and endings."""

    def __init__(self, queue, clock):
        self.queue = queue
        self.clock = clock
        self.recorded = []
        self.endings = []

    def record_all(self, transitions):
        for transition in transitions:
            self.record(transition)

    def record(self, transition):
        self.recorded.append(transition)

    def run_blocking(self, function, *args, **kwargs):
        return maybe_call(function, *args, **kwargs)

    def shadow_ended(self, shadow, ending, reason):
        self.endings.append((ending, reason))

    def events(self):
        return [t.event.type for t in self.recorded if t.event is not None]


@pytest.fixture
def submit_dir(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "job.sh").write_text("#!/bin/sh\necho done > result.txt\n")
    (home / "in.dat").write_text("input\n")
    return home


def submit(queue, home, **extra):
    # the owner is this process's own account: a root schedd touches a job's files as its owner
    ad = classad.ClassAd({"Owner": current_account().name, "Cmd": str(home / "job.sh"), "Iwd": str(home),
                          "TransferInput": "in.dat", "RequestMemory": 64, **extra})
    return JobId(queue.submit_cluster(ad, [classad.ClassAd()]), 0)


@pytest.fixture
def host(queue, clock):
    return Host(queue, clock)


def shadow_for(host, job_id, lease=600.0):
    return Shadow(host, job_id, "claim-xyz", "<127.0.0.1:9700>", "slot1_1@node1", "the-key", lease)


# --- pure ------------------------------------------------------------------------------

def test_exit_record_reads_code_or_signal():
    """ExitCode for a normal exit, ExitSignal when ExitBySignal is true."""
    assert exit_record_of({"ExitCode": 3}).exit_code == 3
    by_signal = exit_record_of({"ExitBySignal": True, "ExitSignal": 15})
    assert (by_signal.exit_by_signal, by_signal.exit_signal) == (True, 15)


@pytest.mark.parametrize("attrs, message", [
    ({"ExitBySignal": "yes", "ExitCode": 0}, "ExitBySignal must be true or false"),
    ({"ExitBySignal": True}, "ExitSignal is required"),
    ({}, "ExitCode is required"),
    ({"ExitCode": "zero"}, "ExitCode must be a number"),
    ({"ExitCode": True}, "ExitCode must be a number"),
])
def test_malformed_exits_are_refused_with_the_field_named(attrs, message):
    """A report that does not describe an exit is a 400 naming the attribute."""
    with pytest.raises(BadRequest, match=message):
        exit_record_of(attrs)


def test_usage_is_typed_and_unknown_attributes_are_ignored():
    """Only the usage attributes are taken, as numbers of the right kind."""
    assert usage_of({"ImageSize": 10.0, "RemoteUserCpu": 2, "Other": "x"}) == {"ImageSize": 10, "RemoteUserCpu": 2.0}


def test_image_size_event_only_when_the_image_grows(clock):
    """006 carries the new size and memory; a same-size report logs nothing."""
    ad = classad.ClassAd({"ClusterId": 4, "ProcId": 1, "ImageSize": 100})
    grown = record_usage(ad, {"ImageSize": 200, "MemoryUsage": 1, "ResidentSetSize": 150}, clock)
    assert grown.event.type == EventType.IMAGE_SIZE
    assert grown.event.attributes == {"Size": 200, "MemoryUsage": 1, "ResidentSetSize": 150}
    assert record_usage(ad, {"ImageSize": 100}, clock).event is None


def test_run_wall_clock_time_is_added_to_earlier_runs(clock):
    """RemoteWallClockTime is cumulative; without a report it is the time since the run began."""
    ad = classad.ClassAd({"ClusterId": 1, "ProcId": 0, "RemoteWallClockTime": 100.0,
                          "JobCurrentStartDate": START - 25})
    assert record_run(ad, {}, None, clock).changes["RemoteWallClockTime"] == 125.0
    reported = record_run(ad, {"RemoteUserCpu": 2.0}, 7.0, clock).changes
    assert (reported["RemoteWallClockTime"], reported["LastRemoteWallClockTime"]) == (107.0, 7.0)
    assert reported["CumulativeRemoteUserCpu"] == 2.0


def test_a_runs_end_records_usage_and_committed_time_in_one_change(clock):
    """record_run_end holds record_run's and commit_run's changes together; without a wall time, record_run's alone."""
    ad = classad.ClassAd({"ClusterId": 1, "ProcId": 0, "CommittedTime": 10, "JobCurrentStartDate": START - 5})
    both = record_run_end(ad, {"RemoteUserCpu": 1.0}, 7.0, 6.0, clock).changes
    assert (both["RemoteWallClockTime"], both["CommittedTime"], both["CommittedSlotTime"]) == (7.0, 16, 6.0)
    alone = record_run_end(ad, {}, None, None, clock).changes
    assert alone == record_run(ad, {}, None, clock).changes and "CommittedTime" not in alone


def test_terminated_event_carries_usage_and_requests(clock):
    """The 005 event gets the run's usage line and the job's requests for its table."""
    from jobmodel.eventlog import Event, format_text
    ad = classad.ClassAd({"RequestCpus": 1, "RequestMemory": 64, "BytesSent": 10, "BytesRecvd": 20})
    event = Event(EventType.JOB_TERMINATED, 1, 0, START, {"TerminatedNormally": True, "ReturnValue": 0})
    filled = terminated_event(event, ad, {"RemoteUserCpu": 61.0, "MemoryUsage": 5})
    assert filled.attributes["RunRemoteUsage"] == "Usr 0 00:01:01, Sys 0 00:00:00"
    assert filled.attributes["SentBytes"] == 20 and filled.attributes["ReceivedBytes"] == 10
    assert "Memory (MB)" in format_text(filled)


# --- one job's shadow --------------------------------------------------------------------

def test_key_is_checked_and_never_shown(host, queue, submit_dir):
    """The transfer key is compared in constant time and kept out of the repr."""
    shadow = shadow_for(host, submit(queue, submit_dir))
    shadow.check_key("the-key")
    for wrong in (None, "", "the-kez"):
        with pytest.raises(Forbidden):
            shadow.check_key(wrong)
    assert "the-key" not in repr(shadow) and "claim-xyz" not in repr(shadow)


def test_input_stream_holds_the_executable_and_inputs_and_counts_bytes(host, queue, submit_dir):
    """JOB_INPUT's stream is a tar of the executable and inputs; BytesSent is added once
    sent, stored with the job's next queue change (its start) rather than in a write of its own."""
    job = submit(queue, submit_dir)
    shadow = shadow_for(host, job)
    reply = resolved(shadow.input_reply())
    data = b"".join(reply.items)
    assert sorted(tarfile.open(fileobj=io.BytesIO(data)).getnames()) == ["in.dat", "job.sh"]
    shadow.update("execute", {})
    assert queue.get_job(job)["BytesSent"] > 0


def test_small_inputs_go_inside_activate_and_count_once_taken(host, queue, submit_dir):
    """inline_input gives the same tar JOB_INPUT would; BytesSent is added only by input_taken,
    with the job's next queue change."""
    job = submit(queue, submit_dir)
    shadow = shadow_for(host, job)
    inline = shadow.inline_input(queue.get_job(job), PackedInputs())
    data, counts = inline.tar, inline.counts
    assert sorted(tarfile.open(fileobj=io.BytesIO(data)).getnames()) == ["in.dat", "job.sh"]
    assert "BytesSent" not in queue.get_job(job)
    shadow.input_taken(counts)
    assert host.events() == []
    shadow.update("execute", {})
    assert queue.get_job(job)["BytesSent"] == counts["BytesSent"] > 0
    assert host.events() == [EventType.EXECUTE]


def test_the_same_files_are_packed_once_and_a_changed_file_again(host, queue, submit_dir):
    """Two jobs of the same inputs get the same tar, read once; after a file changes (the
    same size, the same second) the next job's tar holds the new bytes."""
    packed = PackedInputs()
    first, second = (submit(queue, submit_dir) for _ in range(2))
    one = shadow_for(host, first).inline_input(queue.get_job(first), packed)
    assert shadow_for(host, second).inline_input(queue.get_job(second), packed) is one and len(packed) == 1
    data = submit_dir / "in.dat"
    mtime = data.stat().st_mtime_ns
    data.write_bytes(data.read_bytes().upper())
    os.utime(data, ns=(mtime, mtime))  # its modification time put back: the change time still moved
    third = submit(queue, submit_dir)
    again = shadow_for(host, third).inline_input(queue.get_job(third), packed)
    member = tarfile.open(fileobj=io.BytesIO(again.tar)).extractfile("in.dat").read()
    assert again is not one and member == data.read_bytes()


def test_inputs_too_big_missing_or_in_directories_are_left_to_job_input(host, queue, submit_dir):
    """A directory, a missing file or more than INLINE_INPUT_BYTES: None (the starter fetches
    them, and a missing one is held then); nothing is held or counted here."""
    (submit_dir / "big.dat").write_bytes(b"x" * (INLINE_INPUT_BYTES + 1))
    (submit_dir / "tree").mkdir()
    for inputs in ("in.dat,big.dat", "in.dat,tree", "in.dat,absent.dat"):
        job = submit(queue, submit_dir, TransferInput=inputs)
        assert shadow_for(host, job).inline_input(queue.get_job(job), PackedInputs()) is None
        assert queue.get_job(job)["JobStatus"] == JobStatus.IDLE
    assert host.events() == []


def test_missing_input_holds_the_job_with_code_13(host, queue, submit_dir):
    """An input that is not there: Held, code 13 subcode 2, 012 logged, startd told to vacate."""
    job = submit(queue, submit_dir, TransferInput="in.dat,absent.dat")
    with pytest.raises(Conflict, match="held"):
        resolved(shadow_for(host, job).input_reply())
    ad = queue.get_job(job)
    assert (ad["JobStatus"], ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == (JobStatus.HELD, 13, 2)
    assert "absent.dat" in ad["HoldReason"]
    assert host.events() == [EventType.JOB_HELD]
    assert host.endings[0][0] is Ending.VACATE


def output_of(ad, sandbox):
    return b"".join(send_output(ad, str(sandbox), None))


def test_output_lands_in_iwd_with_remaps(host, queue, submit_dir, tmp_path):
    """JOB_OUTPUT's tar is unpacked into Iwd, remapped, and BytesRecvd recorded (with the
    job's next queue change: a usage report here, its exit report in a real run)."""
    job = submit(queue, submit_dir, TransferOutput="result.txt",
                 TransferOutputRemaps="result.txt = out/final.txt")
    shadow = shadow_for(host, job)
    shadow.update("execute", {})
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    (sandbox / "result.txt").write_text("done\n")
    answer = resolved(shadow.receive_output(output_of(queue.get_job(job), sandbox)))
    assert answer == {"files": 1, "bytes": 5}
    assert (submit_dir / "out" / "final.txt").read_text() == "done\n"
    shadow.update("usage", {"ImageSize": 1})
    assert queue.get_job(job)["BytesRecvd"] == 5


def test_damaged_output_holds_the_job_with_code_12(host, queue, submit_dir, tmp_path):
    """An output stream that is not a valid transfer tar holds the job (code 12)."""
    job = submit(queue, submit_dir)
    shadow = shadow_for(host, job)
    shadow.update("execute", {})
    with pytest.raises(Conflict, match="held"):
        resolved(shadow.receive_output(b"this is not a tar stream" * 100))
    ad = queue.get_job(job)
    assert (ad["JobStatus"], ad["HoldReasonCode"]) == (JobStatus.HELD, 12)
    assert host.events() == [EventType.EXECUTE, EventType.JOB_HELD]


def test_lease_runs_out_exactly_after_the_last_word(host, queue, submit_dir, clock):
    """The lease is renewed by every report and expires lease seconds after the last."""
    job = submit(queue, submit_dir)
    shadow = shadow_for(host, job, lease=100.0)
    shadow.update("execute", {})
    clock.advance(50)
    shadow.update("usage", {"ImageSize": 1})
    clock.advance(99.9)
    assert not shadow.ended
    clock.advance(0.1)
    assert shadow.ended
    ad = queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.IDLE and ad["NumJobStarts"] == 1
    assert host.events()[-1] == EventType.JOB_EVICTED
    assert host.endings == [(Ending.RELEASE, "job lease of 100 s expired")]


def test_lease_of_a_job_that_never_started_leaves_it_idle(host, queue, submit_dir, clock):
    """A starter that never reported: the shadow ends and the idle job stays idle, no event."""
    job = submit(queue, submit_dir)
    shadow_for(host, job, lease=10.0)
    clock.advance(10)
    assert queue.get_job(job)["JobStatus"] == JobStatus.IDLE
    assert host.events() == []
    assert host.endings[0][0] is Ending.RELEASE


def test_shut_down_leaves_no_timer(host, queue, submit_dir, clock):
    """Stopping the schedd cancels the lease without touching the job."""
    shadow = shadow_for(host, submit(queue, submit_dir))
    shadow.shut_down()
    assert clock.getDelayedCalls() == []
    assert host.endings == []


def test_starter_hold_holds_the_job_with_its_reason(host, queue, submit_dir):
    """A starter that cannot run the job asks for a hold: Held with its code, 012 logged."""
    job = submit(queue, submit_dir)
    shadow = shadow_for(host, job)
    answer = shadow.update("hold", {"HoldReason": "Error from starter: no such executable",
                                    "HoldReasonCode": 6, "HoldReasonSubCode": 2})
    assert answer == {"job_status": JobStatus.HELD}
    ad = queue.get_job(job)
    assert (ad["HoldReasonCode"], ad["HoldReasonSubCode"]) == (6, 2)
    assert host.events() == [EventType.JOB_HELD]
    assert host.endings[0][0] is Ending.REUSE
    with pytest.raises(BadRequest, match="HoldReason"):
        shadow_for(host, submit(queue, submit_dir)).update("hold", {"HoldReasonCode": 6})
