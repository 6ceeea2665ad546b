"""A daemon's listening port reads each connection's request in the turn that accepts it."""

import socket

import pytest
from twisted.internet import protocol

from daemoncore.prompt_reactor import PromptEPollReactor
from daemoncore.wire.prompt_port import listen_tcp


class _Recording(protocol.Protocol):
    def dataReceived(self, data: bytes) -> None:  # noqa: N802 - Twisted's interface
        self.factory.received.append(data)
        self.transport.write(b"answer to " + data)


class _Factory(protocol.ServerFactory):
    protocol = _Recording

    def __init__(self) -> None:
        self.received: list[bytes] = []


@pytest.fixture
def reactor():
    made = PromptEPollReactor()  # not installed: the test turns it by hand
    yield made
    made._poller.close()


def _client(port) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port.getHost().port), timeout=5)
    client.sendall(b"request")
    return client


@pytest.mark.integration
def test_a_request_sent_with_the_connect_is_read_and_answered_in_the_accepting_turn(reactor):
    factory = _Factory()
    port = listen_tcp(reactor, 0, factory, 50, "127.0.0.1")
    client = _client(port)
    try:
        reactor.doIteration(2.0)  # one poll: the listener is ready, nothing else yet
        assert factory.received == [b"request"]
        assert client.recv(100) == b"answer to request"
    finally:
        client.close()
        port.stopListening()


@pytest.mark.integration
def test_a_client_that_has_sent_nothing_yet_is_read_when_it_does(reactor):
    factory = _Factory()
    port = listen_tcp(reactor, 0, factory, 50, "127.0.0.1")
    client = socket.create_connection(("127.0.0.1", port.getHost().port), timeout=5)
    try:
        reactor.doIteration(2.0)
        assert factory.received == []
        client.sendall(b"late")
        reactor.doIteration(2.0)
        assert factory.received == [b"late"]
    finally:
        client.close()
        port.stopListening()


@pytest.mark.integration
def test_reading_at_once_stops_after_its_budget_and_the_rest_are_read_by_the_next_poll(reactor, monkeypatch):
    """With no time to read at once, accepted connections wait for the next poll, as
    with Twisted's own port; nothing is lost."""
    import daemoncore.wire.prompt_port as prompt_port

    monkeypatch.setattr(prompt_port, "READ_AT_ONCE_SECONDS", 0.0)
    factory = _Factory()
    port = listen_tcp(reactor, 0, factory, 50, "127.0.0.1")
    clients = [_client(port) for _ in range(3)]
    try:
        reactor.doIteration(2.0)
        assert factory.received == []
        for _ in range(3):
            reactor.doIteration(0.5)
        assert factory.received == [b"request"] * 3
    finally:
        for client in clients:
            client.close()
        port.stopListening()
