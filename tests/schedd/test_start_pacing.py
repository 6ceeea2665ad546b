"""Starts of a burst paced over reactor turns: a budget's worth per turn, in order."""

from schedd.start_pacing import TURN_BUDGET, StartPacing


class Turns:
    """A reactor clock whose timed calls run as turns (calls made during a turn wait for
    the next one, as Twisted's reactor runs them); ``seconds`` moves only when told."""

    def __init__(self):
        self.now = 0.0
        self.calls = []

    def seconds(self):
        return self.now

    def callLater(self, delay, function, *args):  # noqa: N802 - IReactorTime's name
        assert delay == 0
        self.calls.append((function, args))
        return Pending()

    def turn(self):
        due, self.calls = self.calls, []
        for function, args in due:
            function(*args)


class Pending:
    def active(self):
        return True

    def cancel(self):
        pass


def test_a_burst_runs_a_budget_per_turn_and_quick_starts_at_once():
    """Starts costing 3/4 of the budget: two run at once, the rest two per turn, in order."""
    turns = Turns()
    pacing = StartPacing(turns)
    done = []

    def start(name):
        turns.now += TURN_BUDGET * 0.75
        done.append(name)

    for name in "abcde":
        pacing.run(start, name)
    assert done == ["a", "b"] and len(pacing) == 3
    turns.turn()
    assert done == ["a", "b", "c", "d"]
    turns.turn()
    assert done == list("abcde") and turns.calls == []


def test_starts_that_take_no_time_all_run_at_once_and_leave_no_call():
    """Without time passing nothing waits: no turn is scheduled at all."""
    turns = Turns()
    pacing = StartPacing(turns)
    done = []
    for name in "abc":
        pacing.run(done.append, name)
    assert done == ["a", "b", "c"] and turns.calls == []


def test_a_start_that_raises_does_not_stop_the_next():
    """A failing start is logged; the following one still runs."""
    turns = Turns()
    pacing = StartPacing(turns)
    done = []
    pacing.run(lambda: 1 / 0)
    pacing.run(done.append, "b")
    assert done == ["b"]
