"""Tests for daemoncore.reactor_turns, on a clock that keeps reactor turns apart."""

from daemoncore.reactor_turns import turn_by_turn
from tests.support.turns import TurnClock


def test_each_slice_runs_in_its_own_turn_and_the_result_fires_with_the_last():
    clock, seen, results = TurnClock(), [], []
    turn_by_turn(clock, seen.append, range(0, 30, 10)).addCallback(results.append)
    assert seen == [0] and results == []
    clock.turn()
    assert seen == [0, 10] and results == []
    clock.turn()
    assert seen == [0, 10, 20] and results == [None]
    assert not clock.pending


def test_no_slices_fire_at_once():
    results = []
    clock = TurnClock()
    turn_by_turn(clock, results.append, []).addCallback(results.append)
    assert results == [None] and not clock.pending


def test_a_failing_slice_fails_the_result_and_stops_the_rest():
    clock, seen, failures = TurnClock(), [], []

    def step(start):
        seen.append(start)
        if start == 1:
            raise ValueError("slice 1 is bad")

    turn_by_turn(clock, step, range(4)).addErrback(lambda failure: failures.append(failure.getErrorMessage()))
    for _ in range(5):
        clock.turn()
    assert seen == [0, 1] and failures == ["slice 1 is bad"]
    assert not clock.pending
