"""Tests for negotiator.pool_view: MATCHES bodies, preempting ones with their victims."""

from negotiator.cycle import Match
from negotiator.pool_view import matches_by_schedd, pool_slots

PUBLIC = [
    {"Name": "slot1@m", "MyAddress": "<127.0.0.1:9001>", "State": "Unclaimed", "PartitionableSlot": True},
    {"Name": "slot1_1@m", "MyAddress": "<127.0.0.1:9001>", "State": "Claimed"},
    {"Name": "slot1_2@m", "MyAddress": "<127.0.0.1:9001>", "State": "Claimed"},
]
PRIVATE = [{"Name": "slot1@m", "ClaimId": "parent-claim"}, {"Name": "slot1_1@m", "ClaimId": "victim-1"}]


def match(victims=()):
    return Match("bob@x", "<127.0.0.1:9002>", "r1", "2.0", "slot1@m", 4.0, victims=victims)


def test_a_match_without_victims_is_todays_shape():
    """An idle-slot match has no victims key at all."""
    slots, _ = pool_slots(PUBLIC, PRIVATE)
    bodies, left_out = matches_by_schedd([match()], slots)
    entry = bodies["<127.0.0.1:9002>"]["matches"][0]
    assert left_out == [] and "victims" not in entry and entry["claim_id"] == "parent-claim"


def test_a_preempting_match_names_each_victims_claim():
    """A preempting match carries victims as slot names with their current ClaimIds."""
    slots, _ = pool_slots(PUBLIC, PRIVATE)
    bodies, _ = matches_by_schedd([match(("slot1_1@m",))], slots)
    assert bodies["<127.0.0.1:9002>"]["matches"][0]["victims"] == [{"slot_name": "slot1_1@m", "claim_id": "victim-1"}]


def test_a_victim_without_claim_id_leaves_the_match_out():
    """A victim whose private ad is missing cannot be preempted: the match is left out, saying which."""
    slots, _ = pool_slots(PUBLIC, PRIVATE)
    bodies, left_out = matches_by_schedd([match(("slot1_1@m", "slot1_2@m"))], slots)
    assert bodies == {} and "slot1_2@m" in left_out[0]
