"""What joining guards, on hosts made of network namespaces: a central manager started
with `roost pool up -role central-manager`, two execute hosts joined with `roost pool
join`, and one more host that has not joined yet.

- a join string whose CA fingerprint is not the collector's is refused before the
  token is sent: exit 1, the message gives both fingerprints, nothing is written, and
  the same token still joins once the fingerprint is right;
- exec1's startd token (startd@exec1) advertising a Machine ad of exec2: 403, and the
  collector never holds it (its own ad goes through);
- plain HTTP to a daemon on another host: refused, saying the port speaks TLS;
- a token signed by another pool's key: 401;
- `roost pool leave` on an execute host stops its daemons, and the collector refuses
  its token (401) within one UPDATE_INTERVAL.
"""

from __future__ import annotations

import json
import sys

import pytest

from daemoncore.security import ensure_signing_key, issue_token, write_token
from daemoncore.security.joining import decode_join_string, encode_join_string
from tests.support.netns import QUICK_KNOBS, alive, netns_pool
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

HOSTS = {"cm": ["CentralManager"], "exec1": ["Execute"], "exec2": ["Execute"], "newhost": ["Execute"]}
UPDATE_INTERVAL = float(QUICK_KNOBS["UPDATE_INTERVAL"])
#: Time beyond the update interval for the probe's own round trips on a loaded machine.
SLACK = 2.0

#: Calls one route of a daemon from inside a host's namespace, as that host's daemons
#: do (the pool CA checked), and prints the outcome as JSON: {"status", "answer" or
#: "message", "seconds"}. With "want" and "until" it repeats the call until it gets
#: that status or the time is up.
PROBE = """
import json, sys, time
from daemoncore.security.tls_client import PoolTrust
from daemoncore.wire import collector_routes
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError
given = json.loads(sys.argv[1])
token = open(given["token"]).read().strip() if given.get("token") else None
trust = PoolTrust.from_file(given["ca"]) if given.get("ca") else None
client = BlockingClient(given["address"], token=token, trust=trust, timeout=5)
route = getattr(collector_routes, given["route"])
started = time.monotonic()
while True:
    try:
        if route.streams:
            answer = list(client.stream(route, given.get("body"), **given.get("params", {})))
        else:
            answer = client.call(route, given.get("body"), **given.get("params", {}))
        result = {"status": 200, "answer": answer}
    except RemoteError as exc:
        result = {"status": exc.status, "message": exc.message}
    result["seconds"] = time.monotonic() - started
    if result["status"] == given.get("want", result["status"]) or result["seconds"] >= given.get("until", 0):
        break
    time.sleep(0.1)
print(json.dumps(result))
"""


@pytest.fixture(scope="module")
def pool():
    """The central manager and exec1, exec2 joined and ready; newhost not joined."""
    with netns_pool(HOSTS, {"NUM_CPUS": "1", "MEMORY": "512"}, start=False) as made:
        made.bring_up_central_manager()
        for name in ("exec1", "exec2"):
            made.join(name)
        for name in ("cm", "exec1", "exec2"):
            made.wait_ready(name)
        yield made


def probe(pool, host: str, route: str, address: str, token=None, *, body=None, params=None,
          ca: bool = True, want: int | None = None, until: float = 0) -> dict:
    """The outcome of ``route`` called at ``address`` from ``host`` with ``token`` (a file)."""
    given = {"address": address, "route": route, "token": str(token) if token else None,
             "ca": str(pool[host].directory / "ssl" / "pool_ca.crt") if ca else None,
             "body": body, "params": params or {}, "until": until,
             **({"want": want} if want is not None else {})}
    done = pool.run(host, [sys.executable, "-c", PROBE, json.dumps(given)], timeout=60 + until)
    return json.loads(done.stdout)


def collector(pool) -> str:
    """The collector's address as the joined hosts know it (``CONDOR_HOST``)."""
    return f"<{pool['cm'].address}:9618?tls=1>"


def daemon_token(pool, host: str):
    """The daemon token ``host`` was given when it joined."""
    return pool[host].directory / "tokens" / "daemon"


def machine_ad(name: str, machine: str) -> dict:
    return {"MyType": "Machine", "Name": name, "Machine": machine, "State": "Unclaimed", "Activity": "Idle"}


def ads_named(pool, name: str) -> list[str]:
    """The Machine ads the collector holds with Name ``name`` (asked on the central manager)."""
    done = pool.roost("cm", "status", "-af", "Name", "-constraint", f'Name == "{name}"')
    return done.stdout.split()


def test_a_wrong_fingerprint_is_refused_before_the_token_is_sent(pool):
    """A join string naming another CA fingerprint: exit 1 naming both fingerprints,
    no directory written; the very same token then joins with the right fingerprint,
    so it was never spent."""
    good = decode_join_string(pool.join_string("execute"))
    wrong = "0" * len(good.ca_fingerprint) if good.ca_fingerprint.strip("0") else "1" * len(good.ca_fingerprint)
    bad = encode_join_string(type(good)(good.collector, wrong, good.token))
    host = pool["newhost"]
    config_before = host.config_file.read_text()
    done = pool.roost("newhost", "pool", "join", bad, "--dir", str(host.directory), check=False)
    assert done.returncode == 1, done
    assert "refused" in done.stderr and wrong in done.stderr and good.ca_fingerprint in done.stderr, done.stderr
    assert "nothing was sent" in done.stderr
    assert host.config_file.read_text() == config_before
    assert not any((host.directory / name).exists() for name in ("ssl", "passwords.d", "tokens/daemon", "pool.json"))
    done = pool.join("newhost", encode_join_string(good))
    assert "joined pool" in done.stdout and "startd@newhost" in done.stdout, done.stdout
    pool.stop("newhost")


def test_a_startd_may_not_advertise_another_hosts_machine(pool):
    """startd@exec1 advertising a slot of exec2: 403 naming both, and the collector has no
    such ad; the same token advertising a slot of exec1 is accepted."""
    forged = probe(pool, "exec1", "ADVERTISE", collector(pool), daemon_token(pool, "exec1"),
                   body={"ads": [machine_ad("forged@exec2", "exec2")]}, params={"ad_type": "Machine"})
    assert forged["status"] == 403, forged
    assert "startd@exec1" in forged["message"] and "exec2" in forged["message"], forged
    own = probe(pool, "exec1", "ADVERTISE", collector(pool), daemon_token(pool, "exec1"),
                body={"ads": [machine_ad("probe@exec1", "exec1")]}, params={"ad_type": "Machine"})
    assert own["status"] == 200, own
    try:
        assert ads_named(pool, "probe@exec1") == ["probe@exec1"]
        assert ads_named(pool, "forged@exec2") == []
    finally:
        probe(pool, "exec1", "INVALIDATE", collector(pool), daemon_token(pool, "exec1"),
              body={"names": ["probe@exec1"]}, params={"ad_type": "Machine"})


def test_plain_http_to_a_daemon_on_another_host_is_refused(pool):
    """The central manager speaking plain HTTP to exec1's startd: a 400 saying the port speaks TLS."""
    startd = (pool["exec1"].log_dir / ".startd_address").read_text().strip()
    assert "tls=1" in startd
    plain = startd.strip("<>").split("?")[0]
    answer = probe(pool, "cm", "QUERY", f"<{plain}>", ca=False, params={"ad_type": "Machine"},
                   body={"constraint": "true"})
    assert answer["status"] == 400, answer
    assert "plain HTTP sent to a TLS port" in answer["message"], answer


def test_a_token_of_another_pool_is_refused(pool, tmp_path):
    """A token for this pool's name signed by another pool's key: 401 at the collector."""
    key = ensure_signing_key(str(tmp_path / "OTHER"))
    domain = pool["cm"].namespace
    token = tmp_path / "other-user"
    write_token(str(token), issue_token(key, f"root@{domain}", ["READ", "WRITE"], issuer=domain))
    tmp_path.chmod(0o755)
    answer = probe(pool, "exec1", "QUERY", collector(pool), token, params={"ad_type": "Machine"},
                   body={"constraint": "true"})
    assert answer["status"] == 401, answer
    ours = probe(pool, "exec1", "QUERY", collector(pool), daemon_token(pool, "exec1"),
                 params={"ad_type": "Machine"}, body={"constraint": "true"})
    assert ours["status"] == 200, ours


def test_a_joined_host_starts_again_with_roost_pool_up(pool):
    """After its master stops, `roost pool up -dir` on exec1 starts it with the config the
    join wrote (no signing key there, the same identity), and its slots come back."""
    config = (pool["exec1"].directory / "config").read_text()
    pool.stop("exec1")
    wait_for(lambda: "exec1" not in pool.roost("cm", "status", "-af", "Machine").stdout.split(), 30,
             "exec1's slots gone from the collector")
    done = pool.roost("exec1", "pool", "up", "-dir", str(pool["exec1"].directory), timeout=90)
    assert "collector at" in done.stdout, done.stdout
    assert (pool["exec1"].directory / "config").read_text() == config
    assert not (pool["exec1"].directory / "passwords.d" / "POOL").exists()
    wait_for(lambda: "exec1" in pool.roost("cm", "status", "-af", "Machine").stdout.split(), 30,
             "exec1's slots advertised again")


def test_a_host_that_left_is_refused_within_one_update_interval(pool):
    """`roost pool leave` on exec2: its master stops, its slots leave the collector, and
    the collector answers its token with 401 within one UPDATE_INTERVAL."""
    token = daemon_token(pool, "exec2")
    before = probe(pool, "exec2", "QUERY", collector(pool), token, params={"ad_type": "Machine"},
                   body={"constraint": "true"})
    assert before["status"] == 200, before
    master = pool.masters.pop("exec2")
    done = pool.roost("exec2", "pool", "leave", "--dir", str(pool["exec2"].directory), timeout=90)
    assert "revoked" in done.stdout and "startd@exec2" in done.stdout, done.stdout
    refused = probe(pool, "exec2", "QUERY", collector(pool), token, params={"ad_type": "Machine"},
                    body={"constraint": "true"}, want=401, until=UPDATE_INTERVAL + SLACK)
    assert refused["status"] == 401, refused
    assert refused["seconds"] <= UPDATE_INTERVAL + SLACK, refused
    assert "revoked" in refused["message"], refused
    assert not alive(master)
    wait_for(lambda: "exec2" not in pool.roost("cm", "status", "-af", "Machine").stdout.split(), 10,
             "exec2's slots gone from the collector")

