"""Schedd queue benchmark: starts a real schedd process and measures, from this
process, one cluster of 100,000 procs, 1,000 one-proc clusters in a row, a query of
every job with a 3-attribute projection (ads/s and the schedd's peak RSS), the same
with a constraint, and a removal of every job by constraint. Prints the figures, and
for each phase the longest the schedd's reactor stalled: a probe process asks
GET /v1/ping every 20 ms, and its slowest answer bounds the stall (its p50 is the
baseline of an idle answer). The schedd runs with REACTOR_STALL_REPORT_MS = 60, and
its own reports of where its reactor was held that long are printed at the end.

Query rates are counted over a bare socket (the schedd is measured, not this
client's JSON decoding); the 3-attribute query is also read once through
``BlockingClient.stream`` to show what a Python client sees.

Then the client side, with a collector started beside the schedd so that clients
find it as users' do: ``htcondor.Schedd().submit(htcondor.Submit(...))`` of a
one-proc cluster in a loop (``import bindings as htcondor``), beside a bare HTTP
round trip (GET /v1/ping on a kept connection) and a bare submit request in the same
run; and ``roost submit job.sub`` as a process, start to exit, beside
``python -c pass``.

    python benchmarks/schedd_queue.py [--procs 100000] [--clusters 1000] [--bindings-submits 1000] [--cli-runs 10]
                                      [--only queue|bindings-submit|roost-submit] [--big-arguments '$(Process)']

``--only`` runs one part: the queue phases (submits, queries, removal), the bindings'
submit loop, or the ``roost submit`` processes. ``--big-arguments '$(Process)'`` gives
the big cluster a per-proc macro, so each of its procs is expanded and stored with
differences of its own.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

import psutil

from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.address import parse_address
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.daemon_routes import PING

JOB = "executable = /bin/sleep\narguments = 60\nrequest_memory = 64M\n"


def start_schedd(directory: str, collector: str = "", key=None) -> tuple[subprocess.Popen, str, object]:
    """A schedd process on loopback with its own spool, advertising to ``collector``
    (none by default); its process, address and the pool key (``key``, else a new one)."""
    if key is None:
        key = create_signing_key(os.path.join(directory, "passwords.d", "POOL"))
    config = write_config(directory, "config", f"COLLECTOR_HOST = {collector}\n"
                                               f"REACTOR_STALL_REPORT_MS = {STALL_REPORT_MS}\n")
    process, address = start_daemon("schedd", directory, config)
    return process, address, key


def write_config(directory: str, name: str, extra: str) -> str:
    """A daemon configuration in ``directory`` (shared spool, log and pool key) plus ``extra``; its path."""
    config = os.path.join(directory, name)
    with open(config, "w", encoding="utf-8") as out:
        out.write(f"LOCAL_DIR = {directory}\nLOG = {directory}\nSPOOL = {directory}/spool\n"
                  f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {directory}/passwords.d/POOL\n"
                  f"PERIODIC_EXPR_INTERVAL = 3600\nMAX_REQUEST_BYTES = 268435456\n{extra}")
    return config


def start_daemon(module: str, directory: str, config: str) -> tuple[subprocess.Popen, str]:
    """``python -m module`` on loopback with configuration ``config``; its process and address."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("_ROOST_") and k not in ("COLLECTOR_HOST", "ROOST_TOKEN")}
    env["ROOST_CONFIG"] = config
    address_file = os.path.join(directory, f".{module}_address")
    process = subprocess.Popen([sys.executable, "-m", module, "--address-file", address_file], env=env)
    deadline = time.monotonic() + 30
    while not os.path.exists(address_file):
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit(f"the {module} did not start; see its log in {directory}")
        time.sleep(0.05)
    with open(address_file, encoding="utf-8") as handle:
        return process, handle.read().strip().strip("<>")


#: The parts ``--only`` can choose.
PARTS = ("queue", "bindings-submit", "roost-submit")

#: The schedd logs where its reactor was held this long or longer (daemoncore/stall_watch.py),
#: and the benchmark prints those reports at the end.
STALL_REPORT_MS = 60
#: A stack line of such a report: how many samples saw it, then its frames.
_STACK_LINE = re.compile(r"\s+\d+x ")

#: Seconds between two probes of the schedd's reactor.
PROBE_INTERVAL = 0.02


def probe(address: str) -> None:
    """The probe process: GET /v1/ping every :data:`PROBE_INTERVAL`, each answer's
    time filed under the phases named on stdin when it was asked and when it came
    (a stall across a phase change counts in both); says "ready" after its first
    answer, and at stdin's end prints per phase the slowest answer and the median as JSON."""
    import threading
    phase = {"name": "start"}
    latencies: dict[str, list[float]] = {}
    done = threading.Event()

    def follow_phases() -> None:
        for line in sys.stdin:
            phase["name"] = line.strip()
        done.set()
    threading.Thread(target=follow_phases, daemon=True).start()
    client = BlockingClient(address, timeout=60)
    client.call(PING)
    gc.freeze()  # a full collection of the probe's own imports took 30 ms, counted as the schedd's stall
    print("ready", flush=True)
    while not done.is_set():
        started = time.perf_counter()
        asked = phase["name"]
        client.call(PING)
        for name in {asked, phase["name"]}:
            latencies.setdefault(name, []).append(time.perf_counter() - started)
        time.sleep(max(0.0, PROBE_INTERVAL - (time.perf_counter() - started)))
    print(json.dumps({name: {"max_ms": max(found) * 1000, "p50_ms": sorted(found)[len(found) // 2] * 1000,
                             "probes": len(found)} for name, found in latencies.items()}))


def raw_query(address: str, token: str, body: dict) -> int:
    """One job query over a bare socket, its answer lines counted, not decoded."""
    where = parse_address(address)
    payload = json.dumps(body).encode()
    head = (f"POST {api.QUERY.path()} HTTP/1.1\r\nHost: {where.host}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode()
    status, lines, previous = b"", 0, b""
    with socket.create_connection((where.host, where.port), timeout=600) as connection:
        connection.sendall(head + payload)
        while data := connection.recv(1 << 20):
            status = status or data[:12]
            lines += (previous + data).count(b"}\n")  # each answer line ends so
            previous = data[-1:]
    if status != b"HTTP/1.1 200":
        raise SystemExit(f"query {body} failed: {status!r}")
    return lines


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procs", type=int, default=100_000)
    parser.add_argument("--clusters", type=int, default=1_000)
    parser.add_argument("--bindings-submits", type=int, default=1_000,
                        help="one-proc clusters submitted through htcondor.Schedd().submit in a loop")
    parser.add_argument("--cli-runs", type=int, default=10, help="`roost submit job.sub` processes timed")
    parser.add_argument("--only", choices=PARTS, help="run only this part (default: all)")
    parser.add_argument("--big-arguments", metavar="TEXT",
                        help="the big cluster's arguments instead of 60, such as '$(Process)' (a per-proc macro)")
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.probe:
        probe(args.probe)
        return 0
    with tempfile.TemporaryDirectory(prefix="roost-bench-") as directory:
        key = create_signing_key(os.path.join(directory, "passwords.d", "POOL"))
        collector, collector_address = start_daemon("collector", directory,
                                                    write_config(directory, "config.collector", "COLLECTOR_HOST =\n"))
        process, address, key = start_schedd(directory, collector_address, key)
        prober = subprocess.Popen([sys.executable, __file__, "--probe", address], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            measure(args, directory, process, address, key, prober)
        finally:
            if prober.poll() is None:
                prober.kill()
            for daemon in (process, collector):
                daemon.terminate()
                daemon.wait(timeout=30)
    return 0


def measure(args, directory: str, process: subprocess.Popen, address: str, key,
            prober: subprocess.Popen) -> None:
    """Run the phases against the schedd at ``address``, telling ``prober`` each one, and print."""
    token = issue_token(key, "bench@pool", ["WRITE"])
    client = BlockingClient(address, token=token, timeout=600)
    schedd_ps = psutil.Process(process.pid)
    phases: list[str] = []

    def phase(name: str) -> None:
        phases.append(name)
        prober.stdin.write(name + "\n")
        prober.stdin.flush()
    prober.stdout.readline()  # "ready"
    phase("idle")
    time.sleep(1.0)  # the probe's idle answers: the baseline
    if args.only in (None, "queue"):
        measure_queue(args, directory, schedd_ps, address, token, client, phase)
    if args.only in (None, "bindings-submit"):
        phase("bindings submit loop")
        measure_bindings_submits(args.bindings_submits, directory, token, client)
    if args.only in (None, "roost-submit"):
        phase("roost submit processes")
        measure_cli_submits(args.cli_runs, directory, token)
    phase("end")
    time.sleep(0.2)
    print_stalls(json.loads(prober.communicate(timeout=60)[0]), phases)
    print_stall_reports(directory)


def measure_queue(args, directory: str, schedd_ps: psutil.Process, address: str, token: str,
                  client: BlockingClient, phase) -> None:
    """The queue phases: a big cluster, one-proc clusters, queries and a removal by constraint."""
    rss_start = schedd_ps.memory_info().rss
    phase("submit one big cluster")
    big = JOB if args.big_arguments is None else JOB.replace("arguments = 60", f"arguments = {args.big_arguments}")
    body = {"description": big + f"queue {args.procs}\n", "iwd": directory}
    seconds, answer = timed(lambda: client.call(api.SUBMIT, body))
    print(f"submit one cluster of {answer['num_procs']} procs: {seconds:.2f} s")
    rss_after_big = schedd_ps.memory_info().rss
    phase("submit one-proc clusters")
    small = {"description": JOB + "queue 1\n", "iwd": directory}
    seconds, _ = timed(lambda: [client.call(api.SUBMIT, small) for _ in range(args.clusters)])
    print(f"submit {args.clusters} clusters of 1 proc one after another: {args.clusters / seconds:.0f} clusters/s "
          f"({seconds:.2f} s)")
    query = {"constraint": "true", "projection": ["ClusterId", "ProcId", "JobStatus"]}
    peak = {"rss": 0}
    phase("query, projection of 3")
    seconds, count = timed(lambda: raw_query(address, token, query))
    peak["rss"] = max(peak["rss"], schedd_ps.memory_info().rss)
    print(f"query {count} jobs, projection of 3 attributes: {seconds:.2f} s ({count / seconds:.0f} ads/s)")
    constrained = {"constraint": "JobStatus == 1 && ProcId >= 0", "projection": ["ClusterId", "ProcId", "Owner"]}
    phase("query with a constraint")
    seconds, count = timed(lambda: raw_query(address, token, constrained))
    print(f"query {count} jobs with a constraint, projection of 3: {seconds:.2f} s ({count / seconds:.0f} ads/s)")
    phase("query decoded by BlockingClient")

    def run_query() -> int:
        count = 0
        for _ in client.stream(api.QUERY, query):
            count += 1
            if count % 10_000 == 0:
                peak["rss"] = max(peak["rss"], schedd_ps.memory_info().rss)
        return count
    seconds, count = timed(run_query)
    print(f"query {count} jobs, projection of 3, decoded by BlockingClient.stream: {seconds:.2f} s "
          f"({count / seconds:.0f} ads/s)")
    mib = 1024 * 1024
    print(f"schedd RSS: {rss_start / mib:.0f} MiB at start, {rss_after_big / mib:.0f} MiB after the big "
          f"cluster, peak {peak['rss'] / mib:.0f} MiB during the queries")
    phase("rm by constraint")
    seconds, answer = timed(lambda: client.call(api.ACT, {"action": "Remove", "constraint": "true",
                                                           "reason": "benchmark"}))
    print(f"rm of {answer['changed']} jobs by constraint: {seconds:.2f} s")


def print_stalls(stalls: dict, phases: list[str]) -> None:
    """Print the probe's slowest answer in each phase of ``phases`` (the first, idle, is the baseline)."""
    idle = stalls.get("idle", {}).get("p50_ms", float("nan"))
    print(f"longest reactor stall per phase (GET /v1/ping every {PROBE_INTERVAL * 1000:.0f} ms; "
          f"idle p50 {idle:.1f} ms):")
    for name in phases[1:-1]:
        found = stalls.get(name)
        if found:
            print(f"  {name}: {found['max_ms']:.0f} ms (p50 {found['p50_ms']:.1f} ms, {found['probes']} probes)")
        else:
            print(f"  {name}: no probe answered during the phase")


def print_stall_reports(directory: str) -> None:
    """Print the schedd's own reports of its reactor held :data:`STALL_REPORT_MS` or longer
    (its heartbeat that late) and of its turns that long (one turn's own work), each with
    the stacks it was seen in most."""
    reports = []
    for name in sorted(os.listdir(directory)):
        if name.lower().startswith("sched") and "log" in name.lower():
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as log:
                lines = log.read().splitlines()
            for index, line in enumerate(lines):
                if "reactor held" in line or "reactor turn took" in line:
                    stacks = itertools.takewhile(_STACK_LINE.match, lines[index + 1:])
                    reports.append((line.split("] ", 1)[-1], [stack.strip() for stack in stacks]))
    print(f"schedd's own stall reports (>= {STALL_REPORT_MS} ms): {len(reports)}")
    for head, stacks in reports:
        print("  " + "\n    ".join([head, *stacks]))


def client_environment(directory: str, token: str) -> dict[str, str]:
    """The environment of a user of the benchmark's pool: its collector configured, the token given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ROOST_") and k != "COLLECTOR_HOST"}
    env["ROOST_CONFIG"] = os.path.join(directory, "config")  # the schedd's: COLLECTOR_HOST names the collector
    env["ROOST_TOKEN"] = token
    return env


def rate(count: int, work) -> float:
    """Calls of ``work`` per second over ``count`` calls (after one untimed call)."""
    work()
    seconds, _ = timed(lambda: [work() for _ in range(count)])
    return count / seconds


def measure_bindings_submits(count: int, directory: str, token: str, client: BlockingClient) -> None:
    """``htcondor.Schedd().submit(htcondor.Submit(...))`` of one-proc clusters in a loop, beside a
    bare round trip and a bare submit request, each on a kept connection, in this run."""
    import bindings as htcondor

    saved = dict(os.environ)
    os.environ.update(client_environment(directory, token))
    here = os.getcwd()
    os.chdir(directory)
    try:
        schedd = htcondor.Schedd()
        job = htcondor.Submit({"executable": "/bin/sleep", "arguments": "60", "request_memory": "64M"})
        ping = rate(count, lambda: client.call(PING))
        small = {"description": JOB + "queue 1\n", "iwd": directory}
        bare = rate(count, lambda: client.call(api.SUBMIT, small))
        through = rate(count, lambda: schedd.submit(job))
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)
    print(f"htcondor.Schedd().submit(Submit) of a one-proc cluster, {count} in a loop: {through:.0f}/s "
          f"(bare GET /v1/ping round trip {ping:.0f}/s, bare POST /v1/jobs of one proc {bare:.0f}/s; "
          f"the bindings reach {through / bare:.0%} of the bare submit)")


def measure_cli_submits(runs: int, directory: str, token: str) -> None:
    """``roost submit job.sub`` as a process, start to exit, beside ``python -c pass``, alternating;
    with bytecode cached as an installed roost has it (in a folder of the benchmark's own,
    even where PYTHONDONTWRITEBYTECODE is set, so the source tree is left alone)."""
    import shutil
    import statistics

    env = client_environment(directory, token)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(directory, "pycache")
    with open(os.path.join(directory, "job.sub"), "w", encoding="utf-8") as out:
        out.write(JOB + "queue\n")
    roost = shutil.which("roost") or os.path.join(os.path.dirname(sys.executable), "roost")
    commands = {"python -c pass": [sys.executable, "-c", "pass"], "roost submit job.sub": [roost, "submit", "job.sub"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for run in range(runs + 1):  # the first run of each is a warm-up (caches, the grammar's included)
        for name, command in commands.items():
            seconds, done = timed(lambda: subprocess.run(command, env=env, cwd=directory, capture_output=True))
            if done.returncode != 0:
                raise SystemExit(f"{name} failed: {done.stderr.decode(errors='replace')}")
            if run:
                times[name].append(seconds)
    base, submit = (statistics.median(times[name]) * 1000 for name in commands)
    print(f"roost submit job.sub, start to exit, median of {runs}: {submit:.0f} ms "
          f"(python -c pass {base:.0f} ms; {submit / base:.1f}x)")


if __name__ == "__main__":
    sys.exit(main())
