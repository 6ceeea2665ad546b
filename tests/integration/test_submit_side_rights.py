"""On a real personal pool started by root, the schedd touches a job's files as the
job's owner: a local user's output and event log are written as that user, an
output aimed at a directory only root may write holds the job (12), and an input
naming the pool's own signing key holds it (13) without a byte of the key sent."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.integration.conftest import ROOST, roost
from tests.integration.test_job_identity import (  # noqa: F401
    local_user,
    pytestmark,  # noqa: F401 (root and useradd only)
    root_pool,
    submit_dir,
    token_env,
)
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.waiting import wait_for

JOB = "executable = /bin/echo\narguments = hello\nrequest_memory = 64M\n{extra}\nqueue\n"


def submit_as(env: dict, where: Path, extra: str) -> int:
    """``roost submit`` of a one-job description run from ``where``; the cluster id."""
    (where / "job.sub").write_text(JOB.format(extra=extra))
    done = subprocess.run([*ROOST, "submit", "job.sub"], env=env, cwd=where, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return submitted_cluster(done)


def hold_of(pool, cluster: int) -> tuple[int, str] | None:
    """(HoldReasonCode, HoldReason) once job ``cluster``.0 is held, else None."""
    shown = roost(pool["env"], "q", "-allusers", "-af", "JobStatus", "HoldReasonCode", "HoldReason",
                  "-constraint", f"ClusterId == {cluster}").stdout.split(None, 2)
    if len(shown) < 3 or shown[0] != "5":
        return None
    return int(shown[1]), shown[2].strip()


def test_the_schedd_writes_and_reads_a_jobs_files_as_its_owner(root_pool, local_user, submit_dir):
    mine = submit_dir(local_user)
    env = token_env(root_pool, local_user.pw_name, mine)

    submit_as(env, mine, "output = out.txt\nerror = err.txt\nlog = job.log")
    wait_for(lambda: (mine / "out.txt").exists() and (mine / "out.txt").read_text() == "hello\n", seconds=90)
    for name in ("out.txt", "err.txt", "job.log"):
        assert (mine / name).stat().st_uid == local_user.pw_uid, name

    root_only = root_pool["dir"]  # pytest's temporary tree: root's, 0700
    stolen = submit_as(env, mine, f"output = {root_only / 'stolen.txt'}")
    code, reason = wait_for(lambda: hold_of(root_pool, stolen), seconds=90)
    assert code == 12 and str(root_only / "stolen.txt") in reason, reason
    assert not (root_only / "stolen.txt").exists()

    key = root_pool["config"].param("SEC_TOKEN_POOL_SIGNING_KEY_FILE")
    leaked = submit_as(env, mine, f"transfer_input_files = {key}\noutput = key.out")
    code, reason = wait_for(lambda: hold_of(root_pool, leaked), seconds=90)
    assert code == 13 and key in reason and "Permission denied" in reason, reason
    roost(root_pool["env"], "rm", "-all", check=False)
