"""Tests for the daemons' direct HTTP layer (daemoncore.wire.async_client.DirectHttp)
against the toy API on a real loopback port, with the real reactor (trial-style)."""

import io

import pytest
import treq
from twisted.internet import defer, reactor
from twisted.trial import unittest
from twisted.web.client import FileBodyProducer
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site

from daemoncore.wire.async_client import AsyncClient, DirectHttp
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.errors import RemoteError, Unreachable
from daemoncore.wire.server import ApiResource, make_site
from tests.wire.toy_api import COUNT, ECHO, KEY, TOY_HANDLERS, token

pytestmark = pytest.mark.integration  # runs the global reactor and a server


class Silent(Resource):
    """Never answers, so a timeout has something to cut short."""

    isLeaf = True

    def render(self, request):
        return NOT_DONE_YET


class DirectHttpTests(unittest.TestCase):
    def setUp(self):
        site = make_site(ApiResource(TOY_HANDLERS, token_verifier(KEY, reactor)))
        self.port = reactor.listenTCP(0, site, interface="127.0.0.1")
        self.addCleanup(self.port.stopListening)
        self.address = f"127.0.0.1:{self.port.getHost().port}"
        self.http = DirectHttp(reactor)
        self.addCleanup(lambda: self.http._agent_now()._pool.closeCachedConnections())

    def client(self):
        return AsyncClient(self.address, token=token("alice@pool", "READ"), http=self.http, timeout=10)

    @defer.inlineCallbacks
    def test_json_calls_and_streams_go_through_one_persistent_pool(self):
        """Calls answer JSON and NDJSON as through treq, over reused connections."""
        for n in range(3):
            answer = yield self.client().call(ECHO, {"n": n}, word="hi")
            self.assertEqual(answer, {"word": "hi", "body": {"n": n}, "who": "alice@pool"})
        items = []
        count = yield self.client().stream(COUNT, items.append, query={"upto": "4"})
        self.assertEqual((count, items), (4, [{"n": n} for n in range(4)]))
        self.assertEqual(len(self.http._agent_now()._pool._connections), 1)

    @defer.inlineCallbacks
    def test_a_file_body_and_an_error_answer(self):
        """A producer body is sent as it is; a refusal still raises RemoteError."""
        url = f"http://{self.address}/v1/echo/file"
        headers = {b"Authorization": [f"Bearer {token('alice@pool', 'READ')}".encode()],
                   b"Content-Type": [b"application/json"]}
        response = yield self.http.request("POST", url, headers=headers,
                                           data=FileBodyProducer(io.BytesIO(b'{"from": "file"}')))
        self.assertEqual(response.code, 200)
        self.assertIn(b'"from": "file"', (yield treq.content(response)))
        with self.assertRaises(RemoteError):
            yield AsyncClient(self.address, http=self.http).call(ECHO, {}, word="x")

    @defer.inlineCallbacks
    def test_timeout_cancels_a_request_with_no_answer(self):
        """With a timeout, a request the server never answers is cancelled: the caller
        hears the daemon is unreachable."""
        silent = reactor.listenTCP(0, Site(Silent()), interface="127.0.0.1")
        self.addCleanup(silent.stopListening)
        client = AsyncClient(f"127.0.0.1:{silent.getHost().port}", http=self.http, timeout=0.2)
        with self.assertRaises(Unreachable):
            yield client.call(ECHO, {}, word="x")
