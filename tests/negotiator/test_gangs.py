"""Tests for negotiator.gangs and SlotPool checkpoint/restore: a gang gets all its
slots in one cycle or none, and the slots it could not use stay free for others."""

import pytest
from twisted.internet.task import Clock

from daemoncore.wire.resource_request import ResourceRequest
from negotiator.accountant import Accountant
from negotiator.cycle import Submitter, _CycleState, negotiate
from negotiator.db import AccountantDatabase
from negotiator.gangs import gang_size, serve_gang
from negotiator.matchmaking import SlotPool, build_prefilter
from tests.negotiator.pool_ads import job, partitionable_slot, static_slot


@pytest.fixture
def accountant(tmp_path):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.db")), Clock())


def gang(name, size, cpus=1, rid=None, cluster=7):
    ad = job(owner=name.split("@")[0], cpus=cpus, extra=f'GangSize = {size}; GangId = "s#{cluster}";')
    ids = tuple(f"{cluster}.{i}" for i in range(size))
    return ResourceRequest(rid or f"{name}#gang", name, "s", size, ad, ids)


def plain(name, count, rid=None):
    ad = job(owner=name.split("@")[0])
    return ResourceRequest(rid or f"{name}#plain", name, "s", count, ad, tuple(f"9.{i}" for i in range(count)))


def slots(n):
    return [static_slot(f"slot{i}@node") for i in range(n)]


def test_gang_size_reads_the_request_ad():
    """GangSize above 1 makes a gang; a plain job or GangSize = 1 is not one."""
    assert gang_size(gang("a@d", 3)) == 3
    assert gang_size(gang("a@d", 1)) == 1
    assert gang_size(plain("a@d", 3)) == 1


def test_gang_of_three_on_two_slots_gets_nothing(accountant):
    """Two free slots and a gang of 3: no piece is matched and the reason says 2 of 3."""
    result = negotiate(slots(2), [Submitter("a@d", "s", (gang("a@d", 3),))], accountant)
    assert result.matches == ()
    assert result.unmatched == {("a@d", "a@d#gang"): 3}


def test_gang_of_three_on_three_slots_gets_all_in_one_cycle(accountant):
    """Three free slots: all three pieces matched, one per proc, on three slots."""
    result = negotiate(slots(3), [Submitter("a@d", "s", (gang("a@d", 3),))], accountant)
    assert sorted(m.job_id for m in result.matches) == ["7.0", "7.1", "7.2"]
    assert len({m.slot_name for m in result.matches}) == 3


def test_slots_a_gang_cannot_use_go_to_the_next_request(accountant):
    """The gang's reserved slots are put back: the same submitter's plain jobs get both."""
    submitter = Submitter("a@d", "s", (gang("a@d", 3), plain("a@d", 2)))
    result = negotiate(slots(2), [submitter], accountant)
    assert sorted(m.job_id for m in result.matches) == ["9.0", "9.1"]


def test_gang_reason_names_how_many_fit(accountant):
    """The cycle keeps why a gang got nothing, with n of N."""
    pool = SlotPool(slots(2), [gang("a@d", 3).ad])
    state = _CycleState(pool, [Submitter("a@d", "s", (gang("a@d", 3),))], accountant)
    state.serve(Submitter("a@d", "s", (gang("a@d", 3),)), 10.0)
    assert state.gang_reasons[("a@d", "a@d#gang")] == "gang of 3: only 2 of 3 pieces fit"


def test_gang_past_the_allowance_gets_nothing_and_says_so():
    """All pieces fit the pool but not the submitter's share: none are kept."""
    request = gang("a@d", 3)
    pool = SlotPool(slots(4), [request.ad])
    outcome = serve_gang(pool, request, 3, 2.0)
    assert outcome.matches == ()
    assert "3 cores pass the submitter's share of 2" in outcome.reason
    assert sum(len(members) for members in pool.classes.values()) == 4


def test_gang_on_a_partitionable_slot_takes_its_pieces_from_it():
    """Four pieces of two cores fit one 8-core partitionable slot; a fifth gang piece does not."""
    request = gang("a@d", 4, cpus=2)
    pool = SlotPool([partitionable_slot("p@node", cpus=8)], [request.ad])
    assert len(serve_gang(pool, request, 4, 100.0).matches) == 4
    pool = SlotPool([partitionable_slot("p@node", cpus=8)], [request.ad])
    big = gang("a@d", 5, cpus=2)
    assert serve_gang(pool, big, 5, 100.0).matches == ()
    assert pool.slots[0].ad.evaluate("Cpus") == 8


def test_restore_puts_a_partitionable_slot_back_as_it_was():
    """Takes after a checkpoint are undone exactly; takes before it stay taken."""
    request = plain("a@d", 1)
    pool = SlotPool([partitionable_slot("p@node", cpus=8, memory=16384)], [request.ad])
    signature = next(iter(pool.classes))
    pool.take(0, pool.answer(request, signature, _prefilter(request)))
    assert pool.slots[0].ad.evaluate("Cpus") == 7
    mark = pool.checkpoint()
    for _ in range(3):
        signature = pool.slots[0].signature
        pool.take(0, pool.answer(request, signature, _prefilter(request)))
    assert pool.slots[0].ad.evaluate("Cpus") == 4
    pool.restore(mark)
    assert pool.slots[0].ad.evaluate("Cpus") == 7
    assert pool.slots[0].ad.evaluate("Memory") == 16384 - 1024
    assert list(pool.classes) == [pool.slots[0].signature]


def test_commit_keeps_the_takes_and_stops_remembering():
    """After commit a restore to an earlier mark has nothing to undo."""
    request = plain("a@d", 1)
    pool = SlotPool(slots(2), [request.ad])
    mark = pool.checkpoint()
    pool.take(0)
    pool.commit(mark)
    pool.restore(mark)
    assert sum(len(members) for members in pool.classes.values()) == 1


def _prefilter(request):
    return build_prefilter(request.ad)
