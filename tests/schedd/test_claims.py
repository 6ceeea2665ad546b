"""Tests for schedd.claims: claim bookkeeping and CLAIM_WORKLIFE reuse decisions."""

import pytest

from classad import ClassAd, ExprTree
from jobmodel.states import JobId
from schedd.claims import Claim, ClaimState, ClaimTable, accepts_more_jobs, job_fits_claim, next_job_for


def slot(cpus=1, memory=1024, requirements="TARGET.RequestMemory <= MY.Memory"):
    ad = ClassAd({"Name": "slot1_1@node1", "Cpus": cpus, "Memory": memory})
    ad["Requirements"] = ExprTree(requirements)
    return ad


def job(owner="alice", memory=128, requirements="TARGET.Cpus >= 1"):
    ad = ClassAd({"Owner": owner, "RequestMemory": memory})
    ad["Requirements"] = ExprTree(requirements)
    return ad


def claim(**changes):
    values = dict(claim_id="secret-claim-id", slot_name="slot1_1@node1", startd_address="127.0.0.1:9700",
                  owner="alice", slot_ad=slot(), claimed_at=1000.0)
    values.update(changes)
    return Claim(**values)


def test_claim_id_never_appears_in_repr():
    """The ClaimId is a capability: a repr (and so a log line) does not show it."""
    assert "secret-claim-id" not in repr(claim())
    assert "slot1_1@node1" in repr(claim())


@pytest.mark.parametrize("worklife, jobs_run, now, expected", [
    (-1, 50, 1_000_000.0, True),   # -1: forever
    (0, 0, 1000.0, True),          # 0: one job per claim, none run yet
    (0, 1, 1000.0, False),         # 0: the one job has run
    (1200, 3, 2199.0, True),       # just before the worklife ends
    (1200, 3, 2200.0, False),      # at the worklife's end
])
def test_claim_worklife_decides_whether_a_claim_takes_another_job(worklife, jobs_run, now, expected):
    """CLAIM_WORKLIFE: -1 forever, 0 one job, else until that many seconds after claiming."""
    assert accepts_more_jobs(claim(jobs_run=jobs_run), now, worklife) is expected


def test_released_claim_takes_no_job():
    """A released claim accepts nothing, whatever the worklife."""
    assert not accepts_more_jobs(claim(state=ClaimState.RELEASED), 1000.0, -1)


def test_job_fits_only_a_claim_of_its_owner_whose_slot_it_matches_both_ways():
    """Reuse needs the same owner and both Requirements true."""
    on = claim()
    assert job_fits_claim(on, job())
    assert not job_fits_claim(on, job(owner="bob"))
    assert not job_fits_claim(on, job(memory=4096))  # the slot refuses it
    assert not job_fits_claim(on, job(requirements="TARGET.Cpus >= 4"))  # the job refuses the slot


def test_next_job_for_claim_is_the_first_fitting_idle_job():
    """Jobs of other owners or too big for the slot are passed over, in queue order."""
    idle = [(JobId(1, 0), job(owner="bob")), (JobId(2, 0), job(memory=9999)), (JobId(3, 0), job()),
            (JobId(4, 0), job())]
    assert next_job_for(claim(), idle) == JobId(3, 0)
    assert next_job_for(claim(), idle[:2]) is None


def test_table_tracks_a_claim_through_jobs_until_removed():
    """assign marks a claim busy with its job, job_done frees it, remove forgets it."""
    table = ClaimTable()
    table.add(claim())
    busy = table.assign("secret-claim-id", JobId(5, 0))
    assert (busy.state, busy.job_id, busy.jobs_run) == (ClaimState.BUSY, JobId(5, 0), 1)
    assert table.for_job(JobId(5, 0)) == busy
    with pytest.raises(ValueError, match="busy"):
        table.assign("secret-claim-id", JobId(6, 0))
    idle = table.job_done("secret-claim-id")
    assert (idle.state, idle.job_id) == (ClaimState.IDLE, None)
    assert table.for_job(JobId(5, 0)) is None
    assert table.assign("secret-claim-id", JobId(6, 0)).jobs_run == 2
    gone = table.remove("secret-claim-id")
    assert gone.state is ClaimState.RELEASED
    assert len(table) == 0 and table.for_job(JobId(6, 0)) is None
    assert table.remove("secret-claim-id") is None


def test_table_refuses_the_same_claim_twice():
    """Holding one ClaimId twice is a bug the table reports, naming the slot."""
    table = ClaimTable()
    table.add(claim())
    with pytest.raises(ValueError, match="slot1_1@node1"):
        table.add(claim())
