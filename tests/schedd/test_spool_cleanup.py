"""Removing the spool sandboxes of -spool jobs that left the queue (schedd.spool_cleanup):
HTCondor's ``SpooledJobFiles::removeJobSpoolDirectory`` when a job is destroyed, and
condor_preen's ``check_spool_dir`` for jobs gone while the schedd was down. A real queue
file, real directories, a Twisted clock; file work runs inline (maybe_call)."""

import os
from types import SimpleNamespace

from daemoncore.wire import schedd_routes
from jobmodel.eventlog import Event, EventType
from jobmodel.states import JobId, JobStatus, Transition
from schedd import spool_cleanup
from schedd.intake import ClusterToStore
from schedd.queue.jobqueue import JobAction
from schedd.queue.selection import JobSelection
from schedd.spool_cleanup import CHECK_SLICE, SOON, SWEEP_INTERVAL, SpoolCleanup, may_leave, spooled_sandboxes
from schedd.spooling import Spooling, held_for_input
from shadow.shadow import maybe_call
from tests.schedd.conftest import cluster_ad, proc_ads
from tests.schedd.test_spooling import OWNER, call, input_tar
from tests.support.deferreds import resolved
from transfer.checkpoint import spool_directory as checkpoint_directory
from transfer.spooled_job import spool_directory


def sandbox(spool, job: JobId) -> str:
    """A spool sandbox holding one output file, as a finished spooled job leaves it."""
    directory = spool_directory(str(spool), job.cluster, job.proc)
    os.makedirs(directory)
    with open(os.path.join(directory, "result.txt"), "w") as handle:
        handle.write("out\n")
    return directory


def submit(queue, count=1, **extra) -> list[JobId]:
    cluster = queue.submit_cluster(cluster_ad(OWNER, **extra), proc_ads(count))
    return [JobId(cluster, proc) for proc in range(count)]


def cleanup_for(queue, spool, clock) -> SpoolCleanup:
    return SpoolCleanup(queue, str(spool), maybe_call, clock)


def complete(queue, job, leave=None):
    def done(ad, clock):
        changes = {"JobStatus": int(JobStatus.COMPLETED), "CompletionDate": int(clock.seconds())}
        return Transition(job, changes if leave is None else {**changes, "LeaveJobInQueue": leave})
    return queue.transition(job, done)


def test_a_removed_or_completed_transition_may_let_the_job_leave():
    """Only a transition to Removed (3) or Completed (4) can take a job out of the queue."""
    job = JobId(1, 0)
    assert may_leave(Transition(job, {"JobStatus": 3})) and may_leave(Transition(job, {"JobStatus": 4}))
    assert not may_leave(Transition(job, {"JobStatus": 5})) and not may_leave(Transition(job, {"Args": "x"}))
    aborted = Event(EventType.JOB_ABORTED, 1, 0, 0)  # removal_done: the removed job's shadow is gone
    assert may_leave(Transition(job, {"RemoteHost": None}, aborted))
    assert not may_leave(Transition(job, {}, Event(EventType.JOB_HELD, 1, 0, 0)))


def test_condor_rm_removes_the_sandbox_soon_after_and_keeps_the_others(queue, clock, tmp_path):
    """condor_rm of one spooled proc: its sandbox and emptied proc directory go SOON seconds
    later; the cluster's other proc, still queued, keeps its sandbox and the cluster directory."""
    spool = tmp_path / "spool"
    jobs = submit(queue, 2)
    kept = {job: sandbox(spool, job) for job in jobs}
    cleanup = cleanup_for(queue, spool, clock)
    result = queue.act(JobAction.Remove, JobSelection(ids=(jobs[0],)))
    assert result.left_queue == (jobs[0],)
    cleanup.note(result.transitions)
    clock.advance(SOON - 0.5)
    assert os.path.isdir(kept[jobs[0]])  # not yet: jobs leaving together share one pass
    clock.advance(0.5)
    assert not os.path.exists(kept[jobs[0]]) and not (spool / str(jobs[0].cluster) / "0").exists()
    assert os.path.isdir(kept[jobs[1]])
    assert not clock.getDelayedCalls()


def test_several_procs_leaving_together_lose_their_sandboxes_in_one_pass(queue, clock, tmp_path):
    """condor_rm of a whole cluster of three: the three job ids noted together are looked
    at in one pass and every sandbox goes with the cluster directory."""
    spool = tmp_path / "spool"
    jobs = submit(queue, 3)
    for job in jobs:
        sandbox(spool, job)
    cleanup = cleanup_for(queue, spool, clock)
    cleanup.note(queue.act(JobAction.Remove, JobSelection(ids=tuple(jobs))).transitions)
    clock.advance(SOON)
    assert not (spool / str(jobs[0].cluster)).exists()
    assert not clock.getDelayedCalls()


def test_the_last_proc_leaving_takes_the_cluster_directory(queue, clock, tmp_path):
    """When the whole cluster left, its emptied cluster directory goes too."""
    spool = tmp_path / "spool"
    [job] = submit(queue)
    sandbox(spool, job)
    cleanup = cleanup_for(queue, spool, clock)
    cleanup.note(queue.act(JobAction.Remove, JobSelection(ids=(job,))).transitions)
    clock.advance(SOON)
    assert not (spool / str(job.cluster)).exists() and spool.is_dir()


def test_a_completed_job_keeps_its_sandbox_until_leave_job_in_queue_turns_false(queue, clock, tmp_path):
    """A spooled job completes with condor_submit -spool's LeaveJobInQueue (ten days): its
    outputs wait for condor_transfer_data through every sweep; when the periodic pass lets
    it leave, the sandbox goes."""
    spool = tmp_path / "spool"
    cluster = held_for_input(ClusterToStore(cluster_ad(OWNER, Iwd=str(tmp_path), Cmd=f"{tmp_path}/job.sh",
                                                       TransferInput="data.txt"), tuple(proc_ads(1))))
    job = JobId(queue.submit_cluster(cluster.cluster_ad, cluster.proc_ads), 0)
    service = SimpleNamespace(queue=queue, clock=clock, schedd_settings=SimpleNamespace(spool=str(spool)),
                              record=lambda transition: None)
    resolved(Spooling(service, maybe_call).spool_input(call(schedd_routes.SPOOL_INPUT, job, input_tar(tmp_path))))
    directory = spool_directory(str(spool), job.cluster, job.proc)
    assert os.path.isfile(os.path.join(directory, "data.txt"))
    cleanup = cleanup_for(queue, spool, clock)
    cleanup.start()
    cleanup.note((complete(queue, job),))
    clock.advance(SWEEP_INTERVAL)
    assert os.path.isdir(directory) and queue.status_of(job) is JobStatus.COMPLETED
    assert queue.evaluate_periodic().left_queue == ()
    eleven_days_ago = int(clock.seconds()) - 11 * 86400  # time() in LeaveJobInQueue is the wall clock
    queue.edit(JobSelection(ids=(job,)), "CompletionDate", str(eleven_days_ago))
    left = queue.evaluate_periodic().left_queue
    assert left == (job,)
    cleanup.left(left)
    clock.advance(SOON)
    assert not os.path.exists(directory)
    cleanup.stop()
    assert not clock.getDelayedCalls()


def test_at_start_sandboxes_of_jobs_gone_while_down_are_removed(queue, clock, tmp_path):
    """The first sweep, at start, removes the sandboxes of jobs the queue no longer holds
    (left while the schedd was down) and keeps every queued job's, whatever its state."""
    spool = tmp_path / "spool"
    idle, held, done = submit(queue, 3)
    queue.act(JobAction.Hold, JobSelection(ids=(held,)))
    complete(queue, done, leave=True)
    kept = [sandbox(spool, job) for job in (idle, held, done)]
    gone = sandbox(spool, JobId(99, 0)), sandbox(spool, JobId(99, 1))
    cleanup = cleanup_for(queue, spool, clock)
    cleanup.start()
    assert all(os.path.isdir(path) for path in kept)
    assert not any(os.path.exists(path) for path in gone) and not (spool / "99").exists()
    cleanup.stop()


def test_a_checkpoint_beside_the_sandbox_keeps_the_proc_directory(queue, clock, tmp_path):
    """Only the sandbox is this cleanup's: a kept checkpoint in the same proc directory (the
    checkpoint sweep's to remove) stays, and so does the directory holding it."""
    spool = tmp_path / "spool"
    gone = JobId(42, 0)
    directory = sandbox(spool, gone)
    checkpoint = checkpoint_directory(str(spool), 42, 0)
    os.makedirs(checkpoint)
    cleanup_for(queue, spool, clock).sweep()
    assert not os.path.exists(directory) and os.path.isdir(checkpoint)


def test_links_are_never_followed_out_of_the_spool(queue, clock, tmp_path):
    """A proc directory or a sandbox that is a link, and links inside a sandbox, lead
    nowhere: what they point at outside SPOOL is untouched (the link inside goes with the
    sandbox, its target stays)."""
    spool = tmp_path / "spool"
    outside = tmp_path / "outside"
    (outside / "cluster5.proc0.spool").mkdir(parents=True)
    (outside / "cluster5.proc0.spool" / "precious").write_text("keep")
    (outside / "file").write_text("keep")
    (spool / "5").mkdir(parents=True)
    os.symlink(outside, spool / "5" / "0")  # SPOOL/5/0 -> outside
    (spool / "6" / "0").mkdir(parents=True)
    os.symlink(outside / "cluster5.proc0.spool", spool / "6" / "0" / "cluster6.proc0.spool")
    inner = sandbox(spool, JobId(7, 0))
    os.symlink(outside, os.path.join(inner, "escape"))
    os.symlink(outside / "file", os.path.join(inner, "file-link"))
    assert spooled_sandboxes(str(spool)) == [JobId(7, 0)]
    cleanup_for(queue, spool, clock).sweep()
    assert not os.path.exists(inner)
    assert (outside / "cluster5.proc0.spool" / "precious").read_text() == "keep"
    assert (outside / "file").read_text() == "keep"
    assert os.path.islink(spool / "5" / "0") and os.path.islink(spool / "6" / "0" / "cluster6.proc0.spool")


def test_names_that_are_not_a_jobs_are_left_alone(queue, clock, tmp_path):
    """The queue file, a zero-padded number and an odd name in a proc directory stay."""
    spool = tmp_path / "spool"
    (spool / "07" / "0" / "cluster7.proc0.spool").mkdir(parents=True)
    (spool / "8" / "0" / "notes").mkdir(parents=True)
    (spool / "job_queue.sqlite3.extra").write_text("")
    cleanup_for(queue, spool, clock).sweep()
    assert (spool / "07" / "0" / "cluster7.proc0.spool").is_dir() and (spool / "8" / "0" / "notes").is_dir()
    assert (spool / "job_queue.sqlite3.extra").exists()


def test_queue_lookups_are_spread_over_reactor_turns(queue, clock, tmp_path):
    """More sandboxes than CHECK_SLICE: the look-ups take several turns, and the sweep
    ends when the last is done."""
    spool = tmp_path / "spool"
    for proc in range(CHECK_SLICE + 3):
        os.makedirs(spool_directory(str(spool), 500, proc))
    finished = []
    cleanup_for(queue, spool, clock).sweep().addCallback(finished.append)
    assert not finished and len(spooled_sandboxes(str(spool))) == CHECK_SLICE + 3
    clock.advance(0)
    assert finished and not (spool / "500").exists()


def test_a_missing_spool_is_nothing_to_clean(queue, clock, tmp_path):
    """No spool directory yet: the sweep ends at once, quietly."""
    assert cleanup_for(queue, tmp_path / "none", clock).sweep().called


def test_existing_finds_the_sandboxes_of_noted_jobs_and_looks_once_at_a_cluster_without_one(tmp_path, monkeypatch):
    """Of the noted jobs (procs by cluster), those with a sandbox, in queue order; a
    cluster with no spool directory is looked at once for all its jobs, whatever their number."""
    spool = tmp_path / "spool"
    for job_id in (JobId(3, 1), JobId(3, 10), JobId(12, 0)):
        sandbox(spool, job_id)
    (spool / "4").symlink_to(tmp_path)  # a link is no cluster directory
    looked = []
    real = spool_cleanup._is_real_directory
    monkeypatch.setattr(spool_cleanup, "_is_real_directory", lambda path: looked.append(path) or real(path))
    noted = {12: {0}, 9: set(range(1000)), 3: {10, 0, 1, 2}, 4: {0}}
    assert spool_cleanup.existing(str(spool), noted) == [JobId(3, 1), JobId(3, 10), JobId(12, 0)]
    assert looked.count(str(spool / "9")) == 1 and len(looked) < 20
