"""Restart elsewhere on a real pool with two startds under one master (``STARTD`` and
``STARTD2``, the second with its own machine name and execute directory): the startd
running a job is killed with SIGKILL, the job's short lease runs out, the event log
shows the eviction (004), and the job completes on the other startd."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys

import pytest

import bindings as htcondor
from bindings.cli.pool import root_execute_dir
from bindings.eventlog import JobEventType
from tests.integration.conftest import personal_pool, roost
from tests.integration.test_jobs_files import event_types, submitted_cluster
from tests.integration.test_jobs_queue import alive, read_pid
from tests.support.waiting import wait_for

SECOND_MACHINE = "second-startd"

#: Records its pid outside the sandbox, runs a while, then says where it ran.
JOB = """#!/bin/sh
echo $$ > "$1/job-$2.pid"
sleep 4
echo "finished on $(grep -i '^Machine ' "$_CONDOR_MACHINE_AD" | cut -d'"' -f2)"
"""


@pytest.fixture(scope="module")
def two_startds(tmp_path_factory):
    """A personal pool whose master runs two startds; killed daemons are not restarted
    during the test, and starters renew their leases every second."""
    home = tmp_path_factory.mktemp("home")
    # where the pool's own EXECUTE goes: jobs of a root pool run as other accounts and
    # cannot enter the pool directory
    shared = root_execute_dir(str(home / "pool"))
    execute2 = f"{shared}-second" if shared else str(home / "pool" / "execute2")
    second = shlex.join(["/usr/bin/env", f"_ROOST_FULL_HOSTNAME={SECOND_MACHINE}",
                         f"_ROOST_EXECUTE={execute2}", sys.executable, "-m", "startd"])
    with personal_pool(home, {
        "_ROOST_DAEMON_LIST": "MASTER, COLLECTOR, SCHEDD, NEGOTIATOR, STARTD, STARTD2",
        "_ROOST_STARTD2": second,
        "_ROOST_NUM_CPUS": "1",
        "_ROOST_MASTER_BACKOFF_CONSTANT": "600",
        "_ROOST_STARTER_UPDATE_INTERVAL": "1",
    }) as pool:
        yield pool
    if shared:
        shutil.rmtree(execute2, ignore_errors=True)


def daemon_pids(env) -> dict[str, int]:
    """The pid of each daemon `roost pool status` lists, by name."""
    rows = roost(env, "pool", "status").stdout.splitlines()[2:]
    return {row.split()[0]: int(row.split()[1]) for row in rows if len(row.split()) > 1 and row.split()[1].isdigit()}


def test_a_job_whose_startd_is_killed_completes_on_the_other(two_startds, tmp_path, monkeypatch, shared_dir):
    """SIGKILL the startd running the job: 004 Evicted, then the job runs to the end on the other one."""
    monkeypatch.chdir(tmp_path)
    env = two_startds["env"]
    slots = htcondor.Collector().query(htcondor.AdType.Startd, projection=["Name", "Machine"])
    machines = {ad["Machine"] for ad in slots}
    assert SECOND_MACHINE in machines and len(machines) == 2, slots
    (tmp_path / "job.sh").write_text(JOB)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "job.sub").write_text(f"executable = job.sh\narguments = {shared_dir} $(Cluster)\n"
                                      "job_lease_duration = 5\noutput = job.out\nlog = job.log\n"
                                      "request_memory = 64M\nqueue\n")
    cluster = submitted_cluster(roost(env, "submit", "job.sub"))
    first_pid = wait_for(lambda: read_pid(shared_dir / f"job-{cluster}.pid"), seconds=45)
    schedd = htcondor.Schedd()
    # the job writes its pid as it starts; the startd's execute report, with RemoteHost, may follow it
    running = wait_for(lambda: [ad for ad in schedd.query(f"ClusterId == {cluster}", ["RemoteHost", "JobStatus"])
                                if "RemoteHost" in ad], seconds=30, what="the schedd hearing where the job runs")[0]
    first_machine = running["RemoteHost"].rsplit("@", 1)[1]
    victim = "STARTD2" if first_machine == SECOND_MACHINE else "STARTD"
    (shared_dir / f"job-{cluster}.pid").unlink()
    try:
        os.kill(daemon_pids(env)[victim], signal.SIGKILL)
        wait_for(lambda: JobEventType.JOB_EVICTED in event_types(tmp_path / "job.log"), seconds=30)
        wait_for(lambda: JobEventType.JOB_TERMINATED in event_types(tmp_path / "job.log"), seconds=60)
    finally:
        if alive(first_pid):  # the killed startd's job outlives it; do not leave it behind
            os.kill(first_pid, signal.SIGKILL)
    other = SECOND_MACHINE if victim == "STARTD" else next(m for m in machines if m != SECOND_MACHINE)
    assert (tmp_path / "job.out").read_text() == f"finished on {other}\n"
    types = event_types(tmp_path / "job.log")
    assert types.count(JobEventType.EXECUTE) == 2
    assert types.index(JobEventType.JOB_EVICTED) < len(types) - 1
    assert types[-1] == JobEventType.JOB_TERMINATED
