"""Real jobs on a real personal pool and their files: stdout comes back, input files
and directories reach the sandbox (with and without a trailing slash), output files
and directories come back with transfer_output_remaps applied, and a missing input
holds the job with a reason a person can act on."""

from __future__ import annotations

import pytest

import bindings as htcondor
from bindings.eventlog import JobEventLog, JobEventType
from tests.integration.conftest import roost
from tests.support.waiting import wait_for

#: Reads its inputs, writes a file, a file to be renamed on the way back, and a directory.
FILES_JOB = """#!/bin/sh
echo "hello from $(basename "$0") with $# args: $*"
cat data.txt > result.txt
cat indir/inner.txt >> result.txt
cat top.txt >> result.txt
mkdir -p outdir/deeper
echo nested > outdir/deeper/leaf.txt
echo remapped > rename-me.txt
echo to stderr >&2
"""

FILES_SUB = """executable = job.sh
arguments = one two
transfer_input_files = data.txt, indir, flatdir/
transfer_output_files = result.txt, outdir, rename-me.txt
transfer_output_remaps = "rename-me.txt = renamed/final.txt"
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
output = job.out
error = job.err
log = job.log
request_memory = 64M
queue
"""


def submitted_cluster(done) -> int:
    """The cluster id ``roost submit`` printed."""
    return int(done.stdout.strip().rsplit(" ", 1)[1].rstrip("."))


def event_types(log_path) -> list:
    """The event types in the event log at ``log_path`` (none yet when it is missing)."""
    if not log_path.exists():
        return []
    return [event.type for event in JobEventLog(str(log_path)).events(stop_after=0)]


def test_stdout_inputs_and_outputs_travel_with_remaps(pool, tmp_path, monkeypatch):
    """A job's stdout and stderr arrive; files and directories go in and come back, remapped."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sh").write_text(FILES_JOB)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "data.txt").write_text("from data\n")
    (tmp_path / "indir").mkdir()
    (tmp_path / "indir" / "inner.txt").write_text("from indir\n")
    (tmp_path / "flatdir").mkdir()
    (tmp_path / "flatdir" / "top.txt").write_text("from flatdir\n")
    (tmp_path / "renamed").mkdir()
    (tmp_path / "job.sub").write_text(FILES_SUB)
    roost(pool["env"], "submit", str(tmp_path / "job.sub"))
    roost(pool["env"], "wait", "-wait", "60", str(tmp_path / "job.log"), timeout=90)
    assert (tmp_path / "job.out").read_text() == "hello from job.sh with 2 args: one two\n"
    assert (tmp_path / "job.err").read_text() == "to stderr\n"
    assert (tmp_path / "result.txt").read_text() == "from data\nfrom indir\nfrom flatdir\n"
    assert (tmp_path / "outdir" / "deeper" / "leaf.txt").read_text() == "nested\n"
    assert (tmp_path / "renamed" / "final.txt").read_text() == "remapped\n"
    assert not (tmp_path / "rename-me.txt").exists()
    types = event_types(tmp_path / "job.log")
    assert types[0] == JobEventType.SUBMIT and JobEventType.EXECUTE in types
    assert types[-1] == JobEventType.JOB_TERMINATED


def test_a_missing_input_holds_the_job_with_code_13(pool, tmp_path, monkeypatch):
    """An input file that is not there when the job starts holds it; `roost q -hold` names
    the file. (`roost submit` refuses a missing input up front, as condor_submit does;
    skip_filechecks lets the job reach the queue, as a file removed after submit would.)"""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sub").write_text("executable = /bin/cat\narguments = absent.txt\n"
                                      "transfer_input_files = absent.txt\nshould_transfer_files = YES\n"
                                      "skip_filechecks = true\n"
                                      "log = job.log\nrequest_memory = 64M\nqueue\n")
    cluster = submitted_cluster(roost(pool["env"], "submit", str(tmp_path / "job.sub")))
    schedd = htcondor.Schedd()

    def held():
        ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "HoldReason", "HoldReasonCode"])
        return ads[0] if ads and ads[0].get("JobStatus") == 5 else None

    ad = wait_for(held, seconds=45)
    assert ad["HoldReasonCode"] == 13
    assert "absent.txt" in ad["HoldReason"]
    shown = roost(pool["env"], "q", "-hold").stdout
    assert f"{cluster}.0" in shown and "absent.txt" in shown
    assert JobEventType.JOB_HELD in event_types(tmp_path / "job.log")


def held_ad(schedd, cluster: int):
    """The job's hold attributes once it is held, else None."""
    ads = schedd.query(f"ClusterId == {cluster}", ["JobStatus", "HoldReason", "HoldReasonCode"])
    return ads[0] if ads and ads[0].get("JobStatus") == 5 else None


def submit_script(pool, tmp_path, script: str, outputs: str) -> int:
    (tmp_path / "job.sh").write_text("#!/bin/sh\n" + script)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "job.sub").write_text(
        f"executable = job.sh\ntransfer_output_files = {outputs}\nshould_transfer_files = YES\n"
        "log = job.log\nrequest_memory = 64M\nqueue\n")
    return submitted_cluster(roost(pool["env"], "submit", str(tmp_path / "job.sub")))


def test_output_too_large_for_the_schedd_holds_instead_of_rerunning(pool, tmp_path, monkeypatch):
    """Outputs over the schedd's body limit hold the job with code 33, not lose the run."""
    monkeypatch.chdir(tmp_path)
    cluster = submit_script(pool, tmp_path, "head -c 20000000 /dev/urandom > big.bin\n", "big.bin")
    ad = wait_for(lambda: held_ad(htcondor.Schedd(), cluster), seconds=60)
    assert ad["HoldReasonCode"] == 33
    assert "output too large" in ad["HoldReason"]


@pytest.mark.parametrize("script, named", [
    ("mkfifo out.fifo\n", "out.fifo"),
    ("ln -s /etc/passwd leak\n", "leak"),
])
def test_an_output_that_is_not_a_sandbox_file_holds_the_job_naming_it(pool, tmp_path, monkeypatch, script, named):
    """An output FIFO or a symlink out of the sandbox holds the job with the path in the reason."""
    monkeypatch.chdir(tmp_path)
    cluster = submit_script(pool, tmp_path, script, named)
    ad = wait_for(lambda: held_ad(htcondor.Schedd(), cluster), seconds=60)
    assert named in ad["HoldReason"]
    assert not (tmp_path / named).exists()


@pytest.mark.parametrize("outputs, remaps, named", [
    ("../x", "", "../x"),
    ("/etc/hostname", "", "/etc/hostname"),
])
def test_an_output_pointing_out_of_the_sandbox_holds_the_job_naming_it(pool, tmp_path, monkeypatch,
                                                                      outputs, remaps, named):
    """`transfer_output_files = ../x` or an absolute output (names the sandbox cannot
    hold) hold the job naming the path; nothing is written outside. (A remap may name
    any path the owner may write, as in HTCondor: the schedd writes it as the owner.)"""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sh").write_text("#!/bin/sh\necho hi > out.txt\n")
    (tmp_path / "job.sh").chmod(0o755)
    remap_line = f'transfer_output_remaps = "{remaps}"\n' if remaps else ""
    (tmp_path / "job.sub").write_text(
        f"executable = job.sh\ntransfer_output_files = {outputs}\n{remap_line}should_transfer_files = YES\n"
        "log = job.log\nrequest_memory = 64M\nqueue\n")
    done = roost(pool["env"], "submit", str(tmp_path / "job.sub"), check=False)
    if done.returncode != 0:  # refused at submit: as good, if it names the path
        assert named in done.stderr + done.stdout
        return
    ad = wait_for(lambda: held_ad(htcondor.Schedd(), submitted_cluster(done)), seconds=60)
    assert named in ad["HoldReason"], ad["HoldReason"]
    assert not (tmp_path.parent.parent / "x").exists() and not (tmp_path.parent / "x").exists()
