"""The shadow's side of self-checkpointing (condor_shadow's handling of the starter's
checkpoint update, pseudo_ops/remoteresource ``updateFromStarter``: CheckpointNumber and
LastCheckpointTime copied, NewlyCommittedTime added to CommittedTime), the checkpoint
kept in SPOOL/<c>/<p>/cluster<c>.proc<p>.subproc0 and brought back with the inputs of
the next run. On task.Clock with a real queue and real files."""

import io
import os
import tarfile

import pytest

from daemoncore.wire.errors import BadRequest, Conflict
from jobmodel.eventlog import EventType
from jobmodel.states import JobStatus
from shadow import Shadow
from tests.shadow.test_shadow import Host, submit, submit_dir  # noqa: F401 (fixture)
from tests.support.deferreds import resolved
from tests.support.schedd_queue import clock, queue  # noqa: F401 (fixtures)
from transfer.checkpoint import send_checkpoint, spool_directory


@pytest.fixture
def host(queue, clock):
    return Host(queue, clock)


def checkpointing_shadow(host, queue, submit_dir, spool):
    job = submit(queue, submit_dir, WantFTOnCheckpoint=True, SuccessCheckpointExitCode=85,
                 TransferCheckpoint="count.ckpt", MachineAttrSlotWeight0=2, LeaveJobInQueue=True)
    shadow = Shadow(host, job, "claim-xyz", "<127.0.0.1:9700>", "slot1_1@node1", "the-key", 600.0,
                    spool_root=str(spool))
    shadow.update("execute", {})
    return job, shadow


def checkpoint_tar(ad, sandbox, count: str) -> bytes:
    (sandbox / "count.ckpt").write_text(count)
    return b"".join(send_checkpoint(ad, str(sandbox), None))


@pytest.fixture
def sandbox(tmp_path):
    (tmp_path / "sandbox").mkdir()
    return tmp_path / "sandbox"


def test_a_checkpoint_is_kept_in_the_spool_with_040_events(host, queue, submit_dir, sandbox, tmp_path):
    job, shadow = checkpointing_shadow(host, queue, submit_dir, tmp_path / "spool")
    answer = resolved(shadow.receive_checkpoint(checkpoint_tar(queue.get_job(job), sandbox, "2")))
    kept = spool_directory(str(tmp_path / "spool"), job.cluster, job.proc)
    assert answer == {"files": 1, "bytes": 1}
    assert open(os.path.join(kept, "count.ckpt")).read() == "2"
    assert host.events() == [EventType.EXECUTE, EventType.FILE_TRANSFER, EventType.FILE_TRANSFER]
    assert queue.get_job(job)["BytesRecvd"] == 1


def test_the_checkpoint_update_records_number_time_and_committed_time(host, queue, submit_dir, tmp_path):
    job, shadow = checkpointing_shadow(host, queue, submit_dir, tmp_path / "spool")
    for number in (0, 1):
        shadow.update("checkpoint", {"CheckpointNumber": number, "LastCheckpointTime": 1000 + number,
                                     "NewlyCommittedTime": 20, "RemoteUserCpu": 1.5})
    ad = queue.get_job(job)
    assert (ad["CheckpointNumber"], ad["LastCheckpointTime"], ad["CommittedTime"], ad["NumCheckpoints"]) == \
        (1, 1001, 40, 2)
    assert ad["RemoteUserCpu"] == 1.5 and ad["JobStatus"] == JobStatus.RUNNING


def test_a_malformed_checkpoint_update_is_refused_and_changes_nothing(host, queue, submit_dir, tmp_path):
    job, shadow = checkpointing_shadow(host, queue, submit_dir, tmp_path / "spool")
    with pytest.raises(BadRequest, match="NewlyCommittedTime"):
        shadow.update("checkpoint", {"CheckpointNumber": 0, "LastCheckpointTime": 5, "NewlyCommittedTime": -3})
    assert "NumCheckpoints" not in queue.get_job(job)


def test_the_exit_commits_only_the_time_no_checkpoint_committed(host, queue, submit_dir, sandbox, tmp_path):
    """At exit, CommittedTime gains the run's wall time less what checkpoints committed;
    CommittedSlotTime that rest times the slot weight; the completed job's checkpoint goes."""
    job, shadow = checkpointing_shadow(host, queue, submit_dir, tmp_path / "spool")
    resolved(shadow.receive_checkpoint(checkpoint_tar(queue.get_job(job), sandbox, "2")))
    shadow.update("checkpoint", {"CheckpointNumber": 0, "LastCheckpointTime": 5, "NewlyCommittedTime": 30})
    assert (tmp_path / "spool" / str(job.cluster)).is_dir()
    shadow.update("exit", {"ExitCode": 0, "ExitBySignal": False, "RemoteWallClockTime": 50.0})
    ad = queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.COMPLETED
    assert ad["CommittedTime"] == 50 and ad["CommittedSlotTime"] == 40.0
    assert not (tmp_path / "spool" / str(job.cluster)).exists()  # nothing restarts from it now


def test_the_kept_checkpoint_follows_the_inputs_of_the_next_run(host, queue, submit_dir, sandbox, tmp_path):
    job, shadow = checkpointing_shadow(host, queue, submit_dir, tmp_path / "spool")
    resolved(shadow.receive_checkpoint(checkpoint_tar(queue.get_job(job), sandbox, "6")))
    data = b"".join(resolved(shadow.input_reply()).items)
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        names = archive.getnames()
        assert archive.extractfile("count.ckpt").read() == b"6"
    assert names[-1] == "count.ckpt" and {"in.dat", "job.sh"} <= set(names)


def test_a_schedd_without_a_spool_refuses_checkpoints(host, queue, submit_dir, sandbox):
    job = submit(queue, submit_dir, WantFTOnCheckpoint=True, TransferCheckpoint="count.ckpt")
    shadow = Shadow(host, job, "claim-xyz", "<127.0.0.1:9700>", "slot1_1@node1", "the-key", 600.0)
    shadow.update("execute", {})
    with pytest.raises(Conflict, match="no spool"):
        shadow.receive_checkpoint(checkpoint_tar(queue.get_job(job), sandbox, "2"))


def test_a_damaged_checkpoint_is_refused_and_the_job_runs_on(host, queue, submit_dir, sandbox, tmp_path):
    job, shadow = checkpointing_shadow(host, queue, submit_dir, tmp_path / "spool")
    with pytest.raises(Conflict, match="checkpoint not kept"):
        resolved(shadow.receive_checkpoint(b"not a tar stream" * 100))
    assert queue.get_job(job)["JobStatus"] == JobStatus.RUNNING and not shadow.ended
