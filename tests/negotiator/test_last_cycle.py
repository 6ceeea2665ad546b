"""Tests for negotiator.last_cycle: why each request the cycle left waiting waits, from
real cycles over synthetic slots, and the bounded JSON the route answers."""

import attrs
from twisted.internet.task import Clock

from daemoncore.wire.resource_request import ResourceRequest
from negotiator import last_cycle
from negotiator.accountant import Accountant, AccountantSettings
from negotiator.cycle import CycleSettings, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.groups import GroupSettings
from negotiator.last_cycle import NO_SLOT, LastCycle, Waiting, explain_cycle, to_wire
from tests.negotiator.pool_ads import job, static_slot

GROUPS = GroupSettings(names=("group_a",), static_quotas={"group_a": 1.0})


def accountant_for(tmp_path, groups=()):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.db")), Clock(),
                      AccountantSettings(group_names=groups))


def submitter(name, count, **job_args):
    ad = job(owner=name.split("@")[0], **job_args)
    ids = tuple(f"1.{i}" for i in range(count))
    return Submitter(name, f"schedd-of-{name}", (ResourceRequest(f"{name}#1", name, "s", count, ad, ids),))


def explained(slots, submitters, accountant, settings=None):
    settings = settings or CycleSettings()
    result = negotiate(slots, submitters, accountant, settings)
    return result, explain_cycle(result, slots, submitters, accountant, settings, 100.0, 101.0)


def slots(n):
    return [static_slot(f"slot{i}@node") for i in range(n)]


def test_a_group_at_its_quota_is_the_reason(tmp_path):
    """A group without surplus at its quota waits for its quota, with in use / quota / limit."""
    accountant = accountant_for(tmp_path, ("group_a",))
    _, cycle = explained(slots(4), [submitter("group_a.alice@x", 3)], accountant, CycleSettings(groups=GROUPS))
    [waiting] = cycle.waiting
    assert waiting.left == 2 and waiting.job_ids == ("1.1", "1.2")
    assert dict(waiting.fingerprint)["RequestMemory"] == 1024 and "ConcurrencyLimits" not in dict(waiting.fingerprint)
    assert waiting.reason == "its group group_a is at its quota and does not accept surplus: 1 in use / quota 1 / no limit (cores)"
    [group] = cycle.groups
    assert (group.name, group.config_quota, group.quota, group.in_use, group.matched) == ("group_a", 1.0, 1.0, 0, 1.0)


def test_users_ahead_by_priority_are_named_with_their_priorities(tmp_path):
    """A user who got nothing while a better-priority user took the slots waits for priority, naming that user."""
    accountant = accountant_for(tmp_path)
    accountant.set_priority("a@x", 500.0)
    _, cycle = explained(slots(2), [submitter("a@x", 2), submitter("b@x", 5)], accountant)
    reasons = {w.submitter: w.reason for w in cycle.waiting}
    assert reasons["a@x"] == ("1 user(s) ahead of a@x (effective priority 500000.00) hold the slots it could use: "
                              "b@x (500.00, 2 in use)")  # the default factor is 1000


def test_no_slot_that_matches(tmp_path):
    """A request no slot can hold, with nobody ahead, waits for a slot that matches."""
    _, cycle = explained(slots(2), [submitter("a@x", 1, memory=999999)], accountant_for(tmp_path))
    assert [w.reason for w in cycle.waiting] == [NO_SLOT]


def test_the_cycles_own_reason_wins(tmp_path):
    """A reason the cycle recorded (a concurrency limit, a gang) is kept as it was given, cut to its bound."""
    accountant = accountant_for(tmp_path)
    people = [submitter("a@x", 1, memory=999999)]
    result = negotiate(slots(1), people, accountant)
    result = attrs.evolve(result, unmatched_reasons={("a@x", "a@x#1"): "concurrency limit license: 3 in use / 3 max"
                                                     + " " * 2000})
    cycle = explain_cycle(result, slots(1), people, accountant, CycleSettings(), 0.0, 1.0)
    assert cycle.waiting[0].reason.startswith("concurrency limit license: 3 in use / 3 max")
    assert len(cycle.waiting[0].reason) == last_cycle.MAX_REASON


def test_fully_served_requests_are_not_waiting(tmp_path):
    """A request the cycle matched in full is not listed."""
    _, cycle = explained(slots(3), [submitter("a@x", 2)], accountant_for(tmp_path))
    assert cycle.waiting == ()
    assert [(s.name, s.matched) for s in cycle.submitters] == [("a@x", 2.0)]


def waiting(n):
    return tuple(Waiting("a@x" if i % 2 else "b@x", "s", f"r{i}", (f"{i}.0",), 1, NO_SLOT) for i in range(n))


def test_wire_narrows_by_submitter_and_job():
    """The answer lists only the requests of the asked submitter holding the asked job."""
    cycle = LastCycle(1.0, 2.0, waiting(6), (), ())
    assert [w["request_id"] for w in to_wire(cycle, submitter="a@x")["waiting"]] == ["r1", "r3", "r5"]
    assert [w["request_id"] for w in to_wire(cycle, submitter="a@x", job="3.0")["waiting"]] == ["r3"]
    assert to_wire(cycle, job="9.0")["waiting"] == []


def test_wire_is_bounded_and_says_so(monkeypatch):
    """Past the bound the answer stops listing and says it was truncated."""
    monkeypatch.setattr(last_cycle, "MAX_WAITING", 3)
    answer = to_wire(LastCycle(1.0, 2.0, waiting(5), (), ()))
    assert len(answer["waiting"]) == 3 and answer["truncated"] is True
    assert to_wire(LastCycle(1.0, 2.0, waiting(3), (), ()))["truncated"] is False


def test_before_any_cycle_the_answer_says_none_ran():
    """Before the first cycle the answer has no start time and nothing waiting."""
    assert to_wire(None) == {"started": None, "ended": None, "waiting": [], "submitters": [], "groups": [],
                             "truncated": False}


def test_a_group_at_its_limit_even_with_surplus(tmp_path):
    """A group accepting surplus waits at GROUP_LIMIT, and the record carries the limit and the surplus weight."""
    groups = GroupSettings(names=("group_a",), static_quotas={"group_a": 1.0}, accept_surplus_default=True,
                           limits={"group_a": 2.0}, surplus_weights={"group_a": 3.0})
    accountant = accountant_for(tmp_path, ("group_a",))
    _, cycle = explained(slots(4), [submitter("group_a.alice@x", 3)], accountant, CycleSettings(groups=groups))
    assert [w.reason for w in cycle.waiting] == ["its group group_a is at its limit: 2 in use / quota 1 / limit 2 (cores)"]
    [group] = cycle.groups
    assert (group.limit, group.surplus_weight, group.accept_surplus) == (2.0, 3.0, True)
    assert last_cycle.surplus_weight(GroupSettings(), "g", 2.5) == 2.5
