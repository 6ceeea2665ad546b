"""Tests for startd.states: HTCondor's state/activity pairs and their moves in time."""

import pytest

from startd.errors import SlotStateError
from startd.states import Activity, SlotStatus, State, apply_event


def run(events, start=0.0):
    status = SlotStatus.unclaimed(start)
    for now, event in events:
        status = apply_event(status, event, now, slot="slot1@host")
    return status


def test_a_job_runs_through_claimed_idle_busy_and_back():
    """claim, activate and job_exit lead Claimed/Idle -> Busy -> Idle."""
    status = run([(10, "claim"), (20, "activate"), (30, "job_exit")])
    assert (status.state, status.activity) == (State.CLAIMED, Activity.IDLE)


def test_entered_state_moves_only_when_the_state_changes():
    """EnteredCurrentState stays at the claim while the activity moves on."""
    status = run([(10, "claim"), (20, "activate")])
    assert (status.entered_state, status.entered_activity) == (10, 20)


def test_vacate_then_kill_then_release_returns_to_unclaimed():
    """A preempted job goes Vacating, Killing, then the slot is Unclaimed again."""
    status = run([(1, "claim"), (2, "activate"), (3, "vacate")])
    assert status.describe() == "Preempting/Vacating"
    status = apply_event(status, "kill", 4)
    assert status.describe() == "Preempting/Killing"
    status = apply_event(status, "release", 5)
    assert status.describe() == "Unclaimed/Idle" and status.entered_state == 5


def test_match_then_timeout_returns_to_unclaimed():
    """A match that is never claimed times out back to Unclaimed."""
    assert run([(1, "match"), (2, "match_timeout")]).describe() == "Unclaimed/Idle"


def test_drain_keeps_new_work_away_until_cancelled():
    """An idle slot drains to Drained/Idle; a busy one retires first."""
    assert run([(1, "drain")]).describe() == "Drained/Idle"
    busy = run([(1, "claim"), (2, "activate"), (3, "drain_busy")])
    assert busy.describe() == "Drained/Retiring"
    assert apply_event(apply_event(busy, "drain_done", 4), "cancel_drain", 5).describe() == \
        "Unclaimed/Idle"


def test_a_draining_slots_job_exit_leaves_it_drained():
    """The job of a Drained/Retiring slot ends: the slot is Drained/Idle, not claimed again."""
    status = run([(1, "claim"), (2, "activate"), (3, "drain_busy"), (9, "job_exit")])
    assert status.describe() == "Drained/Idle" and status.entered_state == 3 and status.entered_activity == 9


def test_a_draining_slots_job_can_be_vacated_or_killed_and_then_released():
    """-quick vacates, -fast kills a retiring job; its release frees the slot."""
    retiring = run([(1, "claim"), (2, "activate"), (3, "drain_busy")])
    for event, pair in (("vacate", "Preempting/Vacating"), ("kill", "Preempting/Killing")):
        stopped = apply_event(retiring, event, 4)
        assert stopped.describe() == pair
        assert apply_event(stopped, "release", 5).describe() == "Unclaimed/Idle"


def test_cancelling_a_drain_lets_a_running_job_carry_on_claimed():
    """A drain cancelled while the job runs puts the slot back to Claimed/Busy."""
    status = run([(1, "claim"), (2, "activate"), (3, "drain_busy"), (4, "cancel_drain_busy")])
    assert status.describe() == "Claimed/Busy"


def test_a_drained_slot_takes_no_claim_and_no_job():
    """claim and activate are refused in Drained/Idle, naming where they are allowed."""
    drained = run([(1, "drain")])
    with pytest.raises(SlotStateError, match="cannot claim in Drained/Idle"):
        apply_event(drained, "claim", 2)
    with pytest.raises(SlotStateError, match="cannot activate in Drained/Idle"):
        apply_event(drained, "activate", 2)


def test_a_move_not_allowed_names_the_slot_and_the_allowed_states():
    """Activating an unclaimed slot is refused with where it could have happened."""
    with pytest.raises(SlotStateError, match=r"slot1@host: cannot activate in Unclaimed/Idle; "
                                             r"allowed from Claimed/Idle"):
        run([(1, "activate")])


def test_unknown_event_is_refused():
    """An event name that does not exist lists the real ones."""
    with pytest.raises(SlotStateError, match="unknown slot event"):
        run([(1, "explode")])


def test_invalid_pairs_cannot_be_built():
    """Unclaimed/Busy is not a state a slot can be in."""
    with pytest.raises(SlotStateError, match="Unclaimed/Busy"):
        SlotStatus(State.UNCLAIMED, Activity.BUSY, 0, 0)
