"""Jobs in the queue of a real personal pool: `roost rm` of a running job kills its
whole process tree and logs the abort, and a job too big for any slot stays idle
while `roost q -better-analyze` names the Requirements clause that no slot meets."""

from __future__ import annotations

import bindings as htcondor
from bindings.eventlog import JobEventType
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import event_types, submitted_cluster
from tests.support.waiting import wait_for

#: Starts a background child, records both pids outside the sandbox, then waits.
TREE_JOB = """#!/bin/sh
sh -c 'echo $$ > "$1/child.pid"; exec sleep 600' child "$1" &
echo $$ > "$1/job.pid"
wait
"""


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def read_pid(path) -> int | None:
    """The pid written in ``path``, once it is there in full."""
    text = path.read_text().strip() if path.exists() else ""
    return int(text) if text.isdigit() else None


def test_rm_of_a_running_job_kills_its_process_tree(pool, tmp_path, monkeypatch, shared_dir):
    """Both the job and its background child are gone after `roost rm`; the log says 009."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tree.sh").write_text(TREE_JOB)
    (tmp_path / "tree.sh").chmod(0o755)
    (tmp_path / "job.sub").write_text(f"executable = tree.sh\narguments = {shared_dir}\nlog = job.log\n"
                                      "request_memory = 64M\nqueue\n")
    cluster = submitted_cluster(roost(pool["env"], "submit", "job.sub"))
    job_pid = wait_for(lambda: read_pid(shared_dir / "job.pid"), seconds=45)
    child_pid = wait_for(lambda: read_pid(shared_dir / "child.pid"), seconds=10)
    assert alive(job_pid) and alive(child_pid)
    roost(pool["env"], "rm", str(cluster))
    wait_for(lambda: JobEventType.JOB_ABORTED in event_types(tmp_path / "job.log"), seconds=30)
    wait_for(lambda: not alive(job_pid) and not alive(child_pid), seconds=15)
    assert htcondor.Schedd().query(f"ClusterId == {cluster}", ["JobStatus"]) == []
    assert JobEventType.EXECUTE in event_types(tmp_path / "job.log")


def negotiated_after(moment: int) -> bool:
    """Whether the negotiator's ad reports a finished cycle that began after ``moment``."""
    ads = htcondor.Collector().query(htcondor.AdType.Negotiator, projection=["LastNegotiationCycleTime0"])
    return any("LastNegotiationCycleTime0" in ad and ad["LastNegotiationCycleTime0"] > moment for ad in ads)


def test_a_job_bigger_than_any_slot_stays_idle_and_analyze_says_why(pool, tmp_path, monkeypatch):
    """request_memory beyond the machine: idle after a negotiation cycle, and the analysis
    marks the memory clause as met by no slot while the others are met by every slot."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "big.sub").write_text("executable = /bin/true\nrequest_memory = 100T\nlog = big.log\nqueue\n")
    cluster = submitted_cluster(roost(pool["env"], "submit", "big.sub"))
    slots = htcondor.Collector().query(htcondor.AdType.Startd, projection=["Name"])
    assert slots, "the pool has no slot ads"
    [queued] = htcondor.Schedd().query(f"ClusterId == {cluster}", ["QDate"])
    wait_for(lambda: negotiated_after(queued["QDate"]), seconds=60, what="a negotiation cycle after the submit")
    [ad] = htcondor.Schedd().query(f"ClusterId == {cluster}", ["JobStatus"])
    assert ad["JobStatus"] == 1
    report = roost(pool["env"], "q", "-better-analyze", f"{cluster}.0").stdout
    assert f"The Requirements expression for job {cluster}.0 is" in report
    assert "Step    Matched  Condition" in report
    rows = [line.split(None, 2) for line in report.splitlines() if line.startswith("[")]
    memory = [row for row in rows if "TARGET.Memory >= RequestMemory" in row[2]]
    assert memory and memory[0][1] == "0", report
    assert all(row[1] == str(len(slots)) for row in rows if row not in memory), report
    assert f"0 slots match all of job {cluster}.0's Requirements" in report
    assert "No slot satisfies: TARGET.Memory >= RequestMemory" in report
    short = roost(pool["env"], "q", "-analyze", str(cluster)).stdout
    assert "Step" not in short and "are rejected by the job's Requirements" in short
