"""Integration test: real collector and negotiator processes on loopback, and a fake
schedd (just RESOURCE_REQUESTS and MATCHES) served by a real twisted site in this
process, its reactor running in a background thread."""

import os
import signal
import subprocess
import sys
import threading

import pytest
from twisted.internet import reactor
from twisted.internet.threads import blockingCallFromThread

from bindings.cli.userprio import main as userprio
from bindings.negotiator import Negotiator
from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import collector_routes, negotiator_routes
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError
from daemoncore.wire.server import ApiResource, make_site
from tests.negotiator.in_memory_pool import FakeSchedd, slot, submitter_ad
from tests.support.waiting import read_address, wait_for


@pytest.fixture(scope="module")
def running_reactor():
    """The global reactor running in a daemon thread for the fake schedd's site."""
    if not reactor.running:
        threading.Thread(target=reactor.run, kwargs={"installSignalHandlers": False}, daemon=True).start()
        wait_for(lambda: reactor.running, what="the reactor starting")
    return reactor


def start(name, env, directory):
    address_file = str(directory / f".{name}_address")
    process = subprocess.Popen([sys.executable, "-m", name, "--port", "0", "--address-file", address_file],
                               env=env, stderr=subprocess.PIPE, text=True)
    try:
        return process, read_address(address_file)
    except AssertionError:
        process.kill()
        raise AssertionError(f"{name} did not start: {process.communicate()[1]}") from None


@pytest.fixture
def pool(tmp_path, running_reactor, monkeypatch):
    """A collector, a negotiator cycling every second and a fake schedd, all on 127.0.0.1."""
    key_file = tmp_path / "POOL"
    key = create_signing_key(str(key_file))
    config = tmp_path / "config"
    config.write_text(
        f"LOCAL_DIR = {tmp_path}\nLOG = {tmp_path}\nSPOOL = {tmp_path}/spool\n"
        f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {key_file}\nTRUST_DOMAIN = pool\n"
        "NEGOTIATOR_INTERVAL = 1\nNEGOTIATOR_MIN_INTERVAL = 0\nNEGOTIATOR_UPDATE_INTERVAL = 1\n")
    env = {**os.environ, "ROOST_CONFIG": str(config), "HOME": str(tmp_path)}
    env.pop("ROOST_TOKEN", None)
    processes = []
    collector, collector_address = start("collector", env, tmp_path)
    processes.append(collector)
    negotiator, _ = start("negotiator", {**env, "_ROOST_COLLECTOR_HOST": collector_address}, tmp_path)
    processes.append(negotiator)
    schedd = FakeSchedd()
    resource = ApiResource(schedd.handlers(), token_verifier(key, running_reactor))
    port = blockingCallFromThread(running_reactor, running_reactor.listenTCP, 0, make_site(resource),
                                  interface="127.0.0.1")
    admin = tmp_path / "admin.token"
    admin.write_text(issue_token(key, "admin@pool", ["READ", "WRITE", "ADMINISTRATOR"]) + "\n")
    monkeypatch.setenv("ROOST_CONFIG", str(config))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ROOST_TOKEN", str(admin))
    daemon = BlockingClient(collector_address, token=issue_token(key, "startd@pool", ["DAEMON"]), timeout=10)
    yield {"collector": collector_address, "daemon": daemon, "schedd": schedd, "negotiator": negotiator,
           "schedd_address": f"127.0.0.1:{port.getHost().port}", "key": key, "dir": tmp_path}
    blockingCallFromThread(running_reactor, port.stopListening)
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def advertise(pool, ad_type, ads, private=False):
    pool["daemon"].call(collector_routes.ADVERTISE, {"ads": ads, "private": private}, ad_type=ad_type)


def test_negotiator_matches_a_schedds_jobs_and_reports_priorities(pool, capsys):
    """Slots and a submitter in the collector become matches posted to the schedd with their
    ClaimIds; the claimed slot's owner then shows in getPriorities and roost userprio."""
    schedd = pool["schedd"]
    schedd.add_requests("alice@pool", "alice", 3)
    advertise(pool, "Machine", [slot("slot1@a", startd="127.0.0.1:9801"), slot("slot1@b", startd="127.0.0.1:9802"),
                                slot("slot1@c", cpus=4, state="Claimed", RemoteOwner="bob@pool")])
    advertise(pool, "Machine", [{"Name": "slot1@a", "ClaimId": "cap-a"}, {"Name": "slot1@b", "ClaimId": "cap-b"}],
              private=True)
    advertise(pool, "Submitter", [submitter_ad("alice@pool", pool["schedd_address"], idle=3)])

    matched = wait_for(lambda: schedd.matched(), what="matches reaching the schedd")
    assert sorted((m["slot_name"], m["claim_id"]) for m in matched) == [("slot1@a", "cap-a"), ("slot1@b", "cap-b")]
    assert all(m["request_id"] == "alice@pool#1" for m in matched)

    negotiator = located_negotiator(pool["collector"])
    bob = wait_for(lambda: [ad for ad in negotiator.getPriorities() if ad["Name"] == "bob@pool"],
                   what="bob's usage being charged")[0]
    assert bob["ResourcesUsed"] == 4 and bob["PriorityFactor"] == 1000

    negotiator.setFactor("alice@pool", 5)
    factors = {ad["Name"]: ad["PriorityFactor"] for ad in negotiator.getPriorities()}
    assert factors["alice@pool"] == 5
    negotiator.resetUsage("bob@pool")
    with pytest.raises(RemoteError) as caught:
        negotiator.setFactor("alice@pool", 0.1)
    assert caught.value.status == 400

    capsys.readouterr()
    assert userprio(["-pool", pool["collector"], "-allusers"]) == 0
    table = capsys.readouterr().out
    assert "bob@pool" in table and "alice@pool" in table and "Effective" in table
    assert userprio(["-pool", pool["collector"], "-setfactor", "carol@pool", "3"]) == 0
    assert "carol@pool" in capsys.readouterr().out


def located_negotiator(collector: str) -> Negotiator:
    """The negotiator once its ad is in the collector: it writes its address file before
    its first update reaches the collector."""
    def locate():
        try:
            return Negotiator(collector)
        except ValueError:
            return None
    return wait_for(locate, what="the negotiator's ad in the collector")


def test_reschedule_and_clean_shutdown_keep_the_accountant(pool):
    """RESCHEDULE answers a DAEMON caller; SIGTERM stops the negotiator cleanly with its SQLite in SPOOL."""
    negotiator = located_negotiator(pool["collector"])
    client = BlockingClient(negotiator.address, token=issue_token(pool["key"], "schedd@pool", ["DAEMON"]), timeout=10)
    assert client.call(negotiator_routes.RESCHEDULE, {})["started"] is True
    negotiator.setFactor("dave@pool", 7)
    pool["negotiator"].send_signal(signal.SIGTERM)
    assert pool["negotiator"].wait(timeout=15) == 0
    assert (pool["dir"] / "spool" / "Accountant.sqlite").exists()
