"""Tests for negotiator.preemption: who may be a victim, in which order, and for whom."""

import pytest

from classad import ClassAd, ExprTree
from negotiator.matchmaking import MatchSettings
from negotiator.preemption import (
    PRIORITY,
    RANK,
    RECLAIM,
    PreemptionSettings,
    Preemptor,
    Standing,
    job_view,
    running_claims,
)
from tests.negotiator.pool_ads import job, partitionable_slot, static_slot

ALLOW = ExprTree("true")
GROUPS = ("group_a", "group_b")


def claimed(name, user, started, cpus=1, extra=""):
    """A claimed static slot running ``user``'s job since ``started``."""
    ad = static_slot(name, cpus=cpus, extra=f'RemoteUser = "{user}"; RemoteOwner = "{user}"; '
                                             f'JobStart = {started}; {extra}')
    ad["State"], ad["Activity"] = "Claimed", "Busy"
    return ad


def dynamic(name, parent, user, started, cpus=2, memory=2048, retirement=0):
    """A claimed dynamic slot of ``parent``."""
    ad = claimed(name, user, started, cpus=cpus, extra=f'DynamicSlot = true; ParentSlot = "{parent}"; '
                                                      f'MaxJobRetirementTime = {retirement}')
    ad["SlotType"], ad["Memory"] = "Dynamic", memory
    return ad


def preemptor(slots, settings=None, standing=None, now=1000.0, parents=()):
    running = running_claims(slots, ExprTree("Cpus"), GROUPS)
    standing = standing or Standing({"alice@x": 5000.0, "bob@x": 500.0, "carol@x": 9000.0})
    return Preemptor(running, {p.evaluate("Name"): p for p in parents}, standing, now,
                     settings or PreemptionSettings(requirements=ALLOW), MatchSettings())


def bob_job(standing=None, **kw):
    return job_view(job(owner="bob", **kw), "bob@x", "<none>", standing or Standing())


def test_priority_preemption_takes_the_youngest_job_of_the_worst_user():
    """With PREEMPTION_REQUIREMENTS true, bob takes carol's (worst priority) slot first, then alice's youngest."""
    slots = [claimed("s1@n", "alice@x", 100), claimed("s2@n", "alice@x", 900), claimed("s3@n", "carol@x", 100)]
    found, _ = preemptor(slots).find(bob_job(), "bob@x", "<none>", 2, 10)
    assert [m.slot_name for m in found] == ["s3@n", "s2@n"]
    assert all(m.reason == PRIORITY and m.victims == (m.slot_name,) for m in found)


def test_default_preemption_requirements_preempt_nothing():
    """PREEMPTION_REQUIREMENTS defaults to False: no priority preemption, and nothing to explain."""
    found, why = preemptor([claimed("s1@n", "alice@x", 100)], PreemptionSettings()).find(
        bob_job(), "bob@x", "<none>", 1, 10)
    assert found == [] and why == []


def test_a_worse_priority_never_preempts():
    """A submitter whose effective priority is worse than the running user's preempts nobody."""
    found, _ = preemptor([claimed("s1@n", "bob@x", 100)]).find(
        job_view(job(owner="carol"), "carol@x", "<none>", Standing()), "carol@x", "<none>", 1, 10)
    assert found == []


def test_startd_rank_preemption_needs_no_preemption_requirements():
    """A slot whose Rank prefers the new job over its CurrentRank is taken even with PREEMPTION_REQUIREMENTS false."""
    slot = claimed("s1@n", "carol@x", 100, extra='CurrentRank = 0')
    slot["Rank"] = ExprTree('TARGET.Owner == "bob"')
    found, _ = preemptor([slot], PreemptionSettings()).find(bob_job(), "bob@x", "<none>", 1, 10)
    assert [m.reason for m in found] == [RANK]


def test_min_runtime_protects_young_jobs():
    """A job that ran less than PREEMPTION_MIN_RUNTIME is no victim; one a second older is."""
    settings = PreemptionSettings(requirements=ALLOW, min_runtime=600)
    young = preemptor([claimed("s1@n", "alice@x", 401)], settings, now=1000.0)
    found, why = young.find(bob_job(), "bob@x", "<none>", 1, 10)
    assert found == [] and "PREEMPTION_MIN_RUNTIME" in why[0]
    old = preemptor([claimed("s1@n", "alice@x", 400)], settings, now=1000.0)
    assert len(old.find(bob_job(), "bob@x", "<none>", 1, 10)[0]) == 1


def test_min_runtime_per_group():
    """PREEMPTION_MIN_RUNTIME_group_a protects group_a's jobs longer than the default."""
    settings = PreemptionSettings(requirements=ALLOW, min_runtime=10, group_min_runtime={"group_a": 3600})
    slots = [claimed("s1@n", "group_a.alice@x", 0), claimed("s2@n", "carol@x", 0)]
    found, _ = preemptor(slots, settings).find(bob_job(), "bob@x", "<none>", 2, 10)
    assert [m.slot_name for m in found] == ["s2@n"]


def test_own_slots_and_gang_pieces_are_never_victims():
    """bob never preempts bob, and a piece of a gang is never a victim."""
    slots = [claimed("s1@n", "bob@x", 0), claimed("s2@n", "carol@x", 0, extra='GangId = "s#1"')]
    assert preemptor(slots).find(bob_job(), "bob@x", "<none>", 2, 10)[0] == []


def test_requirements_of_both_sides_still_apply():
    """A claimed slot the job's Requirements refuse is no candidate."""
    slot = claimed("s1@n", "carol@x", 0, cpus=1)
    found, _ = preemptor([slot]).find(bob_job(cpus=4), "bob@x", "<none>", 1, 10)
    assert found == []


def test_allowance_stops_preemption():
    """Preemption stops once the matches' weight reaches the allowance."""
    slots = [claimed(f"s{i}@n", "carol@x", 0) for i in range(5)]
    assert len(preemptor(slots).find(bob_job(), "bob@x", "<none>", 5, 2)[0]) == 2


def test_reclaim_takes_only_over_quota_work():
    """group_b below quota reclaims from group_a's 4 cores only the 2 above group_a's quota of 2, youngest first."""
    slots = [claimed(f"s{i}@n", "group_a.alice@x", 100 * i) for i in range(4)]
    standing = Standing({"group_a.alice@x": 1000.0}, {"group_a.alice@x": 4}, {"group_a": 4.0},
                        {"group_a": 2.0, "group_b": 2.0})
    bob = job_view(job(owner="bob"), "group_b.bob@x", "group_b", standing)
    found, _ = preemptor(slots, PreemptionSettings(), standing).find(bob, "group_b.bob@x", "group_b", 4, 10,
                                                                    reclaim=True)
    assert sorted(m.slot_name for m in found) == ["s2@n", "s3@n"]
    assert all(m.reason == RECLAIM for m in found)


def test_reclaim_never_from_a_group_within_quota():
    """A group at its quota loses nothing to reclaim."""
    slots = [claimed(f"s{i}@n", "group_a.alice@x", 0) for i in range(2)]
    standing = Standing({}, {}, {"group_a": 2.0}, {"group_a": 2.0, "group_b": 2.0})
    bob = job_view(job(owner="bob"), "group_b.bob@x", "group_b", standing)
    found, why = preemptor(slots, PreemptionSettings(), standing).find(bob, "group_b.bob@x", "group_b", 2, 10,
                                                                      reclaim=True)
    assert found == [] and why == []


def test_pslot_preemption_takes_several_dynamic_slots_of_one_machine():
    """A 4-core job takes two 2-core dynamic slots of a full 4-core machine in PREEMPTION_RANK order."""
    parent = partitionable_slot("slot1@m", cpus=0, memory=12288)
    kids = [dynamic("slot1_1@m", "slot1@m", "carol@x", 100), dynamic("slot1_2@m", "slot1@m", "carol@x", 900),
            dynamic("slot1_3@m", "slot1@m", "alice@x", 950)]
    settings = PreemptionSettings(requirements=ALLOW, allow_pslot=True)
    found, _ = preemptor(kids, settings, parents=[parent]).find(bob_job(cpus=4, memory=1024), "bob@x",
                                                                "<none>", 1, 10)
    assert len(found) == 1
    assert found[0].slot_name == "slot1@m" and found[0].victims == ("slot1_2@m", "slot1_1@m")
    assert dict(found[0].consumed)["Cpus"] == 4


def test_pslot_preemption_skips_dynamic_slots_with_retirement_left():
    """A dynamic slot still within its MaxJobRetirementTime is never taken."""
    parent = partitionable_slot("slot1@m", cpus=0, memory=12288)
    kids = [dynamic("slot1_1@m", "slot1@m", "carol@x", 500, retirement=600),
            dynamic("slot1_2@m", "slot1@m", "carol@x", 0)]
    settings = PreemptionSettings(requirements=ALLOW, allow_pslot=True)
    p = preemptor(kids, settings, parents=[parent], now=1000.0)
    found, why = p.find(bob_job(cpus=4), "bob@x", "<none>", 1, 10)
    assert found == [] and any("retirement" in w for w in why)
    assert len(p.find(bob_job(cpus=2), "bob@x", "<none>", 1, 10)[0][0].victims) == 1


def test_without_pslot_preemption_a_dynamic_slot_is_a_victim_alone_never_with_others():
    """Without ALLOW_PSLOT_PREEMPTION the negotiator looks at each slot ad on its own
    (HTCondor's manual, "Partitionable slot preemption"): a claimed dynamic slot the job
    fits is taken alone, through its parent; a job that needs two of them gets none."""
    parent = partitionable_slot("slot1@m", cpus=0)
    kids = [dynamic("slot1_1@m", "slot1@m", "carol@x", 0), dynamic("slot1_2@m", "slot1@m", "carol@x", 0)]
    (match,) = preemptor(kids, parents=[parent]).find(bob_job(cpus=2), "bob@x", "<none>", 1, 10)[0]
    assert match.slot_name == "slot1@m" and len(match.victims) == 1
    assert preemptor(kids, parents=[parent]).find(bob_job(cpus=4), "bob@x", "<none>", 1, 10)[0] == []
    both = preemptor(kids, PreemptionSettings(requirements=ALLOW, allow_pslot=True), parents=[parent])
    assert len(both.find(bob_job(cpus=4), "bob@x", "<none>", 1, 10)[0][0].victims) == 2


def test_negotiation_attributes_reach_preemption_requirements():
    """PREEMPTION_REQUIREMENTS reads RemoteUserPrio, SubmitterUserPrio and TotalJobRuntime."""
    rule = ExprTree("RemoteUserPrio > SubmitterUserPrio * 1.2 && TotalJobRuntime > 100")
    settings = PreemptionSettings(requirements=rule)
    standing = Standing({"alice@x": 5000.0, "bob@x": 500.0})
    slots = [claimed("s1@n", "alice@x", 950), claimed("s2@n", "alice@x", 100)]
    found, _ = preemptor(slots, settings, standing).find(bob_job(standing), "bob@x", "<none>", 2, 10)
    assert [m.slot_name for m in found] == ["s2@n"]


@pytest.mark.parametrize("state", ["Unclaimed", "Claimed"])
def test_running_claims_reads_only_claimed_slots_with_a_user(state):
    """Only a Claimed slot with a RemoteUser is a running claim; its group comes from the user."""
    ad = claimed("s1@n", "group_a.alice@x", 0)
    ad["State"] = state
    found = running_claims([ad, ClassAd('[ Name = "x"; State = "Claimed" ]')], ExprTree("Cpus"), GROUPS)
    assert [(r.name, r.group) for r in found] == ([("s1@n", "group_a")] if state == "Claimed" else [])


def test_a_slot_already_retiring_is_no_victim_again():
    """A claimed slot whose Activity is Retiring (being preempted) is not chosen a second time."""
    slot = claimed("s1@n", "carol@x", 0)
    slot["Activity"] = "Retiring"
    assert preemptor([slot]).find(bob_job(), "bob@x", "<none>", 1, 10)[0] == []
