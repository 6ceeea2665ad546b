"""A blocking client for the bindings and the command line: one call per route,
JSON answers decoded, NDJSON answers streamed lazily, errors raised as
``RemoteError`` or ``Unreachable``.

A TLS address (``<host:port?tls=1>`` or ``https://``) is reached over HTTPS, checking
the daemon's certificate against the pool CA (the ``trust`` given, else the one the
configuration names) and its host name; a refusal is an ``Unreachable`` that says why."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from collections.abc import Iterator
from urllib.parse import urlencode

from daemoncore.security.tls_client import NO_POOL_CA, PoolTrust, blocking_refusal, client_trust
from daemoncore.wire.address import Address, parse_address
from daemoncore.wire.errors import Unreachable, remote_error_from
from daemoncore.wire.ndjson import decode_lines
from daemoncore.wire.route import Route

DEFAULT_TIMEOUT = 30.0
READ_CHUNK_BYTES = 64 * 1024


class BlockingClient:
    """Calls one daemon's routes over plain ``http.client``."""

    def __init__(self, address: str | Address, token: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 trust: PoolTrust | None = None) -> None:
        self.address = address if isinstance(address, Address) else parse_address(address)
        self._token = token
        self._timeout = timeout
        self._trust = trust

    def _connection(self) -> http.client.HTTPConnection:
        """A connection to the daemon: HTTPS checked against the pool CA for a TLS address.

        Raises:
            Unreachable: a TLS address and no pool CA to check it with.
        """
        host, port = self.address.host, self.address.port
        if not self.address.tls:
            return http.client.HTTPConnection(host, port, timeout=self._timeout)
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
        finally:
            connection.close()
        if route.streams:
            return list(decode_lines(iter([data])))
        content_type = response.getheader("content-type", "")
        if "json" not in content_type:
            return data
        return json.loads(data) if data else None

    def stream(self, route: Route, body: object = None, query: dict | None = None, **params: str) -> Iterator[object]:
        """The NDJSON answer of ``route``, one object at a time as it arrives.

        Raises:
            RemoteError: the daemon answered with an error.
            Unreachable: no daemon answered, or the stream broke off.
        """
        connection, response = self._open(route, body, query, params)
        try:
            yield from decode_lines(self._chunks(response))
        finally:
            connection.close()

    def _open(self, route: Route, body, query, params):
        path = route.path(**params)
        if query:
            path += "?" + urlencode(query, doseq=True)
        headers = {"Accept": "application/json"}
        payload = None
        if isinstance(body, bytes):  # a tar stream, such as -spool's input files
            payload = body
            headers["Content-Type"] = "application/octet-stream"
        elif body is not None:
            payload = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        connection = self._connection()
        try:
            connection.request(route.method, path, body=payload, headers=headers)
            response = connection.getresponse()
        except ssl.SSLError as exc:
            connection.close()
            reason = blocking_refusal(exc, self._trust, self.address.host, self.address.port, self._timeout)
            raise Unreachable(f"refused {self.address.url()}: {reason}") from None
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise Unreachable(f"no daemon answers at {self.address}: {_reason(exc)}") from None
        if response.status >= 300:
            try:
                raise remote_error_from(response.status, self._read_all(response), self.address.url(path), response.reason)
            finally:
                connection.close()
        return connection, response

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


def _reason(exc: BaseException) -> str:
    if isinstance(exc, socket.timeout):
        return "timed out"
    return str(exc) or type(exc).__name__
