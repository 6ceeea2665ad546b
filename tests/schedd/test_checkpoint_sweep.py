"""The spool sweep that forgets checkpoints of jobs that will never run again (HTCondor
removes a job's spool directory when it leaves the queue; condor_preen's
``check_spool_dir`` clears entries of jobs the queue does not hold). A real queue file,
a Twisted clock, real directories."""

import os

from jobmodel.states import JobId, JobStatus
from schedd.checkpoint_sweep import SWEEP_INTERVAL, CheckpointSweep, stale
from schedd.queue.jobqueue import JobAction
from schedd.queue.selection import JobSelection
from shadow.shadow import maybe_call
from tests.support.schedd_queue import cluster_ad, proc_ads
from transfer.checkpoint import spool_directory


def keep(spool, cluster, proc) -> str:
    directory = spool_directory(str(spool), cluster, proc)
    os.makedirs(directory)
    with open(os.path.join(directory, "count.ckpt"), "w") as handle:
        handle.write("6")
    return directory


def test_only_gone_removed_and_completed_jobs_lose_their_checkpoint():
    assert stale(None) and stale(JobStatus.REMOVED) and stale(JobStatus.COMPLETED)
    assert not any(stale(s) for s in (JobStatus.IDLE, JobStatus.RUNNING, JobStatus.HELD, JobStatus.SUSPENDED))


def test_the_sweep_removes_checkpoints_of_removed_and_unknown_jobs(queue, clock, tmp_path):
    """condor_rm of a job with a kept checkpoint: the next sweep deletes it; an idle or held
    job keeps its own, and a job whose shadow is receiving one is left for later."""
    spool = tmp_path / "spool"
    cluster = queue.submit_cluster(cluster_ad(), proc_ads(4))
    kept = {proc: keep(spool, cluster, proc) for proc in range(4)}
    unknown = keep(spool, 99, 0)
    queue.act(JobAction.Remove, JobSelection(ids=(JobId(cluster, 1), JobId(cluster, 3))))
    queue.act(JobAction.Hold, JobSelection(ids=(JobId(cluster, 2),)))
    busy = {JobId(cluster, 3)}
    sweep = CheckpointSweep(queue, str(spool), lambda job_id: job_id in busy, maybe_call, clock)
    sweep.start()
    assert not os.path.exists(kept[1]) and not os.path.exists(unknown)
    assert os.path.isdir(kept[0]) and os.path.isdir(kept[2]) and os.path.isdir(kept[3])
    assert not (spool / "99").exists()  # the emptied job directories go too
    busy.clear()
    clock.advance(SWEEP_INTERVAL)
    assert not os.path.exists(kept[3]) and os.path.isdir(kept[0])
    sweep.stop()


def test_files_in_the_spool_that_are_no_checkpoint_are_left_alone(queue, clock, tmp_path):
    spool = tmp_path / "spool"
    (spool / "7" / "0" / "cluster7.proc0.spool").mkdir(parents=True)
    (spool / "job_queue.sqlite3").write_text("")
    (spool / "07").mkdir()
    CheckpointSweep(queue, str(spool), lambda job_id: False, maybe_call, clock).sweep()
    assert (spool / "7" / "0" / "cluster7.proc0.spool").is_dir() and (spool / "07").is_dir()


def test_a_missing_spool_is_nothing_to_sweep(queue, clock, tmp_path):
    done = CheckpointSweep(queue, str(tmp_path / "none"), lambda job_id: False, maybe_call, clock).sweep()
    assert done.called
