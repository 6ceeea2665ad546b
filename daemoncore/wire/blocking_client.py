"""A blocking client for the bindings and the command line: one call per route,
JSON answers decoded, NDJSON answers streamed lazily, errors raised as
``RemoteError`` or ``Unreachable``.

A TLS address (``<host:port?tls=1>`` or ``https://``) is reached over HTTPS, checking
the daemon's certificate against the pool CA (the ``trust`` given, else the one the
configuration names) and its host name; a refusal is an ``Unreachable`` that says why.

A client keeps its connection open between calls (HTTP/1.1 keep-alive), so a script
that submits or queries in a loop pays for one TCP (and TLS) handshake, not one per
call. A kept connection is dropped when the daemon has closed it, when it has been
idle for ``KEEP_IDLE_SECONDS`` (well under the daemons' own idle timeout), or in a
forked child; a second caller meanwhile (another thread, or a call made while a
stream is still being read) simply opens a connection of its own."""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from daemoncore.wire.address import Address, parse_address
from daemoncore.wire.errors import Unreachable, remote_error_from
from daemoncore.wire.ndjson import decode_lines
from daemoncore.wire.route import Route

if TYPE_CHECKING:  # the TLS client code (and the Twisted it needs) loads only for a TLS address
    from daemoncore.security.tls_client import PoolTrust

DEFAULT_TIMEOUT = 30.0
READ_CHUNK_BYTES = 64 * 1024
#: A kept connection idle longer than this is closed rather than reused: the daemons
#: close theirs after 60 s idle, and a request must never race that close.
KEEP_IDLE_SECONDS = 20.0
#: Errors that mean a reused connection had been closed by the daemon before it read the request.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
#: Requests safe to send again when a reused connection turns out to be closed.
_IDEMPOTENT = frozenset({"GET", "HEAD"})


class BlockingClient:
    """Calls one daemon's routes over plain ``http.client``."""

    def __init__(self, address: str | Address, token: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 trust: PoolTrust | None = None) -> None:
        self.address = address if isinstance(address, Address) else parse_address(address)
        self._timeout = timeout
        self._trust = trust
        #: built once: every request of this client sends the same header
        self._authorization = f"Bearer {token}" if token else None
        #: the connection kept for the next call and when it went idle; the lock keeps
        #: two threads from taking it at once
        self._kept: tuple[http.client.HTTPConnection, float] | None = None
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def close(self) -> None:
        """Close the kept connection (the next call opens a new one)."""
        with self._lock:
            kept, self._kept = self._kept, None
        if kept is not None:
            kept[0].close()

    def __del__(self) -> None:
        # a client dropped without close() (one made per call, as the web pages do)
        # closes its kept socket now rather than leaving it to the socket's finalizer
        kept = getattr(self, "_kept", None)
        if kept is not None:
            kept[0].close()

    def __enter__(self) -> BlockingClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _connection(self) -> http.client.HTTPConnection:
        """A connection to the daemon: HTTPS checked against the pool CA for a TLS address.

        Raises:
            Unreachable: a TLS address and no pool CA to check it with.
        """
        host, port = self.address.host, self.address.port
        if not self.address.tls:
            return http.client.HTTPConnection(host, port, timeout=self._timeout)
        from daemoncore.security.tls_client import NO_POOL_CA, client_trust

        trust = self._trust or client_trust()
        if trust is None:
            raise Unreachable(NO_POOL_CA.format(address=self.address))
        self._trust = trust
        return http.client.HTTPSConnection(host, port, timeout=self._timeout, context=trust.ssl_context())

    def call(self, route: Route, body: object = None, query: dict | None = None, **params: str) -> object:
        """The JSON answer of ``route``.

        Raises:
            RemoteError: the daemon answered with an error.
            Unreachable: no daemon answered.
        """
        connection, response = self._open(route, body, query, params)
        try:
            data = self._read_all(response)
        except BaseException:
            connection.close()
            raise
        self._release(connection, response)
        if route.streams:
            return list(decode_lines(iter([data])))
        content_type = response.getheader("content-type", "")
        if "json" not in content_type:
            return data
        return json.loads(data) if data else None

    def stream(self, route: Route, body: object = None, query: dict | None = None, **params: str) -> Iterator[object]:
        """The NDJSON answer of ``route``, one object at a time as it arrives; the
        connection is kept for the next call only when the answer was read to its end.

        Raises:
            RemoteError: the daemon answered with an error.
            Unreachable: no daemon answered, or the stream broke off.
        """
        connection, response = self._open(route, body, query, params)
        finished = False
        try:
            yield from decode_lines(self._chunks(response))
            self._read_all(response)  # marks an answer of known length as read to its end
            finished = True
        finally:
            if finished:
                self._release(connection, response)
            else:
                connection.close()

    def _request_parts(self, route: Route, body, query, params) -> tuple[str, bytes | None, dict[str, str]]:
        """The path, body bytes and headers of one request."""
        path = route.path(**params)
        if query:
            path += "?" + urlencode(query, doseq=True)
        headers = {"Accept": "application/json"}
        payload = None
        if isinstance(body, bytes):  # a tar stream, such as -spool's input files
            payload = body
            headers["Content-Type"] = "application/octet-stream"
        elif body is not None:
            payload = json.dumps(body, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self._authorization:
            headers["Authorization"] = self._authorization
        return path, payload, headers

    def _open(self, route: Route, body, query, params):
        """Send the request and read the answer's head: the connection and a response
        whose status is below 300, its body not read yet.

        Raises:
            RemoteError: the daemon answered with an error.
            Unreachable: no daemon answered.
        """
        path, payload, headers = self._request_parts(route, body, query, params)
        connection, reused = self._take()
        response = self._exchange(connection, route.method, path, payload, headers, retry_stale=reused)
        if response is None:  # the kept connection had been closed by the daemon: a fresh one, once
            connection = self._connection()
            response = self._exchange(connection, route.method, path, payload, headers, retry_stale=False)
        if response.status >= 300:
            try:
                error = remote_error_from(response.status, self._read_all(response), self.address.url(path),
                                          response.reason)
            except BaseException:
                connection.close()
                raise
            self._release(connection, response)
            raise error
        return connection, response

    def _exchange(self, connection: http.client.HTTPConnection, method: str, path: str, payload: bytes | None,
                  headers: dict[str, str], retry_stale: bool) -> http.client.HTTPResponse | None:
        """Send one request on ``connection`` and read its status and headers; None
        (with ``retry_stale``) when the connection turned out closed before the daemon
        could have acted on the request, so that sending it again is safe.

        Raises:
            Unreachable: no daemon answered, or TLS refused.
        """
        sent = False
        try:
            connection.request(method, path, body=payload, headers=headers)
            sent = True
            return connection.getresponse()
        except _STALE as exc:
            connection.close()
            if retry_stale and (not sent or method in _IDEMPOTENT):
                return None
            raise self._unreachable(exc) from None
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise self._unreachable(exc) from None

    def _unreachable(self, exc: BaseException) -> Unreachable:
        """The error for a request that got no answer: TLS refusal explained, or why the connection failed."""
        if isinstance(exc, ssl.SSLError):
            from daemoncore.security.tls_client import blocking_refusal

            reason = blocking_refusal(exc, self._trust, self.address.host, self.address.port, self._timeout)
            return Unreachable(f"refused {self.address.url()}: {reason}")
        return Unreachable(f"no daemon answers at {self.address}: {_reason(exc)}")

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        """The kept connection when it is still usable (and True), else a new one (and False).

        Raises:
            Unreachable: a TLS address and no pool CA to check it with.
        """
        with self._lock:
            kept, self._kept = self._kept, None
        if kept is not None:
            connection, idle_since = kept
            if (os.getpid() == self._pid and time.monotonic() - idle_since < KEEP_IDLE_SECONDS
                    and not _closed_by_peer(connection)):
                return connection, True
            connection.close()
        return self._connection(), False

    def _release(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        """Keep ``connection`` for the next call when its answer was read whole and the
        daemon keeps it open; close it otherwise (or when one is already kept)."""
        if response.will_close or not response.isclosed() or connection.sock is None or os.getpid() != self._pid:
            connection.close()
            return
        with self._lock:
            if self._kept is None:
                self._kept = (connection, time.monotonic())
                return
        connection.close()

    def _read_all(self, response) -> bytes:
        try:
            return response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise Unreachable(f"answer from {self.address} broke off: {_reason(exc)}") from None

    def _chunks(self, response) -> Iterator[bytes]:
        while True:
            try:
                chunk = response.read1(READ_CHUNK_BYTES)
            except (OSError, http.client.HTTPException) as exc:
                raise Unreachable(f"answer from {self.address} broke off: {_reason(exc)}") from None
            if not chunk:
                return
            yield chunk


def _closed_by_peer(connection: http.client.HTTPConnection) -> bool:
    """Whether an idle kept connection can no longer be used: it has no socket, or its
    socket is readable, which between answers means the daemon closed it (or sent
    something unasked)."""
    sock = connection.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    return str(exc) or type(exc).__name__
