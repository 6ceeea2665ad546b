"""Self-checkpointing jobs on a real personal pool (HTCondor manual, "Self-Checkpointing
Applications"): a job that counts to 10, exiting with its ``checkpoint_exit_code``
after every second step, is vacated twice, or loses its startd to SIGKILL twice; each
new run resumes from the checkpoint the schedd kept in its spool, and the job ends at
10 without starting over."""

from __future__ import annotations

import os
import signal

import pytest

import bindings as htcondor
from tests.integration.conftest import personal_pool, roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.integration.test_jobs_queue import alive, read_pid
from tests.integration.test_jobs_restart import daemon_pids
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

#: Counts from its checkpoint to 10, a step a second; checkpoints (exit 85) every
#: second step; says where each run started in its output and in the shared progress
#: file, and leaves its pid next to that file.
JOB = """#!/bin/sh
echo $$ > "$1.pid"
n=0
[ -f count.ckpt ] && n=$(cat count.ckpt)
echo "start $n"
echo "start $n" >> "$1"
while [ "$n" -lt 10 ]; do
  sleep 1
  n=$((n + 1))
  echo "$n" > count.ckpt
  echo "$n" >> "$1"
  if [ $((n % 2)) -eq 0 ] && [ "$n" -lt 10 ]; then exit 85; fi
done
echo "done $n"
"""

SUMMARY = ["NumCheckpoints", "CheckpointNumber", "CommittedTime", "LastCheckpointTime", "JobRunCount"]


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with personal_pool(home, {"_ROOST_NUM_CPUS": "1", "_ROOST_STARTER_UPDATE_INTERVAL": "1"}) as running:
        yield running


def _progress(path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def _count(path) -> int:
    numbers = [int(word) for word in _progress(path) if word.isdigit()]
    return numbers[-1] if numbers else 0


def _submit(pool, directory, progress, extra: str = "") -> int:
    progress.touch()
    progress.chmod(0o666)
    (directory / "count.sh").write_text(JOB)
    (directory / "count.sh").chmod(0o755)
    (directory / "job.sub").write_text(
        f"executable = count.sh\narguments = {progress}\ncheckpoint_exit_code = 85\n"
        f"transfer_checkpoint_files = count.ckpt\nshould_transfer_files = YES\n{extra}"
        "output = job.out\nlog = job.log\nrequest_memory = 64M\nqueue\n")
    return submitted_cluster(roost(pool["env"], "submit", "job.sub"))


def _wait_for_step(schedd, cluster: int, progress, step: int) -> None:
    wait_for(lambda: _count(progress) >= step, seconds=90,
             what=f"step {step} (progress {_progress(progress)}, "
                  f"queue {schedd.query(f'ClusterId == {cluster}', ['JobStatus', 'HoldReason'])})")


def _finished(schedd, cluster: int) -> htcondor.ClassAd:
    """The completed job's ad, from the history (or the queue, while it is still there)."""
    def done():
        ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus"])
        return not ads or ads[0]["JobStatus"] == 4
    wait_for(done, seconds=120, what=f"job {cluster}.0 completing")
    return (list(schedd.history(f"ClusterId == {cluster}", SUMMARY, match=1))
            or schedd.query(f"ClusterId == {cluster}", SUMMARY))[0]


def _assert_resumed_to_ten(pool, directory, cluster: int, ad) -> None:
    """Done at 10, each run started where a kept checkpoint left off (never from 0 again),
    restarts in place between the evictions, checkpoints counted, 040 events logged,
    and the kept checkpoint gone from the spool with the job."""
    output = (directory / "job.out").read_text()
    starts = [int(word) for word in output.split()[1::2][:-1]]
    assert output.rstrip().endswith("done 10"), output
    assert starts[0] == 0 and 0 not in starts[1:], starts
    assert ad["NumCheckpoints"] >= 4 and ad["CommittedTime"] > 0 and ad["LastCheckpointTime"] > 0, ad
    assert ad["JobRunCount"] >= 3, ad  # two evictions: three runs
    assert len(starts) > ad["JobRunCount"], (starts, ad)  # and restarts in place after checkpoint exits
    log = (directory / "job.log").read_text()
    assert "Started transferring output files" in log and "Finished transferring output files" in log
    assert not (pool["dir"] / "spool" / str(cluster)).exists()


def test_a_checkpointing_job_vacated_twice_finishes_at_ten_without_starting_over(
        pool, tmp_path, monkeypatch, shared_dir):
    """Vacated after its 3rd and 7th steps, the job restarts from its last kept checkpoint
    (2, then 6); between vacates each checkpoint exit restarts it in place (condor_starter
    VanillaProc::JobReaper: restartCheckpointedJob)."""
    monkeypatch.chdir(tmp_path)
    progress = shared_dir / "progress.txt"
    cluster = _submit(pool, tmp_path, progress)
    schedd = htcondor.Schedd()
    for step in (3, 7):
        _wait_for_step(schedd, cluster, progress, step)
        schedd.act(htcondor.JobAction.Vacate, f"{cluster}.0")
    _assert_resumed_to_ten(pool, tmp_path, cluster, _finished(schedd, cluster))


def test_a_checkpointing_job_whose_startd_is_killed_twice_finishes_at_ten(pool, tmp_path, monkeypatch, shared_dir):
    """SIGKILL the startd (and the job it leaves behind) after steps 3 and 7: the master
    restarts the startd, the job's 5 s lease runs out, and each new run resumes from the
    checkpoint the schedd kept."""
    monkeypatch.chdir(tmp_path)
    progress = shared_dir / "progress.txt"
    cluster = _submit(pool, tmp_path, progress, "job_lease_duration = 5\n")
    schedd = htcondor.Schedd()
    for step in (3, 7):
        _wait_for_step(schedd, cluster, progress, step)
        orphan = read_pid(shared_dir / "progress.txt.pid")
        os.kill(daemon_pids(pool["env"])["STARTD"], signal.SIGKILL)
        if orphan is not None and alive(orphan):  # the job outlives its startd: lose it, as a dead machine would
            os.kill(orphan, signal.SIGKILL)
    _assert_resumed_to_ten(pool, tmp_path, cluster, _finished(schedd, cluster))


def test_condor_rm_forgets_the_kept_checkpoint(pool, tmp_path, monkeypatch, shared_dir):
    """A removed job's checkpoint leaves the spool at the schedd's next sweep."""
    monkeypatch.chdir(tmp_path)
    progress = shared_dir / "progress.txt"
    cluster = _submit(pool, tmp_path, progress)
    kept = pool["dir"] / "spool" / str(cluster) / "0" / f"cluster{cluster}.proc0.subproc0"
    wait_for(lambda: (kept / "count.ckpt").exists(), seconds=60, what="the first checkpoint kept")
    roost(pool["env"], "rm", str(cluster))
    wait_for(lambda: not (pool["dir"] / "spool" / str(cluster)).exists(), seconds=45,
             what="the removed job's checkpoint forgotten")
