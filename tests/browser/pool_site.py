"""A real personal pool for the browser tests, the web site it serves, and the jobs
the tests show on it: jobs that run until the test opens their gate, so a page can be
looked at while they run and again once they end."""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
import time

from tests.integration.conftest import roost
from tests.support.waiting import read_address, wait_for

#: A job that runs until the file named by its argument exists (at most 10 minutes).
GATED_SCRIPT = """#!/bin/sh
for i in $(seq 3000); do [ -e "$1" ] && exit 0; sleep 0.2; done
exit 1
"""


def site_url(pool_dir: pathlib.Path) -> str:
    """The web daemon's base URL, from the address file it writes in the pool's log folder."""
    address = read_address(pool_dir / "log" / ".web_address", seconds=60)
    host_port, _, options = address.partition("?")
    return f"{'https' if 'tls=1' in options else 'http'}://{host_port}"


def submit(pool: dict, name: str, description: str) -> str:
    """Submit ``description`` (saved as <name>.sub in the pool's work folder); its cluster id."""
    work = pool["home"] / "work"
    work.mkdir(exist_ok=True)
    path = work / f"{name}.sub"
    path.write_text(description)
    return roost(pool["env"], "submit", str(path)).stdout.split("cluster")[-1].strip(" .\n")


def job_states(pool: dict, cluster: str) -> list[int]:
    """JobStatus of each job of ``cluster`` still in the queue, in proc order."""
    answer = roost(pool["env"], "q", "-af", "JobStatus", "-constraint", f"ClusterId == {cluster}").stdout
    return [int(word) for word in answer.split()]


def wait_running(pool: dict, cluster: str, count: int, seconds: float = 90) -> None:
    """Wait until ``count`` jobs of ``cluster`` run; on a timeout, say what became of them."""
    try:
        wait_for(lambda: job_states(pool, cluster).count(2) == count, seconds,
                 f"{count} jobs of cluster {cluster} running", step=0.5)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{what_became_of(pool, cluster)}") from None


def what_became_of(pool: dict, cluster: str) -> str:
    """The jobs of ``cluster`` in the queue (held? why not matched?) and in the history,
    the -better-analyze text, the slots with their refused-claim counts and the
    negotiator's last refusal lines: what a person reads to see why a job did not run."""
    asked = {
        "in the queue": ("q", cluster, "-af", "ProcId", "JobStatus", "HoldReason", "LastRejMatchReason"),
        "in the history": ("history", cluster, "-af", "ProcId", "JobStatus", "ExitCode", "RemoveReason"),
        "-better-analyze": ("q", "-better-analyze", cluster),
        "slots": ("status", "-af", "Name", "State", "Cpus", "GPUs", "ClaimRequestsRefused"),
    }
    parts = []
    for title, args in asked.items():
        answer = roost(pool["env"], *args, check=False)
        parts.append(f"{title}:\n{answer.stdout}{answer.stderr}")
    log = pool["dir"] / "log" / "NegotiatorLog"
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    parts.append("the negotiator's refusals:\n" + "\n".join([line for line in lines if "refused" in line][-10:]))
    return "\n".join(parts)


def remove(pool: dict, cluster: str) -> None:
    """Remove ``cluster`` and wait until it has left the queue (so the next test starts on a free pool)."""
    roost(pool["env"], "rm", cluster, check=False)
    wait_for(lambda: not job_states(pool, cluster), 60, f"cluster {cluster} leaving the queue", step=0.5)


class Gate:
    """A file the gated jobs wait for, in a folder every account may read (a root pool
    runs jobs as their owner): opening the gate ends them."""

    def __init__(self) -> None:
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="roost-gate-"))
        self.folder.chmod(0o1777)
        self.path = self.folder / "open"

    def job(self, pool: dict, count: int, extra: str = "") -> str:
        """A submit description of ``count`` gated one-core jobs (``extra`` lines added)."""
        work = pool["home"] / "work"
        work.mkdir(exist_ok=True)
        script = work / "gated.sh"
        if not script.exists():  # never rewritten: a queued job's executable is read when it starts
            staged = work / f".gated.sh.{os.getpid()}"
            staged.write_text(GATED_SCRIPT)
            staged.chmod(0o755)
            staged.replace(script)
        return (f"executable = {script}\narguments = {self.path}\nrequest_cpus = 1\nrequest_memory = 32M\n"
                f"{extra}queue {count}\n")

    def open(self) -> None:
        self.path.touch()

    def close(self) -> None:
        """Open the gate for anything still waiting, then remove its folder."""
        self.open()
        time.sleep(0.5)
        shutil.rmtree(self.folder, ignore_errors=True)
