"""Web pages at scale: a real collector filled with 10,000 synthetic slot ads and a real
schedd with 100,000 jobs; the site's background read of the pool (its snapshot, over the
REST routes) and then each page built from it as the WEB daemon builds it (the same data
and templates), timed beside a bare collector query of the same slots in the same run;
prints each page's time, its ratio to the bare query, and whether it is under the 200 ms
the issue asks for. The snapshot's time is how stale a page can be, not what a request waits.

    python benchmarks/web_pages.py [--slots 10000] [--jobs 100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.collector_load import machine_ad  # noqa: E402
from benchmarks.schedd_queue import JOB, start_schedd  # noqa: E402
from daemoncore.security import issue_token  # noqa: E402
from daemoncore.wire import collector_routes, schedd_routes  # noqa: E402
from daemoncore.wire.blocking_client import BlockingClient  # noqa: E402
from web.reader import SLOT_ATTRS, PoolReader  # noqa: E402
from web.render import render_page  # noqa: E402
from web.snapshot import Snapshot, take_snapshot  # noqa: E402
from web.store import HistoryStore, JobSample  # noqa: E402
from web.views import PAGES  # noqa: E402

BUDGET_SECONDS = 0.200
BATCH = 2000


def start_daemon(directory: str, module: str, collector: str = "") -> tuple[subprocess.Popen, str]:
    """Daemon ``module`` (``collector``, ``web``) with the schedd's config (its key, its
    directory) and ``collector`` as its COLLECTOR_HOST; its process and address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ROOST_") and k != "COLLECTOR_HOST"}
    env.update({"ROOST_CONFIG": os.path.join(directory, "config"), "_ROOST_COLLECTOR_HOST": collector})
    address_file = os.path.join(directory, f".{module}_address")
    process = subprocess.Popen([sys.executable, "-m", module, "--address-file", address_file], env=env,
                               stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not os.path.exists(address_file):
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit(f"the {module} did not start; see its log in {directory}")
        time.sleep(0.05)
    with open(address_file, encoding="utf-8") as handle:
        return process, handle.read().strip().strip("<>")


def fill(collector: str, schedd: str, key: bytes, slots: int, jobs: int, directory: str) -> None:
    """Advertise ``slots`` slot ads and the schedd's ad; submit ``jobs`` jobs to the schedd."""
    daemon = BlockingClient(collector, token=issue_token(key, "bench@pool", ["DAEMON"]), timeout=600)
    ads = [machine_ad(n) for n in range(slots)]
    for start in range(0, slots, BATCH):
        daemon.call(collector_routes.ADVERTISE, {"ads": ads[start:start + BATCH]}, ad_type="Startd")
    daemon.call(collector_routes.ADVERTISE, {"ads": [{"MyType": "Scheduler", "Name": "schedd@bench",
                                                       "MyAddress": f"<{schedd}>", "ClassAdLifetime": 3600}]},
                ad_type="Scheduler")
    writer = BlockingClient(schedd, token=issue_token(key, "bench@pool", ["WRITE"]), timeout=600)
    writer.call(schedd_routes.SUBMIT, {"description": JOB + f"batch_name = bench\nqueue {jobs}\n", "iwd": directory})


def fetch(url: str) -> bytes:
    """The body of ``url`` (the site lets this loopback caller in as the pool's owner).

    Raises:
        SystemExit: the page did not answer 200.
    """
    with urllib.request.urlopen(url, timeout=600) as answer:
        if answer.status != 200:
            raise SystemExit(f"{url} answered {answer.status}")
        return answer.read()


def best_of(rounds: int, work) -> float:
    """The median time of ``rounds`` runs of ``work`` (seconds)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def page_work(path: str, snapshot: Snapshot, store: HistoryStore):
    """Build page ``path`` as the site does: its data from the snapshot, its HTML."""
    def work() -> None:
        view = PAGES[path](snapshot, store, time.time())
        render_page(view.template, here=path, collector="bench", data=view.data, refresh=path, **view.extra)
    return work


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="roost-bench-web-") as directory:
        schedd_process, schedd, key = start_schedd(directory)
        collector_process, collector = start_daemon(directory, "collector")
        processes = [collector_process, schedd_process]
        try:
            fill(collector, schedd, key, args.slots, args.jobs, directory)
            token = issue_token(key, "bench@pool", ["READ"])
            reader = PoolReader(collector, token)
            store = HistoryStore(":memory:", max_rows=2000)
            now = time.time()
            for n in range(1440):
                store.record(JobSample(now - 86400 + n * 60, n % 50, args.jobs - n, n % 7))
            bare_client = BlockingClient(collector, token=token, timeout=600)
            body = {"constraint": "true", "projection": list(SLOT_ATTRS), "limit": args.slots}
            bare = best_of(args.rounds, lambda: list(bare_client.stream(collector_routes.QUERY, body,
                                                                       ad_type="Machine")))
            print(f"{args.slots} slots, {args.jobs} jobs; median of {args.rounds} rounds")
            print(f"bare collector query of the slots: {bare * 1000:.1f} ms")
            started = time.perf_counter()
            snapshot = take_snapshot(reader, time.time())
            print(f"the site's background read of the pool (slots, jobs, schedds, negotiator): "
                  f"{time.perf_counter() - started:.2f} s for {snapshot.pool['slot_count']} slots and {snapshot.queue['job_count']} jobs")
            for path in ("/pool", "/gpus", "/queue", "/fairshare", "/flocking"):
                seconds = best_of(args.rounds, page_work(path, snapshot, store))
                verdict = "under" if seconds < BUDGET_SECONDS else "OVER"
                print(f"{path:<11} {seconds * 1000:8.1f} ms  {seconds / bare:6.2f}x the bare query  "
                      f"({verdict} {BUDGET_SECONDS * 1000:.0f} ms)")
            web_process, web = start_daemon(directory, "web", collector)
            processes.insert(0, web_process)
            first = best_of(1, lambda: fetch(f"http://{web}/pool"))
            print(f"over HTTP from the WEB daemon (first page, waiting for its first read: {first:.2f} s):")
            for path in ("/pool", "/gpus", "/queue", "/fairshare", "/flocking", "/pool?format=json"):
                seconds = best_of(args.rounds, lambda: fetch(f"http://{web}{path}"))
                verdict = "under" if seconds < BUDGET_SECONDS else "OVER"
                print(f"{path:<18} {seconds * 1000:8.1f} ms  {seconds / bare:6.2f}x the bare query  "
                      f"({verdict} {BUDGET_SECONDS * 1000:.0f} ms)")
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
