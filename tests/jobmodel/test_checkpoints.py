"""What a self-checkpointing job's checkpoints do to its ad and event log (the job
ClassAd attributes ``CheckpointNumber``, ``LastCheckpointTime``, ``CommittedTime``,
``CommittedSlotTime`` in the manual's "Job ClassAd Attributes"; the 040 event,
condor_event.cpp ``FileTransferEvent``)."""

import pytest

from classad import ClassAd
from jobmodel.checkpoints import (
    OUT_FINISHED,
    OUT_STARTED,
    CheckpointReport,
    commit_run,
    output_transfer_event,
    record_checkpoint,
)
from jobmodel.errors import EventLogError, InvalidTransitionError
from jobmodel.eventlog import Event, EventType, format_text
from tests.schedd.conftest import START


def job(**attrs) -> ClassAd:
    return ClassAd({"ClusterId": 4, "ProcId": 1, "JobStatus": 2, **attrs})


def test_a_checkpoint_sets_its_number_and_time_and_commits_the_time_since_the_last():
    """The starter's NewlyCommittedTime is added to CommittedTime; NumCheckpoints counts."""
    report = CheckpointReport(number=2, taken_at=1_800_000_000, newly_committed=30)
    changes = record_checkpoint(job(CommittedTime=100, NumCheckpoints=2), report, None).changes
    assert changes == {"CheckpointNumber": 2, "LastCheckpointTime": 1_800_000_000,
                       "CommittedTime": 130, "NumCheckpoints": 3}


def test_the_first_checkpoint_starts_the_counts():
    changes = record_checkpoint(job(), CheckpointReport(0, 5, 7), None).changes
    assert changes["CommittedTime"] == 7 and changes["NumCheckpoints"] == 1


@pytest.mark.parametrize("bad", [
    {"CheckpointNumber": -1, "LastCheckpointTime": 1, "NewlyCommittedTime": 1},
    {"CheckpointNumber": 1.5, "LastCheckpointTime": 1, "NewlyCommittedTime": 1},
    {"CheckpointNumber": True, "LastCheckpointTime": 1, "NewlyCommittedTime": 1},
    {"LastCheckpointTime": 1, "NewlyCommittedTime": 1},
    {"CheckpointNumber": 1, "LastCheckpointTime": "now", "NewlyCommittedTime": 1},
])
def test_a_malformed_checkpoint_report_is_refused_naming_the_attribute(bad):
    with pytest.raises(InvalidTransitionError, match="whole number"):
        CheckpointReport.from_attributes(bad)


def test_the_end_of_a_run_commits_the_rest_weighted_by_the_slot():
    """At the job's exit the uncommitted rest goes to CommittedTime and, times the
    slot's weight, to CommittedSlotTime."""
    changes = commit_run(job(CommittedTime=60, CommittedSlotTime=120.0, MachineAttrSlotWeight0=2), 10, None).changes
    assert changes == {"CommittedTime": 70, "CommittedSlotTime": 140.0}


def test_a_run_with_no_known_weight_counts_once_and_never_negative():
    assert commit_run(job(), 12.5, None).changes == {"CommittedTime": 12, "CommittedSlotTime": 12.5}
    assert commit_run(job(CommittedTime=3), -4, None).changes == {"CommittedTime": 3, "CommittedSlotTime": 0.0}


def test_the_checkpoint_transfer_writes_htcondor_s_040_events():
    """FileTransferEvent types 5 and 6 read "Started/Finished transferring output files"."""
    started = output_transfer_event(job(), OUT_STARTED, lambda: START).event
    assert format_text(started, utc=True) == (
        "040 (004.001.000) 2026-12-02 12:00:00 Started transferring output files\n...\n")
    finished = Event(EventType.FILE_TRANSFER, 4, 1, START, {"Type": OUT_FINISHED})
    assert "Finished transferring output files" in format_text(finished, utc=True)


def test_an_unknown_file_transfer_type_is_refused():
    with pytest.raises(EventLogError, match="file transfer event type 9"):
        format_text(Event(EventType.FILE_TRANSFER, 1, 0, START, {"Type": 9}))
