"""An asynchronous client for daemons calling each other: the same routes as the
blocking client, answers as Deferreds, errors as ``RemoteError`` or ``Unreachable``.

Requests go through :data:`DIRECT_HTTP`, a thin layer over Twisted's ``Agent`` with
one persistent connection pool; it takes ``treq.request``'s arguments, so ``treq``
or a stand-in such as ``StubTreq`` can be given instead. (``treq.request`` builds a
client, a cookie jar, redirect and gzip wrappers and a parsed URL per call, and
sends even a small body through a cooperator: a good part of a daemon's time per
request when jobs are short.)

An ``https`` address (``<host:port?tls=1>``) is reached over TLS: the daemon's
certificate must be signed by the pool CA (``PoolTrust``; by default the process's
own, see :func:`daemoncore.security.tls_client.client_trust`) and name the host
connected to. Connections stay open in the pool, so a handshake is paid once per
connection, not per request. A refused peer fails the call with ``Unreachable``
saying why."""

from __future__ import annotations

import json
from collections.abc import Callable
from urllib.parse import urlencode

import treq
from OpenSSL import SSL
from twisted.internet.defer import Deferred, succeed
from twisted.internet.error import ConnectError, ConnectionClosed, TimeoutError
from twisted.web.client import Agent, HTTPConnectionPool, ResponseFailed, _HTTP11ClientFactory
from twisted.web.http_headers import Headers
from twisted.web.iweb import IBodyProducer
from zope.interface import implementer

from daemoncore.security.tls_client import (
    TLS_TO_PLAIN_PORT,
    PoolTlsPolicy,
    PoolTrust,
    answered_in_plain_text,
    client_trust,
)
from daemoncore.security.tls_errors import PeerRefused
from daemoncore.wire.address import Address, parse_address
from daemoncore.wire.errors import Unreachable, remote_error_from
from daemoncore.wire.ndjson import LineDecoder
from daemoncore.wire.route import Route

DEFAULT_TIMEOUT = 30.0
_NETWORK_ERRORS = (ConnectError, ConnectionClosed, TimeoutError, ResponseFailed)


#: Persistent connections kept per daemon: a schedd has several requests in flight
#: to one startd (and each startd to its schedd) when short jobs run back to back.
PERSISTENT_PER_HOST = 8


@implementer(IBodyProducer)
class BytesProducer:
    """A request body already in memory, written in one go."""

    def __init__(self, body: bytes) -> None:
        self._body = body
        self.length = len(body)

    def startProducing(self, consumer) -> Deferred:  # noqa: N802 - Twisted's interface
        consumer.write(self._body)
        return succeed(None)

    def pauseProducing(self) -> None:  # noqa: N802
        pass

    def resumeProducing(self) -> None:  # noqa: N802
        pass

    def stopProducing(self) -> None:  # noqa: N802
        pass


class _QuietClientFactory(_HTTP11ClientFactory):
    """Twisted's HTTP client factory without its "Starting/Stopping factory" log lines."""

    noisy = False


class DirectHttp:
    """``treq.request``'s calling convention over one ``Agent`` and a persistent pool,
    without treq's per-call client, cookies, redirects and URL parsing. ``data`` is
    bytes or an ``IBodyProducer``; the answer is Twisted's ``IResponse``, which
    ``treq.content`` and ``treq.collect`` read."""

    def __init__(self, reactor=None, trust: PoolTrust | None = None) -> None:
        self._reactor = reactor
        self._trust = trust
        self._agent: Agent | None = None

    def _current_trust(self) -> PoolTrust | None:
        return self._trust if self._trust is not None else client_trust()

    def _agent_now(self) -> Agent:
        if self._agent is None:
            if self._reactor is None:
                from twisted.internet import reactor as default_reactor
                self._reactor = default_reactor
            pool = HTTPConnectionPool(self._reactor, persistent=True)
            pool.maxPersistentPerHost = PERSISTENT_PER_HOST
            pool._factory = _QuietClientFactory  # as treq does: no two log lines per connection
            self._agent = Agent(self._reactor, contextFactory=PoolTlsPolicy(self._current_trust), pool=pool)
        return self._agent

    def request(self, method: str, url: str, headers: dict | None = None, data=None,
                timeout: float | None = None) -> Deferred:
        """Send one request; with ``timeout`` it is cancelled after that many seconds."""
        agent = self._agent_now()
        body = BytesProducer(data) if isinstance(data, bytes) else data
        sent = agent.request(method.encode("ascii"), url.encode("ascii"), Headers(headers or {}), body)
        if timeout:
            expiry = self._reactor.callLater(timeout, sent.cancel)

            def settled(result):
                if expiry.active():
                    expiry.cancel()
                return result

            sent.addBoth(settled)
        return sent


#: The HTTP layer daemons use unless they are given another.
DIRECT_HTTP = DirectHttp()


class AsyncClient:
    """Calls one daemon's routes; ``http`` is :data:`DIRECT_HTTP`, ``treq``, or a
    stand-in such as ``StubTreq``."""

    def __init__(
        self, address: str | Address, token: str | None = None, http=DIRECT_HTTP,
        timeout: float | None = DEFAULT_TIMEOUT,
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

    def send(self, route: Route, data=None, content_type: bytes | None = None, query: dict | None = None,
             headers: dict | None = None, **params: str) -> Deferred:
        """Send ``route`` with a raw body (bytes or a body producer) and extra headers;
        fire with the response once its status is below 300, else fail with
        ``RemoteError``; ``Unreachable`` when no answer comes."""
        return Deferred.fromCoroutine(self._request(route, data, content_type, query, headers, params))

    async def _send(self, route, body, query, params):
        if body is None:
            return await self._request(route, None, None, query, None, params)
        return await self._request(route, json.dumps(body).encode("utf-8"), b"application/json", query, None, params)

    async def _request(self, route, data, content_type, query, extra_headers, params):
        url = self.address.url(route.path(**params))
        if query:
            url += "?" + urlencode(query, doseq=True)
        headers = {b"Accept": [b"application/json"]}
        if content_type is not None:
            headers[b"Content-Type"] = [content_type]
        if self._token:
            headers[b"Authorization"] = [f"Bearer {self._token}".encode("latin-1")]
        headers.update(extra_headers or {})
        extra = {"timeout": self._timeout} if self._timeout else {}
        response = await self._guard(lambda: self._http.request(route.method, url, headers=headers, data=data, **extra))
        if response.code >= 300:
            raw = await self._guard(treq.content(response))
            raise remote_error_from(response.code, raw, url)
        return response

    async def _guard(self, deferred: Deferred | Callable[[], Deferred]):
        try:
            return await (deferred() if callable(deferred) else deferred)
        except PeerRefused as exc:
            raise Unreachable(f"refused {self.address.url()}: {exc}") from None
        except _NETWORK_ERRORS as exc:
            refused = _tls_refusal(exc, self.address)
            if refused:
                raise Unreachable(f"refused {self.address.url()}: {refused}") from None
            raise Unreachable(f"no answer from {self.address}: {exc}") from None


def _tls_refusal(exc: Exception, address: Address) -> str | None:
    """Why a TLS connection to ``address`` failed, read out of Twisted's list of
    wrapped failures; None when TLS was not the cause."""
    for failure in getattr(exc, "reasons", None) or ():
        if isinstance(failure.value, PeerRefused):
            return str(failure.value)
        if isinstance(failure.value, SSL.Error):
            text = str(failure.value)
            if answered_in_plain_text(text):
                return TLS_TO_PLAIN_PORT.format(address=f"{address.host}:{address.port}")
            return f"TLS handshake failed: {text}"
    return None
