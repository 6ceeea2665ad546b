"""Collector load: a real collector process holding N slot ads while startds re-advertise
them at their real cadence (N per 300 s, each startd's slots in one update) and a mix of
queries runs at 20 a second; prints query latency percentiles under that load beside the
same queries on the quiet collector (the baseline, measured first in the same run) as a
ratio, the updates sent and answered (none may be dropped), the collector's CPU in cores
and per query, and the longest the collector's reactor stalled: as the collector itself
measures it on /metrics (its reactor thread's CPU between two 20 ms ticks, and how late
a tick ran, which also counts the machine's load), and as seen by a probe process asking
a one-ad query every 20 ms (its slowest answer, queueing behind other answers included).
Last, one update of the most ads an update may carry, with the probe's slowest answer
while the collector stores it.

Run: ``python benchmarks/collector_load.py`` (10,000 ads, 20 s) or
``python benchmarks/collector_load.py --ads 100000 --seconds 60`` for the full scale.
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import collector_routes as api
from daemoncore.wire.address import parse_address
from daemoncore.wire.blocking_client import BlockingClient

COMPACT = ["Machine", "Name", "SlotType", "State", "Activity", "LoadAvg", "Memory", "Cpus", "GPUs",
           "OpSys", "Arch", "TotalCpus", "TotalMemory"]
#: The mix, one entry per query in turn: (label, ad type, constraint, projection).
QUERIES = [
    ("all, projected", "Machine", "true", ["Name", "State"]),
    ("big idle slots", "Machine", 'State == "Unclaimed" && Cpus >= 16 && Memory >= 65536', []),
    ("linux x86 with gpus", "Machine", 'OpSys == "LINUX" && Arch == "X86_64" && GPUs > 0', ["Name", "GPUs"]),
    ("one machine", "Machine", 'Machine == "node00042.pool"', []),
    ("one slot by Name", "Machine", 'Name == "slot1@node00077.pool"', []),
    ("-compact", "Machine", "true", COMPACT),
    ("submitters", "Submitter", "true", ["Name", "IdleJobs", "RunningJobs"]),
    ("unclaimed, projected", "Machine", 'State == "Unclaimed"', ["Name", "Cpus", "Memory"]),
    ("claimed busy", "Machine", 'State == "Claimed" && Activity == "Busy"', ["Name", "LoadAvg"]),
    ("everything", "Machine", "true", []),
]
FILL_BATCH = 500
UPDATE_PERIOD = 300.0
PROBE_INTERVAL = 0.02
#: The body of the largest update sent: under the collector's default MAX_REQUEST_BYTES (16 MiB).
LARGEST_BODY = 15 * 1024 * 1024


def machine_ad(n: int, sequence: int = 1) -> dict:
    """A slot ad of about 40 attributes, shaped like a startd's."""
    rng = random.Random(n * 7919 + sequence)
    cpus = random.Random(n).choice([1, 2, 4, 8, 16, 32, 64])
    return {
        "MyType": "Machine", "Name": f"slot1@node{n:05d}.pool", "Machine": f"node{n:05d}.pool",
        "SlotType": "Partitionable", "State": rng.choice(["Unclaimed", "Claimed", "Owner"]),
        "Activity": rng.choice(["Idle", "Busy"]), "OpSys": "LINUX", "Arch": random.Random(n).choice(["X86_64", "aarch64"]),
        "Cpus": cpus, "TotalCpus": cpus, "Memory": cpus * 4096, "TotalMemory": cpus * 4096,
        "Disk": cpus * 10_000_000, "GPUs": random.Random(n).choice([0, 0, 0, 1, 2, 4, 8]), "LoadAvg": rng.random(),
        "KeyboardIdle": rng.randint(0, 100_000), "EnteredCurrentActivity": 1_700_000_000 + n,
        "Start": "/Expr(true)/", "Requirements": "/Expr(START && TARGET.RequestCpus <= MY.Cpus)/",
        "Rank": "/Expr(0.0)/", "CondorVersion": "$CondorVersion: 24.0.0 $", "UidDomain": "pool",
        "FileSystemDomain": "pool", "HasFileTransfer": True, "MyAddress": f"<10.0.{n // 256}.{n % 256}:9618>",
        "ClassAdLifetime": 900, "UpdateSequenceNumber": sequence,
        **{f"Attr{i:02d}": rng.randint(0, 1000) for i in range(16)},
    }


def submitter_ad(n: int) -> dict:
    return {"MyType": "Submitter", "Name": f"user{n:03d}@pool", "ScheddName": "submit.pool",
            "IdleJobs": n * 3, "RunningJobs": n, "HeldJobs": 0, "ClassAdLifetime": 900}


def fill(address: str, token: str, ads: int, submitters: int) -> None:
    client = BlockingClient(address, token=token, timeout=300)
    for start in range(0, ads, FILL_BATCH):
        batch = [machine_ad(n) for n in range(start, min(ads, start + FILL_BATCH))]
        client.call(api.ADVERTISE, {"ads": batch}, ad_type="Startd")
    client.call(api.ADVERTISE, {"ads": [submitter_ad(n) for n in range(submitters)]}, ad_type="Submitter")


def update_at_cadence(address: str, token: str, ads: int, per_startd: int, seconds: float) -> dict:
    """The updater process: every startd re-sends its slots' ads in one update, startds
    spread evenly so that ``ads`` updates arrive every :data:`UPDATE_PERIOD` seconds."""
    client = BlockingClient(address, token=token, timeout=60)
    startds = [range(start, min(ads, start + per_startd)) for start in range(0, ads, per_startd)]
    interval = UPDATE_PERIOD / len(startds)
    sent = answered = failed = requests = 0
    began = time.perf_counter()
    index = 0
    while time.perf_counter() - began < seconds:
        time.sleep(max(0.0, began + index * interval - time.perf_counter()))
        slots = startds[index % len(startds)]
        ads_now = [machine_ad(n, 2 + index // len(startds)) for n in slots]
        sent += len(ads_now)
        requests += 1
        try:
            answered += client.call(api.ADVERTISE, {"ads": ads_now}, ad_type="Startd")["updated"]
        except Exception:  # counted: a refused or lost update is the failure being measured
            failed += len(ads_now)
        index += 1
    elapsed = time.perf_counter() - began
    return {"sent": sent, "answered": answered, "failed": failed, "requests": requests,
            "per_second": sent / elapsed, "behind_seconds": max(0.0, elapsed - index * interval)}


def raw_query(address: str, token: str, ad_type: str, body: dict, count: bool = True) -> tuple[int, int]:
    """One query over a bare socket, its answer counted, not decoded (the collector is
    measured, not this client's HTTP and JSON decoding); (ads, bytes), ads -1 when
    ``count`` is false: the answer is then dropped in the kernel unread (see
    :func:`discard_answer`). A counted answer is read into one reused buffer and counted
    in place."""
    where = parse_address(address)
    payload = json.dumps(body).encode()
    head = (f"POST {api.QUERY.path(ad_type=ad_type)} HTTP/1.1\r\nHost: {where.host}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode()
    with socket.create_connection((where.host, where.port), timeout=300) as connection:
        connection.sendall(head + payload)
        status = connection.recv(12, socket.MSG_PEEK | socket.MSG_WAITALL)
        if status != b"HTTP/1.1 200":
            raise SystemExit(f"query of {ad_type} {body} failed: {status!r}")
        return count_answer(connection) if count else (-1, discard_answer(connection))


def count_answer(connection: socket.socket) -> tuple[int, int]:
    """Read the rest of the answer; (its NDJSON lines, its bytes, HTTP framing included)."""
    lines, size, ended_in_brace = 0, 0, False
    buffer = bytearray(1 << 20)
    while got := connection.recv_into(buffer):
        lines += buffer.count(b"}\n", 0, got) + (ended_in_brace and buffer[0] == 0x0A)  # each line ends so
        ended_in_brace, size = buffer[got - 1] == 0x7D, size + got
    return lines, size


def discard_answer(connection: socket.socket) -> int:
    """Drop the rest of the answer without copying it out of the kernel (splice through
    a pipe to /dev/null); its bytes. The loaded phase reads answers so: its clients
    share the machine's cores with the collector (on a pool they run elsewhere), and
    reading 240 MB/s into Python cost them more CPU than the collector spent sending it."""
    connection.settimeout(None)
    reader, writer = os.pipe()
    size = 0
    try:
        fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, 1 << 20)
        with open(os.devnull, "wb") as sink:
            while moved := os.splice(connection.fileno(), writer, 1 << 20):
                size += moved
                while moved:
                    moved -= os.splice(reader, sink.fileno(), moved)
    finally:
        os.close(reader)
        os.close(writer)
    return size


def reactor_figures(address: str, token: str) -> dict[str, float]:
    """The collector's own reactor figures from its /metrics (roost_collector_reactor_*):
    each 20 ms tick's lateness and the reactor thread's CPU between ticks, as histogram
    buckets and maxima since the collector started."""
    where = parse_address(address)
    request = urllib.request.Request(f"http://{where.host}:{where.port}/metrics",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as answer:
        text = answer.read().decode()
    figures = {}
    for line in text.splitlines():
        if line.startswith("roost_collector_reactor_"):
            name, value = line.rsplit(" ", 1)
            figures[name] = float(value)
    return figures


def stalls_between(before: dict, after: dict, kind: str) -> tuple[int, int, str]:
    """Of the ticks between two scrapes, (all, those over 100 ms, the highest bucket
    reached) for ``kind`` "lag" (wall time late) or "busy" (reactor CPU between ticks)."""
    prefix = f"roost_collector_reactor_{kind}_seconds_bucket"
    buckets = sorted(((float(name.split('le="')[1].rstrip('"}')), after[name] - before.get(name, 0.0))
                      for name in after if name.startswith(prefix)))
    total = int(buckets[-1][1])
    within = dict(buckets).get(0.1, total)
    highest = next((f"<= {bound:g} s" for bound, count in buckets if count == total), "?")
    return total, int(total - within), highest


def probe(address: str, token: str, seconds: float) -> dict:
    """The probe process: a one-ad query every :data:`PROBE_INTERVAL`; the slowest answer."""
    gc.freeze()  # the probe's own full collections are not the collector's stalls
    began = time.perf_counter()
    latencies = []
    while time.perf_counter() - began < seconds:
        started = time.perf_counter()
        raw_query(address, token, "Collector", {"constraint": "true", "limit": 1})
        latencies.append(time.perf_counter() - started)
        time.sleep(max(0.0, PROBE_INTERVAL - (time.perf_counter() - started)))
    latencies.sort()
    return {"probes": len(latencies), "max_ms": latencies[-1] * 1000, "p50_ms": percentile(latencies, 0.5) * 1000}


def percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def one_query(address: str, token: str, index: int, count: bool = True) -> tuple[str, int, int]:
    label, ad_type, constraint, projection = QUERIES[index % len(QUERIES)]
    lines, size = raw_query(address, token, ad_type, {"constraint": constraint, "projection": projection}, count)
    return label, lines, size


def quiet_queries(address: str, token: str, rounds: int) -> dict[str, dict]:
    """Every query of the mix ``rounds`` times, one at a time, on the quiet collector."""
    rows = {}
    for index in range(len(QUERIES)):
        latencies = []
        for _ in range(rounds):
            started = time.perf_counter()
            label, lines, size = one_query(address, token, index)
            latencies.append((time.perf_counter() - started) * 1000)
        latencies.sort()
        rows[label] = {"ads": lines, "bytes": size, "p50": percentile(latencies, 0.5)}
    return rows


def sustained_queries(address: str, token: str, rate: float, seconds: float) -> dict:
    """The mix sent at ``rate`` per second for ``seconds`` from 8 threads; latency
    counts from each query's scheduled time, so falling behind shows."""
    total = int(rate * seconds)
    began = time.perf_counter()
    by_label: dict[str, list[float]] = {}
    lock = threading.Lock()

    def one(index: int) -> float:
        scheduled = began + index / rate
        time.sleep(max(0.0, scheduled - time.perf_counter()))
        label, _, _ = one_query(address, token, index, count=False)
        latency = (time.perf_counter() - scheduled) * 1000
        with lock:
            by_label.setdefault(label, []).append(latency)
        return latency

    with ThreadPoolExecutor(max_workers=8) as pool:
        latencies = sorted(pool.map(one, range(total)))
    elapsed = time.perf_counter() - began
    return {"count": total, "rate": total / elapsed, "elapsed": elapsed, "p50": percentile(latencies, 0.5),
            "p95": percentile(latencies, 0.95), "p99": percentile(latencies, 0.99),
            "by_label": {label: percentile(sorted(values), 0.99) for label, values in by_label.items()}}


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


def helper(role: str, address: str, token: str, *numbers: float) -> subprocess.Popen:
    """This file run as the updater or the probe, in a process of its own."""
    return subprocess.Popen([sys.executable, __file__, f"--{role}", address, *map(str, numbers)],
                            env={**os.environ, "BENCH_TOKEN": token}, stdout=subprocess.PIPE, text=True)


def result_of(process: subprocess.Popen) -> dict:
    out, _ = process.communicate(timeout=600)
    if process.returncode:
        raise SystemExit(f"a benchmark helper failed ({process.args})")
    return json.loads(out.strip().splitlines()[-1])


def run(args) -> None:
    with tempfile.TemporaryDirectory(prefix="roost-bench-") as workdir:
        process, address, key = start_collector(workdir)
        try:
            daemon = issue_token(key, "bench@pool", ["DAEMON"])
            reader = issue_token(key, "reader@pool", ["READ"])
            started = time.perf_counter()
            fill(address, daemon, args.ads, args.submitters)
            fill_seconds = time.perf_counter() - started
            quiet = quiet_queries(address, reader, args.rounds)
            updater = helper("update", address, daemon, args.ads, args.per_startd, args.seconds)
            prober = helper("probe", address, reader, args.seconds)
            cpu_before, wall_before = cpu_seconds(process.pid), time.perf_counter()
            reactor_before = reactor_figures(address, reader)
            load = sustained_queries(address, reader, args.rate, args.seconds)
            updates, stall = result_of(updater), result_of(prober)
            cpu = cpu_seconds(process.pid) - cpu_before
            stall["reactor"] = (reactor_before, reactor_figures(address, reader))
            wall = time.perf_counter() - wall_before
            held, _ = raw_query(address, reader, "Machine", {"constraint": "true", "projection": ["Name"]})
            largest = largest_update(address, daemon, reader)
        finally:
            process.terminate()
            process.wait(timeout=20)
    report(args, fill_seconds, quiet, load, updates, stall, cpu, wall, held)
    report_largest_update(largest)


def largest_update(address: str, daemon: str, reader: str) -> dict:
    """One update of the most ads one may carry (``MAX_ADS_PER_UPDATE``, or fewer to stay
    under the default MAX_REQUEST_BYTES; re-advertising the first slots) while a probe asks
    a one-ad query every :data:`PROBE_INTERVAL`: how long the update took and the probe's
    slowest answer meanwhile, beside the probe's own p50."""
    ads, size = [], 0
    for n in range(api.MAX_ADS_PER_UPDATE):
        ad = machine_ad(n, sequence=2)
        size += len(json.dumps(ad)) + 2
        if size > LARGEST_BODY:
            break
        ads.append(ad)
    prober = helper("probe", address, reader, 8.0)
    time.sleep(2.0)  # the probe's quiet answers first: its p50 is the baseline
    started = time.perf_counter()
    BlockingClient(address, token=daemon, timeout=300).call(api.ADVERTISE, {"ads": ads}, ad_type="Startd")
    seconds = time.perf_counter() - started
    return {"ads": len(ads), "seconds": seconds, "probe": result_of(prober)}


def report_largest_update(largest: dict) -> None:
    probe = largest["probe"]
    print(f"  one update of {largest['ads']:,} ads: stored in {largest['seconds']:.2f} s; slowest one-ad probe"
          f" meanwhile {probe['max_ms']:.1f} ms (of {probe['probes']}; their p50 {probe['p50_ms']:.1f} ms,"
          f" ratio {probe['max_ms'] / max(probe['p50_ms'], 1e-9):.0f})")


def report(args, fill_seconds, quiet, load, updates, stall, cpu, wall, held) -> None:
    print(f"N = {args.ads:,} slot ads, {args.submitters} submitters; filled in {fill_seconds:.1f} s"
          f" ({args.ads / fill_seconds:,.0f} ads/s in batches of {FILL_BATCH})")
    print(f"  {'query':<24}{'ads':>8}{'KB':>9}{'quiet p50':>11}{'loaded p99':>12}{'ratio':>7}")
    for label, row in quiet.items():
        loaded = load["by_label"].get(label, float("nan"))
        print(f"  {label:<24}{row['ads']:>8}{row['bytes'] / 1024:>9.0f}{row['p50']:>9.1f}ms"
              f"{loaded:>10.1f}ms{loaded / max(row['p50'], 1e-9):>7.1f}")
    quiet_p50 = sorted(row["p50"] for row in quiet.values())
    print(f"  mix at {args.rate:g}/s asked, {load['rate']:.1f}/s done for {load['elapsed']:.0f} s:"
          f" p50 {load['p50']:.1f} ms, p95 {load['p95']:.1f} ms, p99 {load['p99']:.1f} ms"
          f" (quiet median of the mix's p50s {percentile(quiet_p50, 0.5):.1f} ms;"
          f" ratio p99/that {load['p99'] / max(percentile(quiet_p50, 0.5), 1e-9):.1f})")
    dropped = updates["sent"] - updates["answered"]
    print(f"  updates: {updates['sent']} sent in {updates['requests']} startd updates"
          f" ({updates['per_second']:.0f}/s, {args.ads / UPDATE_PERIOD:.0f}/s asked), {updates['answered']} stored,"
          f" {dropped} dropped, {updates['behind_seconds']:.1f} s behind; {held} slot ads held at the end")
    print(f"  collector CPU: {cpu / wall:.2f} cores over {wall:.0f} s,"
          f" {cpu * 1000 / load['count']:.1f} ms per query (updates included)")
    print(f"  slowest one-ad probe: {stall['max_ms']:.1f} ms (of {stall['probes']};"
          f" their p50 {stall['p50_ms']:.1f} ms is the baseline, ratio {stall['max_ms'] / max(stall['p50_ms'], 1e-9):.0f})")
    before, after = stall["reactor"]
    for kind, what in (("busy", "reactor CPU between 20 ms ticks"), ("lag", "tick lateness (wall, machine load too)")):
        ticks, over, highest = stalls_between(before, after, kind)
        print(f"  longest reactor stall by {what}: {highest} under load ({over} of {ticks} ticks over 100 ms);"
              f" max since start {after[f'roost_collector_reactor_{kind}_max_seconds'] * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ads", type=int, default=10_000, help="slot ads held (100000 for the full scale)")
    parser.add_argument("--submitters", type=int, default=200)
    parser.add_argument("--per-startd", type=int, default=8, help="slots per startd, sent in one update")
    parser.add_argument("--rate", type=float, default=20.0, help="queries per second under load")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the loaded phase")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each query on the quiet collector")
    parser.add_argument("--update", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    token = os.environ.get("BENCH_TOKEN", "")
    if args.update:
        address, ads, per_startd, seconds = args.update
        print(json.dumps(update_at_cadence(address, token, int(ads), int(per_startd), float(seconds))))
    elif args.probe:
        address, seconds = args.probe
        print(json.dumps(probe(address, token, float(seconds))))
    else:
        run(args)


if __name__ == "__main__":
    main()
