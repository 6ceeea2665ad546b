"""Priority preemption on a real 4-slot personal pool: alice (her priority factor made
much worse with `roost userprio -setfactor`) fills the pool with long jobs; bob submits
two, PREEMPTION_REQUIREMENTS lets the negotiator take two of alice's slots: her two
youngest jobs are evicted (004) and go back to Idle, bob's run, and alice's evicted jobs
run again once his are done (a marker file makes their second run short). With
MAXJOBRETIREMENTTIME the victims' slots show Claimed/Retiring until the retirement time,
counted from the job's start as in HTCondor, is used up, and only then are they evicted."""

from __future__ import annotations

import time

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.integration.test_jobs_priority import (
    names,  # noqa: F401 (the alice and bob accounts)
    shared_pool_users,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

#: Static slots (priority preemption of a slot whose job has retirement left is allowed
#: there, as in HTCondor); PREEMPTION_REQUIREMENTS as HTCondor's example: the running user's
#: priority must be clearly worse than the candidate's.
POOL = {"_ROOST_NUM_CPUS": "4", "_ROOST_NUM_SLOTS": "4",
        "_ROOST_PREEMPTION_REQUIREMENTS": "MY.RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2",
        "_ROOST_STARTER_UPDATE_INTERVAL": "2"}
#: A job that sleeps on its first run and ends at once on its second (the marker says it ran).
SCRIPT = "#!/bin/sh\nif [ -e \"$1.ran\" ]; then exit 0; fi\ntouch \"$1.ran\"\nexec sleep 600\n"
ALICE = "executable = {dir}/job.sh\narguments = {dir}/alice.$(Process)\nlog = alice.log\n" \
        "request_cpus = 1\nrequest_memory = 64M\nqueue 4\n"
BOB = "executable = /bin/sleep\narguments = 5\nlog = bob.log\nrequest_cpus = 1\nrequest_memory = 64M\nqueue 2\n"


def events(log_path, kind):
    if not log_path.exists():
        return []
    return [e for e in JobEventLog(str(log_path)).events(stop_after=0) if e.type == kind]


def fill_with_alice(pool, names, shared_dir):  # noqa: F811
    """alice's priority made 1000000 times worse; her 4 long jobs running on the 4 slots."""
    roost(pool["env"], "userprio", "-setfactor", f"{names['alice']}@{pool['domain']}", "1000000")
    (shared_dir / "job.sh").write_text(SCRIPT)
    (shared_dir / "job.sh").chmod(0o755)
    (shared_dir / "alice.sub").write_text(ALICE.format(dir=shared_dir))
    submitted_cluster(roost(pool["users"]["alice"], "submit", "alice.sub"))
    wait_for(lambda: len(events(shared_dir / "alice.log", JobEventType.EXECUTE)) == 4, seconds=60)


def submit_bob(pool, shared_dir):
    (shared_dir / "bob.sub").write_text(BOB)
    submitted_cluster(roost(pool["users"]["bob"], "submit", "bob.sub"))
    return time.time()


def slot_job_starts(env) -> dict[int, int] | None:
    """Each running alice proc's JobStart as its slot advertises it (what PREEMPTION_RANK's
    youngest-first reads; the event log's 001 is written later, by the schedd, in whole
    seconds of its own), once all 4 are there."""
    out = roost(env, "status", "-af", "JobProc", "JobStart", "-constraint", "JobStart isnt undefined").stdout
    starts = {int(row.split()[0]): int(row.split()[1]) for row in out.splitlines() if len(row.split()) == 2}
    return starts if len(starts) == 4 else None


def slot_activities(env) -> dict[str, str]:
    out = roost(env, "status", "-af", "Name", "State", "Activity").stdout.split("\n")
    return {line.split()[0]: " ".join(line.split()[1:]) for line in out if line.strip()}


def test_better_priority_preempts_the_youngest_jobs_which_run_again_later(tmp_path_factory, names, shared_dir,  # noqa: F811
                                                                          monkeypatch):
    monkeypatch.chdir(shared_dir)
    with shared_pool_users(tmp_path_factory, names, POOL) as pool:
        fill_with_alice(pool, names, shared_dir)
        starts = {e.proc: e.timestamp for e in events(shared_dir / "alice.log", JobEventType.EXECUTE)}
        job_starts = wait_for(lambda: slot_job_starts(pool["env"]), seconds=30, what="4 claimed slots showing JobStart")
        submitted = submit_bob(pool, shared_dir)
        wait_for(lambda: len(events(shared_dir / "alice.log", JobEventType.JOB_EVICTED)) == 2, seconds=60)
        evicted = events(shared_dir / "alice.log", JobEventType.JOB_EVICTED)
        assert max(e.timestamp for e in evicted) - submitted < 30, "bob's jobs preempted within a few cycles"
        kept = [proc for proc in starts if proc not in {e.proc for e in evicted}]
        assert min(job_starts[e.proc] for e in evicted) >= max(job_starts[proc] for proc in kept), "the youngest go"
        wait_for(lambda: len(events(shared_dir / "bob.log", JobEventType.JOB_TERMINATED)) == 2, seconds=60)
        wait_for(lambda: len(events(shared_dir / "alice.log", JobEventType.JOB_TERMINATED)) == 2, seconds=90)
        done = {e.proc for e in events(shared_dir / "alice.log", JobEventType.JOB_TERMINATED)}
        assert done == {e.proc for e in evicted}
        # the evicted run is charged: its wall clock counts in the job's RemoteWallClockTime
        rows = roost(pool["env"], "history", "-af", "ProcId", "RemoteWallClockTime").stdout.split("\n")
        wall = {int(row.split()[0]): float(row.split()[1]) for row in rows if row.strip()}
        for event in evicted:
            assert wall[event.proc] >= event.timestamp - starts[event.proc] - 2, (wall, event)


def test_retirement_keeps_the_victims_running_until_it_is_used_up(tmp_path_factory, names, shared_dir,  # noqa: F811
                                                                    monkeypatch):
    """MAXJOBRETIREMENTTIME = 40: bob's match puts the victims' slots in Claimed/Retiring;
    they are evicted no sooner than 40 s after their jobs started."""
    monkeypatch.chdir(shared_dir)
    with shared_pool_users(tmp_path_factory, names, {**POOL, "_ROOST_MAXJOBRETIREMENTTIME": "40"}) as pool:
        fill_with_alice(pool, names, shared_dir)
        starts = {e.proc: e.timestamp for e in events(shared_dir / "alice.log", JobEventType.EXECUTE)}
        submit_bob(pool, shared_dir)
        retiring_seen = {}

        def retiring_then_evicted():
            for name, pair in slot_activities(pool["env"]).items():
                if pair == "Claimed Retiring":
                    retiring_seen.setdefault(name, time.time())
            return len(events(shared_dir / "alice.log", JobEventType.JOB_EVICTED)) == 2

        wait_for(retiring_then_evicted, seconds=90, step=0.5)
        evicted = events(shared_dir / "alice.log", JobEventType.JOB_EVICTED)
        assert len(retiring_seen) == 2, retiring_seen
        for event in evicted:
            assert event.timestamp - starts[event.proc] >= 39, (event, starts)
        assert min(retiring_seen.values()) < min(e.timestamp for e in evicted) - 3, "Retiring before the eviction"
        wait_for(lambda: len(events(shared_dir / "bob.log", JobEventType.JOB_TERMINATED)) == 2, seconds=60)
