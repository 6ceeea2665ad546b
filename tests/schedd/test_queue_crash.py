"""kill -9 of a process in the middle of a stream of submits loses no acknowledged
cluster and leaves no half cluster."""

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from schedd.queue import JobQueue

pytestmark = pytest.mark.integration  # kills a submitting process

ROOT = Path(__file__).resolve().parents[2]


def _run_and_kill(spool: Path, seed: int, after: float, chunk: int | None = None) -> list[tuple[int, int]]:
    """Start the submitter (storing ``chunk`` procs per transaction when given), kill it
    with SIGKILL ``after`` seconds after it is ready, and return the clusters it acknowledged."""
    chunked = [] if chunk is None else [str(chunk)]
    proc = subprocess.Popen([sys.executable, "-m", "tests.schedd.crash_submitter", str(spool), str(seed), *chunked],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    acked: list[tuple[int, int]] = []
    ready = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            if line.startswith("READY"):
                ready.set()
            elif line.startswith("ACK"):
                _, cluster, count = line.split()
                acked.append((int(cluster), int(count)))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert ready.wait(30), "the submitter did not start"
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    reader.join(10)
    return acked


def test_kill_9_during_submits_loses_nothing_acknowledged(tmp_path):
    """Every acknowledged cluster is complete after SIGKILLs; no cluster is partial."""
    rng = random.Random(1234)
    acked: list[tuple[int, int]] = []
    for round_ in range(6):
        acked += _run_and_kill(tmp_path, seed=round_, after=rng.uniform(0.05, 0.6))
    assert len(acked) > 20, "the submitter acknowledged too few clusters to prove anything"
    _assert_whole(tmp_path, acked)


def test_kill_9_during_chunked_submits_loses_nothing_acknowledged(tmp_path):
    """Clusters stored 7 procs per transaction: after SIGKILLs (each restart dropping the
    cluster left incoming), every acknowledged cluster is complete and none is partial."""
    rng = random.Random(4321)
    acked: list[tuple[int, int]] = []
    for round_ in range(4):
        acked += _run_and_kill(tmp_path, seed=round_, after=rng.uniform(0.05, 0.6), chunk=7)
    assert len(acked) > 20, "the submitter acknowledged too few clusters to prove anything"
    _assert_whole(tmp_path, acked)


def _assert_whole(tmp_path: Path, acked: list[tuple[int, int]]) -> None:
    """The queue left in ``tmp_path`` holds every ``acked`` cluster whole, no other
    cluster in part, and no cluster still incoming once opened."""
    queue = JobQueue(tmp_path, time.time)
    assert queue.db.db.execute("SELECT COUNT(*) FROM incoming_clusters").fetchone()[0] == 0
    try:
        procs: dict[int, list[int]] = {}
        expected: dict[int, int] = {}
        for ad in queue.query(projection=["ClusterId", "ProcId", "ExpectedProcs"]):
            procs.setdefault(ad["ClusterId"], []).append(ad["ProcId"])
            expected[ad["ClusterId"]] = ad["ExpectedProcs"]
        for cluster_id, count in acked:
            assert sorted(procs.get(cluster_id, [])) == list(range(count)), f"cluster {cluster_id} lost jobs"
        for cluster_id, found in procs.items():
            assert sorted(found) == list(range(expected[cluster_id])), f"cluster {cluster_id} is partial"
        acked_ids = [c for c, _ in acked]
        assert len(set(acked_ids)) == len(acked_ids), "a cluster id was handed out twice"
        assert set(queue.db.cluster_ids()) == set(procs)
        assert queue.db.peek_cluster_id() > max(procs)
    finally:
        queue.close()
