"""Tests for negotiator.preempting: the cycle's preemption phase (reclaim, priority,
Rank), driven through negotiate() with a task.Clock accountant."""

from collections import Counter

import pytest
from twisted.internet.task import Clock

from classad import ExprTree
from daemoncore.wire.resource_request import ResourceRequest
from negotiator.accountant import Accountant, AccountantSettings
from negotiator.cycle import CycleSettings, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.groups import GroupSettings
from negotiator.preemption import PreemptionSettings
from tests.negotiator.pool_ads import job, static_slot

NOW = 10_000.0
ALLOW = PreemptionSettings(requirements=ExprTree("true"))


@pytest.fixture
def clock():
    c = Clock()
    c.advance(NOW)
    return c


def accountant_for(tmp_path, clock, groups=()):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.db")), clock, AccountantSettings(group_names=groups))


def running(name, user, started, group=None):
    """A claimed 1-core slot running ``user``'s job since ``started``."""
    extra = f'RemoteUser = "{user}"; RemoteOwner = "{user}"; JobStart = {started}; '
    extra += f'AccountingGroup = "{user.split("@")[0]}"; ' if group else ""
    ad = static_slot(name, extra=extra)
    ad["State"], ad["Activity"] = "Claimed", "Busy"
    return ad


def submitter(name, count):
    ids = tuple(f"2.{i}" for i in range(count))
    return Submitter(name, f"schedd-of-{name}",
                     (ResourceRequest(f"{name}#1", name, "s", count, job(owner=name.split("@")[0]), ids),))


def alice_fills(accountant, n=4):
    slots = [running(f"slot{i}@n", "alice@x", NOW - 1000 + 100 * i) for i in range(n)]
    accountant.update_priorities({"alice@x": n})
    accountant.set_priority("alice@x", 3.0)
    return slots


def test_better_priority_preempts_the_youngest_jobs(tmp_path, clock):
    """bob (better priority, PREEMPTION_REQUIREMENTS true) takes alice's two youngest slots, naming them victims."""
    accountant = accountant_for(tmp_path, clock)
    slots = alice_fills(accountant)
    result = negotiate(slots, [submitter("bob@x", 2)], accountant, CycleSettings(preemption=ALLOW))
    assert sorted((m.slot_name, m.victims) for m in result.matches) == [
        ("slot2@n", ("slot2@n",)), ("slot3@n", ("slot3@n",))]
    assert [m.job_id for m in result.matches] == ["2.0", "2.1"]


def test_no_preemption_while_an_idle_slot_serves(tmp_path, clock):
    """With one idle slot and one job, bob gets the idle slot and nobody is preempted."""
    accountant = accountant_for(tmp_path, clock)
    slots = [*alice_fills(accountant, 3), static_slot("free@n")]
    result = negotiate(slots, [submitter("bob@x", 1)], accountant, CycleSettings(preemption=ALLOW))
    assert [(m.slot_name, m.victims) for m in result.matches] == [("free@n", ())]


def test_default_knobs_preempt_nobody(tmp_path, clock):
    """PREEMPTION_REQUIREMENTS defaults to False: bob waits, and preemption gives no reason of its own."""
    accountant = accountant_for(tmp_path, clock)
    result = negotiate(alice_fills(accountant), [submitter("bob@x", 2)], accountant)
    assert result.matches == () and ("bob@x", "bob@x#1") not in result.unmatched_reasons


def test_a_protected_victim_is_the_reason(tmp_path, clock):
    """When only PREEMPTION_MIN_RUNTIME keeps bob from preempting, the cycle's reason says so."""
    accountant = accountant_for(tmp_path, clock)
    settings = CycleSettings(preemption=PreemptionSettings(requirements=ExprTree("true"), min_runtime=7200))
    result = negotiate(alice_fills(accountant), [submitter("bob@x", 2)], accountant, settings)
    assert "PREEMPTION_MIN_RUNTIME 7200 s" in result.unmatched_reasons[("bob@x", "bob@x#1")]


def test_consider_preemption_false_keeps_to_idle_slots(tmp_path, clock):
    """NEGOTIATOR_CONSIDER_PREEMPTION = false: no claimed slot is ever a candidate."""
    accountant = accountant_for(tmp_path, clock)
    settings = CycleSettings(preemption=PreemptionSettings(consider=False, requirements=ExprTree("true")))
    assert negotiate(alice_fills(accountant), [submitter("bob@x", 2)], accountant, settings).matches == ()


def test_min_runtime_waits_then_preempts(tmp_path, clock):
    """PREEMPTION_MIN_RUNTIME = 1100 protects alice's jobs (1000 s old at most) until one passes it."""
    accountant = accountant_for(tmp_path, clock)
    slots = alice_fills(accountant)
    settings = CycleSettings(preemption=PreemptionSettings(requirements=ExprTree("true"), min_runtime=1100))
    assert negotiate(slots, [submitter("bob@x", 2)], accountant, settings).matches == ()
    clock.advance(150)
    result = negotiate(slots, [submitter("bob@x", 2)], accountant, settings)
    assert [m.victims for m in result.matches] == [("slot0@n",)]


def test_priority_preemption_stops_at_the_fair_share(tmp_path, clock):
    """alice (priority 3) and bob (1) both want the 4-slot pool: bob preempts only up to his slice of 3."""
    accountant = accountant_for(tmp_path, clock)
    slots = alice_fills(accountant)
    accountant.set_priority("bob@x", 1.0)
    result = negotiate(slots, [submitter("alice@x", 4), submitter("bob@x", 4)], accountant,
                       CycleSettings(preemption=ALLOW))
    assert Counter(m.submitter for m in result.matches) == {"bob@x": 3}


GROUPS = GroupSettings(("group_a", "group_b"), {"group_a": 2, "group_b": 2}, accept_surplus_default=True)


def test_reclaim_takes_group_a_down_to_its_quota(tmp_path, clock):
    """group_a runs 4 on a 4-slot pool (quota 2); group_b submits 3: two over-quota jobs are reclaimed, youngest first."""
    accountant = accountant_for(tmp_path, clock, ("group_a", "group_b"))
    slots = [running(f"slot{i}@n", "group_a.alice@x", NOW - 1000 + 100 * i, group=True) for i in range(4)]
    accountant.update_priorities({"group_a.alice@x": 4})
    result = negotiate(slots, [submitter("group_b.bob@x", 3)], accountant, CycleSettings(groups=GROUPS))
    assert sorted(v for m in result.matches for v in m.victims) == ["slot2@n", "slot3@n"]
    assert len(result.matches) == 2


def test_reclaim_off_leaves_surplus_alone(tmp_path, clock):
    """NEGOTIATOR_RECLAIM = false: group_b waits for group_a's surplus to end."""
    accountant = accountant_for(tmp_path, clock, ("group_a", "group_b"))
    slots = [running(f"slot{i}@n", "group_a.alice@x", 0, group=True) for i in range(4)]
    settings = CycleSettings(groups=GROUPS, preemption=PreemptionSettings(reclaim=False))
    assert negotiate(slots, [submitter("group_b.bob@x", 3)], accountant, settings).matches == ()


def test_group_limit_holds_in_an_idle_pool(tmp_path, clock):
    """GROUP_LIMIT_group_a = 1: one match in an idle 4-slot pool, however much surplus there is."""
    accountant = accountant_for(tmp_path, clock, ("group_a", "group_b"))
    groups = GroupSettings(("group_a", "group_b"), {"group_a": 2, "group_b": 2}, accept_surplus_default=True,
                           limits={"group_a": 1})
    slots = [static_slot(f"slot{i}@n") for i in range(4)]
    result = negotiate(slots, [submitter("group_a.alice@x", 4)], accountant, CycleSettings(groups=groups))
    assert len(result.matches) == 1


def test_fairness_benchmark_quick_run(capsys):
    """benchmarks/fairness.py --quick runs the real cycle with reclaim: groups near their
    entitlement, reclaim preemptions made, none before the victim's minimum runtime."""
    from benchmarks import fairness

    figures = fairness.main(["--quick"])
    assert figures.preemptions > 0 and figures.early_preemptions == 0
    assert figures.largest_deviation < 0.15
    assert "largest group deviation" in capsys.readouterr().out


def test_preemption_respects_concurrency_limits(tmp_path, clock):
    """With LICENSE_LIMIT = 1, bob's LICENSE jobs preempt for one job only."""
    from negotiator.concurrency import ConcurrencySettings

    accountant = accountant_for(tmp_path, clock)
    ad = job(owner="bob", extra='ConcurrencyLimits = "license"')
    bob = Submitter("bob@x", "s", (ResourceRequest("bob#1", "bob@x", "s", 3, ad, ("2.0", "2.1", "2.2")),))
    settings = CycleSettings(preemption=ALLOW, concurrency=ConcurrencySettings(limits={"license": 1.0}))
    result = negotiate(alice_fills(accountant), [bob], accountant, settings)
    assert len(result.matches) == 1 and result.concurrency_in_use == {"license": 1.0}
