"""A daemon's own account of where its reactor was held.

A heartbeat on the reactor notes the time every few milliseconds; a watch thread
wakes as often and, while the heartbeat is late (the reactor is held), samples the
reactor thread's stack. When the heartbeat comes back after a stall of at least
``REACTOR_STALL_REPORT_MS``, the daemon logs how long it was held and the stacks it
was seen in most, so a stall is found where it happens rather than guessed from a
client's latency. Off (0) by default; the benchmarks turn it on.

A late heartbeat is not always a held reactor: the daemons' reactor
(daemoncore/prompt_reactor.py) runs due timed calls for a budget per turn, oldest
first, so in a burst the heartbeat may wait a few turns behind older calls while
sockets are served between them. On that reactor the watch also follows its turns
(:class:`TurnSampler`) and reports each turn whose own work took the threshold or
more ("reactor turn took"), with the stacks sampled in it: what held every request.
"""

from __future__ import annotations

import collections
import os
import sys
import threading
import time
from collections.abc import Callable

from twisted.application import service
from twisted.internet import task
from twisted.logger import Logger

#: Seconds between two heartbeats, and between two looks of the watch thread.
BEAT_SECONDS = 0.005
#: The heartbeat is late (the reactor held) when it is this many seconds old.
LATE_SECONDS = 0.02
#: Frames kept of each sampled stack (innermost last), and stacks shown per stall.
FRAMES_KEPT = 8
STACKS_SHOWN = 4

_log = Logger()


def stack_of(frame, depth: int = FRAMES_KEPT) -> tuple[str, ...]:
    """The innermost ``depth`` frames above ``frame`` as ``file:line function``, outermost first."""
    found = []
    while frame is not None and len(found) < depth:
        code = frame.f_code
        found.append(f"{os.path.basename(code.co_filename)}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return tuple(reversed(found))


def summary(held: float, stacks: list[tuple[str, ...]], shown: int = STACKS_SHOWN) -> str:
    """The report of one stall: how long the reactor was held and, most seen first,
    the stacks it was sampled in with how many samples each."""
    counts = collections.Counter(stacks)
    lines = [f"reactor held {held * 1000:.0f} ms; {len(stacks)} samples, most seen first:"]
    for stack, count in counts.most_common(shown):
        lines.append(f"  {count}x " + " > ".join(stack))
    return "\n".join(lines)


# Mutable: the latest heartbeat and the samples of the stall under way.
class StallSampler:
    """The watch's logic, without a thread or a reactor: ``beat(now)`` from the
    reactor, ``look(now, frame)`` from the watch; ``look`` returns a stall's report
    once the reactor is back after being held ``threshold`` seconds or more."""

    def __init__(self, threshold: float, now: float) -> None:
        self.threshold = threshold
        self._beat = now
        self._stacks: list[tuple[str, ...]] = []
        self._held = 0.0

    def beat(self, now: float) -> None:
        """The reactor ran its heartbeat at ``now``."""
        self._beat = now

    def look(self, now: float, frame) -> str | None:
        """One look of the watch at ``now``, ``frame`` being the reactor thread's."""
        late = now - self._beat
        if late > LATE_SECONDS:
            if frame is not None:
                self._stacks.append(stack_of(frame))
            self._held = late
            return None
        report = summary(self._held, self._stacks) if self._stacks and self._held >= self.threshold else None
        self._stacks, self._held = [], 0.0
        return report


# Mutable: the turn being watched and the samples taken in it.
class TurnSampler:
    """The turn watch's logic, without a thread or a reactor: ``look`` is given what
    the reactor shows of its turns (see ``PromptEPollReactor``) and returns a report
    once a turn whose work took ``threshold`` seconds or more has ended. Turn ``skip``
    is not reported: the one the watch starts in, whose work is the daemon's start
    (imports, first ads, the start-up collection) before it answers anyone."""

    def __init__(self, threshold: float, skip: int | None = None) -> None:
        self.threshold = threshold
        self._skip = skip
        self._turn: int | None = None
        self._stacks: list[tuple[str, ...]] = []
        self._busy = 0.0

    def look(self, now: float, turn: int, busy_since: float, polling: bool, long_turn: tuple[int, float],
             frame) -> str | None:
        """One look at ``now``: the reactor is in turn ``turn``, whose work began at
        ``busy_since``, waits in its poll or not; ``long_turn`` is its last long turn
        (number, seconds); ``frame`` the reactor thread's."""
        report = None
        if turn != self._turn:
            if self._stacks and self._turn != self._skip:
                number, busy = long_turn
                took = busy if number == self._turn else self._busy
                if took >= self.threshold:
                    report = summary(took, self._stacks).replace("reactor held", "reactor turn took", 1)
            self._turn, self._stacks, self._busy = turn, [], 0.0
        if not polling and now - busy_since > LATE_SECONDS:
            self._busy = now - busy_since
            if frame is not None:
                self._stacks.append(stack_of(frame))
        return report


class StallWatch(service.Service):
    """The heartbeat (on ``clock``, the reactor) and the watch thread, logging each
    stall of ``threshold`` seconds or more; ``now`` is a monotonic clock."""

    name = "stall-watch"

    def __init__(self, clock, threshold: float, now: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._now = now
        self._sampler = StallSampler(threshold, now())
        self._threshold = threshold
        self._turns: TurnSampler | None = None
        self._heartbeat = task.LoopingCall(lambda: self._sampler.beat(self._now()))
        self._heartbeat.clock = clock
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def startService(self) -> None:  # noqa: N802 - Twisted's name
        super().startService()
        self._heartbeat.start(BEAT_SECONDS, now=True)
        if hasattr(self._clock, "turn_number"):  # a reactor that shows its turns
            self._turns = TurnSampler(self._threshold, skip=self._clock.turn_number)
        reactor_thread = threading.get_ident()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._watch, args=(reactor_thread,), name="stall-watch", daemon=True)
        self._thread.start()

    def stopService(self) -> None:  # noqa: N802 - Twisted's name
        self._stopping.set()
        if self._heartbeat.running:
            self._heartbeat.stop()
        return super().stopService()

    def _watch(self, reactor_thread: int) -> None:
        while not self._stopping.wait(BEAT_SECONDS):
            frame = sys._current_frames().get(reactor_thread)
            reports = [self._sampler.look(self._now(), frame)]
            if self._turns is not None:
                reports.append(self._look_at_turn(frame))
            for report in reports:
                if report is not None:
                    self._clock.callFromThread(_log.warn, "{report}", report=report)

    def _look_at_turn(self, frame) -> str | None:
        """The turn watch's look (the turn's number is read first: the reactor notes a
        long turn before it counts the next)."""
        clock = self._clock
        turn = clock.turn_number
        return self._turns.look(time.perf_counter(), turn, clock.busy_since, clock.polling, clock.long_turn, frame)


def stall_watch_from_config(config, clock) -> StallWatch | None:
    """The watch ``REACTOR_STALL_REPORT_MS`` asks for (None when 0, the default)."""
    milliseconds = config.param_int("REACTOR_STALL_REPORT_MS", 0)
    return StallWatch(clock, milliseconds / 1000) if milliseconds and milliseconds > 0 else None


__all__ = ["StallSampler", "StallWatch", "TurnSampler", "stall_watch_from_config", "stack_of", "summary"]
