"""Tests for daemoncore.reactor_turns, on a clock that keeps reactor turns apart."""

from tests.support.turns import TurnClock


class _Ticks:
    """A timer that moves on by ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_in_slices_runs_a_budget_of_steps_per_turn_and_fires_after_the_last():
    """Each step costs 4 ms of the timer: a 10 ms budget runs three per turn (the third
    crosses it), ten steps take four turns, the result fires in the last."""
    from daemoncore.reactor_turns import in_slices

    clock, seen, results = TurnClock(), [], []
    steps = (seen.append(n) for n in range(10))
    in_slices(clock, steps, 0.010, _Ticks(0.004)).addCallback(results.append)
    assert len(seen) == 3 and results == []
    for expected in (6, 9, 10):
        clock.turn()
        assert len(seen) == expected
    assert results == [None] and not clock.pending


def test_in_slices_fails_with_a_steps_error_and_runs_no_more():
    from daemoncore.reactor_turns import in_slices

    def steps():
        yield
        raise ValueError("step two failed")

    clock, failures = TurnClock(), []
    in_slices(clock, steps(), 1.0, _Ticks(0.0)).addErrback(failures.append)
    assert [f.value.args[0] for f in failures] == ["step two failed"] and not clock.pending


def test_in_slices_counts_the_first_budget_from_when_the_work_began():
    """Work that began 8 ms ago (by the timer) has 2 ms left of a 10 ms budget in its
    first turn: one step there (always at least one), three in each later turn."""
    from daemoncore.reactor_turns import in_slices

    clock, seen, ticks = TurnClock(), [], _Ticks(0.004)
    began = ticks() - 0.008
    in_slices(clock, (seen.append(n) for n in range(7)), 0.010, ticks, started=began)
    assert len(seen) == 1
    clock.turn()
    assert len(seen) == 4
