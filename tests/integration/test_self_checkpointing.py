"""Self-checkpointing jobs on a real personal pool (HTCondor manual, "Self-Checkpointing
Applications"): a job that counts to 10, exiting with its ``checkpoint_exit_code``
after every second step, is vacated twice; each run resumes from the checkpoint the
schedd kept in its spool, and the job ends at 10 without starting over."""

from __future__ import annotations

import pytest

import bindings as htcondor
from tests.integration.conftest import personal_pool, roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

#: Counts from its checkpoint to 10, a step a second; checkpoints (exit 85) every
#: second step; says where each run started in its output and in the shared progress file.
JOB = """#!/bin/sh
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


def test_a_checkpointing_job_vacated_twice_finishes_at_ten_without_starting_over(
        pool, tmp_path, monkeypatch, shared_dir):
    """Vacated after its 3rd and 7th steps, the job restarts from its last kept checkpoint
    (2, then 6), never from 0, ends with 'done 10', and its ad counts the checkpoints;
    between vacates each checkpoint exit restarts it in place (condor_starter
    VanillaProc::JobReaper: restartCheckpointedJob)."""
    monkeypatch.chdir(tmp_path)
    env = pool["env"]
    progress = shared_dir / "progress.txt"
    progress.touch()
    progress.chmod(0o666)
    (tmp_path / "count.sh").write_text(JOB)
    (tmp_path / "count.sh").chmod(0o755)
    (tmp_path / "job.sub").write_text(
        f"executable = count.sh\narguments = {progress}\ncheckpoint_exit_code = 85\n"
        "transfer_checkpoint_files = count.ckpt\nshould_transfer_files = YES\n"
        "output = job.out\nlog = job.log\nrequest_memory = 64M\nqueue\n")
    cluster = submitted_cluster(roost(env, "submit", "job.sub"))
    schedd = htcondor.Schedd()
    for after in (3, 7):
        wait_for(lambda: _count(progress) >= after, seconds=90,
                 what=f"step {after} (progress {_progress(progress)}, queue {schedd.query(f'ClusterId == {cluster}', ['JobStatus', 'HoldReason'])})")
        schedd.act(htcondor.JobAction.Vacate, f"{cluster}.0")
    wait_for(lambda: schedd.query(f"ClusterId == {cluster}", ["JobStatus"]) == [] or
             schedd.query(f"ClusterId == {cluster}", ["JobStatus"])[0]["JobStatus"] == 4, seconds=120)
    [ad] = schedd.history(f"ClusterId == {cluster}",
                          ["NumCheckpoints", "CheckpointNumber", "CommittedTime", "LastCheckpointTime",
                           "NumJobStarts", "JobRunCount"], match=1) or \
        schedd.query(f"ClusterId == {cluster}", ["NumCheckpoints", "CheckpointNumber", "CommittedTime",
                                                 "LastCheckpointTime", "JobRunCount"])
    starts = [int(word) for word in (tmp_path / "job.out").read_text().split()[1::2][:-1]]
    assert (tmp_path / "job.out").read_text().rstrip().endswith("done 10")
    assert starts[0] == 0 and 0 not in starts[1:], starts  # never started over
    assert ad["NumCheckpoints"] >= 4 and ad["CommittedTime"] > 0 and ad["LastCheckpointTime"] > 0, ad
    assert ad["JobRunCount"] >= 3, ad  # two vacates: three runs
    assert len(starts) > ad["JobRunCount"], (starts, ad)  # and restarts in place after each checkpoint exit
    assert not (pool["dir"] / "spool" / str(cluster)).exists()  # the kept checkpoint goes with the job
    log = (tmp_path / "job.log").read_text()
    assert "Started transferring output files" in log and "Finished transferring output files" in log
