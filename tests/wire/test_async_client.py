"""Tests for daemoncore.wire.async_client against the toy routes through StubTreq."""

import pytest
from treq.testing import StubTreq

from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.errors import RemoteError
from tests.wire.toy_api import ADMIN, COUNT, ECHO, token


def settle(deferred, stub, clock):
    """Run the stub's memory reactor and the clock until ``deferred`` fires."""
    results = []
    deferred.addBoth(results.append)
    for _ in range(1000):
        if results:
            break
        stub.flush()
        clock.advance(0)
    [result] = results
    if hasattr(result, "raiseException"):
        result.raiseException()
    return result


@pytest.fixture
def client_for(toy_resource):
    stub = StubTreq(toy_resource)

    def make(token):
        return AsyncClient("127.0.0.1:9618", token=token, http=stub, timeout=None), stub

    return make


def test_call_returns_the_json_answer(client_for, clock):
    """A JSON route's answer comes back decoded."""
    client, stub = client_for(token("alice@pool", "READ"))
    answer = settle(client.call(ECHO, {"x": [1, 2]}, word="hi"), stub, clock)
    assert answer == {"word": "hi", "body": {"x": [1, 2]}, "who": "alice@pool"}


def test_stream_delivers_each_item(client_for, clock):
    """A streaming route calls back once per NDJSON object and fires with the count."""
    client, stub = client_for(token("alice@pool", "READ"))
    seen = []
    count = settle(client.stream(COUNT, seen.append, query={"upto": 500}), stub, clock)
    assert count == 500
    assert seen == [{"n": n} for n in range(500)]


def test_error_answer_raises_remote_error(client_for, clock):
    """A JSON error comes back as RemoteError with its status, code and message."""
    client, stub = client_for(token("alice@pool", "READ"))
    with pytest.raises(RemoteError) as caught:
        settle(client.call(ADMIN, {}), stub, clock)
    assert (caught.value.status, caught.value.code) == (403, "forbidden")
    assert "ADMINISTRATOR" in caught.value.message
