"""Integration tests: a real collector process on a loopback port, driven through
the blocking client."""

import os
import signal
import subprocess
import sys

import pytest

from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import collector_routes as api
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.daemon_routes import METRICS, PING
from daemoncore.wire.errors import RemoteError, Unreachable
from tests.support.waiting import read_address, wait_for

pytestmark = pytest.mark.integration  # starts a collector process


@pytest.fixture
def collector(tmp_path):
    """A collector process with its own config, key and log directory."""
    key_file = tmp_path / "POOL"
    key = create_signing_key(str(key_file))
    config = tmp_path / "config"
    config.write_text(
        f"LOCAL_DIR = {tmp_path}\nLOG = {tmp_path}\nSEC_TOKEN_POOL_SIGNING_KEY_FILE = {key_file}\n"
        "CLASSAD_LIFETIME = 900\nCOLLECTOR_SWEEP_INTERVAL = 1\nTRUST_DOMAIN = pool\n"
    )
    env = {**os.environ, "ROOST_CONFIG": str(config), "HOME": str(tmp_path)}
    address_file = tmp_path / ".collector_address"
    process = subprocess.Popen([sys.executable, "-m", "collector", "--port", "0"], env=env,
                               stderr=subprocess.PIPE, text=True)
    try:
        address = read_address(address_file)
    except AssertionError:
        process.kill()
        raise AssertionError(process.communicate()[1]) from None
    yield {"address": address, "key": key, "process": process, "dir": tmp_path}
    if process.poll() is None:
        process.kill()
        process.wait()


def client(collector, level=None):
    token = issue_token(collector["key"], f"{(level or 'anon').lower()}@pool", [level]) if level else None
    return BlockingClient(collector["address"], token=token, timeout=10)


def test_advertise_and_query_over_loopback(collector):
    """Ads advertised with a DAEMON token are streamed back to a READ query with a constraint."""
    ads = [{"Name": f"slot{n}@host", "Cpus": n, "Memory": 1024} for n in range(1, 51)]
    assert client(collector, "DAEMON").call(api.ADVERTISE, {"ads": ads}, ad_type="Startd") == {"updated": 50}
    found = list(client(collector, "READ").stream(
        api.QUERY, {"constraint": "Cpus > 40", "projection": ["Name", "Cpus"]}, ad_type="Machine"))
    assert sorted(ad["Cpus"] for ad in found) == list(range(41, 51))
    assert all(set(ad) == {"Name", "Cpus"} for ad in found)


def test_collector_ad_is_queryable(collector):
    """The collector answers a query for its own Collector ad."""
    [ad] = client(collector, "READ").call(api.QUERY, {}, ad_type="Collector")
    assert ad["MyAddress"] == f"<{collector['address'].strip('<>')}>"


def test_no_token_is_401_and_read_cannot_advertise(collector):
    """No token gets 401; a READ token cannot advertise (403)."""
    with pytest.raises(RemoteError) as caught:
        client(collector).call(api.QUERY, {}, ad_type="Machine")
    assert caught.value.status == 401
    with pytest.raises(RemoteError) as caught:
        client(collector, "READ").call(api.ADVERTISE, {"ads": [{"Name": "x"}]}, ad_type="Machine")
    assert caught.value.status == 403


def test_bad_constraint_is_400_and_the_daemon_keeps_serving(collector):
    """A bad constraint and garbage bodies get 400s; the collector still answers after."""
    with pytest.raises(RemoteError) as caught:
        client(collector, "READ").call(api.QUERY, {"constraint": "Cpus >"}, ad_type="Machine")
    assert caught.value.status == 400 and "Cpus >" in caught.value.message
    assert client(collector).call(PING)["daemon"] == "COLLECTOR"


def test_ads_expire_in_a_real_process(collector):
    """An ad with a 1 second lifetime is swept out (every second here) soon after."""
    daemon = client(collector, "DAEMON")
    daemon.call(api.ADVERTISE, {"ads": [{"Name": "brief", "ClassAdLifetime": 1}]}, ad_type="Generic")
    assert len(client(collector, "READ").call(api.QUERY, {}, ad_type="Generic")) == 1
    wait_for(lambda: client(collector, "READ").call(api.QUERY, {}, ad_type="Generic") == [], seconds=10,
             what="the expired ad going")


def test_metrics_on_the_same_port(collector):
    """/metrics serves Prometheus text on the daemon's port."""
    client(collector, "DAEMON").call(api.ADVERTISE, {"ads": [{"Name": "m"}]}, ad_type="Machine")
    text = client(collector, "READ").call(METRICS).decode()
    assert 'roost_collector_ads{private="false",type="Machine"} 1.0' in text


def test_sigterm_stops_cleanly(collector):
    """SIGTERM makes the collector exit 0 and remove its address file."""
    collector["process"].send_signal(signal.SIGTERM)
    assert collector["process"].wait(timeout=10) == 0
    assert not (collector["dir"] / ".collector_address").exists()
    log = (collector["dir"] / "CollectorLog").read_text()
    assert "COLLECTOR listening on" in log and "COLLECTOR stopped" in log
    with pytest.raises(Unreachable):
        client(collector, "READ").call(api.QUERY, {}, ad_type="Machine")
