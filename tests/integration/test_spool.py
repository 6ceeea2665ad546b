"""condor_submit -spool and condor_transfer_data on a real personal pool
(condor_submit.rst -spool, condor_transfer_data.rst): the inputs go to the schedd's spool
at submit, so the job runs after its submit directory lost them; its outputs stay in the
spool, the job stays in the queue completed (LeaveJobInQueue), and roost transfer_data
brings the outputs into the submit directory."""

from __future__ import annotations

import os

import pytest

import bindings as htcondor
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

JOB = "#!/bin/sh\necho ran with $(cat data.txt)\ncat data.txt data.txt > result.txt\n"
SUB = """executable = job.sh
transfer_input_files = data.txt
should_transfer_files = YES
output = job.out
log = job.log
request_memory = 64M
queue
"""


def completed(schedd, cluster):
    ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "Iwd", "SUBMIT_Iwd", "LeaveJobInQueue",
                                                    "StageInFinish", "StageOutFinish"])
    return ads[0] if ads and ads[0].get("JobStatus") == 4 else None


def test_spooled_job_runs_without_its_submit_files_and_outputs_wait_for_transfer_data(pool, tmp_path,
                                                                                       monkeypatch):
    """Inputs deleted right after submit -spool still reach the job; outputs arrive only
    with roost transfer_data, and the completed job stays queued meanwhile."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sh").write_text(JOB)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "data.txt").write_text("spooled\n")
    (tmp_path / "job.sub").write_text(SUB)
    cluster = submitted_cluster(roost(pool["env"], "submit", "-spool", "job.sub"))
    (tmp_path / "job.sh").unlink()
    (tmp_path / "data.txt").unlink()
    schedd = htcondor.Schedd()
    ad = wait_for(lambda: completed(schedd, cluster), seconds=90, what="the spooled job to complete")
    assert ad["SUBMIT_Iwd"] == str(tmp_path) and ad["Iwd"] != str(tmp_path)
    assert "StageInFinish" in ad and "StageOutFinish" not in ad
    assert not (tmp_path / "result.txt").exists() and not (tmp_path / "job.out").exists()
    shown = roost(pool["env"], "transfer_data", str(cluster))
    assert "Fetching data files..." in shown.stdout
    assert (tmp_path / "result.txt").read_text() == "spooled\nspooled\n"
    assert (tmp_path / "job.out").read_text() == "ran with spooled\n"
    [after] = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "StageOutFinish"])
    assert after["JobStatus"] == 4 and after["StageOutFinish"] > 0
    assert os.path.isdir(ad["Iwd"])  # the sandbox stays while the job is queued
    roost(pool["env"], "rm", str(cluster))
    wait_for(lambda: not schedd.query(f"ClusterId == {cluster}", ["ProcId"]), seconds=30, what="the job to leave")
    wait_for(lambda: not os.path.exists(ad["Iwd"]), seconds=30,
             what="the spool sandbox to go with its job (removeJobSpoolDirectory)")


def test_transfer_data_of_a_job_not_spooled_says_so(pool, tmp_path, monkeypatch):
    """A job submitted without -spool has nothing in the spool to fetch."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sub").write_text("executable = /bin/true\nrequest_memory = 64M\nhold = true\nqueue\n")
    cluster = submitted_cluster(roost(pool["env"], "submit", "job.sub"))
    done = roost(pool["env"], "transfer_data", str(cluster), check=False)
    assert done.returncode == 1 and "submitted with -spool" in done.stderr
