"""Schedd queue benchmark: starts a real schedd process and measures, from this
process, one cluster of 100,000 procs, 1,000 one-proc clusters in a row, a query of
every job with a 3-attribute projection (ads/s and the schedd's peak RSS), and a
removal of every job by constraint. Prints the figures.

    python benchmarks/schedd_queue.py [--procs 100000] [--clusters 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import psutil

from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.blocking_client import BlockingClient

JOB = "executable = /bin/sleep\narguments = 60\nrequest_memory = 64M\n"


def start_schedd(directory: str) -> tuple[subprocess.Popen, str, bytes]:
    """A schedd process on loopback with its own spool; its process, address and key."""
    key = create_signing_key(os.path.join(directory, "passwords.d", "POOL"))
    config = os.path.join(directory, "config")
    with open(config, "w", encoding="utf-8") as out:
        out.write(f"LOCAL_DIR = {directory}\nLOG = {directory}\nSPOOL = {directory}/spool\n"
                  f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {directory}/passwords.d/POOL\n"
                  f"COLLECTOR_HOST =\nPERIODIC_EXPR_INTERVAL = 3600\nMAX_REQUEST_BYTES = 268435456\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ROOST_") and k != "COLLECTOR_HOST"}
    env["ROOST_CONFIG"] = config
    address_file = os.path.join(directory, ".schedd_address")
    process = subprocess.Popen([sys.executable, "-m", "schedd", "--address-file", address_file], env=env)
    deadline = time.monotonic() + 30
    while not os.path.exists(address_file):
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("the schedd did not start; see its log in " + directory)
        time.sleep(0.05)
    with open(address_file, encoding="utf-8") as handle:
        return process, handle.read().strip().strip("<>"), key


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=100_000)
    parser.add_argument("--clusters", type=int, default=1_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="roost-bench-") as directory:
        process, address, key = start_schedd(directory)
        try:
            client = BlockingClient(address, token=issue_token(key, "bench@pool", ["WRITE"]), timeout=600)
            schedd_ps = psutil.Process(process.pid)
            rss_start = schedd_ps.memory_info().rss
            body = {"description": JOB + f"queue {args.procs}\n", "iwd": directory}
            seconds, answer = timed(lambda: client.call(api.SUBMIT, body))
            print(f"submit one cluster of {answer['num_procs']} procs: {seconds:.2f} s")
            rss_after_big = schedd_ps.memory_info().rss
            small = {"description": JOB + "queue 1\n", "iwd": directory}
            seconds, _ = timed(lambda: [client.call(api.SUBMIT, small) for _ in range(args.clusters)])
            print(f"submit {args.clusters} clusters of 1 proc one after another: {args.clusters / seconds:.0f} clusters/s "
                  f"({seconds:.2f} s)")
            query = {"constraint": "true", "projection": ["ClusterId", "ProcId", "JobStatus"]}
            peak = {"rss": 0}

            def run_query() -> int:
                count = 0
                for _ in client.stream(api.QUERY, query):
                    count += 1
                    if count % 10_000 == 0:
                        peak["rss"] = max(peak["rss"], schedd_ps.memory_info().rss)
                return count
            seconds, count = timed(run_query)
            peak["rss"] = max(peak["rss"], schedd_ps.memory_info().rss)
            print(f"query {count} jobs, projection of 3 attributes: {seconds:.2f} s ({count / seconds:.0f} ads/s)")
            constrained = {"constraint": "JobStatus == 1 && ProcId >= 0", "projection": ["ClusterId", "ProcId", "Owner"]}
            seconds, count = timed(lambda: sum(1 for _ in client.stream(api.QUERY, constrained)))
            print(f"query {count} jobs with a constraint, projection of 3: {seconds:.2f} s ({count / seconds:.0f} ads/s)")
            mib = 1024 * 1024
            print(f"schedd RSS: {rss_start / mib:.0f} MiB at start, {rss_after_big / mib:.0f} MiB after the big "
                  f"cluster, peak {peak['rss'] / mib:.0f} MiB during the query")
            seconds, answer = timed(lambda: client.call(api.ACT, {"action": "Remove", "constraint": "true",
                                                                   "reason": "benchmark"}))
            print(f"rm of {answer['changed']} jobs by constraint: {seconds:.2f} s")
        finally:
            process.terminate()
            process.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
