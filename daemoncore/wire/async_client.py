"""An asynchronous client for daemons calling each other, on ``treq``: the same
routes as the blocking client, answers as Deferreds, errors as ``RemoteError`` or
``Unreachable``."""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urlencode

import treq
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectError, ConnectionClosed, TimeoutError
from twisted.web.client import ResponseFailed

from daemoncore.wire.address import Address, parse_address
from daemoncore.wire.errors import Unreachable, remote_error_from
from daemoncore.wire.ndjson import LineDecoder
from daemoncore.wire.route import Route

DEFAULT_TIMEOUT = 30.0
_NETWORK_ERRORS = (ConnectError, ConnectionClosed, TimeoutError, ResponseFailed)


class AsyncClient:
    """Calls one daemon's routes; ``http`` is ``treq`` or a stand-in such as ``StubTreq``."""

    def __init__(
        self, address: str | Address, token: str | None = None, http=treq, timeout: float | None = DEFAULT_TIMEOUT
    ) -> None:
        self.address = address if isinstance(address, Address) else parse_address(address)
        self._token = token
        self._http = http
        self._timeout = timeout

    def call(self, route: Route, body: object = None, query: dict | None = None, **params: str) -> Deferred:
        """Fire with the JSON answer of ``route``, or fail with ``RemoteError``/``Unreachable``."""
        return Deferred.fromCoroutine(self._call(route, body, query, params))

    def stream(
        self, route: Route, on_item: Callable[[object], None], body: object = None, query: dict | None = None,
        **params: str,
    ) -> Deferred:
        """Call ``on_item`` with each NDJSON object as it arrives; fire with the count."""
        return Deferred.fromCoroutine(self._stream(route, on_item, body, query, params))

    async def _call(self, route, body, query, params):
        response = await self._send(route, body, query, params)
        data = await self._guard(treq.content(response))
        if route.streams:
            decoder = LineDecoder()
            return decoder.feed(data) + decoder.finish()
        content_type = (response.headers.getRawHeaders(b"content-type") or [b""])[0]
        if b"json" not in content_type:
            return data
        return json.loads(data) if data else None

    async def _stream(self, route, on_item, body, query, params):
        response = await self._send(route, body, query, params)
        decoder = LineDecoder()
        count = 0

        def feed(chunk: bytes) -> None:
            nonlocal count
            for item in decoder.feed(chunk):
                on_item(item)
                count += 1

        await self._guard(treq.collect(response, feed))
        for item in decoder.finish():
            on_item(item)
            count += 1
        return count

    async def _send(self, route, body, query, params):
        url = self.address.url(route.path(**params))
        if query:
            url += "?" + urlencode(query, doseq=True)
        headers = {b"Accept": [b"application/json"]}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers[b"Content-Type"] = [b"application/json"]
        if self._token:
            headers[b"Authorization"] = [f"Bearer {self._token}".encode("latin-1")]
        extra = {"timeout": self._timeout} if self._timeout else {}
        response = await self._guard(self._http.request(route.method, url, headers=headers, data=data, **extra))
        if response.code >= 300:
            raw = await self._guard(treq.content(response))
            raise remote_error_from(response.code, raw, url)
        return response

    async def _guard(self, deferred: Deferred):
        try:
            return await deferred
        except _NETWORK_ERRORS as exc:
            raise Unreachable(f"no answer from {self.address}: {exc}") from None
