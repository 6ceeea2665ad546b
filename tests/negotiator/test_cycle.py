"""Tests for negotiator.cycle: fair shares by priority, pie spins, groups, floors and ceilings."""

from collections import Counter

import pytest
from twisted.internet.task import Clock

from daemoncore.wire.resource_request import ResourceRequest
from negotiator.accountant import Accountant, AccountantSettings
from negotiator.cycle import CycleSettings, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.groups import GroupSettings
from tests.negotiator.pool_ads import job, partitionable_slot, static_slot


@pytest.fixture
def accountant(tmp_path):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.db")), Clock())


def submitter(name, count, cpus=1, rid=None, **job_args):
    ad = job(owner=name.split("@")[0], cpus=cpus, **job_args)
    ids = tuple(f"1.{i}" for i in range(count))
    return Submitter(name, f"schedd-of-{name}", (ResourceRequest(rid or f"{name}#1", name, "s", count, ad, ids),))


def slots(n, **kw):
    return [static_slot(f"slot{i}@node", **kw) for i in range(n)]


def per_submitter(result):
    return Counter(m.submitter for m in result.matches)


def test_equal_priorities_split_the_pool_evenly(accountant):
    """Two users with equal priority and plenty of jobs get half the slots each."""
    result = negotiate(slots(10), [submitter("a@x", 50), submitter("b@x", 50)], accountant)
    assert per_submitter(result) == {"a@x": 5, "b@x": 5}


def test_better_priority_gets_a_bigger_slice(accountant):
    """A user with effective priority half another's gets twice the slots."""
    accountant.set_priority("b@x", 1.0)  # EUP 1000 vs a's 500
    result = negotiate(slots(12), [submitter("a@x", 50), submitter("b@x", 50)], accountant)
    assert per_submitter(result) == {"a@x": 8, "b@x": 4}


def test_usage_counts_against_the_slice(accountant):
    """A user already running 6 cores gets fewer new slots than an idle user."""
    accountant.update_priorities({"a@x": 6})
    result = negotiate(slots(6), [submitter("a@x", 50), submitter("b@x", 50)], accountant)
    assert per_submitter(result) == {"b@x": 6}


def test_unused_share_goes_to_others_in_a_later_spin(accountant):
    """A user with only 2 jobs leaves its share to the other in the next pie spin."""
    result = negotiate(slots(10), [submitter("a@x", 2), submitter("b@x", 50)], accountant)
    assert per_submitter(result) == {"a@x": 2, "b@x": 8}
    assert result.spins >= 2


def test_share_nobody_can_match_goes_to_others(accountant):
    """A user whose jobs match no slot does not block the pool for the other."""
    picky = submitter("a@x", 50, requirements='TARGET.OpSys == "SOLARIS"')
    result = negotiate(slots(4), [picky, submitter("b@x", 50)], accountant)
    assert per_submitter(result) == {"b@x": 4}
    assert result.unmatched[("a@x", "a@x#1")] == 50


def test_matches_name_schedd_request_job_and_slot(accountant):
    """Each match carries the submitter, its schedd, the request, the next job id and the slot."""
    result = negotiate(slots(2), [submitter("a@x", 3)], accountant)
    first = result.matches[0]
    assert (first.submitter, first.schedd_address, first.request_id) == ("a@x", "schedd-of-a@x", "a@x#1")
    assert [m.job_id for m in result.matches] == ["1.0", "1.1"]
    assert {m.slot_name for m in result.matches} == {"slot0@node", "slot1@node"}
    assert first.claim_id == "" and "claim_id" not in repr(first)


def test_partitionable_slot_is_shared_by_priority(accountant):
    """One 8-core partitionable slot is carved among two users, four cores each."""
    result = negotiate([partitionable_slot("p@big", cpus=8, memory=32768)],
                       [submitter("a@x", 20), submitter("b@x", 20)], accountant)
    assert per_submitter(result) == {"a@x": 4, "b@x": 4}
    assert all(m.slot_name == "p@big" for m in result.matches)


def test_ceiling_caps_a_user(accountant):
    """A user with ceiling 2 gets no more than 2 cores however much is free."""
    accountant.set_ceiling("a@x", 2)
    result = negotiate(slots(10), [submitter("a@x", 50)], accountant)
    assert per_submitter(result) == {"a@x": 2}


def test_floor_is_served_before_priority(accountant):
    """A user with a floor of 3 gets 3 slots first even with a much worse priority."""
    accountant.set_priority("a@x", 1000)
    accountant.set_floor("a@x", 3)
    result = negotiate(slots(4), [submitter("a@x", 50), submitter("b@x", 50)], accountant)
    assert per_submitter(result)["a@x"] == 3


def test_group_quota_limits_its_members(tmp_path):
    """Members of a group with quota 3 get 3 slots together; users in no group get the rest."""
    names = ("group_a",)
    acct = Accountant(AccountantDatabase(str(tmp_path / "g.db")), Clock(), AccountantSettings(group_names=names))
    settings = CycleSettings(groups=GroupSettings(names, {"group_a": 3}))
    subs = [submitter("group_a.u1@x", 50), submitter("group_a.u2@x", 50), submitter("c@x", 50)]
    result = negotiate(slots(10), subs, acct, settings)
    counts = per_submitter(result)
    assert counts["group_a.u1@x"] + counts["group_a.u2@x"] == 3
    assert counts["c@x"] == 7


def test_group_accepting_surplus_uses_idle_quota(tmp_path):
    """A group accepting surplus takes the slots nobody else wants."""
    names = ("group_a", "group_b")
    acct = Accountant(AccountantDatabase(str(tmp_path / "s.db")), Clock(), AccountantSettings(group_names=names))
    groups = GroupSettings(names, {"group_a": 2, "group_b": 8}, accept_surplus={"group_a": True})
    result = negotiate(slots(10), [submitter("group_a.u@x", 50)], acct, CycleSettings(groups=groups))
    assert per_submitter(result) == {"group_a.u@x": 10}


def _group_a_cycle(tmp_path, groups, others=()):
    acct = Accountant(AccountantDatabase(str(tmp_path / "r.db")), Clock(), AccountantSettings(group_names=groups.names))
    subs = [submitter("group_a.u@x", 50), *others]
    return per_submitter(negotiate(slots(10), subs, acct, CycleSettings(groups=groups)))


@pytest.mark.parametrize("regroup, expected", [(False, 3), (True, 10)])
def test_an_autoregroup_group_takes_what_is_left_after_its_quota(tmp_path, regroup, expected):
    """GROUP_AUTOREGROUP: a group over its quota of 3 negotiates again as if in no group,
    for the 7 slots nobody else took; without it, it stops at its quota."""
    groups = GroupSettings(("group_a",), {"group_a": 3}, autoregroup_default=regroup)
    assert _group_a_cycle(tmp_path, groups) == {"group_a.u@x": expected}


def test_users_in_no_group_are_served_before_the_autoregroup_turn(tmp_path):
    """The second turn only gets what the users in no group left: here nothing."""
    groups = GroupSettings(("group_a",), {"group_a": 3}, autoregroup={"group_a": True})
    assert _group_a_cycle(tmp_path, groups, [submitter("c@x", 50)]) == {"group_a.u@x": 3, "c@x": 7}


def test_a_group_limit_is_not_passed_by_autoregroup(tmp_path):
    """GROUP_LIMIT is a ceiling no allocation passes, the autoregroup turn included."""
    groups = GroupSettings(("group_a",), {"group_a": 3}, limits={"group_a": 5}, autoregroup_default=True)
    assert _group_a_cycle(tmp_path, groups) == {"group_a.u@x": 3}
