"""daemoncore.worker_threads: blocking work handed to threads, and some of it one call at a time."""

from twisted.internet.defer import Deferred

from daemoncore.worker_threads import OneAtATime


def test_one_at_a_time_starts_each_call_when_the_one_before_has_ended_in_order():
    started, running = [], []

    def run_blocking(function, *args):
        started.append(function(*args))
        running.append(Deferred())
        return running[-1]
    calls = OneAtATime(run_blocking)
    results = []
    for name in ("a", "b", "c"):
        calls(str.upper, name).addCallbacks(results.append, lambda failure: results.append(failure.getErrorMessage()))
    assert started == ["A"]
    running[0].callback("first")
    assert started == ["A", "B"] and results == ["first"]
    running[1].errback(OSError("gone"))  # a failed call frees the turn too
    assert started == ["A", "B", "C"]
    running[2].callback("third")
    assert results == ["first", "gone", "third"]


def test_one_at_a_time_hands_a_failure_to_its_caller():
    failures = []

    def run_blocking(function, *args):
        failing = Deferred()
        failing.errback(OSError("no such sandbox"))
        return failing
    OneAtATime(run_blocking)(print).addErrback(lambda failure: failures.append(failure.getErrorMessage()))
    assert failures == ["no such sandbox"]
