"""A listening TCP port that reads each connection it accepts at once.

A client sends its request as soon as it has connected, so by the time a daemon's
reactor accepts the connection the request is usually there already. Twisted's port
only starts watching the new socket, and its request is read a poll later, after
every timed call due meanwhile: while a daemon works through a long job in slices
(the collector storing an update of 16,000 ads, a slice of 15-20 ms per turn), each
new connection waited one whole turn more than it needed, and a one-ad query took
two turns, 40-80 ms. Here the port reads what each accepted connection holds in the
same turn, for at most :data:`READ_AT_ONCE_SECONDS` per batch of accepts (a burst of
hundreds of connections must not make one long turn); the rest are read by the next
poll as before."""

from __future__ import annotations

import select
import time
from collections.abc import Callable

from twisted.internet import tcp
from twisted.python import log

#: How long one batch of accepts may spend reading the new connections at once.
READ_AT_ONCE_SECONDS = 0.005


class _NotedServer(tcp.Server):
    """A server-side connection that tells its port it was made."""

    def __init__(self, sock, protocol, client, server, sessionno, reactor) -> None:
        super().__init__(sock, protocol, client, server, sessionno, reactor)
        server.accepted.append(self)


class PromptPort(tcp.Port):
    """A ``tcp.Port`` that reads its newly accepted connections in the turn that
    accepted them (see the module's docstring); ``timer`` measures the budget."""

    transport = _NotedServer

    def __init__(self, *args, timer: Callable[[], float] = time.perf_counter, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.accepted: list[tcp.Server] = []
        self._timer = timer

    def doRead(self) -> None:  # noqa: N802 - Twisted's interface
        self.accepted = []
        super().doRead()
        accepted, self.accepted = self.accepted, []
        read_once = self.reactor._doReadOrWrite
        deadline = self._timer() + READ_AT_ONCE_SECONDS
        for connection in accepted:
            if self._timer() >= deadline:
                return
            if connection.connected and not connection.disconnecting:
                # The reactor's own handling of a read event: a connection the peer
                # closed, or whose read failed, is disconnected as after a poll.
                log.callWithLogger(connection, read_once, connection, connection.fileno(), select.EPOLLIN)


def listen_tcp(reactor, port: int, factory, backlog: int, interface: str):
    """As ``reactor.listenTCP``, with a :class:`PromptPort` on a reactor that polls its
    sockets (as the daemons' do); another one (a test's memory reactor) listens its way."""
    if not hasattr(reactor, "_doReadOrWrite"):
        return reactor.listenTCP(port, factory, backlog=backlog, interface=interface)
    listening = PromptPort(port, factory, backlog, interface, reactor)
    listening.startListening()
    return listening
