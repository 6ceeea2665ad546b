"""Tests for daemoncore.wire.sharing: slow stream steps leave the reactor idle as long again."""

from twisted.internet.task import Clock

from daemoncore.wire.sharing import MAX_PAUSE_SECONDS, SLOW_TURN_SECONDS, pause_after, sharing_cooperator


def test_quick_turns_get_no_pause_and_slow_ones_as_long_again():
    """Below the slow-turn bound nothing waits; above it the pause equals the turn, capped."""
    assert pause_after(SLOW_TURN_SECONDS) == 0.0
    assert pause_after(0.05) == 0.05
    assert pause_after(30) == MAX_PAUSE_SECONDS


def test_a_step_that_takes_50_ms_leaves_the_reactor_50_ms_before_the_next():
    """After a 50 ms step the streams wait 50 ms; quick steps then run in one turn."""
    clock = Clock()
    steps = []

    def work():
        for duration in (0.05, 0.0, 0.0):
            steps.append(round(clock.seconds(), 3))
            clock.rightNow += duration  # the step "takes" this long on the clock
            yield None

    done = sharing_cooperator(clock).coiterate(work())
    clock.advance(0)
    assert steps == [0.0]
    clock.advance(0.049)
    assert steps == [0.0]
    clock.advance(0.001)
    assert steps == [0.0, 0.1, 0.1]
    clock.advance(0)
    assert done.called
