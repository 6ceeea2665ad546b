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
here), so the next poll reports them again, after the timers due meanwhile. When
500 slots' claims or releases were answered at once, one turn handled all 500 and
held the reactor for 150-200 ms. Timed calls have the same budget: once the calls
due in one turn have run that long, the rest are taken out of the timer heap and put
back at the start of the next turn, after a poll, ahead of the calls made since
(which are due later)."""

from __future__ import annotations

import errno
import heapq
import select
import sys
import time

from twisted.internet.epollreactor import EPollReactor
from twisted.internet.main import installReactor
from twisted.python import log

#: How long the handlers of one poll's ready sockets may run before the turn ends.
TURN_SECONDS = 0.02


class PromptEPollReactor(EPollReactor):
    """An epoll reactor that flushes pending writes after every read event, and
    handles one poll's ready sockets for at most ``turn_seconds`` per turn."""

    turn_seconds = TURN_SECONDS

    def __init__(self) -> None:
        super().__init__()
        self._timers_deadline = float("inf")
        self._put_off: list = []  # due calls taken out of the heap until the next turn

    def callLater(self, delay, callable, *args, **kw):  # noqa: N802 - Twisted's name
        return super().callLater(delay, self._timed, callable, args, kw)

    def runUntilCurrent(self) -> None:  # noqa: N802 - Twisted's name
        for call in self._put_off:  # as due as before, and before the calls made since
            heapq.heappush(self._pendingTimedCalls, call)
        self._put_off = []
        self._timers_deadline = time.perf_counter() + self.turn_seconds
        try:
            super().runUntilCurrent()
        finally:
            self._timers_deadline = float("inf")

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
        try:
            ready = self._poller.poll(-1 if timeout is None else timeout, len(self._selectables))
        except OSError as err:
            if err.errno == errno.EINTR:
                return
            raise
        deadline = time.perf_counter() + self.turn_seconds
        for fd, event in ready:
            selectable = self._selectables.get(fd)
            if selectable is not None:
                log.callWithLogger(selectable, self._doReadOrWrite, selectable, fd, event)
            if time.perf_counter() >= deadline:
                return  # the rest are reported again by the next poll

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
    """Make :class:`PromptEPollReactor` this process's reactor; False (nothing changed)
    when a reactor was installed already or epoll is missing."""
    if "twisted.internet.reactor" in sys.modules or not hasattr(select, "epoll"):
        return False
    installReactor(PromptEPollReactor())
    return True


__all__ = ["PromptEPollReactor", "install_prompt_reactor"]
