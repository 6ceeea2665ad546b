"""A restarted schedd reconnects to its running jobs: on a personal pool, the schedd is
killed with SIGKILL while three jobs run; the master starts it again, it asks the startd
for each job back, and every job finishes on the slot it started on with one 001
Execute event and a 023 Reconnected event in its log."""

from __future__ import annotations

import os
import signal

import pytest

from bindings.eventlog import JobEventType
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import event_types, submitted_cluster
from tests.integration.test_jobs_restart import daemon_pids
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_NUM_CPUS": "3", "_ROOST_MASTER_BACKOFF_CONSTANT": "1", "_ROOST_STARTER_UPDATE_INTERVAL": "2"}

#: Says it started, runs long enough for the schedd to die and come back, then says where it ran.
JOB = """#!/bin/sh
echo started > "$1/started-$2"
sleep 12
echo "done on $(grep -i '^Name ' "$_CONDOR_MACHINE_AD" | cut -d'"' -f2)"
"""


def test_jobs_finish_on_their_slots_after_the_schedd_is_killed(pool, tmp_path, monkeypatch, shared_dir):
    """SIGKILL the schedd with 3 jobs running: after the restart each completes there, with 023 and one 001."""
    monkeypatch.chdir(tmp_path)
    env = pool["env"]
    (tmp_path / "job.sh").write_text(JOB)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "job.sub").write_text(f"executable = job.sh\narguments = {shared_dir} $(Process)\n"
                                      "job_lease_duration = 60\noutput = job.$(Process).out\nlog = job.log\n"
                                      "request_memory = 32M\nqueue 3\n")
    submitted_cluster(roost(env, "submit", "job.sub"))
    wait_for(lambda: all((shared_dir / f"started-{n}").exists() for n in range(3)), seconds=60)
    wait_for(lambda: event_types(tmp_path / "job.log").count(JobEventType.EXECUTE) == 3, seconds=30)
    old = daemon_pids(env)["SCHEDD"]
    os.kill(old, signal.SIGKILL)
    wait_for(lambda: daemon_pids(env).get("SCHEDD") not in (None, old), seconds=60)
    wait_for(lambda: event_types(tmp_path / "job.log").count(JobEventType.JOB_TERMINATED) == 3, seconds=90)
    types = event_types(tmp_path / "job.log")
    assert types.count(JobEventType.EXECUTE) == 3, types
    assert types.count(JobEventType.JOB_RECONNECTED) == 3, types
    assert JobEventType.JOB_EVICTED not in types, types
    for n in range(3):
        assert (tmp_path / f"job.{n}.out").read_text().startswith("done on slot1_")
