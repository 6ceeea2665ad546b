"""The main job: `roost run` on the shipped examples, on a personal pool it starts
itself, with real jobs, real file transfer and the user's event log."""

from __future__ import annotations

import pathlib
import shutil

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from tests.integration.conftest import isolated_env, roost

EXAMPLES = pathlib.Path(__file__).parents[2] / "examples"


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """A copy of examples/ and an environment whose pool `roost run` starts."""
    home = tmp_path_factory.mktemp("home")
    work = tmp_path_factory.mktemp("work") / "examples"
    shutil.copytree(EXAMPLES, work)
    env = isolated_env(home)
    try:
        yield {"env": env, "work": work, "pool": home / "pool"}
    finally:
        roost(env, "pool", "down", "--dir", str(home / "pool"), check=False)


def test_hello_runs_and_its_output_and_event_log_arrive(session):
    """`roost run hello.sub` starts the pool, runs the job and says where its output is."""
    done = roost(session["env"], "run", str(session["work"] / "hello.sub"), "--dir", str(session["pool"]),
                 "--timeout", "60", timeout=120)
    assert "1 of 1 job(s) succeeded" in done.stdout
    out = session["work"] / "hello.1.0.out"
    assert out.read_text() == "Hello from Roost, job 1.0\n"
    assert str(out) in done.stdout
    events = [e.type for e in JobEventLog(str(session["work"] / "hello.log")).events(stop_after=0)]
    assert events[0] == JobEventType.SUBMIT and JobEventType.EXECUTE in events
    assert events[-1] == JobEventType.JOB_TERMINATED


def test_sweep_runs_one_job_per_line_on_the_running_pool(session):
    """A second `roost run` reuses the running pool; `queue from` makes one job per line."""
    done = roost(session["env"], "run", str(session["work"] / "sweep.sub"), "--timeout", "60", timeout=120)
    assert "3 of 3 job(s) succeeded" in done.stdout
    assert "pool up" not in done.stdout
    outputs = [(session["work"] / f"sweep.{i}.out").read_text() for i in range(3)]
    assert outputs[1].startswith("alpha=0.2 beta=20")


def test_input_and_output_files_travel(session):
    """transfer_input_files reaches the sandbox and transfer_output_files comes back."""
    done = roost(session["env"], "run", str(session["work"] / "files.sub"), "--timeout", "60", timeout=120)
    assert "1 of 1 job(s) succeeded" in done.stdout
    counts = (session["work"] / "counts.txt").read_text().split()
    assert counts[:2] == ["3", "the"]


def test_a_failing_job_makes_run_exit_nonzero(session):
    """A job that exits 3 is reported with its exit code, and `roost run` fails."""
    sub = session["work"] / "fail.sub"
    sub.write_text("executable = /bin/sh\narguments = \"-c 'exit 3'\"\nrequest_memory = 64M\nqueue\n")
    done = roost(session["env"], "run", str(sub), "--timeout", "60", check=False, timeout=120)
    assert done.returncode == 1
    assert "exit code 3" in done.stdout and "0 of 1 job(s) succeeded" in done.stdout
