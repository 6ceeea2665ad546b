"""Collector load: a real collector process, N machine ads advertised from a second
process (one update per ad, then in batches), constraint queries one at a time and
then a sustained mix at 20 a second; prints updates per second and query latency
percentiles for N = 1,000 and 10,000.

Run: ``python benchmarks/collector_load.py [--sizes 1000 10000] [--queries 200]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import collector_routes as api
from daemoncore.wire.blocking_client import BlockingClient

QUERIES = [
    ("all, projected", "true", ["Name", "State"]),
    ("big idle slots", 'State == "Unclaimed" && Cpus >= 16 && Memory >= 65536', []),
    ("linux x86 with gpus", 'OpSys == "LINUX" && Arch == "X86_64" && GPUs > 0', ["Name", "GPUs"]),
    ("one machine", 'Machine == "node00042.pool"', []),
]
BATCH = 500


def machine_ad(n: int) -> dict:
    """A slot ad of about 40 attributes, shaped like a startd's."""
    rng = random.Random(n)
    cpus = rng.choice([1, 2, 4, 8, 16, 32, 64])
    return {
        "MyType": "Machine", "Name": f"slot1@node{n:05d}.pool", "Machine": f"node{n:05d}.pool",
        "SlotType": "Partitionable", "State": rng.choice(["Unclaimed", "Claimed", "Owner"]),
        "Activity": rng.choice(["Idle", "Busy"]), "OpSys": "LINUX", "Arch": rng.choice(["X86_64", "aarch64"]),
        "Cpus": cpus, "TotalCpus": cpus, "Memory": cpus * 4096, "TotalMemory": cpus * 4096,
        "Disk": cpus * 10_000_000, "GPUs": rng.choice([0, 0, 0, 1, 2, 4, 8]), "LoadAvg": rng.random(),
        "KeyboardIdle": rng.randint(0, 100_000), "EnteredCurrentActivity": 1_700_000_000 + n,
        "Start": "/Expr(true)/", "Requirements": "/Expr(START && TARGET.RequestCpus <= MY.Cpus)/",
        "Rank": "/Expr(0.0)/", "CondorVersion": "$CondorVersion: 24.0.0 $", "UidDomain": "pool",
        "FileSystemDomain": "pool", "HasFileTransfer": True, "MyAddress": f"<10.0.{n // 256}.{n % 256}:9618>",
        "ClassAdLifetime": 900, "UpdateSequenceNumber": 1,
        **{f"Attr{i:02d}": rng.randint(0, 1000) for i in range(16)},
    }


def advertise(address: str, token: str, count: int, batch: int) -> None:
    """The second process: advertise ``count`` ads, ``batch`` per request; print the rate."""
    client = BlockingClient(address, token=token, timeout=120)
    ads = [machine_ad(n) for n in range(count)]
    started = time.perf_counter()
    for start in range(0, count, batch):
        client.call(api.ADVERTISE, {"ads": ads[start:start + batch]}, ad_type="Startd")
    elapsed = time.perf_counter() - started
    print(json.dumps({"ads": count, "batch": batch, "seconds": elapsed, "updates_per_second": count / elapsed}))


def run_advertiser(address: str, token: str, count: int, batch: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--advertise", address, str(count), str(batch)],
        env={**os.environ, "BENCH_TOKEN": token}, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def measure_queries(address: str, token: str, rounds: int) -> list[dict]:
    client = BlockingClient(address, token=token, timeout=120)
    rows = []
    for label, constraint, projection in QUERIES:
        latencies, matched = [], 0
        for _ in range(rounds):
            started = time.perf_counter()
            matched = sum(1 for _ in client.stream(
                api.QUERY, {"constraint": constraint, "projection": projection}, ad_type="Machine"))
            latencies.append((time.perf_counter() - started) * 1000)
        latencies.sort()
        rows.append({"query": label, "matched": matched, "p50": percentile(latencies, 0.5),
                     "p95": percentile(latencies, 0.95), "p99": percentile(latencies, 0.99)})
    return rows


def sustained_queries(address: str, token: str, rate: float, seconds: float) -> dict:
    """Queries of the mix sent at ``rate`` per second for ``seconds`` from 8 threads;
    latency counts from each query's scheduled time, so falling behind shows."""
    client = BlockingClient(address, token=token, timeout=120)
    total = int(rate * seconds)
    began = time.perf_counter()

    def one(index: int) -> float:
        scheduled = began + index / rate
        time.sleep(max(0.0, scheduled - time.perf_counter()))
        _, constraint, projection = QUERIES[index % len(QUERIES)]
        for _ in client.stream(api.QUERY, {"constraint": constraint, "projection": projection}, ad_type="Machine"):
            pass
        return (time.perf_counter() - scheduled) * 1000

    with ThreadPoolExecutor(max_workers=8) as pool:
        latencies = sorted(pool.map(one, range(total)))
    elapsed = time.perf_counter() - began
    return {"rate": total / elapsed, "p50": percentile(latencies, 0.5), "p95": percentile(latencies, 0.95),
            "p99": percentile(latencies, 0.99)}


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_collector(workdir: str) -> tuple[subprocess.Popen, str, bytes]:
    key_file = os.path.join(workdir, "POOL")
    key = create_signing_key(key_file)
    config = os.path.join(workdir, "config")
    with open(config, "w") as out:
        out.write(f"LOCAL_DIR = {workdir}\nLOG = {workdir}\nSEC_TOKEN_POOL_SIGNING_KEY_FILE = {key_file}\n")
    env = {**os.environ, "ROOST_CONFIG": config, "HOME": workdir}
    process = subprocess.Popen([sys.executable, "-m", "collector", "--port", "0"], env=env)
    address_file = os.path.join(workdir, ".collector_address")
    deadline = time.monotonic() + 20
    while not os.path.exists(address_file):
        if time.monotonic() > deadline or process.poll() is not None:
            process.kill()
            raise SystemExit("collector did not start; see its log in " + workdir)
        time.sleep(0.05)
    return process, open(address_file).read().strip(), key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--queries", type=int, default=100, help="rounds of each query")
    parser.add_argument("--rate", type=float, default=20.0, help="queries per second in the sustained phase")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the sustained phase")
    parser.add_argument("--advertise", nargs=3, metavar=("ADDRESS", "COUNT", "BATCH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.advertise:
        address, count, batch = args.advertise
        advertise(address, os.environ["BENCH_TOKEN"], int(count), int(batch))
        return
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="roost-bench-") as workdir:
            process, address, key = start_collector(workdir)
            try:
                daemon = issue_token(key, "bench@pool", ["DAEMON"])
                reader = issue_token(key, "reader@pool", ["READ"])
                single = run_advertiser(address, daemon, size, 1)
                batched = run_advertiser(address, daemon, size, BATCH)
                rows = measure_queries(address, reader, args.queries)
                cpu_before = cpu_seconds(process.pid)
                load = sustained_queries(address, reader, args.rate, args.seconds)
                load["server_cpu_ms"] = (cpu_seconds(process.pid) - cpu_before) * 1000 / (args.rate * args.seconds)
            finally:
                process.terminate()
                process.wait(timeout=20)
        print(f"N = {size:,} machine ads")
        print(f"  updates/s, one ad per request:   {single['updates_per_second']:10,.0f}")
        print(f"  updates/s, {BATCH} ads per request: {batched['updates_per_second']:10,.0f}")
        print(f"  {'query':<22}{'matched':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}")
        for row in rows:
            print(f"  {row['query']:<22}{row['matched']:>8}{row['p50']:>9.1f}{row['p95']:>9.1f}{row['p99']:>9.1f}")
        print(f"  sustained mix at {args.rate:g}/s asked, {load['rate']:.1f}/s done:"
              f" p50 {load['p50']:.1f} ms, p95 {load['p95']:.1f} ms, p99 {load['p99']:.1f} ms;"
              f" collector CPU {load['server_cpu_ms']:.1f} ms per query")


if __name__ == "__main__":
    main()
