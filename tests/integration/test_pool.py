"""A real pool started with `roost pool up`: ads advertised through bindings.Collector,
read back with `roost status` in its forms, tokens enforced, ads expiring, and a
daemon killed with SIGKILL restarted by the master."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

import bindings
from bindings.pool import NO_POOL
from daemoncore.security import issue_token, load_signing_key
from daemoncore.wire import collector_routes as api
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError, Unreachable
from tests.integration.conftest import isolated_env, roost
from tests.support.waiting import wait_for

SLOTS = [
    {"Name": f"slot{n}@node{m}.example.org", "Machine": f"node{m}.example.org", "OpSys": "LINUX",
     "Arch": "X86_64", "State": "Claimed" if n == 1 else "Unclaimed", "Activity": "Busy" if n == 1 else "Idle",
     "LoadAvg": 0.5 * n, "Memory": 1024 * n, "Cpus": 1}
    for m in (1, 2) for n in (1, 2)
]

#: These tests count every slot in the pool, so the pool runs no startd of its own.
POOL_DAEMON_LIST = "MASTER, COLLECTOR"


def as_daemon(pool):
    """Make this process's bindings send the pool's DAEMON token."""
    pool["patch"].setenv("ROOST_TOKEN", str(pool["dir"] / "tokens" / "daemon"))


def as_user(pool):
    pool["patch"].delenv("ROOST_TOKEN", raising=False)


@pytest.fixture(scope="module")
def slots(pool):
    as_daemon(pool)
    # an hour and a minute in the current activity, counted from when they are advertised
    entered = int(time.time()) - 3661
    for slot in SLOTS:
        slot["EnteredCurrentActivity"] = entered
    bindings.Collector().advertise(SLOTS, "UPDATE_STARTD_AD")
    as_user(pool)
    return SLOTS


def test_pool_status_lists_the_master_and_the_collector(pool):
    """`roost pool status` shows both daemons with their pids and addresses."""
    out = roost(pool["env"], "pool", "status").stdout
    assert str(pool["facts"]["master_pid"]) in out
    assert pool["facts"]["collector"] in out
    assert "MASTER" in out and "COLLECTOR" in out and "ready" in out


def test_pool_up_again_finds_the_running_pool(pool):
    """A second `roost pool up` on the same directory starts nothing new."""
    out = roost(pool["env"], "pool", "up", "--dir", str(pool["dir"])).stdout
    assert "already running" in out and str(pool["facts"]["master_pid"]) in out


def test_default_table_shows_slots_and_totals(pool, slots):
    """The slot table has condor_status's columns, one row per slot and the totals block
    (totals.cpp StartdNormalTotal: Total Owner Claimed Unclaimed Matched Preempting Drain
    Backfill BkIdle)."""
    out = roost(pool["env"], "status").stdout
    lines = out.splitlines()
    assert lines[0].split() == ["Name", "OpSys", "Arch", "State", "Activity", "LoadAv", "Mem", "ActvtyTime"]
    assert "slot2@node1.exampl LINUX      X86_64 Unclaimed Idle      1.000 2048  0+01:01:" in out
    assert any(line.split() == ["X86_64/LINUX", "4", "0", "2", "2", "0", "0", "0", "0", "0"] for line in lines)
    assert any(line.split() == ["Total", "4", "0", "2", "2", "0", "0", "0", "0", "0"] for line in lines)


def test_autoformat_with_a_constraint(pool, slots):
    """-af prints the values space-separated, -af:, comma-separated, for the ads that match."""
    out = roost(pool["env"], "status", "-constraint", "Memory > 1024", "-af", "Name", "Memory").stdout
    assert out == "slot2@node1.example.org 2048\nslot2@node2.example.org 2048\n"
    out = roost(pool["env"], "status", "-af:,", "Name", "State", "-constraint", 'State == "Claimed"').stdout
    assert out == "slot1@node1.example.org,Claimed\nslot1@node2.example.org,Claimed\n"


def test_long_and_json_forms(pool, slots):
    """-l prints the old syntax and -json a JSON array, for the same ads."""
    long_out = roost(pool["env"], "status", "-l", "slot1@node2.example.org").stdout
    assert 'Name = "slot1@node2.example.org"' in long_out and "Memory = 1024" in long_out
    ads = json.loads(roost(pool["env"], "status", "-json").stdout)
    assert sorted(ad["Name"] for ad in ads) == sorted(slot["Name"] for slot in SLOTS)


def test_condor_status_style_daemon_queries(pool):
    """-master and -collector list the pool's own daemons, which bindings can locate."""
    assert "master@" in roost(pool["env"], "status", "-master").stdout
    out = roost(pool["env"], "status", "-collector", "-af", "MyAddress").stdout
    assert out.strip() == f"<{pool['facts']['collector']}>"
    ad = bindings.Collector().locate(bindings.DaemonType.Master)
    assert ad["MyAddress"] == f"<{pool['facts']['master']}>"


def test_ads_expire_after_their_lifetime(pool):
    """An ad advertised with ClassAdLifetime = 1 is gone a few seconds later."""
    as_daemon(pool)
    collector = bindings.Collector()
    collector.advertise([{"MyType": "Generic", "Name": "brief", "ClassAdLifetime": 1}], "UPDATE_AD_GENERIC")
    as_user(pool)
    assert [ad["Name"] for ad in collector.query(bindings.AdType.Generic)] == ["brief"]
    wait_for(lambda: collector.query(bindings.AdType.Generic) == [], seconds=6, what="the expired ad going")


def test_no_token_is_401_and_a_read_token_cannot_advertise(pool):
    """The collector refuses a tokenless query (401) and an advertise with a READ token (403)."""
    with pytest.raises(RemoteError) as refused:
        BlockingClient(pool["facts"]["collector"], timeout=10).call(api.QUERY, {}, ad_type="Machine")
    assert refused.value.status == 401
    key = load_signing_key(str(pool["dir"] / "passwords.d" / "POOL"))
    pool["patch"].setenv("ROOST_TOKEN", issue_token(key, "reader@pool", ["READ"]))
    try:
        with pytest.raises(RemoteError) as forbidden:
            bindings.Collector().advertise([{"Name": "sneaky"}])
    finally:
        as_user(pool)
    assert forbidden.value.status == 403


def test_status_without_a_pool_says_how_to_start_one(tmp_path):
    """With no pool configured or started, roost status prints the one-line hint and exits 1."""
    done = roost(isolated_env(tmp_path), "status", check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == f"roost status: {NO_POOL}"


def test_a_daemon_killed_with_sigkill_is_restarted(pool, slots):
    """The master restarts a SIGKILLed collector on the same address and logs why."""
    old_pid = collector_pid(pool)
    os.kill(old_pid, signal.SIGKILL)

    def restarted():
        new_pid = collector_pid(pool, ready_only=True)
        return new_pid not in (None, old_pid)

    wait_for(restarted, seconds=15, what="the master restarting the collector")
    log = (pool["dir"] / "log" / "MasterLog").read_text()
    assert f"COLLECTOR (pid {old_pid}) was killed by SIGKILL" in log
    assert roost(pool["env"], "status", "-collector", "-af", "MyAddress").stdout.strip() == \
        f"<{pool['facts']['collector']}>"


def unreachable(address: str) -> bool:
    """Whether nothing answers at ``address`` any more."""
    try:
        BlockingClient(address, timeout=1).call(api.QUERY, {}, ad_type="Machine")
    except Unreachable:
        return True
    except RemoteError:
        pass
    return False


def collector_pid(pool, ready_only=False):
    out = roost(pool["env"], "pool", "status").stdout
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "COLLECTOR":
            if ready_only and "ready" not in fields:
                return None
            return int(fields[1]) if fields[1].isdigit() else None
    return None


def test_no_daemon_outlives_a_master_killed_with_sigkill(tmp_path):
    """If the master itself is SIGKILLed, its daemons stop by themselves (or `roost pool
    down` finds and stops any still running): the collector no longer answers."""
    env = isolated_env(tmp_path)
    directory = tmp_path / "pool"
    try:
        roost(env, "pool", "up", "--dir", str(directory))
        facts = json.loads((directory / "pool.json").read_text())
        os.kill(facts["master_pid"], signal.SIGKILL)
        roost(env, "pool", "down", "--dir", str(directory), check=False)
        wait_for(lambda: unreachable(facts["collector"]), seconds=10, what="the collector stopping")
        with pytest.raises(Unreachable):
            BlockingClient(facts["collector"], timeout=2).call(api.QUERY, {}, ad_type="Machine")
    finally:
        roost(env, "pool", "down", "--dir", str(directory), check=False)
