"""Start-up cleanup kills the jobs a SIGKILLed startd left running in its sandboxes."""

import os
import subprocess
import time

import pytest

from startd.sandbox import SANDBOX_PREFIX, clean_leftover_sandboxes

pytestmark = pytest.mark.integration  # starts processes for the cleanup to kill


def test_leftover_job_processes_are_killed_and_their_sandbox_removed(tmp_path):
    sandbox = tmp_path / f"{SANDBOX_PREFIX}7_0_leftover"
    sandbox.mkdir()
    job = subprocess.Popen(["/bin/sh", "-c", "sleep 60"], cwd=sandbox, start_new_session=True)
    outside = subprocess.Popen(["/bin/sh", "-c", "sleep 60"], cwd=tmp_path, start_new_session=True)
    try:
        assert clean_leftover_sandboxes(str(tmp_path)) == [sandbox.name]
        assert job.wait(timeout=10) != 0
        assert not sandbox.exists()
        time.sleep(0.1)
        assert outside.poll() is None  # a process outside any sandbox is left alone
    finally:
        for proc in (job, outside):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert os.path.isdir(tmp_path)
