"""Tests for negotiator.gangs and SlotPool checkpoint/restore: a gang gets all its
slots in one cycle or none, and the slots it could not use stay free for others."""

import pytest
from twisted.internet.task import Clock

from daemoncore.config import Config
from daemoncore.wire.resource_request import ResourceRequest
from negotiator.accountant import Accountant
from negotiator.concurrency import ConcurrencyLedger
from negotiator.cycle import Submitter, _CycleState, negotiate
from negotiator.db import AccountantDatabase
from negotiator.gangs import gang_size, serve_gang
from negotiator.last_cycle import explain_cycle
from negotiator.matchmaking import SlotPool, build_prefilter
from negotiator.settings import NegotiatorSettings
from tests.negotiator.pool_ads import job, partitionable_slot, static_slot


@pytest.fixture
def accountant(tmp_path):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.db")), Clock())


def gang(name, size, cpus=1, rid=None, cluster=7, extra=""):
    ad = job(owner=name.split("@")[0], cpus=cpus, extra=f'GangSize = {size}; GangId = "s#{cluster}"; {extra}')
    ids = tuple(f"{cluster}.{i}" for i in range(size))
    return ResourceRequest(rid or f"{name}#gang", name, "s", size, ad, ids)


def plain(name, count, rid=None, extra=""):
    ad = job(owner=name.split("@")[0], extra=extra)
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


LICENSE = 'ConcurrencyLimits = "license"'


def settings_of(text):
    return NegotiatorSettings.from_config(Config.from_text(text)).cycle


def claimed_slot(name, limits):
    ad = static_slot(name, extra=f'ConcurrencyLimits = "{limits}"')
    ad["State"] = "Claimed"
    return ad


def test_a_gang_needing_more_units_than_a_limit_has_gets_nothing(accountant):
    """LICENSE_LIMIT = 2 and a gang of 3 taking license each: four free slots, no piece, the reason names the limit."""
    result = negotiate(slots(4), [Submitter("a@d", "s", (gang("a@d", 3, extra=LICENSE),))], accountant,
                       settings_of("LICENSE_LIMIT = 2\n"))
    assert result.matches == ()
    assert result.concurrency_in_use.get("license", 0.0) == 0.0
    assert result.unmatched_reasons[("a@d", "a@d#gang")] == \
        "gang of 3: concurrency limit license has 2 of 2 free and its 3 pieces need 3"


def test_a_gang_within_its_limit_starts_whole_and_takes_a_unit_per_piece(accountant):
    """LICENSE_LIMIT = 3: the gang of 3 gets all pieces, uses all 3 units, and a later license job waits."""
    submitter = Submitter("a@d", "s", (gang("a@d", 3, extra=LICENSE), plain("a@d", 1, extra=LICENSE)))
    result = negotiate(slots(5), [submitter], accountant, settings_of("LICENSE_LIMIT = 3\n"))
    assert sorted(m.job_id for m in result.matches) == ["7.0", "7.1", "7.2"]
    assert result.concurrency_in_use == {"license": 3.0}
    assert "license is used up: 3 of 3" in result.unmatched_reasons[("a@d", "a@d#plain")]


def test_running_jobs_leave_too_few_units_for_a_gang(accountant):
    """A claimed slot holding license:2 of LICENSE_LIMIT = 4 leaves 2 units: a gang of 3 waits, its slots go to others."""
    pool = [claimed_slot("busy@h", "license:2")] + slots(3)
    users = [Submitter("a@d", "s", (gang("a@d", 3, extra=LICENSE), plain("a@d", 3)))]
    result = negotiate(pool, users, accountant, settings_of("LICENSE_LIMIT = 4\n"))
    assert sorted(m.job_id for m in result.matches) == ["9.0", "9.1", "9.2"]
    assert "license has 2 of 4 free and its 3 pieces need 3" in result.unmatched_reasons[("a@d", "a@d#gang")]


def test_weighted_limits_count_the_weight_of_every_piece(accountant):
    """license:2 per piece and LICENSE_LIMIT = 5: a gang of 2 (4 units) fits, a gang of 3 (6 units) does not."""
    weighted = 'ConcurrencyLimits = "license:2"'
    fits = negotiate(slots(3), [Submitter("a@d", "s", (gang("a@d", 2, extra=weighted),))], accountant,
                     settings_of("LICENSE_LIMIT = 5\n"))
    assert len(fits.matches) == 2 and fits.concurrency_in_use == {"license": 4.0}
    too_many = negotiate(slots(3), [Submitter("a@d", "s", (gang("a@d", 3, extra=weighted),))], accountant,
                         settings_of("LICENSE_LIMIT = 5\n"))
    assert too_many.matches == ()
    assert "its 3 pieces need 6" in too_many.unmatched_reasons[("a@d", "a@d#gang")]


def test_a_slot_dependent_limit_is_checked_on_the_matched_pieces_and_undone():
    """strcat("lic_", TARGET.Site) with LIC_A_LIMIT = 2: three pieces on site a are found, then all put back."""
    request = gang("a@d", 3, extra='ConcurrencyLimits = strcat("lic_", TARGET.Site)')
    site_a = [static_slot(f"slot{i}@a", extra='Site = "a"') for i in range(3)]
    ledger = ConcurrencyLedger(settings_of("LIC_A_LIMIT = 2\n").concurrency)
    pool = SlotPool(site_a, [request.ad])
    outcome = serve_gang(pool, request, 3, 100.0, ledger=ledger)
    assert outcome.matches == ()
    assert outcome.reason == "gang of 3: concurrency limit lic_a has 2 of 2 free and its 3 pieces need 3"
    assert sum(len(members) for members in pool.classes.values()) == 3 and ledger.used == {}
    ledger = ConcurrencyLedger(settings_of("LIC_A_LIMIT = 3\n").concurrency)
    pool = SlotPool(site_a, [request.ad])
    assert len(serve_gang(pool, request, 3, 100.0, ledger=ledger).matches) == 3
    assert ledger.used == {"lic_a": 3.0}


def test_why_it_waits_names_the_limit(accountant):
    """The last cycle's record gives the gang's limit as the reason its jobs wait."""
    settings = settings_of("LICENSE_LIMIT = 1\n")
    users = [Submitter("a@d", "s", (gang("a@d", 2, extra=LICENSE),))]
    result = negotiate(slots(2), users, accountant, settings)
    record = explain_cycle(result, slots(2), users, accountant, settings, 1.0, 2.0)
    [waiting] = record.waiting
    assert waiting.left == 2
    assert waiting.reason == "gang of 2: concurrency limit license has 1 of 1 free and its 2 pieces need 2"
