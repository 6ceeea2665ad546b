"""Hostile requests against the real daemons of a personal pool: every route of every
daemon, with every kind of token, under malformed bodies, never gets a 500 nor kills
a daemon; a daemon answers /v1/ping within 200 ms while a slow constraint is being
evaluated for a READ user; the transfer key never reaches ScheddLog; logs are 0600.

The ping bound needs ClassAd's own bounds on regular expressions and string sizes
(issue 9, classad/): without them one evaluation of the constraints below takes
seconds, which no yielding between ads can hide."""

from __future__ import annotations

import json
import os
import socket
import stat
import time

import pytest

from daemoncore.master import routes as master_routes
from daemoncore.security import issue_token, load_signing_key
from daemoncore.wire import collector_routes, daemon_routes, negotiator_routes, schedd_routes, startd_routes
from daemoncore.wire.in_memory import encode_request, parse_response
from daemoncore.wire.route import Route
from tests.integration.conftest import roost
from transfer.inline import INLINE_BYTES

#: What the probes may not see: an internal error, or any other 5xx but "not ready".
FORBIDDEN_STATUS = {500, 501, 502, 504}
PING_BOUND_SECONDS = 0.2
#: The schedd logs each request's access line (D_COMMAND), which one test reads.
POOL_ENV = {"_ROOST_SCHEDD_DEBUG": "D_COMMAND"}

ROUTE_MODULES = {
    "COLLECTOR": collector_routes, "SCHEDD": schedd_routes, "STARTD": startd_routes,
    "NEGOTIATOR": negotiator_routes, "MASTER": master_routes,
}
PATH_VALUES = {"ad_type": "Machine", "job_id": "1.0"}
#: Every field name some route reads, each given a value of the wrong type below.
FIELD_NAMES = (
    "constraint", "projection", "limit", "private", "ads", "names", "description", "itemdata", "count",
    "iwd", "cluster_ad", "proc_ads", "action", "ids", "reason", "attr", "value", "match", "since",
    "submitter", "matches", "event", "attrs", "claim_id", "job_ad", "schedd_address", "job_id",
    "transfer_key", "graceful", "name", "factor", "reported", "addresses", "claim_ids", "environ", "host",
    "how", "input", "queue", "request_id", "role", "spool", "victims",
)
MALFORMED_BODIES = {
    "not json": b"{this is not json",
    "json of the wrong type": b"[1, 2, 3]",
    "huge integer": b'{"limit": ' + b"9" * 5000 + b"}",
    "lone surrogate": b'{"constraint": "Owner == \\"\\ud800\\"", "name": "\\udc00"}',
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "wrong field types (numbers)": json.dumps({name: 12345 for name in FIELD_NAMES}).encode(),
    "wrong field types (objects)": json.dumps({name: {"x": [1]} for name in FIELD_NAMES}).encode(),
    "wrong field types (strings)": json.dumps({name: "text" for name in FIELD_NAMES}).encode(),
    "unknown fields": b'{"no_such_field": 1, "another": [true]}',
}
HUGE_BODY_BYTES = 20 * 1024 * 1024

REDOS = 'regexp("^(a+)+$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!")'
DOUBLING = "[" + "; ".join(['s0 = "ab"'] + [f"s{i} = strcat(s{i - 1}, s{i - 1})" for i in range(1, 41)]) \
    + '].s40 == "x"'


def daemon_routes_of(module) -> list[Route]:
    return [value for value in vars(module).values() if isinstance(value, Route)]


def every_route(facts: dict) -> list[tuple[str, str, Route]]:
    """(daemon, address, route) for every route of every daemon, ping and metrics included."""
    addresses = {**facts["daemons"], "MASTER": facts["master"]}
    table = []
    for daemon, module in ROUTE_MODULES.items():
        for route in daemon_routes_of(module) + [daemon_routes.PING, daemon_routes.METRICS]:
            table.append((daemon, addresses[daemon], route))
    return table


def send(address: str, raw: bytes, timeout: float = 30.0):
    """Send raw request bytes on a fresh connection and read the whole answer."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as conn:
        try:
            conn.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before it read everything: the answer is still there to read
        received = []
        while True:
            try:
                data = conn.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            received.append(data)
    return parse_response(b"".join(received))


def request_bytes(route: Route, body: bytes, token: str | None, headers: dict | None = None,
                  **params: str) -> bytes:
    values = {**PATH_VALUES, **params}
    return encode_request(route.method, route.path(**{name: values[name] for name in route.placeholders}),
                          body, token=token, headers={"Connection": "close", **(headers or {})})


def ping(address: str) -> tuple[float, int]:
    """Seconds /v1/ping took on a fresh connection, and the daemon's pid."""
    started = time.perf_counter()
    answer = send(address, request_bytes(daemon_routes.PING, b"", None), timeout=10)
    elapsed = time.perf_counter() - started
    assert answer.status == 200, answer.body
    return elapsed, answer.json()["pid"]


def pids(facts: dict) -> dict[str, int]:
    return {daemon: ping(address)[1] for daemon, address in {**facts["daemons"], "MASTER": facts["master"]}.items()}


@pytest.fixture(scope="module")
def tokens(pool) -> dict[str, str | None]:
    """One token for each level, plus none, one signed by another key and an expired one."""
    key = load_signing_key(str(pool["dir"] / "passwords.d" / "POOL"))
    made = {"none": None}
    for level in ("READ", "WRITE", "ADMINISTRATOR", "DAEMON"):
        made[level] = issue_token(key, f"prober-{level.lower()}@pool", [level], lifetime=3600)
    made["other key"] = issue_token(b"another-pool-signing-key-0123456789", "mallory@pool", ["DAEMON"], 3600)
    made["expired"] = issue_token(key, "late@pool", ["DAEMON"], lifetime=60, now=time.time() - 3600)
    return made


def test_every_route_and_token_with_malformed_bodies_never_gets_a_500(pool, tokens):
    """Routes x token levels x malformed bodies: every answer is a JSON 4xx (or a 200
    for routes that ignore their body), no daemon dies, and no log records an internal error."""
    before = pids(pool["facts"])
    bad = []
    for daemon, address, route in every_route(pool["facts"]):
        for level, token in tokens.items():
            for kind, body in MALFORMED_BODIES.items():
                answer = send(address, request_bytes(route, body, token))
                if answer.status in FORBIDDEN_STATUS or answer.status >= 500 and answer.status != 503:
                    bad.append(f"{daemon} {route.name} token={level} body={kind}: {answer.status} {answer.body[:200]!r}")
                elif answer.status >= 400:
                    assert set(answer.json()) == {"error", "message"}, (daemon, route.name, answer.body[:200])
        huge = request_bytes(route, b"", tokens["DAEMON"]).replace(b"Content-Length: 0", b"Content-Length: %d" % HUGE_BODY_BYTES)
        answer = send(address, huge + b"x" * 65536)
        assert answer.status == 413, (daemon, route.name, answer.status)
    assert bad == []
    assert pids(pool["facts"]) == before
    for log in (pool["dir"] / "log").glob("*Log"):
        text = log.read_text(errors="replace")
        assert "unexpected error answering" not in text and "Traceback" not in text, log.name


def test_overlong_url_and_headers_at_a_real_daemon_get_414_and_431(pool, tokens):
    """The schedd answers a 20 KiB URL with 414 and a 40 KiB header with 431, both JSON."""
    schedd = pool["facts"]["daemons"]["SCHEDD"]
    long_url = encode_request("GET", "/v1/ping?x=" + "a" * 20_000, headers={"Connection": "close"})
    assert send(schedd, long_url).status == 414
    big_header = request_bytes(daemon_routes.PING, b"", None, headers={"X-Big": "b" * 40_000})
    answer = send(schedd, big_header)
    assert answer.status == 431 and answer.json()["error"] == "headers_too_large"
    assert ping(schedd)[0] < 5


@pytest.fixture(scope="module")
def crowd(pool, tokens, tmp_path_factory):
    """Ads for hostile queries to grind through: 300 collector ads and 100 held jobs."""
    from daemoncore.wire.blocking_client import BlockingClient

    ads = [{"Name": f"crowd{n}@example.org", "Machine": "example.org", "Owner": "a" * 40} for n in range(300)]
    BlockingClient(pool["facts"]["collector"], token=tokens["DAEMON"], timeout=60).call(
        collector_routes.ADVERTISE, {"ads": ads}, ad_type="Generic")
    work = tmp_path_factory.mktemp("crowd")
    (work / "job.sub").write_text("executable = /bin/true\nhold = true\nrequest_memory = 16M\nqueue 100\n")
    roost(pool["env"], "submit", str(work / "job.sub"))
    return pool


def ping_while(address: str, hostile: bytes) -> dict:
    """Send ``hostile`` to ``address``, then time three pings while it is being
    answered; the pings, whether the hostile answer was still unfinished after them,
    and whether the daemon still answers once the hostile client hangs up."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(hostile)
        time.sleep(0.1)
        timings = [ping(address)[0] for _ in range(3)]
        conn.setblocking(False)
        try:
            answered = conn.recv(1 << 20)
        except BlockingIOError:
            answered = b""
    return {"timings": timings, "best": min(timings), "in_flight": not answered.endswith(b"0\r\n\r\n"),
            "alive_after": ping(address)[0] < 5}


@pytest.mark.parametrize("constraint", [REDOS, DOUBLING], ids=["redos", "doubling"])
@pytest.mark.parametrize("daemon", ["COLLECTOR", "SCHEDD"])
def test_ping_answers_within_200_ms_while_a_read_user_runs_a_hostile_query(crowd, tokens, daemon, constraint):
    """A READ user's query with a catastrophic regexp, or a string doubled 40 times, over
    many ads, does not keep the daemon from answering /v1/ping within 200 ms (best of 3);
    needs ClassAd's regexp and string bounds."""
    address = crowd["facts"]["daemons"][daemon]
    route = collector_routes.QUERY if daemon == "COLLECTOR" else schedd_routes.QUERY
    hostile = request_bytes(route, json.dumps({"constraint": constraint}).encode(), tokens["READ"], ad_type="Generic")
    outcome = ping_while(address, hostile)
    print(f"{daemon} {constraint[:20]}...: pings {[round(t * 1000, 1) for t in outcome['timings']]} ms, "
          f"hostile query still running: {outcome['in_flight']}")
    assert outcome["best"] < PING_BOUND_SECONDS, outcome
    assert outcome["alive_after"]


def test_transfer_key_never_reaches_the_schedd_log(pool, tmp_path):
    """A job with input and output files runs; its transfer calls are in ScheddLog's
    access lines, but without a query string, and no log names the transfer key. The
    input is larger than what travels inside ACTIVATE, so the starter fetches it."""
    payload = "p" * (INLINE_BYTES + 1) + "\n"
    (tmp_path / "job.sh").write_text("#!/bin/sh\ncat in.txt > out.txt\n")
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "in.txt").write_text(payload)
    (tmp_path / "job.sub").write_text(
        f"executable = {tmp_path / 'job.sh'}\ninitialdir = {tmp_path}\ntransfer_input_files = in.txt\n"
        "transfer_output_files = out.txt\nshould_transfer_files = YES\nlog = job.log\nrequest_memory = 16M\nqueue\n")
    done = roost(pool["env"], "submit", str(tmp_path / "job.sub"))
    cluster = int(done.stdout.strip().rsplit(" ", 1)[1].rstrip("."))
    roost(pool["env"], "wait", "-wait", "60", str(tmp_path / "job.log"), timeout=90)
    assert (tmp_path / "out.txt").read_text() == payload
    schedd_log = (pool["dir"] / "log" / "ScheddLog").read_text()
    transfer_lines = [line for line in schedd_log.splitlines() if f"/v1/jobs/{cluster}.0/" in line]
    assert any("/input HTTP/1.1" in line for line in transfer_lines)
    assert any("/output HTTP/1.1" in line for line in transfer_lines)
    assert not any("?" in line.split('"')[1] for line in transfer_lines if line.count('"') >= 2)
    for log in (pool["dir"] / "log").iterdir():
        if log.is_file():
            assert "transfer_key" not in log.read_text(errors="replace"), log.name


def test_daemon_logs_are_0600_in_a_0700_directory(pool):
    """Every daemon's log (and the master's stderr capture) is readable by its owner only."""
    log_dir = pool["dir"] / "log"
    assert stat.S_IMODE(os.stat(log_dir).st_mode) == 0o700
    logs = sorted(path for path in log_dir.iterdir() if path.name.endswith(("Log", "Log.stderr")))
    assert {path.name for path in logs} >= {"MasterLog", "CollectorLog", "ScheddLog", "StartdLog", "NegotiatorLog"}
    assert {path.name: oct(stat.S_IMODE(os.stat(path).st_mode)) for path in logs} == \
        {path.name: oct(0o600) for path in logs}
