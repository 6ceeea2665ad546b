"""Tests for bindings.wait_reason: the one sentence -better-analyze ends an idle job's
report with, from fixed slot ads and fixed answers of the negotiator's last-cycle route."""

import time

import pytest

import classad
from bindings.analyze import analyze_job
from bindings.wait_reason import CycleView, entry_for, submitter_of, view_from_answer, waiting_sentence

JOB = classad.ClassAd('[ClusterId = 3; ProcId = 0; JobStatus = 1; Owner = "alice"; User = "alice@pool";'
                      ' RequestMemory = 1024; Requirements = TARGET.Memory >= RequestMemory]')
STARTED = 1_700_000_000.0
AT = time.strftime("%H:%M:%S", time.localtime(STARTED))


def slot(memory):
    return classad.ClassAd(f"[Memory = {memory}; Requirements = true]")


def answer(reason, submitter="alice@pool", job_ids=("3.0", "3.1")):
    return {"started": STARTED, "ended": STARTED + 1, "truncated": False, "submitters": [], "groups": [],
            "waiting": [{"submitter": submitter, "schedd": "s", "request_id": "r", "job_ids": list(job_ids),
                         "left": 2, "reason": reason}]}


def sentence(reason, slots=(2048, 2048, 512), job=JOB):
    analysis = analyze_job(job, [slot(m) for m in slots])
    return waiting_sentence(analysis, view_from_answer(job, "3.0", answer(reason)),
                            [c.text for c in analysis.failing])


@pytest.mark.parametrize("reason, expected", [
    ("concurrency limit license is used up: 3 of 3 in use and the job needs 1",
     f"Job 3.0 waits: concurrency limit license is used up: 3 of 3 in use and the job needs 1 (negotiation cycle at {AT})."),
    ("only 2 of its gang of 3 fit.", f"Job 3.0 waits: only 2 of its gang of 3 fit (negotiation cycle at {AT})."),
    ("its group group_a is at its quota and does not accept surplus: 2 in use / quota 2 / no limit (cores)",
     "Job 3.0 waits: its group group_a is at its quota and does not accept surplus: 2 in use / quota 2 / "
     f"no limit (cores) (negotiation cycle at {AT})."),
    ("1 user(s) ahead of alice@pool (effective priority 500.00) hold the slots it could use: bob@pool (0.50, 2 in use)",
     "Job 3.0 waits: 1 user(s) ahead of alice@pool (effective priority 500.00) hold the slots it could use: "
     f"bob@pool (0.50, 2 in use) (negotiation cycle at {AT})."),
])
def test_the_negotiators_reason_becomes_the_sentence(reason, expected):
    """A reason of the last cycle (limit, gang, group, priority) ends the report as one sentence."""
    assert sentence(reason) == expected


def test_no_slot_that_matches_comes_from_the_slot_analysis():
    """When no slot can run the job, that is the sentence, naming the clause no slot meets, whatever the negotiator says."""
    assert sentence("priority: ...", slots=(512, 256)) == (
        "Job 3.0 waits for a slot that matches: none of the 2 slot(s) can run it "
        "(no slot satisfies TARGET.Memory >= RequestMemory).")


def test_matching_slots_that_were_not_idle():
    """The negotiator's 'no idle slot matched' with matching slots in the pool says they were busy, with counts."""
    assert sentence("no idle slot matched its request in the last cycle") == (
        f"Job 3.0 waits for a slot that matches and is free: 2 of the 3 slot(s) can run it, "
        f"but none was idle for it in the last negotiation cycle (at {AT}).")


def test_a_job_the_last_cycle_did_not_leave_waiting():
    """A job in no waiting request was matched or came after the cycle."""
    analysis = analyze_job(JOB, [slot(2048)])
    view = view_from_answer(JOB, "3.0", answer("x", job_ids=("9.0",)))
    assert waiting_sentence(analysis, view).startswith(f"Job 3.0 was not left waiting by the last negotiation cycle (at {AT})")


def test_no_cycle_yet_and_no_negotiator():
    """Before a first cycle, and when the negotiator cannot be asked, the sentence says so."""
    analysis = analyze_job(JOB, [slot(2048)])
    assert waiting_sentence(analysis, CycleView()) == "Job 3.0 waits for the negotiator's first cycle; 1 of the 1 slot(s) can run it."
    assert waiting_sentence(analysis, CycleView(problem="connection refused")).endswith(
        "the negotiator could not be asked why: connection refused.")
    assert view_from_answer(JOB, "3.0", ["nonsense"]).problem.startswith("the negotiator answered")


def test_a_job_not_idle_gets_no_sentence():
    """Only idle jobs are explained."""
    running = classad.ClassAd('[ClusterId = 3; ProcId = 0; JobStatus = 2; Requirements = true]')
    assert waiting_sentence(analyze_job(running, [slot(1)]), CycleView()) == ""


def test_the_submitter_is_the_accounting_group_user():
    """A job in an accounting group is known to the negotiator as group.user@domain, others by User."""
    grouped = classad.ClassAd('[User = "alice@pool"; Owner = "alice"; AccountingGroup = "group_a.alice"]')
    assert submitter_of(grouped) == "group_a.alice@pool"
    assert submitter_of(JOB) == "alice@pool" and submitter_of(classad.ClassAd("[Owner = 1]")) is None
    waiting = [{"submitter": "bob@pool", "job_ids": ["3.0"], "reason": "b"},
               {"submitter": "group_a.alice@pool", "job_ids": ["3.0"], "reason": "a"}]
    assert entry_for(grouped, "3.0", waiting)["reason"] == "a"
    assert entry_for(JOB, "3.0", waiting)["reason"] == "a"  # by its user part when the name differs
    assert entry_for(JOB, "4.0", waiting) is None


def test_without_job_ids_the_request_is_found_by_its_fingerprint():
    """A schedd that names no job ids: the job's request is the one of its submitter whose resources and limits it shares."""
    waiting = [{"submitter": "alice@pool", "job_ids": [], "reason": "big", "fingerprint": {"RequestMemory": 4096}},
               {"submitter": "alice@pool", "job_ids": [], "reason": "small", "fingerprint": {"RequestMemory": 1024}},
               {"submitter": "bob@pool", "job_ids": [], "reason": "bob's", "fingerprint": {}}]
    assert entry_for(JOB, "3.0", waiting)["reason"] == "small"
    assert entry_for(JOB, "3.0", waiting[:1]) is None
