"""Launches spread over reactor turns: one per turn, in order, a lone one at once."""

from twisted.internet.defer import succeed

from startd.launches import LaunchQueue


class Turns:
    """A reactor's timed calls as turns: calls made during a turn wait for the next one,
    as Twisted's reactor runs them (task.Clock would run them in the same advance)."""

    def __init__(self):
        self.calls = []

    def callLater(self, delay, function, *args):  # noqa: N802 - IReactorTime's name
        assert delay == 0
        self.calls.append((function, args))
        return self.calls[-1]

    def turn(self):
        due, self.calls = self.calls, []
        for function, args in due:
            function(*args)


def test_a_lone_launch_starts_at_once_and_leaves_no_call_behind():
    """With nothing before it in its turn a launch starts now; its turn ends with the next one."""
    turns = Turns()
    queue = LaunchQueue(turns)
    started = []
    fired = queue.launch(lambda: succeed(started.append("a") or "ended a"))
    assert started == ["a"] and fired.result == "ended a"
    turns.turn()
    assert turns.calls == []


def test_a_burst_starts_one_launch_per_turn_in_arrival_order():
    """Three launches in one turn: the first now, the others one per later turn, each firing with its own result."""
    turns = Turns()
    queue = LaunchQueue(turns)
    started, results = [], []
    for name in "abc":
        queue.launch(lambda name=name: succeed(started.append(name) or name)).addCallback(results.append)
    assert (started, len(queue)) == (["a"], 2)
    turns.turn()
    assert started == ["a", "b"]
    turns.turn()
    assert started == results == ["a", "b", "c"]
    turns.turn()
    assert turns.calls == [] and len(queue) == 0


def test_a_launch_that_raises_fails_its_own_deferred_only():
    """A start that raises fails its Deferred; the next launch still starts."""
    turns = Turns()
    queue = LaunchQueue(turns)
    failed, started = [], []
    queue.launch(lambda: succeed(None))
    queue.launch(lambda: 1 / 0).addErrback(lambda failure: failed.append(failure.type))
    queue.launch(lambda: succeed(started.append("c")))
    turns.turn()
    turns.turn()
    assert failed == [ZeroDivisionError] and started == ["c"]
