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
    assert next_job_for(claim(), idle) == idle[2]
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


def card_ad(short, index, total=40000, free_memory=40000, free_cores=100, shares=0):
    return ClassAd({"Id": short, "UUID": short.replace("GPU-", "GPU-uuid-"), "Index": index,
                    "DeviceName": "NVIDIA A100-SXM4-40GB", "GlobalMemoryMb": total, "NumaNode": 0,
                    "FreeMemoryMb": free_memory, "FreeCores": free_cores, "Shares": shares, "SplitCount": 10})


def gpu_slot(memory_mb=None, cores=None, cards=("GPU-1a2b3c4d",)):
    """A claimed dynamic slot as the startd advertises it: the nested ads of its cards and
    what it holds of them (whole cards without AssignedGPUMemoryMb)."""
    ad = slot()
    for n, short in enumerate(cards):
        ad["GPUs_" + short.replace("-", "_")] = card_ad(short, n, free_memory=40000 - (memory_mb or 40000),
                                                        free_cores=100 - (cores or 100), shares=1)
    ad["AssignedGPUs"] = ",".join(cards)
    ad["GPUs"] = len(cards)
    if memory_mb is None:
        ad["GPUShareWhole"] = True
    else:
        ad.update({"GPUShareWhole": False, "AssignedGPUMemoryMb": memory_mb, "AssignedGPUCores": cores or 0})
    return ad


def gpu_job(**attrs):
    ad = job()
    ad.update(attrs)
    return ad


@pytest.mark.parametrize("held, asked, fits", [
    (dict(memory_mb=10000), dict(RequestGPUs=1, RequestGPUMemory=10000), True),
    (dict(memory_mb=10000), dict(RequestGPUs=1, RequestGPUMemory=4000), False),  # would strand 6000
    (dict(memory_mb=10000), dict(RequestGPUMemory=35000), False),        # a larger share
    (dict(memory_mb=10000), dict(RequestGPUs=1), False),                  # a whole card
    (dict(memory_mb=10000, cores=20), dict(RequestGPUMemory=5000, RequestGPUCores=30), False),
    (dict(memory_mb=10000, cores=20), dict(RequestGPUMemory=10000, RequestGPUCores=20), True),
    (dict(memory_mb=10000), dict(RequestGPUMemoryPercent=25), True),      # 10000 of 40000
    (dict(memory_mb=10000), dict(RequestGPUMemoryPercent=30), False),
    (dict(memory_mb=10000), dict(RequestGPUMemoryPercent=20), False),
    (dict(memory_mb=10000), dict(RequestGPUs=2, RequestGPUMemory=1000), False),  # two cards
    (dict(memory_mb=10000), dict(RequestGPUMemory=1000, AvoidGPUIds="GPU-1a2b3c4d"), False),
    (dict(), dict(RequestGPUs=1), True),                                  # whole on whole
    (dict(), dict(RequestGPUMemory=1000), False),                         # a share would idle the rest of a whole card
    (dict(), dict(RequestGPUs=1, RequestGPUTypes="H100"), False),
    (dict(memory_mb=10000), dict(), True),                                # no GPU asked, as HTCondor
])
def test_claim_reuse_needs_the_gpu_request_to_fit_the_claims_cards(held, asked, fits):
    """A whole-card job never runs on a share claim, nor a larger share on a smaller one."""
    on = claim(slot_ad=gpu_slot(**held))
    assert job_fits_claim(on, gpu_job(**asked)) is fits


def test_claim_reuse_passes_over_a_job_whose_gpu_request_is_unreadable_or_needs_a_gpu_it_lacks():
    """A bad GPU attribute or a GPU job on a claim with no card is not run there."""
    assert not job_fits_claim(claim(slot_ad=gpu_slot(memory_mb=10000)),
                              gpu_job(RequestGPUMemory=1000, RequestGPUCores=150))
    assert not job_fits_claim(claim(), gpu_job(RequestGPUs=1))


def test_next_job_for_a_share_claim_skips_jobs_that_do_not_fit_its_share():
    """The first idle job with the 10000-MiB share's shape is chosen, past bigger and smaller ones."""
    idle = [(JobId(1, 0), gpu_job(RequestGPUs=1)), (JobId(2, 0), gpu_job(RequestGPUMemory=20000)),
            (JobId(4, 0), gpu_job(RequestGPUMemory=8000)), (JobId(3, 0), gpu_job(RequestGPUMemory=10000))]
    assert next_job_for(claim(slot_ad=gpu_slot(memory_mb=10000)), idle) == idle[3]
