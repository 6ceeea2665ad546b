"""Tests for draining a machine's slot table (condor_drain): what each slot becomes,
which claims end, what the ads say, and how cancelling puts the slots back."""

import pytest

import classad
from daemoncore.config import Config
from startd.draining import DrainRequest, DrainSchedule, retirement_over, retirement_time
from startd.errors import ClaimError
from startd.slot_types import plan_slots
from startd.slots import SlotTable


def table_for(machine, clock, text=""):
    return SlotTable.from_plans(machine, plan_slots(Config.from_text(text, env={}), machine), clock)


def job(**attrs):
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Owner": "alice", **attrs})


def request(clock, schedule=DrainSchedule.GRACEFUL):
    return DrainRequest("1", schedule, "maintenance", clock.seconds())


def states(table):
    return {name: slot.status.describe() for name, slot in table.slots.items()}


def claim_static(table, name, run=True):
    claim_id = table.slots[name].claim_id
    grant = table.request_claim(claim_id, job())
    if run:
        table.activate(grant.claim_id, job())
    return grant.claim_id


def test_draining_static_slots_retires_busy_ones_ends_idle_claims_and_drains_empty_ones(machine, clock):
    """Busy -> Drained/Retiring; claimed idle -> claim ended, Drained/Idle; unclaimed -> Drained/Idle."""
    table = table_for(machine, clock, "NUM_SLOTS = 3")
    claim_static(table, "slot1@node1")
    idle = claim_static(table, "slot2@node1", run=False)
    assert table.drain(request(clock)) == [idle]
    assert states(table) == {"slot1@node1": "Drained/Retiring", "slot2@node1": "Drained/Idle",
                             "slot3@node1": "Drained/Idle"}
    assert table.slots["slot2@node1"].claim_id != idle and table.slots["slot2@node1"].remote_user is None


def test_a_draining_slots_job_exit_ends_its_claim(machine, clock):
    """When the retiring job ends the slot is Drained/Idle and the old ClaimId no longer works."""
    table = table_for(machine, clock, "NUM_SLOTS = 1")
    claim_id = claim_static(table, "slot1@node1")
    table.drain(request(clock))
    slot = table.job_exited(claim_id)
    assert slot.status.describe() == "Drained/Idle" and slot.claim_id != claim_id
    assert table.slots["slot1@node1"].job_ad is None


def test_a_vacated_job_on_a_draining_machine_leaves_the_slot_drained(machine, clock):
    """-quick/-fast: the stopped job's release leaves the slot Drained, not Unclaimed."""
    table = table_for(machine, clock, "NUM_SLOTS = 1")
    claim_id = claim_static(table, "slot1@node1")
    table.drain(request(clock, DrainSchedule.FAST))
    table.kill(claim_id)
    assert table.release(claim_id).status.describe() == "Drained/Idle"


def test_a_partitionable_slot_retires_until_its_last_dynamic_slot_ends(machine, clock):
    """The p-slot is Drained/Retiring while dynamic slots run, Drained/Idle after the last."""
    table = table_for(machine, clock)
    pslot = table.slots["slot1@node1"].claim_id
    first = table.request_claim(pslot, job(RequestCpus=1)).claim_id
    second = table.request_claim(pslot, job(RequestCpus=1)).claim_id
    table.activate(first, job())
    table.activate(second, job())
    table.drain(request(clock))
    assert states(table) == {"slot1@node1": "Drained/Retiring", "slot1_1@node1": "Drained/Retiring",
                             "slot1_2@node1": "Drained/Retiring"}
    table.job_exited(first)
    assert states(table) == {"slot1@node1": "Drained/Retiring", "slot1_2@node1": "Drained/Retiring"}
    table.job_exited(second)
    assert states(table) == {"slot1@node1": "Drained/Idle"}
    assert table.free(table.slots["slot1@node1"]).cpus == 8


def test_a_drained_slot_refuses_claims_and_its_ad_says_start_is_false(machine, clock):
    """Start is false while draining, Draining/DrainReason/DrainingRequestId are in the ad."""
    table = table_for(machine, clock)
    table.drain(request(clock))
    ad = table.public_ads()[0]
    assert ad["Draining"] is True and ad["DrainReason"] == "maintenance" and ad["DrainingRequestId"] == "1"
    assert ad["LastDrainStartTime"] == int(clock.seconds())
    assert not job(RequestCpus=1).matches(ad)
    with pytest.raises(ClaimError, match="Drained/Idle, not free to claim"):
        table.request_claim(table.slots["slot1@node1"].claim_id, job())


def test_cancel_puts_empty_slots_back_to_unclaimed_and_running_jobs_back_to_busy(machine, clock):
    """-cancel: Drained/Idle -> Unclaimed/Idle, a retiring job -> Claimed/Busy; Start is back."""
    table = table_for(machine, clock, "NUM_SLOTS = 2")
    claim_static(table, "slot1@node1")
    table.drain(request(clock))
    clock.advance(60)
    assert table.cancel_drain() is True
    assert states(table) == {"slot1@node1": "Claimed/Busy", "slot2@node1": "Unclaimed/Idle"}
    ad = table.public_ad(table.slots["slot2@node1"])
    assert ad["Draining"] is False and ad["LastDrainStopTime"] == int(clock.seconds())
    assert job().matches(ad)
    assert table.cancel_drain() is False


def test_retirement_time_comes_from_the_job_and_ends_a_graceful_wait(machine, clock):
    """MaxJobRetirementTime of the job, evaluated against the slot; none means no limit."""
    slot_ad = table_for(machine, clock).public_ads()[0]
    assert retirement_time(job(), slot_ad) is None
    assert retirement_time(job(MaxJobRetirementTime=classad.ExprTree("TARGET.Cpus * 10")), slot_ad) == 80
    assert retirement_time(job(MaxJobRetirementTime="soon"), slot_ad) is None
    limited = job(MaxJobRetirementTime=30)
    assert not retirement_over(limited, slot_ad, 100, 129) and retirement_over(limited, slot_ad, 100, 130)
    assert not retirement_over(job(), slot_ad, 0, 10**9)
