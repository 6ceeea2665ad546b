"""Exchanging raw HTTP bytes with a ``Site`` over an in-memory transport, so routes
can be tested byte for byte without opening a socket."""

from __future__ import annotations

import json

from attrs import frozen
from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock, Cooperator
from twisted.internet.testing import StringTransport
from twisted.web.server import Site

from daemoncore.wire.ndjson import decode_lines


@frozen
class RawResponse:
    """A parsed HTTP response: status, lower-cased headers and the decoded body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        """The body as JSON."""
        return json.loads(self.body)

    def lines(self) -> list[object]:
        """The body as NDJSON objects."""
        return list(decode_lines(iter([self.body])))


def clock_cooperator(clock: Clock) -> Cooperator:
    """A cooperator whose steps run when ``clock`` advances."""
    return Cooperator(scheduler=lambda step: clock.callLater(0, step))


def encode_request(
    method: str, path: str, body: bytes = b"", token: str | None = None, headers: dict[str, str] | None = None
) -> bytes:
    """The bytes of one HTTP/1.1 request with a ``Content-Length`` body."""
    lines = [f"{method} {path} HTTP/1.1", "Host: test", f"Content-Length: {len(body)}"]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    lines.extend(f"{name}: {value}" for name, value in (headers or {}).items())
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def exchange(site: Site, raw: bytes, clock: Clock, chunk_size: int = 4096) -> tuple[RawResponse, StringTransport]:
    """Feed ``raw`` to a fresh connection in chunks, run what is due on the clock
    (not later timeouts) and parse what came back."""
    protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
    transport = StringTransport()
    protocol.makeConnection(transport)
    for start in range(0, len(raw), chunk_size):
        if transport.disconnecting:
            break
        protocol.dataReceived(raw[start:start + chunk_size])
    while any(call.getTime() <= clock.seconds() for call in clock.getDelayedCalls()):
        clock.advance(0)
    response = parse_response(transport.value())
    protocol.connectionLost(None)
    return response, transport


def parse_response(data: bytes) -> RawResponse:
    """Parse the first HTTP response in ``data``, undoing chunked encoding.

    Raises:
        ValueError: ``data`` holds no complete response head.
    """
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError(f"no complete HTTP response in {data[:200]!r}")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _dechunk(rest)
    elif "content-length" in headers:
        body = rest[: int(headers["content-length"])]
    else:
        body = rest
    return RawResponse(int(status_line.split()[1]), headers, body)


def _dechunk(data: bytes) -> bytes:
    out = []
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out.append(data[:size])
        data = data[size + 2:]
    return b"".join(out)
