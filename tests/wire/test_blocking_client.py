"""The blocking client keeps one connection across calls: against a small HTTP/1.1
server on loopback, calls share a connection, a connection the server closed or a
stream left unread is replaced, errors keep the connection, and threads do not share
one at the same time."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

from daemoncore.wire import blocking_client
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError
from daemoncore.wire.route import Route

pytestmark = pytest.mark.integration

ECHO = Route("echo", "POST", "/echo", level=None)
PEEK = Route("peek", "GET", "/peek", level=None)
LINES = Route("lines", "GET", "/lines", level=None, streams=True)
MISSING = Route("missing", "GET", "/missing", level=None)
GOODBYE = Route("goodbye", "GET", "/goodbye", level=None)


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers the routes above; counts the connections it was given."""

    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        with self.server.lock:
            self.server.connections += 1

    def log_message(self, *args) -> None:
        pass

    def _answer(self, status: int, data: bytes, content_type: str = "application/json", close: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(200, json.dumps({"got": json.loads(data), "auth": self.headers.get("Authorization")}).encode())

    def do_GET(self) -> None:
        if self.path == "/peek":
            self._answer(200, b'{"ok": true}')
        elif self.path == "/lines":
            self._answer(200, b"".join(b'{"n": %d}\n' % n for n in range(2000)), "application/x-ndjson")
        elif self.path == "/goodbye":
            self._answer(200, b'{"bye": true}', close=True)
        else:
            self._answer(404, b'{"error": "not_found", "message": "no such thing"}')


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.connections = 0
    httpd.lock = threading.Lock()
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(server, **kwargs) -> BlockingClient:
    return BlockingClient(f"127.0.0.1:{server.server_address[1]}", **kwargs)


def test_calls_share_one_connection_and_send_the_token(server):
    """Many calls in a row, POST and GET, travel on one kept connection with the token on each."""
    with _client(server, token="a.b.c") as client:
        for n in range(5):
            assert client.call(ECHO, {"n": n}) == {"got": {"n": n}, "auth": "Bearer a.b.c"}
            assert client.call(PEEK) == {"ok": True}
    assert server.connections == 1


def test_error_answers_keep_the_connection(server):
    """An error answer is raised as RemoteError and the connection still serves the next call."""
    with _client(server) as client:
        with pytest.raises(RemoteError, match="no such thing"):
            client.call(MISSING)
        assert client.call(PEEK) == {"ok": True}
    assert server.connections == 1


def test_a_connection_the_server_closes_is_replaced(server):
    """After an answer with Connection: close, or a daemon that dropped the idle connection, the next call opens a new one."""
    with _client(server) as client:
        assert client.call(GOODBYE) == {"bye": True}
        assert client.call(PEEK) == {"ok": True}
        client._kept[0].sock.shutdown(2)  # as if the daemon had closed it while idle
        assert client.call(ECHO, {"x": 1})["got"] == {"x": 1}
    assert server.connections == 3


def test_a_connection_idle_too_long_is_not_reused(server, monkeypatch):
    """A connection idle longer than KEEP_IDLE_SECONDS is closed, not reused."""
    with _client(server) as client:
        client.call(PEEK)
        monkeypatch.setattr(blocking_client, "KEEP_IDLE_SECONDS", 0.0)
        client.call(PEEK)
    assert server.connections == 2


def test_streams_read_whole_keep_the_connection_and_abandoned_ones_do_not(server):
    """A stream read to its end leaves the connection for the next call; one abandoned half-read is closed."""
    with _client(server) as client:
        assert sum(1 for _ in client.stream(LINES)) == 2000
        assert client.call(PEEK) == {"ok": True}
        assert server.connections == 1
        lines = client.stream(LINES)
        assert next(lines) == {"n": 0}
        assert client.call(PEEK) == {"ok": True}  # a call while the stream is open gets its own connection
        lines.close()
        assert client.call(PEEK) == {"ok": True}
    assert server.connections == 2


def test_threads_never_share_a_connection_at_once(server):
    """Calls from several threads at once all get their own answers."""
    client = _client(server)
    failures = []

    def work(tag: int) -> None:
        for n in range(20):
            answer = client.call(ECHO, {"tag": tag, "n": n})
            if answer["got"] != {"tag": tag, "n": n}:
                failures.append(answer)

    threads = [threading.Thread(target=work, args=(tag,)) for tag in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    assert failures == []
    assert server.connections <= 4 * 20
