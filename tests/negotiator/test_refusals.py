"""A match the startd refused is not made again every cycle (negotiator.refusals, and
the driver holding the pair back), driven by task.Clock."""

from twisted.internet.task import Clock

from negotiator.accountant import Accountant
from negotiator.db import AccountantDatabase
from negotiator.driver import CycleDriver
from negotiator.refusals import RefusalMemory, RequestKey, slot_fingerprint
from negotiator.settings import NegotiatorSettings
from tests.negotiator.in_memory_pool import COLLECTOR, InMemoryPool, slot, submitter_ad

SCHEDD = "127.0.0.1:9701"


def wire(refused, cpus=1):
    """The slot's ad with ``refused`` claims refused by its startd so far."""
    return {**slot("slot1@a", cpus=cpus), "ClaimRequestsRefused": refused}


def key(count=1, rid="alice#1"):
    return RequestKey(rid, count, ("alice", "TARGET.Cpus >= 1"))


def test_a_slot_whose_startd_refused_the_claim_holds_the_pair_back():
    """The slot's refusal count grew and the request still asks: held for a minute, then a
    repeat doubles the hold; another request id of the same ask is held too."""
    memory = RefusalMemory()
    memory.note_sent([("alice#1", "slot1@a")], {"slot1@a": wire(0)}, [key()])
    held, found = memory.review({"slot1@a": wire(1)}, [key(rid="alice#7")], now=200.0)
    assert held == {("alice#7", "slot1@a")}
    assert "slot1@a" in found[0] and "refused" in found[0] and "60 s" in found[0]
    assert memory.review({"slot1@a": wire(1)}, [key()], now=259.0)[0] == {("alice#1", "slot1@a")}
    assert memory.review({"slot1@a": wire(1)}, [key()], now=261.0)[0] == frozenset()
    memory.note_sent([("alice#1", "slot1@a")], {"slot1@a": wire(1)}, [key()])
    held, found = memory.review({"slot1@a": wire(2)}, [key()], now=280.0)
    assert held and "120 s" in found[0]


def test_no_hold_without_a_refusal_from_the_startd():
    """A slot back to the same resources after a short job (no refusal counted), or a
    request that asks for fewer jobs: no hold."""
    for later, request in ((wire(0), key()), (wire(0, cpus=2), key()), (wire(1), key(count=0))):
        memory = RefusalMemory()
        memory.note_sent([("alice#1", "slot1@a")], {"slot1@a": wire(0)}, [key()])
        assert memory.review({"slot1@a": later}, [request], now=200.0) == (frozenset(), [])


def test_a_hold_ends_when_the_slot_changes():
    """Once the slot's resources change (a claim ended, a card freed) the pair may match again."""
    memory = RefusalMemory()
    memory.note_sent([("alice#1", "slot1@a")], {"slot1@a": wire(0)}, [key()])
    assert memory.review({"slot1@a": wire(1)}, [key()], now=200.0)[0]
    assert memory.review({"slot1@a": wire(1, cpus=4)}, [key()], now=210.0)[0] == frozenset()


def test_fingerprint_reads_cards_and_ignores_heartbeat():
    """A card's free memory is part of the fingerprint; LastHeardFrom is not."""
    card = {"GPUs_GPU_1": {"FreeMemoryMb": 100}}
    assert slot_fingerprint({**wire(1), **card}) == slot_fingerprint({**wire(2), **card})
    assert slot_fingerprint({**wire(1), **card}) != slot_fingerprint({**wire(1), "GPUs_GPU_1": {"FreeMemoryMb": 9}})


def test_driver_does_not_rematch_a_refused_pair_every_cycle(tmp_path):
    """The startd refused the claim of a match: the next cycle leaves the pair out and
    says why; after the hold it is tried again."""
    clock = Clock()
    clock.advance(1_000)
    pool = InMemoryPool(clock)
    schedd = pool.add_schedd(SCHEDD)
    schedd.add_requests("alice@pool", "alice", 1)
    pool.advertise("Submitter", submitter_ad("alice@pool", SCHEDD, idle=1))
    pool.add_slot("slot1@a")
    accountant = Accountant(AccountantDatabase(str(tmp_path / "acct.sqlite")), clock)
    driver = CycleDriver(NegotiatorSettings(), accountant, clock, pool.connect, lambda: COLLECTOR)

    refused = iter(range(100))

    def cycle(advance):
        clock.advance(advance)
        pool.advertise("Machine", {**slot("slot1@a"), "ClaimRequestsRefused": next(refused)})
        return pool.wait(driver.run_cycle())

    assert cycle(0).matches == 1
    report = cycle(20)
    assert report.matches == 0
    assert any("slot1@a" in p and "not matching them again" in p for p in report.problems)
    assert cycle(20).matches == 0
    assert cycle(41).matches == 1
    assert len(schedd.matched()) == 2
