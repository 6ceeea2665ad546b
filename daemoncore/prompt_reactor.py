"""The daemons' reactor: Twisted's epoll reactor, except that what a handler writes
leaves before the next ready socket is handled.

Twisted's reactor sends written data only when the socket is next reported
writable, that is after every other socket that was ready in the same poll has been
handled. A schedd handling two jobs' exit reports in one poll sent the first job's
next ACTIVATE only after it had handled the second report too, and the startd sat
idle meanwhile: with short jobs, a few milliseconds of every slot's cycle. Here,
after each read, the sockets with data waiting are written to at once (a socket
that cannot take it keeps it for the usual later write)."""

from __future__ import annotations

import select
import sys

from twisted.internet.epollreactor import EPollReactor
from twisted.internet.main import installReactor
from twisted.python import log


class PromptEPollReactor(EPollReactor):
    """An epoll reactor that flushes pending writes after every read event."""

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
