"""Metrics and the GPU view on a personal pool with a simulated card: every daemon's
/metrics wants a READ token; while two GPU shares run, the startd's metrics show both
jobs' allocations on the card, and ``roost status -gpus`` shows the same card, shares
and jobs."""

from __future__ import annotations

import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from daemoncore.security import issue_token, load_signing_key
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.daemon_routes import METRICS
from daemoncore.wire.errors import RemoteError
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_GPU_DISCOVERY": "simulated:1xA100:40G", "_ROOST_NUM_CPUS": "4"}
MIB = 1024 * 1024

SHARES = """executable = /bin/sleep
arguments = 120
request_cpus = 1
request_memory = 32M
request_gpu_memory = 10000
request_gpu_cores = 30
queue 2
"""


@pytest.fixture(scope="module")
def reader(pool) -> str:
    key = load_signing_key(str(pool["dir"] / "passwords.d" / "POOL"))
    return issue_token(key, "scraper@pool", ["READ"], lifetime=3600)


def addresses(pool) -> dict[str, str]:
    return {**pool["facts"]["daemons"], "MASTER": pool["facts"]["master"]}


def scrape(address: str, token: str | None) -> dict:
    """Each sample of the daemon's /metrics: (name, sorted labels) to value."""
    text = BlockingClient(address, token=token, timeout=30).call(METRICS).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_every_daemon_wants_a_read_token(pool, reader):
    """Without a token each daemon refuses a scrape (401); with a READ token each answers."""
    for daemon, address in addresses(pool).items():
        with pytest.raises(RemoteError) as refused:
            scrape(address, None)
        assert refused.value.status == 401, daemon
        assert scrape(address, reader), daemon


def _shares_of(samples: dict) -> dict[str, float]:
    return {dict(labels)["uuid"]: value for (name, labels), value in samples.items() if name == "roost_gpu_shares"}


def test_metrics_and_status_show_the_running_shares(pool, tmp_path, monkeypatch, reader):
    """Two 10000 MiB / 30% shares on one card: the startd's metrics count two shares and
    each job's allocation; roost status -gpus shows the card with 2 shares and both jobs."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shares.sub").write_text(SHARES)
    cluster = submitted_cluster(roost(pool["env"], "submit", "shares.sub"))
    jobs = {f"{cluster}.0", f"{cluster}.1"}
    startd = addresses(pool)["STARTD"]
    try:
        samples = wait_for(lambda: (lambda got: got if 2 in _shares_of(got).values() else None)(
            scrape(startd, reader)), seconds=90, what="two shares in the startd's metrics")
        [uuid] = _shares_of(samples)
        for job in jobs:
            assert samples[("roost_gpu_memory_allocated_bytes", (("job", job), ("uuid", uuid)))] == 10000 * MIB
            assert samples[("roost_gpu_core_allocated_ratio", (("job", job), ("uuid", uuid)))] == 0.3
        assert samples[("roost_gpu_memory_free_bytes", (("uuid", uuid),))] == (40960 - 20000) * MIB

        def card_line():
            lines = roost(pool["env"], "status", "-gpus").stdout.splitlines()
            row = lines[2].split() if len(lines) > 2 else []
            return row if row and row[-2] == "2" else None
        row = wait_for(card_line, seconds=60, what="roost status -gpus to show two shares")
        assert set(row[-1].split(",")) == jobs
        assert row[-6:-2] == ["20000", "20960", "60%", "40%"]
    finally:
        roost(pool["env"], "rm", str(cluster), check=False)
        time.sleep(0.5)

