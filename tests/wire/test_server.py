"""Tests for daemoncore.wire.server, replaying raw request bytes in memory."""

import json

import pytest

from daemoncore.wire.in_memory import encode_request, exchange
from tests.wire.toy_api import token


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 7, 9, 4096])
def test_json_route_answers_in_any_chunking(toy_site, clock, chunk_size):
    """A request split into chunks of any size gets the handler's JSON answer."""
    raw = encode_request("POST", "/v1/echo/hello", b'{"a": 1}', token=token("alice@pool", "READ"))
    response, _ = exchange(toy_site, raw, clock, chunk_size)
    assert response.status == 200
    assert response.json() == {"word": "hello", "body": {"a": 1}, "who": "alice@pool"}


def test_missing_token_is_401(toy_site, clock):
    """A route with a level refuses a request without a token."""
    response, _ = exchange(toy_site, encode_request("POST", "/v1/echo/x", b"{}"), clock)
    assert response.status == 401
    assert response.json()["error"] == "unauthenticated"
    assert "ROOST_TOKEN" in response.json()["message"]


def test_invalid_token_is_401_with_reason(toy_site, clock):
    """A token the verifier rejects is a 401 saying why."""
    response, _ = exchange(toy_site, encode_request("POST", "/v1/echo/x", b"{}", token="garbage.not.jwt"), clock)
    assert response.status == 401
    assert "not a valid token" in response.json()["message"]


def test_token_from_another_key_is_401(toy_site, clock):
    """A well-formed token signed with another pool's key is refused."""
    from daemoncore.security import issue_token

    forged = issue_token(b"another-pool-key-0123456789abcdefgh", "mallory@pool", ["DAEMON"], now=0)
    response, _ = exchange(toy_site, encode_request("POST", "/v1/admin", b"{}", token=forged), clock)
    assert response.status == 401
    assert "signature does not match" in response.json()["message"]


def test_too_low_level_is_403(toy_site, clock):
    """A READ identity cannot call an ADMINISTRATOR route."""
    response, _ = exchange(toy_site, encode_request("POST", "/v1/admin", b"{}", token=token("bob@pool", "READ")), clock)
    assert response.status == 403
    assert response.json() == {
        "error": "forbidden", "message": "bob@pool lacks ADMINISTRATOR authorization, which admin needs",
    }


def test_implied_level_satisfies_route(toy_site, clock):
    """An ADMINISTRATOR identity may call a READ route, a DAEMON one may not administer."""
    raw = encode_request("POST", "/v1/echo/x", b"{}", token=token("root@pool", "ADMINISTRATOR"))
    assert exchange(toy_site, raw, clock)[0].status == 200
    raw = encode_request("POST", "/v1/admin", b"{}", token=token("d@pool", "DAEMON"))
    assert exchange(toy_site, raw, clock)[0].status == 403


def test_unknown_path_is_404_and_wrong_method_405(toy_site, clock):
    """Unknown paths and wrong methods get JSON errors."""
    response, _ = exchange(toy_site, encode_request("GET", "/v1/nothing"), clock)
    assert (response.status, response.json()["error"]) == (404, "not_found")
    response, _ = exchange(toy_site, encode_request("GET", "/v1/admin"), clock)
    assert (response.status, response.json()["error"]) == (405, "method_not_allowed")


def test_malformed_body_is_400(toy_site, clock):
    """A body that is not JSON is a 400 naming where it broke."""
    raw = encode_request("POST", "/v1/echo/x", b"{nope", token=token("a@p", "READ"))
    response, _ = exchange(toy_site, raw, clock)
    assert response.status == 400
    assert "line 1 column 2" in response.json()["message"]


def test_handler_error_is_its_status(toy_site, clock):
    """An ApiError raised by a handler becomes its status and JSON body."""
    response, _ = exchange(toy_site, encode_request("GET", "/v1/refuse"), clock)
    assert response.status == 400
    assert response.json() == {"error": "bad_request", "message": "no, because"}


def test_unexpected_exception_is_500_without_traceback(toy_site, clock):
    """A bug in a handler is a 500 with no traceback, and the server keeps answering."""
    response, _ = exchange(toy_site, encode_request("GET", "/v1/broken"), clock)
    assert response.status == 500
    assert "Traceback" not in response.body.decode() and "ZeroDivision" not in response.body.decode()
    response, _ = exchange(toy_site, encode_request("GET", "/v1/refuse"), clock)
    assert response.status == 400


def test_stream_is_ndjson_lines(toy_site, clock):
    """A streaming route answers one JSON object per line."""
    raw = encode_request("GET", "/v1/count?upto=2000", token=token("a@p", "READ"))
    response, _ = exchange(toy_site, raw, clock)
    assert response.status == 200
    assert response.headers["content-type"] == "application/x-ndjson"
    assert response.lines() == [{"n": n} for n in range(2000)]


def test_large_declared_body_is_413_and_closes(toy_site, clock):
    """A Content-Length above the limit is refused with 413 before the body is read."""
    raw = encode_request("POST", "/v1/echo/x", b"x" * 5000, token=token("a@p", "READ"))
    response, transport = exchange(toy_site, raw, clock, chunk_size=100)
    assert response.status == 413
    assert response.json()["error"] == "too_large"
    assert transport.disconnecting


def test_large_chunked_body_is_413(toy_site, clock):
    """A chunked body that grows past the limit is refused with 413."""
    head = (
        b"POST /v1/echo/x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
        b"Authorization: Bearer " + token("a@p", "READ").encode() + b"\r\n\r\n"
    )
    chunk = b"%x\r\n%s\r\n" % (600, b"y" * 600)
    response, _ = exchange(toy_site, head + chunk + chunk + b"0\r\n\r\n", clock)
    assert response.status == 413


def test_two_requests_on_one_connection(toy_site, clock):
    """Keep-alive: two pipelined requests both get answers."""
    raw = encode_request("GET", "/v1/refuse") + encode_request("GET", "/v1/refuse")
    _, transport = exchange(toy_site, raw, clock)
    assert transport.value().count(b"HTTP/1.1 400") == 2


def test_query_body_error_never_crashes_on_binary(toy_site, clock):
    """Arbitrary bytes as a body get a 400, not a crash."""
    raw = encode_request("POST", "/v1/echo/x", bytes(range(256)), token=token("a@p", "READ"))
    response, _ = exchange(toy_site, raw, clock)
    assert response.status == 400
    json.loads(response.body)


def test_garbage_bytes_get_400_and_the_site_keeps_serving(toy_site, clock):
    """Bytes that are not HTTP are answered 400 and later requests still work."""
    response, _ = exchange(toy_site, b"\x00\xffNOT HTTP AT ALL\r\n\r\n", clock)
    assert response.status == 400
    response, _ = exchange(toy_site, encode_request("GET", "/v1/refuse"), clock)
    assert response.status == 400 and response.json()["error"] == "bad_request"


@pytest.mark.parametrize("transport_stops_producer_first", [False, True], ids=["request-first", "transport-first"])
def test_client_gone_mid_stream_stops_the_stream(toy_site, clock, transport_stops_producer_first):
    """A client that disconnects during a long stream stops it without errors or leftovers,
    also when the transport stops the stream's producer before the request hears of the
    loss (as a TCP transport does)."""
    import gc

    from twisted.internet.address import IPv4Address
    from twisted.internet.error import ConnectionLost
    from twisted.internet.testing import StringTransport
    from twisted.logger import globalLogPublisher
    from twisted.python.failure import Failure

    failures = []
    observer = lambda event: failures.append(event) if "log_failure" in event else None  # noqa: E731
    globalLogPublisher.addObserver(observer)
    try:
        protocol = toy_site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40001))
        transport = StringTransport()
        protocol.makeConnection(transport)
        protocol.dataReceived(encode_request("GET", "/v1/count?upto=1000000", token=token("a@p", "READ")))
        if transport_stops_producer_first:
            transport.producer.stopProducing()
            clock.advance(0)
        protocol.connectionLost(Failure(ConnectionLost()))
        clock.advance(0)
        gc.collect()
    finally:
        globalLogPublisher.removeObserver(observer)
    assert failures == []
    assert b'{"n":' not in transport.value()
    assert all(call.getTime() > clock.seconds() for call in clock.getDelayedCalls())


def test_handlers_read_request_headers_but_never_the_bearer_token(clock):
    """A handler sees the request's headers by lower-case name, read-only, without Authorization."""
    from daemoncore.wire.auth import token_verifier
    from daemoncore.wire.in_memory import clock_cooperator
    from daemoncore.wire.route import Route
    from daemoncore.wire.server import ApiResource, JsonReply, make_site
    from tests.wire.toy_api import KEY

    seen = []
    route = Route("look", "GET", "/v1/look", level="READ")

    def look(request):
        seen.append(request)
        return JsonReply({"key": request.header("X-Roost-Transfer-Key"), "names": sorted(request.headers)})

    site = make_site(ApiResource({route: look}, token_verifier(KEY, clock), cooperator=clock_cooperator(clock)),
                     clock=clock)
    raw = encode_request("GET", "/v1/look", token=token("a@p", "READ"), headers={"X-Roost-Transfer-Key": "k1"})
    response, _ = exchange(site, raw, clock)
    assert response.json()["key"] == "k1"
    assert "authorization" not in response.json()["names"] and "x-roost-transfer-key" in response.json()["names"]
    with pytest.raises(TypeError):
        seen[0].headers["x-new"] = "1"
    assert "k1" not in repr(seen[0])


def test_stream_gives_the_reactor_back_after_every_item_and_skips_none(clock):
    """Past the part written at once (here no time: always one item), one item per
    cooperator step: a source that yields ``None`` for ads it rejected never holds the
    reactor for more than one ad, and ``None`` writes nothing."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.task import Cooperator
    from twisted.internet.testing import StringTransport

    from daemoncore.wire.route import Route
    from daemoncore.wire.server import ApiResource, StreamReply, make_site

    pulled = []
    route = Route("scan", "GET", "/v1/scan", level=None, streams=True)

    def scan(_request):
        def items():
            for n in range(5):
                pulled.append(n)
                yield {"n": n} if n == 4 else None
        return StreamReply(items())

    ticks = []
    one_step_a_tick = Cooperator(terminationPredicateFactory=lambda: lambda: True, scheduler=ticks.append)
    site = make_site(ApiResource({route: scan}, None, cooperator=one_step_a_tick, at_once_seconds=0), clock=clock)
    protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(encode_request("GET", "/v1/scan"))
    counts = [len(pulled)]
    while ticks:
        ticks.pop(0)()
        counts.append(len(pulled))
    assert counts[:5] == [1, 2, 3, 4, 5]
    assert transport.value().endswith(b'{"n":4}\n\r\n0\r\n\r\n') and b"null" not in transport.value()
    protocol.connectionLost(None)


def test_a_small_stream_is_answered_whole_in_the_turn_its_request_was_read(clock):
    """An answer that ends within the at-once time needs no cooperator step: its
    request's read sends it whole and finishes the response."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.task import Cooperator
    from twisted.internet.testing import StringTransport

    from daemoncore.wire.route import Route
    from daemoncore.wire.server import ApiResource, StreamReply, make_site

    route = Route("few", "GET", "/v1/few", level=None, streams=True)
    ticks = []
    never_ticked = Cooperator(scheduler=ticks.append)
    site = make_site(ApiResource({route: lambda _: StreamReply(iter([{"n": 1}, None, {"n": 2}]))}, None,
                                 cooperator=never_ticked, at_once_seconds=1.0), clock=clock)
    protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(encode_request("GET", "/v1/few"))
    assert ticks == []
    assert transport.value().endswith(b'{"n":1}\n{"n":2}\n\r\n0\r\n\r\n')
    protocol.connectionLost(None)


def test_what_is_written_at_once_is_bounded_in_bytes_and_the_rest_waits_for_the_reader(clock):
    """However quick its source, an answer writes at most STREAM_AT_ONCE_BYTES (plus the
    chunk under way) before the cooperator, paced by the client's reading, takes over."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.task import Cooperator
    from twisted.internet.testing import StringTransport

    from daemoncore.wire.route import Route
    from daemoncore.wire.server import STREAM_AT_ONCE_BYTES, STREAM_CHUNK_BYTES, ApiResource, StreamReply, make_site

    line = b"x" * (STREAM_CHUNK_BYTES - 1) + b"\n"
    count = 3 * STREAM_AT_ONCE_BYTES // len(line)
    route = Route("big", "GET", "/v1/big", level=None, streams=True)
    ticks = []
    site = make_site(ApiResource({route: lambda _: StreamReply(iter([line] * count))}, None,
                                 cooperator=Cooperator(scheduler=ticks.append), at_once_seconds=60.0), clock=clock)
    protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(encode_request("GET", "/v1/big"))
    assert ticks, "the rest of the answer waits for the cooperator"
    assert STREAM_AT_ONCE_BYTES <= len(transport.value()) < STREAM_AT_ONCE_BYTES + 2 * len(line) + 1024
    while ticks:
        ticks.pop(0)()
    assert transport.value().count(line) == count
    protocol.connectionLost(None)


def test_a_stream_whose_source_breaks_at_once_closes_the_connection(clock):
    """A source that raises while the answer is written at once ends that answer (the
    connection is closed, the error logged); the site serves on."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.testing import StringTransport

    from daemoncore.wire.route import Route
    from daemoncore.wire.server import ApiResource, StreamReply, make_site

    def broken():
        yield {"n": 1}
        raise ValueError("the source broke")

    route = Route("broken", "GET", "/v1/broken", level=None, streams=True)
    site = make_site(ApiResource({route: lambda _: StreamReply(broken())}, None, at_once_seconds=1.0), clock=clock)
    protocol = site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
    transport = StringTransport()
    protocol.makeConnection(transport)
    protocol.dataReceived(encode_request("GET", "/v1/broken"))
    assert transport.disconnecting
    assert b"0\r\n\r\n" not in transport.value()  # not finished as if whole


@pytest.mark.parametrize("path, widened", [("/v1/count?upto=3", True), ("/v1/echo/x", False)])
def test_a_streamed_answer_widens_its_tcp_transports_sends(toy_site, clock, path, widened):
    """A stream lets its TCP transport send STREAM_SEND_BYTES a turn (Twisted's
    SEND_LIMIT); a JSON answer leaves the transport as it was."""
    from twisted.internet.address import IPv4Address
    from twisted.internet.testing import StringTransport

    from daemoncore.wire.server import STREAM_SEND_BYTES

    class TcpLikeTransport(StringTransport):
        SEND_LIMIT = 128 * 1024

    protocol = toy_site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
    transport = TcpLikeTransport()
    protocol.makeConnection(transport)
    method = "GET" if widened else "POST"
    protocol.dataReceived(encode_request(method, path, b"" if widened else b"{}", token=token("a@p", "READ")))
    clock.advance(1)
    assert b"HTTP/1.1 200" in transport.value()
    assert transport.SEND_LIMIT == (STREAM_SEND_BYTES if widened else 128 * 1024)
    protocol.connectionLost(None)



def test_a_stream_paused_twice_by_its_transport_runs_again_after_one_resume(clock):
    """A transport pauses its producer at each write past its buffer (one step may
    write several pieces) and resumes it once: the stream goes on."""
    from twisted.internet.task import Cooperator

    from daemoncore.wire.server import _TaskProducer

    ran = []
    cooperator = Cooperator(scheduler=lambda tick: clock.callLater(0, tick))
    work = cooperator.cooperate(ran.append(n) for n in range(3))
    producer = _TaskProducer(work)
    producer.pauseProducing()
    producer.pauseProducing()
    clock.advance(1)
    assert ran == []
    producer.resumeProducing()
    for _ in range(5):
        clock.advance(1)
    assert ran == [0, 1, 2]
