"""The server side of the wire: a ``twisted.web`` resource that dispatches requests
to handlers by route, checks tokens, answers JSON or streams NDJSON, and turns every
failure into a JSON error so that no request can crash the daemon."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from urllib.parse import unquote

from attrs import field, frozen
from twisted.internet import task
from twisted.internet.defer import Deferred, maybeDeferred
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web import server
from twisted.web.resource import Resource

from daemoncore.wire import auth
from daemoncore.wire.channel import BoundedChannel, refuse_and_close
from daemoncore.wire.errors import ApiError, MethodNotAllowed, NotFound, TooLarge
from daemoncore.wire.ndjson import encode_line
from daemoncore.wire.request_body import parse_json_object
from daemoncore.wire.route import Route

JSON_TYPE = b"application/json"
NDJSON_TYPE = b"application/x-ndjson"
MAX_BODY_BYTES = 16 * 1024 * 1024
IDLE_TIMEOUT_SECONDS = 60
STREAM_CHUNK_BYTES = 64 * 1024
#: Most bytes of a streamed answer sent to the socket in one reactor turn (Twisted's
#: default is 128 KiB: a 90 MB answer then took some 700 turns).
STREAM_SEND_BYTES = 1024 * 1024
#: How long a streamed answer is written at once, in the turn its request was read,
#: before the rest goes to the cooperator: a small answer (a one-ad query, a status
#: look-up) is sent whole then, rather than a turn or two later when the reactor is
#: busy with sliced work whose turns take 20 ms each.
STREAM_AT_ONCE_SECONDS = 0.005
#: ... and at most this many bytes of it: what is written at once is not yet paced by
#: the client's reading (the cooperator's steps are), so a client that asks a large
#: answer it never reads holds at most this much of it in the daemon's memory.
STREAM_AT_ONCE_BYTES = STREAM_SEND_BYTES

_log = Logger()


def _read_only(headers: Mapping[str, str]) -> Mapping[str, str]:
    return headers if isinstance(headers, MappingProxyType) else MappingProxyType(
        {name.lower(): value for name, value in headers.items()})


#: Request headers a handler never sees: the bearer token is checked here and stops here.
HIDDEN_HEADERS = frozenset({"authorization"})


@frozen
class ApiRequest:
    """What a handler sees: its route, path values, query arguments, body, caller
    and request headers (names in lower case, first value each, read-only; the
    channel bounds their count and size, and ``Authorization`` is left out)."""

    route: Route
    params: dict[str, str]
    query: dict[str, list[str]]
    body: bytes = field(repr=False)
    identity: object | None
    headers: Mapping[str, str] = field(factory=lambda: MappingProxyType({}), converter=_read_only, repr=False)

    def header(self, name: str) -> str | None:
        """The value of header ``name`` (any case), or ``None`` when it was not sent."""
        return self.headers.get(name.lower())

    def json(self) -> dict:
        """The body as a JSON object.

        Raises:
            BadRequest: the body is not a JSON object.
        """
        return parse_json_object(self.body)

    def require(self, level: str, action: str) -> None:
        """Demand a higher level than the route's for part of what it does.

        Raises:
            Unauthenticated: the request had no identity.
            Forbidden: the identity does not reach ``level``.
        """
        if self.identity is None:
            raise auth.Unauthenticated(auth.NO_TOKEN.format(level=level))
        auth.require_level(self.identity, level, action)


@frozen
class JsonReply:
    """A JSON answer."""

    body: object
    status: int = 200


@frozen
class StreamReply:
    """An NDJSON answer, one line per item, written as the iterable yields; an item
    may be an object, its already encoded line (bytes ending in a newline), or
    ``None``: nothing to send yet, let the daemon answer others meanwhile."""

    items: Iterable[object]


@frozen
class BytesReply:
    """A non-JSON answer such as Prometheus text."""

    body: bytes
    content_type: bytes


Handler = Callable[[ApiRequest], "JsonReply | StreamReply | BytesReply | Deferred"]


class ApiResource(Resource):
    """Serves a set of routes; every answer is JSON, NDJSON or a handler's bytes. A
    streamed answer is written for ``at_once_seconds`` in the turn its request was
    read, and the rest by ``cooperator``, a step at a time."""

    isLeaf = True

    def __init__(
        self,
        handlers: Mapping[Route, Handler],
        verify: auth.TokenVerifier | None,
        cooperator: task.Cooperator | None = None,
        at_once_seconds: float = STREAM_AT_ONCE_SECONDS,
    ) -> None:
        super().__init__()
        self._handlers = dict(handlers)
        self._verify = verify
        self._cooperator = cooperator or task.Cooperator()
        self._at_once_seconds = at_once_seconds

    def render(self, request: server.Request) -> int:
        """Answer ``request`` asynchronously; never raises."""
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))
        reply = maybeDeferred(self._dispatch, request)
        reply.addCallback(self._send, request, gone)
        reply.addErrback(self._send_failure, request, gone)
        return server.NOT_DONE_YET

    def _dispatch(self, request: server.Request):
        path = unquote(request.path.decode("utf-8", "replace"))
        method = request.method.decode("ascii", "replace").upper()
        route, params = self._find(method, path)
        identity = self._identify(route, request) if route.level is not None else None
        api_request = ApiRequest(
            route=route,
            params=params,
            query={
                key.decode("utf-8", "replace"): [v.decode("utf-8", "replace") for v in values]
                for key, values in (request.args or {}).items()
            },
            body=request.content.read() if request.content is not None else b"",
            identity=identity,
            headers=_visible_headers(request),
        )
        return self._handlers[route](api_request)

    def _identify(self, route: Route, request: server.Request) -> object:
        """Who calls ``route``: a token of this pool at the route's level, or, on a route
        with a capability that the request carries, a caller with another pool's token
        (a :class:`auth.CapabilityHolder`; the handler checks the capability)."""
        header = request.getHeader(b"authorization")
        authorization = header.decode("latin-1") if header else None
        carried = route.capability_header and request.getHeader(route.capability_header.encode("ascii"))
        if carried:
            identity = auth.authenticate_or_capability(authorization, self._verify, route.level, route.capability)
            if isinstance(identity, auth.CapabilityHolder):
                return identity
        else:
            identity = auth.authenticate(authorization, self._verify, route.level)
        auth.require_level(identity, route.level, route.name)
        return identity

    def _find(self, method: str, path: str) -> tuple[Route, dict[str, str]]:
        other_methods = []
        for route in self._handlers:
            params = route.match(path)
            if params is None:
                continue
            if route.method == method:
                return route, params
            other_methods.append(route.method)
        if other_methods:
            raise MethodNotAllowed(f"{path} answers {', '.join(sorted(other_methods))}, not {method}")
        raise NotFound(f"no route {path}")

    def _send(self, reply, request: server.Request, gone: list[bool]) -> None:
        if gone:
            return
        if isinstance(reply, StreamReply):
            self._stream(reply.items, request, gone)
            return
        if isinstance(reply, BytesReply):
            _finish(request, 200, reply.content_type, reply.body)
            return
        _finish(request, reply.status, JSON_TYPE, json.dumps(reply.body).encode("utf-8"))

    def _send_failure(self, failure: Failure, request: server.Request, gone: list[bool]) -> None:
        if gone:
            return
        error = failure.value
        if not isinstance(error, ApiError):
            _log.failure("unexpected error answering {path}", failure, path=request.path)
            error = ApiError(f"internal error answering {request.path.decode('utf-8', 'replace')}; see the daemon's log")
        _finish(request, error.status, JSON_TYPE, json.dumps(error.body()).encode("utf-8"))

    def _stream(self, items: Iterable[object], request: server.Request, gone: list[bool]) -> None:
        request.setResponseCode(200)
        request.setHeader(b"content-type", NDJSON_TYPE)
        _widen_sends(request)
        lines = _write_lines(items, request, gone)
        try:
            ended = _ran_out(lines, self._at_once_seconds, STREAM_AT_ONCE_BYTES)
        except Exception:  # noqa: BLE001 - a broken source ends the answer, never the daemon
            _log.failure("stream of {path} broke off", path=request.path)
            request.loseConnection()
            return
        if ended:
            if not gone:
                request.finish()
            return
        work = self._cooperator.cooperate(lines)
        request.registerProducer(_TaskProducer(work), True)

        def done(_):
            if not gone:
                request.unregisterProducer()
                request.finish()

        def broken(failure: Failure):
            # TaskStopped: the transport stopped the producer, its client gone (a TCP
            # transport does so before the request hears of the loss) or the daemon stopping
            if gone or failure.check(task.TaskStopped):
                return
            _log.failure("stream of {path} broke off", failure, path=request.path)
            request.unregisterProducer()
            request.loseConnection()

        work.whenDone().addCallbacks(done, broken)
        request.notifyFinish().addErrback(lambda _: _stop_quietly(work))


def _ran_out(steps: Iterator[int], seconds: float, max_bytes: int) -> bool:
    """Advance ``steps`` (each yielding the bytes it wrote) for at most ``seconds`` and
    until ``max_bytes`` are written (always one step); whether they ended."""
    deadline = time.perf_counter() + seconds
    written = 0
    for wrote in steps:
        written += wrote
        if written >= max_bytes or time.perf_counter() >= deadline:
            return False
    return True


def _widen_sends(request: server.Request) -> None:
    """Let the request's TCP transport send up to ``STREAM_SEND_BYTES`` per write turn
    (its ``SEND_LIMIT``): a large answer goes out in fewer reactor turns and send calls,
    the stream's producer is resumed sooner, and nothing else waits longer than the
    kernel's copy of one such piece. Other transports (TLS, tests) are left alone."""
    transport = getattr(request.channel, "transport", None)
    if transport is not None and hasattr(transport, "SEND_LIMIT"):
        transport.SEND_LIMIT = STREAM_SEND_BYTES


def _visible_headers(request: server.Request) -> MappingProxyType:
    """The request's headers a handler may read: lower-case names, first values."""
    return MappingProxyType({
        name.decode("latin-1").lower(): values[0].decode("latin-1")
        for name, values in request.requestHeaders.getAllRawHeaders()
        if values and name.decode("latin-1").lower() not in HIDDEN_HEADERS
    })


def _write_lines(items: Iterable[object], request: server.Request, gone: list[bool]):
    """Write items as NDJSON lines in chunks of about ``STREAM_CHUNK_BYTES``, giving
    the reactor back after every item: a ``None`` item (a source that examined an ad
    that did not match) writes nothing but still gives it back, so a query whose
    constraint is slow in every ad never holds the reactor for more than one ad. Each
    step yields the bytes it wrote (0 mostly)."""
    chunk: list[bytes] = []
    size = 0
    for item in items:
        if gone:
            return
        wrote = 0
        if item is not None:
            line = item if isinstance(item, bytes) else encode_line(item)
            chunk.append(line)
            size += len(line)
            if size >= STREAM_CHUNK_BYTES:
                request.write(b"".join(chunk))
                chunk, wrote, size = [], size, 0
        yield wrote
    if chunk and not gone:
        request.write(b"".join(chunk))


class _TaskProducer:
    """Lets the transport's back-pressure pause and resume a cooperative task. A
    transport pauses its producer at every write past its buffer's bound, so one step
    writing several pieces is paused several times and resumed once: the task is
    paused once however often it is asked, or it would never run again."""

    def __init__(self, work: task.CooperativeTask) -> None:
        self._work = work
        self._paused = False

    def pauseProducing(self) -> None:
        if self._paused:
            return
        try:
            self._work.pause()
            self._paused = True
        except task.TaskFinished:
            pass

    def resumeProducing(self) -> None:
        if not self._paused:
            return
        self._paused = False
        try:
            self._work.resume()
        except (task.TaskFinished, task.NotPaused):
            pass

    def stopProducing(self) -> None:
        _stop_quietly(self._work)


def _stop_quietly(work: task.CooperativeTask) -> None:
    try:
        work.stop()
    except task.TaskFinished:
        pass


def _finish(request: server.Request, status: int, content_type: bytes, body: bytes) -> None:
    request.setResponseCode(status)
    request.setHeader(b"content-type", content_type)
    request.setHeader(b"content-length", b"%d" % len(body))
    request.write(body)
    request.finish()


class BoundedRequest(server.Request):
    """A request that refuses a body above ``max_body`` bytes with a 413 before
    reading it all, then closes the connection."""

    max_body = MAX_BODY_BYTES

    def gotLength(self, length: int | None) -> None:
        self._body_bytes = 0
        self._refused = False
        if length is not None and length > self.max_body:
            self._refuse(length)
            return
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        if self._refused:
            return
        self._body_bytes += len(data)
        if self._body_bytes > self.max_body:
            self._refuse(self._body_bytes)
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if not self._refused:
            super().requestReceived(command, path, version)

    def _refuse(self, size: int) -> None:
        self._refused = True
        refuse_and_close(self.channel, TooLarge(
            f"request body of {size} bytes or more exceeds the limit of {self.max_body} bytes"))


class QuietSite(server.Site):
    """Twisted's ``Site``, writing each request's access line to the daemon's log only
    when ``log_requests`` (HTCondor logs commands only under ``D_COMMAND``): the line
    cost every request a log event, formatted and written."""

    log_requests = False

    def log(self, request) -> None:
        if self.log_requests:
            super().log(request)


def make_site(
    resource: Resource,
    max_body: int = MAX_BODY_BYTES,
    timeout: float = IDLE_TIMEOUT_SECONDS,
    clock=None,
    log_requests: bool = False,
) -> server.Site:
    """A ``Site`` serving ``resource`` with a bounded request line, headers and body
    (414, 431, 413) and an idle timeout, logging each request when ``log_requests``."""
    bounded = type("SiteBoundedRequest", (BoundedRequest,), {"max_body": max_body})
    site = QuietSite(
        resource, requestFactory=bounded, parsePOSTFormSubmission=False, timeout=timeout, reactor=clock
    )
    site.protocol = BoundedChannel
    site.displayTracebacks = False
    site.noisy = False
    site.log_requests = log_requests
    return site
