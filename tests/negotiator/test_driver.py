"""Tests for negotiator.driver: whole cycles against an in-memory collector and fake
schedds, driven by task.Clock."""

from collections import Counter

import pytest
from twisted.internet.defer import fail
from twisted.internet.task import Clock

from daemoncore.security import issue_token
from daemoncore.wire.errors import Unreachable
from negotiator.accountant import Accountant
from negotiator.db import AccountantDatabase
from negotiator.driver import CycleDriver, decode_chunks
from negotiator.settings import NegotiatorSettings
from tests.negotiator.in_memory_pool import COLLECTOR, KEY, InMemoryPool, slot, submitter_ad

SCHEDD = "127.0.0.1:9701"
OTHER_SCHEDD = "127.0.0.1:9702"


@pytest.fixture
def clock():
    clock = Clock()
    clock.advance(1_700_000_000)
    return clock


@pytest.fixture
def pool(clock):
    return InMemoryPool(clock)


@pytest.fixture
def accountant(clock, tmp_path):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.sqlite")), clock)


def driver_for(pool, accountant, clock, **knobs):
    settings = NegotiatorSettings(**{"interval": 60.0, "min_interval": 5.0, **knobs})
    return CycleDriver(settings, accountant, clock, pool.connect, lambda: COLLECTOR)


def test_cycle_sends_matches_with_claim_ids_to_the_schedd(pool, accountant, clock):
    """Three idle jobs and two slots: the schedd gets two matches, each with its slot's ClaimId and startd."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 3)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=3))
    pool.add_slot("slot1@a", claim_id="secret-1", startd="127.0.0.1:9801")
    pool.add_slot("slot1@b", claim_id="secret-2", startd="127.0.0.1:9802")
    report = pool.wait(driver_for(pool, accountant, clock).run_cycle())
    assert (report.slots, report.submitters, report.matches, report.matches_accepted) == (2, 1, 2, 2)
    assert report.problems == ()
    matched = sorted(schedd.matched(), key=lambda m: m["slot_name"])
    assert [(m["slot_name"], m["claim_id"], m["startd_address"]) for m in matched] == [
        ("slot1@a", "secret-1", "<127.0.0.1:9801>"), ("slot1@b", "secret-2", "<127.0.0.1:9802>")]
    assert {m["job_id"] for m in matched} == {"1.0", "1.1"}
    assert all(m["request_id"] == "alice@pool#1" and m["slot_ad"]["Name"] == m["slot_name"] for m in matched)
    assert schedd.asked == ["alice@pool"]


def test_two_users_on_two_schedds_share_the_pool(pool, accountant, clock):
    """Equal priorities split four slots two and two, each user's matches going to its own schedd."""
    first, second = pool.add_schedd(SCHEDD), pool.add_schedd(OTHER_SCHEDD)
    first.add_requests("alice@pool", "alice", 10)
    second.add_requests("bob@pool", "bob", 10)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=10))
    pool.advertise("Submitter", submitter_ad("bob@pool", OTHER_SCHEDD, idle=10))
    for n in range(4):
        pool.add_slot(f"slot{n}@x")
    pool.wait(driver_for(pool, accountant, clock).run_cycle())
    assert (len(first.matched()), len(second.matched())) == (2, 2)


def test_claimed_slots_charge_their_owners(pool, accountant, clock):
    """A claimed slot's RemoteOwner (or AccountingGroup) is charged its Cpus and is not matched again."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("bob@pool", "bob", 5)
    pool.advertise("Submitter", submitter_ad("bob@pool", SCHEDD, idle=5))
    pool.add_slot("slot1@x", cpus=4, state="Claimed", RemoteOwner="alice@pool")
    pool.add_slot("slot2@x", cpus=2, state="Claimed", RemoteOwner="carol@pool", AccountingGroup="group_a.carol@pool")
    pool.add_slot("slot3@x")
    pool.wait(driver_for(pool, accountant, clock).run_cycle())
    assert accountant.resources_in_use("alice@pool") == 4
    assert accountant.resources_in_use("group_a.carol@pool") == 2
    assert [m["slot_name"] for m in schedd.matched()] == ["slot3@x"]


def test_usage_raises_priority_over_later_cycles(pool, accountant, clock):
    """Usage charged at one cycle has aged into a worse priority by the next."""
    pool.add_slot("slot1@x", cpus=8, state="Claimed", RemoteOwner="alice@pool")
    driver = driver_for(pool, accountant, clock)
    pool.wait(driver.run_cycle())
    clock.advance(3600)
    pool.add_slot("slot1@x", cpus=8, state="Claimed", RemoteOwner="alice@pool")
    pool.wait(driver.run_cycle())
    assert accountant.real_priority("alice@pool") > 0.5
    [record] = [r for r in accountant.priorities() if r.name == "alice@pool"]
    assert record.accumulated_usage == pytest.approx(8 * 3600)


def test_unreachable_schedd_is_logged_and_others_still_matched(pool, accountant, clock):
    """A schedd that does not answer costs only its own submitter this cycle."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 1)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD))
    pool.advertise("Submitter", submitter_ad("bob@pool", "127.0.0.1:1"))
    pool.add_slot("slot1@x")
    pool.add_slot("slot2@x")

    def connect(address):
        return _Refusing() if address.strip("<>") == "127.0.0.1:1" else pool.connect(address)

    settings = NegotiatorSettings()
    report = pool.wait(CycleDriver(settings, accountant, clock, connect, lambda: COLLECTOR).run_cycle())
    assert len(schedd.matched()) == 1
    assert any("bob@pool" in problem and "127.0.0.1:1" in problem for problem in report.problems)


class _Refusing:
    """A client whose every call fails the way an absent daemon does."""

    def call(self, *_args, **_kwargs):
        return fail(Unreachable("no answer from 127.0.0.1:1: Connection refused"))


def test_bad_resource_request_is_a_clear_problem(pool, accountant, clock):
    """A schedd answering a request without a count is reported by schedd, submitter and field."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.requests["alice@pool"] = [{"request_id": "r1", "ad": {"MyType": "Job"}}]
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD))
    pool.add_slot("slot1@x")
    report = pool.wait(driver_for(pool, accountant, clock).run_cycle())
    [problem] = report.problems
    assert "alice@pool" in problem and SCHEDD in problem and "count" in problem
    assert schedd.received == []


def test_slot_without_private_ad_is_not_offered(pool, accountant, clock):
    """A match on a slot with no ClaimId is left out and said so, not sent with an empty capability."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 1)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD))
    pool.advertise("Machine", slot("slot1@x"))
    report = pool.wait(driver_for(pool, accountant, clock).run_cycle())
    assert schedd.received == []
    assert any("ClaimId" in problem for problem in report.problems)


def test_submitters_without_idle_jobs_are_not_asked(pool, accountant, clock):
    """A Submitter ad with IdleJobs = 0 costs no round trip."""
    schedd = pool.add_schedd(SCHEDD)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=0))
    pool.add_slot("slot1@x")
    pool.wait(driver_for(pool, accountant, clock).run_cycle())
    assert schedd.asked == []


def test_cycles_run_every_interval(pool, accountant, clock):
    """The first cycle starts at once, the next one NEGOTIATOR_INTERVAL later."""
    driver = driver_for(pool, accountant, clock, interval=60.0)
    driver.start()
    pool.settle()
    assert len(driver.reports) == 1
    clock.advance(59)
    pool.settle()
    assert len(driver.reports) == 1
    clock.advance(1)
    pool.settle()
    assert len(driver.reports) == 2
    pool.wait(driver.stop())
    clock.advance(600)
    pool.settle()
    assert len(driver.reports) == 2


def test_reschedule_brings_the_next_cycle_forward(pool, accountant, clock):
    """A RESCHEDULE runs a cycle NEGOTIATOR_MIN_INTERVAL after the last start, not an interval later."""
    driver = driver_for(pool, accountant, clock, interval=60.0, min_interval=5.0)
    driver.start()
    pool.settle()
    clock.advance(2)
    assert driver.reschedule() == pytest.approx(3.0)
    clock.advance(3)
    pool.settle()
    assert len(driver.reports) == 2
    clock.advance(30)
    assert driver.reschedule() == 0.0
    pool.settle()
    assert len(driver.reports) == 3
    pool.wait(driver.stop())


def test_missing_collector_is_a_problem_not_a_crash(pool, accountant, clock):
    """Without a collector address the cycle reports why and the loop goes on."""
    driver = CycleDriver(NegotiatorSettings(), accountant, clock, pool.connect, lambda: None)
    driver.start()
    pool.settle()
    clock.advance(60)
    pool.settle()
    assert len(driver.reports) == 2
    assert "COLLECTOR_HOST" in driver.reports[0].problems[0]
    pool.wait(driver.stop())


def test_pie_follows_priority_factors_across_the_wire(pool, accountant, clock):
    """With bob's factor twice alice's, alice gets two slots for each of bob's."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 20)
    schedd.add_requests("bob@pool", "bob", 20)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=20))
    pool.advertise("Submitter", submitter_ad("bob@pool", SCHEDD, idle=20))
    accountant.set_factor("bob@pool", 2000)
    for n in range(6):
        pool.add_slot(f"slot{n}@x")
    pool.wait(driver_for(pool, accountant, clock).run_cycle())
    owners = Counter(m["request_id"].split("#")[0] for m in schedd.matched())
    assert owners == {"alice@pool": 4, "bob@pool": 2}


def test_new_idle_jobs_bring_a_cycle_without_a_reschedule(pool, accountant, clock):
    """A Submitter ad with more idle jobs than the last cycle saw starts a cycle within
    NEGOTIATOR_MIN_INTERVAL or two, long before NEGOTIATOR_INTERVAL."""
    schedd = pool.add_schedd(SCHEDD)
    pool.add_slot("slot1@x")
    driver = driver_for(pool, accountant, clock, interval=300.0, min_interval=5.0)
    driver.start()
    pool.settle()
    clock.advance(5)
    pool.settle()
    assert len(driver.reports) == 1
    schedd.add_requests("alice@pool", "alice", 1)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=1))
    for _ in range(2):
        clock.advance(5)
        pool.settle()
    assert len(driver.reports) == 2 and len(schedd.matched()) == 1
    clock.advance(20)
    pool.settle()
    assert len(driver.reports) == 2
    pool.wait(driver.stop())


def test_a_new_submit_smaller_than_the_last_cycles_demand_still_brings_a_cycle(pool, accountant, clock):
    """The last cycle saw 5 idle jobs; they ran (0 idle); 2 new ones are growth even
    though 2 < 5, so a cycle comes within NEGOTIATOR_MIN_INTERVAL or two."""
    schedd = pool.add_schedd(SCHEDD)
    pool.add_slot("slot1@x")
    schedd.add_requests("alice@pool", "alice", 5)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=5))
    driver = driver_for(pool, accountant, clock, interval=300.0, min_interval=5.0)
    driver.start()
    pool.settle()
    assert len(driver.reports) == 1
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=0))
    clock.advance(5)
    pool.settle()
    assert len(driver.reports) == 1
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=2))
    for _ in range(2):
        clock.advance(5)
        pool.settle()
    assert len(driver.reports) == 2
    pool.wait(driver.stop())


POOL_A_KEY = b"pool-A-signing-key-0123456789abcdef"
FLOCKED_SCHEDD = "198.18.0.3:9700"


class _Trusted:
    """A trusted pool entry as daemoncore.security.pool_trust keeps it (name and token)."""

    def __init__(self, name: str, token: str) -> None:
        self.name, self.token = name, token


def _flocked_pool(pool, clock):
    """Pool A's schedd (checking tokens with A's key) flocking alice in, and the trust entry
    holding the token A gave this pool's negotiator."""
    schedd = pool.add_schedd(FLOCKED_SCHEDD, key=POOL_A_KEY)
    schedd.add_requests("alice@submitA", "alice", 2, User="alice@poolA")
    pool.advertise("Submitter", {**submitter_ad("alice@submitA", FLOCKED_SCHEDD, idle=2),
                                 "AuthenticatedIdentity": "flock@poolA"})
    token = issue_token(POOL_A_KEY, "negotiator@peer-3f9a", ["DAEMON"], issuer="poolA", now=clock.seconds())
    return schedd, {"poolA": _Trusted("poolA", token)}


def test_a_flocked_submitter_is_negotiated_with_its_pools_token(pool, accountant, clock):
    """Pool A's schedd accepts only tokens signed by A: requests and matches reach it only
    because the negotiator calls it with the trusted pool's token; the home schedd beside
    it is still called with the negotiator's own; alice's domains (her Submitter ad's and her
    jobs' User, which her claimed slots are charged by) are remembered as remote."""
    home = pool.add_schedd(SCHEDD)
    home.add_requests("bob@pool", "bob", 1)
    pool.advertise("Submitter", submitter_ad("bob@pool", SCHEDD, idle=1))
    schedd, trusted = _flocked_pool(pool, clock)
    for n in range(3):
        pool.add_slot(f"slot{n}@x")
    driver = CycleDriver(NegotiatorSettings(), accountant, clock, pool.connect, lambda: COLLECTOR,
                         trusted_pools=lambda: trusted)
    report = pool.wait(driver.run_cycle())
    assert report.problems == ()
    assert (schedd.asked, len(schedd.matched())) == (["alice@submitA"], 2)
    assert (home.asked, len(home.matched())) == (["bob@pool"], 1)
    assert accountant.is_remote("alice@submitA") and not accountant.is_remote("bob@pool")
    assert accountant.is_remote("alice@poolA")


def test_an_untrusted_pools_submitter_is_skipped_with_a_problem(pool, accountant, clock):
    """With pool A not trusted (no entry), its schedd is never called and the cycle's
    problems say why; nothing of it reaches the accountant."""
    schedd, _trusted = _flocked_pool(pool, clock)
    pool.add_slot("slot1@x")
    report = pool.wait(driver_for(pool, accountant, clock).run_cycle())
    assert schedd.asked == []
    assert any("alice@submitA" in p and "flock@poolA" in p and "roost pool trust" in p for p in report.problems)
    assert not accountant.is_remote("alice@submitA")


def test_the_negotiators_own_token_is_refused_by_another_pools_schedd(pool, accountant, clock):
    """The other pool's schedd really checks: called with this pool's token, it refuses
    (so the test above shows the trusted token being used)."""
    schedd, _trusted = _flocked_pool(pool, clock)
    pool.add_slot("slot1@x")
    own = issue_token(KEY, "negotiator@pool", ["DAEMON"], now=clock.seconds())
    wrong = {"poolA": _Trusted("poolA", own)}
    driver = CycleDriver(NegotiatorSettings(), accountant, clock, pool.connect, lambda: COLLECTOR,
                         trusted_pools=lambda: wrong)
    report = pool.wait(driver.run_cycle())
    assert schedd.matched() == []
    assert any("no resource requests for alice@submitA" in p for p in report.problems)


def test_the_heap_is_frozen_only_while_the_cycle_runs():
    """with_heap_frozen leaves existing objects out of collection during the call and gives them back after, even when it fails."""
    import gc

    from negotiator.driver import with_heap_frozen

    assert with_heap_frozen(lambda x: (x, gc.get_freeze_count() > 0), 7) == (7, True)
    assert gc.get_freeze_count() == 0

    def failing():
        raise ValueError("cycle failed")

    with pytest.raises(ValueError):
        with_heap_frozen(failing)
    assert gc.get_freeze_count() == 0


class _PiecemealCollector:
    """The collector's client as the cycle may use it: answers read as they arrive
    (a stream, or the raw response), never ``call``, which decodes all in one piece."""

    def __init__(self, client) -> None:
        self.client = client
        self.read = 0

    def stream(self, route, on_item, *args, **kwargs):
        self.read += 1
        return self.client.stream(route, on_item, *args, **kwargs)

    def send(self, *args, **kwargs):
        self.read += 1
        return self.client.send(*args, **kwargs)

    @property
    def address(self):
        return self.client.address

    def call(self, *_args, **_kwargs):
        return fail(AssertionError("the collector's answer was decoded in one piece"))


def test_the_cycle_reads_the_collector_s_answers_as_they_arrive(pool, accountant, clock):
    """The cycle reads slots, private ads and submitters from the collector as they
    arrive, so a large answer is never decoded in one piece on the reactor."""
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 2)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD))
    pool.add_slot("slot1@x")
    pool.add_slot("slot2@x")
    collector = _PiecemealCollector(pool.connect(COLLECTOR))

    def connect(address):
        return collector if address == COLLECTOR else pool.connect(address)

    settings = NegotiatorSettings()
    report = pool.wait(CycleDriver(settings, accountant, clock, connect, lambda: COLLECTOR).run_cycle())
    assert report.problems == ()
    assert len(schedd.matched()) == 2
    assert collector.read == 3


def test_decode_chunks_joins_ads_split_across_chunks():
    """An NDJSON answer cut anywhere into chunks decodes to the same ads."""
    body = b'{"Name": "slot1@x", "Cpus": 4}\n{"Name": "slot2@x"}\n'
    for cut in range(len(body) + 1):
        assert decode_chunks([body[:cut], body[cut:]]) == [{"Name": "slot1@x", "Cpus": 4}, {"Name": "slot2@x"}]
