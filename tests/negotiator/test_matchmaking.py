"""Tests for negotiator.matchmaking: one request against the slots of a cycle."""

from classad import ExprTree
from daemoncore.wire.resource_request import ResourceRequest
from negotiator.matchmaking import MatchSettings, SlotPool, build_prefilter, match_request
from tests.negotiator.pool_ads import job, partitionable_slot, static_slot


def request_for(ad, count=1, rid="alice#1"):
    return ResourceRequest(rid, "alice@example.org", "schedd", count, ad)


def names(matches):
    return [m.slot_name for m in matches]


def test_both_requirements_must_accept():
    """A slot whose START refuses the owner, and one the job refuses, are not matched."""
    slots = [static_slot("win@a", opsys="WINDOWS"), static_slot("picky@b", start='TARGET.Owner == "bob"'),
             static_slot("ok@c")]
    ad = job()
    pool = SlotPool(slots, [ad])
    assert names(match_request(pool, request_for(ad, 3), 3)) == ["ok@c"]


def test_job_rank_orders_candidates_best_first():
    """With equal pre-ranks the job's Rank (here KFlops) picks the fastest slot first."""
    slots = [static_slot(f"s{i}@a", kflops=k) for i, k in enumerate([10, 30, 20])]
    ad = job(rank="TARGET.KFlops")
    matches = match_request(SlotPool(slots, [ad]), request_for(ad, 3), 3)
    assert names(matches) == ["s1@a", "s2@a", "s0@a"]


def test_pre_job_rank_comes_before_the_job_rank():
    """NEGOTIATOR_PRE_JOB_RANK preferring small memory beats a job Rank preferring big memory."""
    slots = [static_slot("big@a", memory=8192), static_slot("small@b", memory=2048)]
    ad = job(rank="TARGET.Memory")
    settings = MatchSettings(pre_job_rank=ExprTree("- Memory"), post_job_rank=None)
    assert names(match_request(SlotPool(slots, [ad], settings), request_for(ad), 1)) == ["small@b"]
    default = MatchSettings(pre_job_rank=None, post_job_rank=None)
    assert names(match_request(SlotPool(slots, [ad], default), request_for(ad), 1)) == ["big@a"]


def test_post_job_rank_breaks_ties_after_the_job_rank():
    """POST_JOB_RANK (default: faster KFlops) orders slots the job ranks equally."""
    slots = [static_slot("slow@a", kflops=5), static_slot("fast@b", kflops=50)]
    ad = job()
    assert names(match_request(SlotPool(slots, [ad]), request_for(ad), 1)) == ["fast@b"]


def test_a_taken_static_slot_is_gone_for_later_requests():
    """Once a static slot is matched, the next request in the cycle cannot get it."""
    pool_ads = [static_slot("only@a")]
    a, b = job(), job(owner="bob")
    pool = SlotPool(pool_ads, [a, b])
    assert names(match_request(pool, request_for(a, rid="a#1"), 1)) == ["only@a"]
    assert match_request(pool, request_for(b, rid="b#1"), 1) == []


def test_partitionable_slot_is_consumed_piece_by_piece():
    """An 8-core partitionable slot takes three 2-core jobs, then refuses a 4-core one."""
    slot = partitionable_slot("slot1@big", cpus=8, memory=16384)
    two, four = job(cpus=2, memory=1000), job(cpus=4, memory=1000)
    pool = SlotPool([slot], [two, four])
    matches = match_request(pool, request_for(two, 3, "two"), 3)
    assert names(matches) == ["slot1@big"] * 3
    assert [dict(m.consumed)["Cpus"] for m in matches] == [2, 2, 2]
    assert dict(matches[0].consumed)["Memory"] == 1024  # rounded up to 128 MiB steps
    assert [m.weight for m in matches] == [2.0, 2.0, 2.0]
    assert match_request(pool, request_for(four, 1, "four"), 1) == []
    assert pool.slots[0].ad["Cpus"] == 2 and pool.slots[0].ad["Memory"] == 16384 - 3 * 1024
    assert slot["Cpus"] == 8  # the collector's ad is left alone


def test_a_slot_whose_ad_reads_attributes_by_name_is_still_consumed_piece_by_piece():
    """A slot expression using eval() gives every slot a class of its own; a take must
    still renew that class, or the next match reuses the answer from before the take."""
    slot = partitionable_slot("slot1@odd", cpus=4, memory=16384, extra='Odd = eval("Cpus")')
    two = job(cpus=2, memory=1000)
    pool = SlotPool([slot], [two])
    assert names(match_request(pool, request_for(two, 3, "two"), 3)) == ["slot1@odd"] * 2
    assert pool.slots[0].ad["Cpus"] == 0


def test_partitionable_memory_runs_out_before_cpus():
    """Jobs stop matching when the slot's memory, not its cores, is used up."""
    slot = partitionable_slot("slot1@m", cpus=16, memory=4096)
    ad = job(memory=1024)
    assert len(match_request(SlotPool([slot], [ad]), request_for(ad, 10), 10)) == 4


def test_gpus_are_deducted_from_partitionable_slots():
    """RequestGPUs takes cards from the slot's GPUs count."""
    slot = partitionable_slot("gpu@a", gpus=2)
    ad = job(requirements="TARGET.GPUs >= RequestGPUs", extra="RequestGPUs = 1")
    pool = SlotPool([slot], [ad])
    assert len(match_request(pool, request_for(ad, 5), 5)) == 2
    assert pool.slots[0].ad["GPUs"] == 0


def test_claimed_static_slots_are_not_candidates():
    """A Claimed static slot is left out (no preemption)."""
    slot = static_slot("busy@a", extra='RemoteOwner = "bob"')
    slot["State"] = "Claimed"
    ad = job()
    assert match_request(SlotPool([slot], [ad]), request_for(ad), 1) == []


def test_allowance_stops_matching_once_reached():
    """A request stops once its matches' weight reaches the allowance."""
    slots = [static_slot(f"s{i}@a", cpus=2, memory=4096) for i in range(5)]
    ad = job()
    assert len(match_request(SlotPool(slots, [ad]), request_for(ad, 5), 5, allowance=3)) == 2


def test_identical_slots_are_evaluated_once():
    """A thousand identical slots form one class: one evaluation per request."""
    slots = [static_slot(f"slot{i}@node{i}") for i in range(1000)]
    ad = job()
    pool = SlotPool(slots, [ad])
    assert len(pool.classes) == 1
    assert len(match_request(pool, request_for(ad, 1000), 1000)) == 1000
    assert pool.evaluations == 1


def test_prefilter_rejects_without_evaluating():
    """Slots failing a literal clause (OpSys) are rejected by the pre-filter, not by evaluation."""
    slots = [static_slot(f"w{i}@a", opsys="WINDOWS", kflops=i) for i in range(50)] + [static_slot("l@a")]
    ad = job()
    pool = SlotPool(slots, [ad])
    assert names(match_request(pool, request_for(ad), 1)) == ["l@a"]
    assert pool.evaluations == 1
    clauses = {(c.attr, c.op, c.value) for c in build_prefilter(ad).clauses}
    assert ("opsys", "==", "LINUX") in clauses and ("memory", ">=", 1024) in clauses


def test_prefilter_keeps_case_insensitive_string_equality():
    """ClassAd == ignores case, so an OpSys of "linux" still passes the pre-filter and matches."""
    slot = static_slot("lower@a", opsys="linux")
    ad = job()
    assert names(match_request(SlotPool([slot], [ad]), request_for(ad), 1)) == ["lower@a"]


def test_slot_attributes_referenced_by_jobs_keep_slots_apart():
    """A job requiring a machine by name gets it, though the slots are otherwise identical."""
    slots = [static_slot(f"slot1@n{i}", extra=f'Machine = "n{i}"') for i in range(4)]
    ad = job(requirements='TARGET.Machine == "n2"')
    assert names(match_request(SlotPool(slots, [ad]), request_for(ad, 4), 4)) == ["slot1@n2"]


def test_a_requirements_chain_of_five_thousand_terms_prefilters_and_matches():
    """A machine list written as one long && chain is read clause by clause, not by
    recursion (5,000 terms once overflowed the pre-filter)."""
    chain = " && ".join(["TARGET.OpSys == \"LINUX\""] + [f'TARGET.Name != "busy{i}@a"' for i in range(5000)])
    ad = job(requirements=chain)
    clauses = build_prefilter(ad).clauses
    assert ("opsys", "==", "LINUX") in {(c.attr, c.op, c.value) for c in clauses}
    assert len(clauses) == 5001
    slots = [static_slot("busy3@a"), static_slot("free@a")]
    assert names(match_request(SlotPool(slots, [ad]), request_for(ad), 2)) == ["free@a"]


def test_prefilter_direct_comparisons_agree_with_classad_operators():
    """A pre-filter clause's direct Python comparison gives the answer of ClassAd's own operators for every pair."""
    from classad import operators as ops
    from classad.values import ERROR, UNDEFINED
    from negotiator.matchmaking import _Clause

    values = [0, 1, -3, 2**62, 1.0, 0.5, float("nan"), float("inf"), True, False, "", "linux", "LINUX",
              "Linux2", "é", "É", UNDEFINED, ERROR]
    for op in ("==", "!=", "<", "<=", ">", ">=", "=?=", "=!="):
        for clause_value in values:
            if clause_value is UNDEFINED or clause_value is ERROR:
                continue
            clause = _Clause.of("attr", op, clause_value)
            for slot_value in values:
                if op == "=?=":
                    expected = ops.identical(slot_value, clause_value) is True
                elif op == "=!=":
                    expected = ops.not_identical(slot_value, clause_value) is True
                else:
                    expected = ops.compare(op, slot_value, clause_value) is True
                assert clause.holds(slot_value) is expected, (slot_value, op, clause_value)
