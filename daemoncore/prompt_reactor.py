"""The daemons' reactor: Twisted's epoll reactor, except that what a handler writes
leaves before the next ready socket is handled.

Twisted's reactor sends written data only when the socket is next reported
writable, that is after every other socket that was ready in the same poll has been
handled. A schedd handling two jobs' exit reports in one poll sent the first job's
next ACTIVATE only after it had handled the second report too, and the startd sat
idle meanwhile: with short jobs, a few milliseconds of every slot's cycle. Here,
after each read, the sockets with data waiting are written to at once (a socket
that cannot take it keeps it for the usual later write).

It also ends a reactor turn once its handlers have run for :data:`TURN_SECONDS`:
the sockets of the poll not handled yet are still ready (epoll is level-triggered
here), so the next poll reports them again, after the timers due meanwhile, and they
are handled first then (:func:`waiting_first`): epoll reports its ready sockets in the
same order poll after poll, so a few that stayed ready (busy connections, the job
launcher's) took every turn's budget while the others (the listener, a ping) waited
until those quieted, 0.5-1.4 s in a burst of 500 job starts. When
500 slots' claims or releases were answered at once, one turn handled all 500 and
held the reactor for 150-200 ms. Timed calls have the same budget: once the calls
due in one turn have run that long, the rest are taken out of the timer heap and put
back at the start of the next turn, after a poll, ahead of the calls made since
(which are due later).

And it takes CPython's full garbage collections out of busy turns
(:meth:`PromptEPollReactor.collect_when_idle`). A full collection scans every tracked
object made since start-up: a startd running 500 jobs holds about 100,000 of them, and
each collection held its reactor 40-165 ms, three or four times during the burst of
their starts. The young generations are still collected as CPython does; the full
collection waits until no socket has been ready for :data:`IDLE_SECONDS`, or runs at
a turn's start once :data:`FULL_COLLECTION_FORCED` young collections have passed
(cyclic garbage of a daemon that is never idle is still freed)."""

from __future__ import annotations

import errno
import gc
import heapq
import select
import sys
import time

from twisted.internet.epollreactor import EPollReactor
from twisted.internet.main import installReactor
from twisted.python import log

#: How long the handlers of one poll's ready sockets may run before the turn ends.
TURN_SECONDS = 0.02
#: Collections of the middle generation after which a full collection is due (CPython's own threshold).
FULL_COLLECTION_DUE = 10
#: ... after which it runs even though the reactor has not been idle.
FULL_COLLECTION_FORCED = 200
#: How long no socket must have been ready for the reactor to count as idle.
IDLE_SECONDS = 0.5
#: A turn this long or longer is noted in ``long_turn`` (for the stall watch).
LONG_TURN_SECONDS = 0.02
#: A third threshold CPython never reaches: its automatic full collections are off.
NO_AUTOMATIC_FULL_COLLECTION = 1 << 30
#: Seconds after which a stretch of turns weighs half as much in the reactor's ``load``.
LOAD_HALF_LIFE = 0.25


def decayed_load(load: float, busy: float, elapsed: float, half_life: float = LOAD_HALF_LIFE) -> float:
    """The reactor's load (the share of the recent past its turns spent working, 0 to 1,
    older time weighing less by ``half_life``) after ``elapsed`` more seconds, ``busy`` of
    them work: what a daemon asks to choose between doing a piece of blocking work at once
    and handing it to a worker thread (a hop that only pays while others wait)."""
    if elapsed <= 0:
        return load
    kept = 0.5 ** (elapsed / half_life)
    return load * kept + min(busy / elapsed, 1.0) * (1 - kept)


def waiting_first(ready: list[tuple[int, int]], left: list[int]) -> list[tuple[int, int]]:
    """``ready`` (a poll's (fd, events)) with the fds of ``left`` (those the last turn's
    budget left out, in their order) first, then the others in the poll's order."""
    events = dict(ready)
    first = [(fd, events.pop(fd)) for fd in left if fd in events]
    return first + [(fd, event) for fd, event in ready if fd in events]


def full_collection_due(middle_collections: int, idle: bool) -> bool:
    """Whether a full collection runs now, ``middle_collections`` collections of the
    middle generation after the last full one, the reactor being ``idle`` or not."""
    return middle_collections >= (FULL_COLLECTION_DUE if idle else FULL_COLLECTION_FORCED)


class PromptEPollReactor(EPollReactor):
    """An epoll reactor that flushes pending writes after every read event, and
    handles one poll's ready sockets for at most ``turn_seconds`` per turn."""

    turn_seconds = TURN_SECONDS

    def __init__(self) -> None:
        super().__init__()
        self._timers_deadline = float("inf")
        self._put_off: list = []  # due calls taken out of the heap until the next turn
        self._left: list[int] = []  # ready sockets the last turn's budget left out
        self._collects = False  # whether full collections are this reactor's to run
        self._last_ready = time.perf_counter()  # when a poll last found a socket ready
        #: For the stall watch's thread (daemoncore/stall_watch.py), by ``time.perf_counter``:
        #: the turn under way (counted as each begins), when its work began (its poll's
        #: wait left out), whether it waits in its poll, and the last turn whose work took
        #: LONG_TURN_SECONDS or more, as (its number, its seconds).
        self.turn_number = 0
        self.busy_since = time.perf_counter()
        self.polling = False
        self.long_turn = (0, 0.0)
        #: The share of the recent past the turns spent working (:func:`decayed_load`).
        self.load = 0.0
        self._turn_began = self.busy_since

    def collect_when_idle(self) -> None:
        """Turn CPython's automatic full collections off (for the whole process) and run
        them here: when idle, or forced (see the module's docstring)."""
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, NO_AUTOMATIC_FULL_COLLECTION)
        self._collects = True

    def _collect_if_due(self, idle: bool) -> None:
        if self._collects and full_collection_due(gc.get_count()[2], idle):
            gc.collect()

    def callLater(self, delay, callable, *args, **kw):  # noqa: N802 - Twisted's name
        return super().callLater(delay, self._timed, callable, args, kw)

    def runUntilCurrent(self) -> None:  # noqa: N802 - Twisted's name
        self._next_turn()
        self._collect_if_due(idle=False)
        for call in self._put_off:  # as due as before, and before the calls made since
            heapq.heappush(self._pendingTimedCalls, call)
        self._put_off = []
        self._timers_deadline = time.perf_counter() + self.turn_seconds
        try:
            super().runUntilCurrent()
        finally:
            self._timers_deadline = float("inf")

    def _next_turn(self) -> None:
        """Count a new turn, noting the one that ends if it was long (before the count
        moves on: the watch reads the count first)."""
        now = time.perf_counter()
        busy = now - self.busy_since
        if busy >= LONG_TURN_SECONDS:
            self.long_turn = (self.turn_number, busy)
        self.load = decayed_load(self.load, busy, now - self._turn_began)
        self.turn_number += 1
        self.busy_since = self._turn_began = now

    def _timed(self, callable, args: tuple, kw: dict):
        try:
            return callable(*args, **kw)
        finally:
            if time.perf_counter() >= self._timers_deadline:
                self._put_off_due_calls()

    def _put_off_due_calls(self) -> None:
        """Take the calls due now out of the heap, so this turn's loop over due calls
        ends; :meth:`runUntilCurrent` puts them back first thing next turn (a call
        cancelled meanwhile goes back too: Twisted's loop skips it and counts it)."""
        heap, now = self._pendingTimedCalls, self.seconds()
        while heap and heap[0].time <= now:
            self._put_off.append(heapq.heappop(heap))
        self._timers_deadline = float("inf")

    def doPoll(self, timeout) -> None:  # noqa: N802 - Twisted's name
        waiting = time.perf_counter()
        self.polling = True
        try:
            ready = self._poller.poll(-1 if timeout is None else timeout, len(self._selectables))
        except OSError as err:
            if err.errno == errno.EINTR:
                return
            raise
        finally:
            self.busy_since += time.perf_counter() - waiting
            self.polling = False
        now = time.perf_counter()
        if ready:
            self._last_ready = now
        elif now - self._last_ready >= IDLE_SECONDS:
            self._collect_if_due(idle=True)
        if self._left:
            ready = waiting_first(ready, self._left)
        self._left = []
        deadline = time.perf_counter() + self.turn_seconds
        for index, (fd, event) in enumerate(ready):
            selectable = self._selectables.get(fd)
            if selectable is not None:
                log.callWithLogger(selectable, self._doReadOrWrite, selectable, fd, event)
            if time.perf_counter() >= deadline:  # the rest are reported again by the next poll
                self._left = [fd for fd, _ in ready[index + 1:]]
                return

    doIteration = doPoll

    def _doReadOrWrite(self, selectable, fd, event) -> None:  # noqa: N802 - Twisted's name
        super()._doReadOrWrite(selectable, fd, event)
        if event & select.EPOLLIN and self._writes:
            self._flush_writes()

    def _flush_writes(self) -> None:
        """Write what each connected writing socket holds, as a write event for it would.
        A socket still connecting waits for its real event: its "write" is the connect's
        completion, and a burst of hundreds of claims had each read re-check every one."""
        handle = super()._doReadOrWrite
        for fd in list(self._writes):
            writer = self._selectables.get(fd)
            if writer is not None and getattr(writer, "connected", False):
                log.callWithLogger(writer, handle, writer, fd, select.EPOLLOUT)


def install_prompt_reactor() -> bool:
    """Make :class:`PromptEPollReactor` this process's reactor, running the full garbage
    collections (:meth:`~PromptEPollReactor.collect_when_idle`); False (nothing changed)
    when a reactor was installed already or epoll is missing."""
    if "twisted.internet.reactor" in sys.modules or not hasattr(select, "epoll"):
        return False
    reactor = PromptEPollReactor()
    reactor.collect_when_idle()
    installReactor(reactor)
    return True


__all__ = ["PromptEPollReactor", "decayed_load", "full_collection_due", "install_prompt_reactor", "waiting_first"]
