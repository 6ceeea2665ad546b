"""A gone slot's ad is withdrawn until no update that carried it can still arrive."""

from startd.advertised_slots import AdvertisedSlots


def test_a_gone_slot_is_forgotten_once_an_invalidate_succeeds_with_nothing_in_flight():
    slots = AdvertisedSlots()
    slots.settle(slots.begin(["slot1", "slot1_1"]))
    assert slots.to_withdraw(["slot1"]) == ["slot1_1"]
    unsafe = slots.unsafe_to_forget(["slot1_1"])
    slots.withdrawn(["slot1_1"], unsafe)
    assert slots.to_withdraw(["slot1"]) == []


def test_an_update_still_in_flight_keeps_the_slot_to_be_withdrawn_again():
    slots = AdvertisedSlots()
    stale = slots.begin(["slot1", "slot1_1"])  # sent during a cut, not settled
    slots.begin(["slot1"])
    unsafe = slots.unsafe_to_forget(["slot1_1"])
    slots.withdrawn(["slot1_1"], unsafe)
    assert slots.to_withdraw(["slot1"]) == ["slot1_1"]
    slots.settle(stale)  # the stale update arrived (or was given up on)
    slots.withdrawn(["slot1_1"], slots.unsafe_to_forget(["slot1_1"]))
    assert slots.to_withdraw(["slot1"]) == []


def test_a_stale_update_settling_between_send_and_answer_still_needs_another_invalidate():
    slots = AdvertisedSlots()
    stale = slots.begin(["slot1", "slot1_1"])
    unsafe = slots.unsafe_to_forget(["slot1_1"])  # taken when the INVALIDATE is sent
    slots.settle(stale)  # it may have reached the collector after the INVALIDATE
    slots.withdrawn(["slot1_1"], unsafe)
    assert slots.to_withdraw(["slot1"]) == ["slot1_1"]
