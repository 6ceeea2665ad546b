"""End-to-end job throughput of a personal pool with 2 slots: 500 jobs of /bin/true in
one cluster, then 200 jobs that each transfer a 1 MiB input and a 1 MiB output.

Prints jobs per second from submit to the last Terminated event of the user log, and
the schedd's and startd's CPU seconds per job. The baseline, measured in the same
run, is the same jobs started directly as subprocesses two at a time (what the pool
adds on top of fork and exec).

With ``--hosts`` (root only) the same jobs then run through a pool of four hosts made
as network namespaces on this machine (tests/support/netns.py: a central manager, a
submit host and two execute hosts of one CPU each, so 2 slots as on loopback), and the
multi-host figures are printed beside the loopback ones as ratios.

With ``--sleep S --slots N`` the pool's startd has N static 1-CPU slots over
``NUM_CPUS = N`` and the run is N jobs of ``/bin/sleep S`` instead: once all run, it
prints the schedd's memory per running job (its RSS growth from just before the submit,
divided by the jobs running), then removes them.

Throughout, a probe process asks each daemon's ``/v1/ping`` every 20 ms; the slowest
answer bounds the longest stall of that daemon's reactor. The master, idle all along,
is probed too: its figures are what the machine's own scheduling adds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import psutil

#: How often the probe asks each daemon's ping route.
PROBE_INTERVAL = 0.02
#: The daemons whose reactors are probed (the master is the idle control).
PROBED = ("SCHEDD", "STARTD", "MASTER")

ROOST = [sys.executable, "-c", "import sys; from bindings.cli import main; sys.exit(main())"]


def roost(env: dict, *args: str) -> str:
    done = subprocess.run([*ROOST, *args], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"roost {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def daemon_processes(master_pid: int) -> dict[str, psutil.Process]:
    """The pool's schedd and startd processes, found under the master, and the startd's
    job launcher (``launcher``, a root startd's: it starts the jobs, so its CPU, with
    theirs, is the startd's work done elsewhere)."""
    found = {}
    for child in psutil.Process(master_pid).children():
        line = " ".join(child.cmdline())
        for name in ("schedd", "startd"):
            if f"-m {name}" in line or f"{name}/__main__" in line or line.endswith(name):
                found[name] = child
    if "startd" in found:
        for child in found["startd"].children():
            if any(part.endswith("launcher_process.py") for part in child.cmdline()):
                found["launcher"] = child
    return found


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def wait_for_terminated(log: str, count: int, timeout: float, began: float) -> float:
    """Seconds from ``began`` (a ``time.monotonic()``) until the first Execute event in
    ``log``; returns once ``count`` Terminated events are there."""
    from bindings.eventlog import JobEventLog, JobEventType

    seen = 0
    first_execute = None
    events = JobEventLog(log)
    while seen < count:
        if time.monotonic() - began > timeout:
            raise SystemExit(f"only {seen} of {count} jobs terminated within {timeout:g} s")
        for event in events.events(stop_after=1):
            if event.type == JobEventType.EXECUTE and first_execute is None:
                first_execute = time.monotonic() - began
            elif event.type == JobEventType.JOB_TERMINATED:
                seen += 1
                if seen == count:  # not the reader's wait for more: it would add its whole second
                    break
    return first_execute if first_execute is not None else 0.0


def run_phase(submit, work: str, name: str, text: str, count: int, procs: dict, timeout: float) -> float:
    """Submit ``count`` jobs of ``text`` with ``submit(path)`` and wait for them all; jobs/s
    (0, nothing submitted, for a phase of no jobs)."""
    if count <= 0:
        print(f"{name}: no jobs asked for; skipped")
        return 0.0
    path = os.path.join(work, f"{name}.sub")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    before = {n: cpu_seconds(p) for n, p in procs.items()}
    began = time.monotonic()
    submit(path)
    first = wait_for_terminated(os.path.join(work, f"{name}.log"), count, timeout, began)
    elapsed = time.monotonic() - began
    cpu = {n: (cpu_seconds(p) - before[n]) / count for n, p in procs.items()}
    if "launcher" in cpu and "startd" in cpu:
        cpu["startd+launcher"] = cpu["startd"] + cpu["launcher"]
    running = max(elapsed - first, 1e-9)
    print(f"{name}: {count} jobs in {elapsed:.1f} s = {count / elapsed:.1f} jobs/s; "
          + ", ".join(f"{n} {c * 1000:.1f} ms CPU/job" for n, c in sorted(cpu.items()))
          + f" (first job started {first:.2f} s after submit; {count / running:.1f} jobs/s from then)")
    return count / elapsed


def direct_baseline(command: list[str], count: int) -> float:
    """Jobs per second running ``command`` directly, two at a time."""
    began = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda _: subprocess.run(command, check=True), range(count)))
    return count / (time.monotonic() - began)


def ping_once(host: str, port: int) -> float:
    """Seconds one ``GET /v1/ping`` takes, on a fresh connection (as a client would)."""
    started = time.perf_counter()
    with socket.create_connection((host, port), timeout=30) as connection:
        connection.sendall(f"GET /v1/ping HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        while connection.recv(65536):
            pass
    return time.perf_counter() - started


def probe_daemons(addresses: dict[str, str], stop, results) -> None:
    """The probe process: one thread per daemon pinging it every :data:`PROBE_INTERVAL`
    until ``stop`` is set; puts ``{name: [(sent at, seconds), ...]}`` in ``results``
    (``time.monotonic()`` times: one clock for every process of the machine)."""
    import threading

    found: dict[str, list[tuple[float, float]]] = {}

    def one(name: str, address: str) -> None:
        host, port = address.rsplit(":", 1)
        latencies = []
        while not stop.is_set():
            sent = time.monotonic()
            try:
                latencies.append((sent, ping_once(host.strip("<"), int(port.strip(">")))))
            except OSError:
                pass
            stop.wait(PROBE_INTERVAL)
        found[name] = latencies

    threads = [threading.Thread(target=one, args=item) for item in addresses.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put(found)


def latency_summary(latencies: list[float]) -> tuple[int, float, float]:
    """(how many, p50, max) of some pings' seconds."""
    ordered = sorted(latencies)
    return len(ordered), ordered[len(ordered) // 2], ordered[-1]


class StallProbe:
    """Runs :func:`probe_daemons` in its own process while a phase runs; :meth:`mark`
    starts a new window of the phase (say, removing the jobs), reported apart."""

    def __init__(self, addresses: dict[str, str]) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._results = context.Queue()
        self._process = context.Process(target=probe_daemons, args=(addresses, self._stop, self._results))
        self._marks: list[tuple[float, str]] = []

    def __enter__(self) -> "StallProbe":
        self._process.start()
        return self

    def mark(self, label: str) -> None:
        """The pings sent from now on belong to the window ``label``."""
        self._marks.append((time.monotonic(), label))

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        found = self._results.get(timeout=60)
        self._process.join(timeout=10)
        control = latency_summary([s for _, s in found["MASTER"]]) if found.get("MASTER") else None
        for name in PROBED:
            if not found.get(name):
                continue
            count, p50, worst = latency_summary([seconds for _, seconds in found[name]])
            versus = f"; idle master's longest {control[2] * 1000:.1f} ms" if control and name != "MASTER" else ""
            print(f"  {name.lower()} longest reactor stall <= {worst * 1000:.1f} ms "
                  f"(slowest of {count} pings; their p50 {p50 * 1000:.1f} ms{versus})")
            for label, window in self._windows(found[name]):
                if window:
                    count, p50, worst = latency_summary(window)
                    print(f"    {label}: longest {worst * 1000:.1f} ms (of {count} pings; p50 {p50 * 1000:.1f} ms)")

    def _windows(self, pings: list[tuple[float, float]]) -> list[tuple[str, list[float]]]:
        """The pings' seconds split by the marks (none: no split)."""
        if not self._marks:
            return []
        bounds = [(float("-inf"), "before " + self._marks[0][1]), *self._marks]
        windows = []
        for index, (began, label) in enumerate(bounds):
            ended = bounds[index + 1][0] if index + 1 < len(bounds) else float("inf")
            windows.append((label, [seconds for sent, seconds in pings if began <= sent < ended]))
        return windows


def probed_addresses(facts: dict) -> dict[str, str]:
    """The addresses of the daemons to probe, from the pool's address file."""
    daemons = {name.upper(): address for name, address in (facts.get("daemons") or {}).items()}
    daemons["MASTER"] = facts["master"]
    return {name: daemons[name] for name in PROBED if daemons.get(name)}


def count_executing(log: str, count: int, timeout: float) -> int:
    """Wait until ``count`` jobs of ``log`` have an Execute event (or ``timeout`` s); how many did."""
    from bindings.eventlog import JobEventLog, JobEventType

    began = time.monotonic()
    running = set()
    events = JobEventLog(log)
    while len(running) < count and time.monotonic() - began < timeout:
        for event in events.events(stop_after=1):
            if event.type == JobEventType.EXECUTE:
                running.add((event.cluster, event.proc))
                if len(running) == count:  # not the reader's second of waiting for more
                    break
            elif event.type in (JobEventType.JOB_TERMINATED, JobEventType.JOB_ABORTED):
                running.discard((event.cluster, event.proc))
    return len(running)


SLEEP_JOBS = """executable = /bin/sleep
arguments = {seconds}
log = sleep.log
request_cpus = 1
request_memory = 16M
queue {count}
"""


#: How long the probe goes on once the removed jobs are gone (the startd ends their claims).
SETTLE_SECONDS = 1.0


def wait_for_jobs_gone(startd: psutil.Process | None, timeout: float) -> float:
    """Wait until no ``sleep`` process runs under ``startd`` (or ``timeout`` s); the seconds waited."""
    began = time.monotonic()
    while startd is not None and time.monotonic() - began < timeout:
        try:
            if not any(child.name() == "sleep" for child in startd.children(recursive=True)):
                break
        except psutil.Error:
            pass
        time.sleep(0.1)
    return time.monotonic() - began


class WindowCpu:
    """The daemons' CPU over one window of a phase (from its making to :meth:`report`)."""

    def __init__(self, procs: dict) -> None:
        self._procs = {name: procs[name] for name in ("schedd", "startd") if name in procs}
        self._before = {name: cpu_seconds(process) for name, process in self._procs.items()}

    def report(self, label: str, jobs: int) -> None:
        """Print each daemon's CPU in the window per job of ``jobs`` (the reactor's share
        of a burst: the startd's per job is its work per activation, or per removal)."""
        if jobs <= 0 or not self._procs:
            return
        spent = {name: cpu_seconds(process) - self._before[name] for name, process in self._procs.items()}
        print(f"  {label} window CPU: " + ", ".join(f"{name} {seconds * 1000 / jobs:.2f} ms/job"
                                                for name, seconds in sorted(spent.items())))


def memory_phase(submit, env: dict, work: str, procs: dict, args: argparse.Namespace,
                 probe: "StallProbe") -> float:
    """``args.slots`` jobs of ``/bin/sleep``: the schedd's RSS growth per running job, in MiB.
    Then the jobs are removed, and the probe goes on until the startd has ended them."""
    schedd = procs["schedd"]
    path = os.path.join(work, "sleep.sub")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(SLEEP_JOBS.format(seconds=args.sleep, count=args.slots))
    before = schedd.memory_info().rss
    probe.mark("submit")
    cpu = WindowCpu(procs)
    began = time.monotonic()
    submit(path)
    running = count_executing(os.path.join(work, "sleep.log"), args.slots, min(args.timeout, args.sleep))
    after = schedd.memory_info().rss
    cpu.report("submit", running)
    if running == 0:
        raise SystemExit(f"no job started within {min(args.timeout, args.sleep):g} s")
    per_job = (after - before) / running / (1 << 20)
    print(f"sleep: {running} of {args.slots} jobs running {time.monotonic() - began:.1f} s after submit; "
          f"schedd RSS {before / (1 << 20):.1f} -> {after / (1 << 20):.1f} MiB = {per_job:.3f} MiB per running job")
    probe.mark("rm")
    cpu = WindowCpu(procs)
    roost(env, "rm", "-all")
    gone = wait_for_jobs_gone(procs.get("startd"), args.timeout)
    print(f"rm: the startd had ended every job {gone:.1f} s after rm -all returned")
    cpu.report("rm", running)
    time.sleep(SETTLE_SECONDS)
    return per_job


TRUE_JOBS = """executable = /bin/true
log = true.log
request_cpus = 1
request_memory = 16M
queue {count}
"""

TRANSFER_JOBS = """executable = copy.sh
transfer_input_files = input.dat
transfer_output_files = output.dat
transfer_output_remaps = "output.dat = out/output.$(Process).dat"
should_transfer_files = YES
log = transfer.log
request_cpus = 1
request_memory = 16M
queue {count}
"""


def prepare_work(work: str) -> None:
    """The transfer jobs' input file, script and output directory."""
    with open(os.path.join(work, "input.dat"), "wb") as handle:
        handle.write(os.urandom(1 << 20))
    with open(os.path.join(work, "copy.sh"), "w") as handle:
        handle.write("#!/bin/sh\ncp input.dat output.dat\n")
    os.chmod(os.path.join(work, "copy.sh"), 0o755)
    os.makedirs(os.path.join(work, "out"))


def run_both_phases(submit, work: str, procs: dict, args: argparse.Namespace) -> tuple[float, float]:
    """The /bin/true and the transfer phase in ``work``; their jobs/s."""
    prepare_work(work)
    true_rate = run_phase(submit, work, "true", TRUE_JOBS.format(count=args.true_jobs), args.true_jobs,
                          procs, args.timeout)
    transfer_rate = run_phase(submit, work, "transfer", TRANSFER_JOBS.format(count=args.transfer_jobs),
                              args.transfer_jobs, procs, args.timeout)
    return true_rate, transfer_rate


def pool_settings(args: argparse.Namespace) -> dict[str, str]:
    """The pool's config, as environment overrides: 2 CPUs in one partitionable slot, or
    with ``--sleep`` ``--slots`` static 1-CPU slots over as many CPUs."""
    watch = {"_ROOST_REACTOR_STALL_REPORT_MS": str(args.stall_watch)} if args.stall_watch else {}
    if args.sleep is None:
        return {"_ROOST_NUM_CPUS": "2", **watch}
    return {"_ROOST_NUM_CPUS": str(args.slots), "_ROOST_NUM_SLOTS": str(args.slots),
            "_ROOST_MEMORY": str(args.slots * 64), **watch}


_HELD = re.compile(r"reactor held (\d+) ms")
#: What the watch reports of a turn whose own work took long (daemoncore/stall_watch.TurnSampler).
_TURN = re.compile(r"reactor turn took (\d+) ms")


def print_stall_reports(log_dir: str, threshold_ms: int) -> None:
    """With ``--stall-watch MS``: how often each daemon's own stall watch saw its reactor
    held that long or longer (its heartbeat that late), and how often one reactor turn's
    own work took that long (a watch that follows turns), with the longest of each (the
    reports, with stacks, are in its log).
    Off by default: the watch's heartbeat costs the daemons some CPU per job."""
    for name in sorted(os.listdir(log_dir)):
        if not name.endswith("Log"):
            continue
        with open(os.path.join(log_dir, name), encoding="utf-8", errors="replace") as log:
            text = log.read()
        held = [int(found.group(1)) for found in _HELD.finditer(text)]
        turns = [int(found.group(1)) for found in _TURN.finditer(text)]
        if held:
            print(f"  {name}: reactor held >= {threshold_ms} ms {len(held)} times, longest {max(held)} ms")
        if turns:
            print(f"  {name}: a reactor turn took >= {threshold_ms} ms {len(turns)} times, longest {max(turns)} ms")


def loopback_pool(args: argparse.Namespace) -> tuple[float, float] | None:
    """Both phases (or, with ``--sleep``, the memory phase) through a personal pool on
    127.0.0.1; their jobs/s."""
    work = tempfile.mkdtemp(prefix="roost-throughput-")
    home = os.path.join(work, "home")
    os.makedirs(home)
    config = os.path.join(home, "config")
    open(config, "w").close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ROOST_") and k != "ROOST_TOKEN"}
    env.update({"HOME": home, "ROOST_CONFIG": config, **pool_settings(args)})
    pool_dir = os.path.join(work, "pool")
    roost(env, "pool", "up", "--dir", pool_dir)
    try:
        facts = json.loads(open(os.path.join(pool_dir, "pool.json")).read())
        procs = daemon_processes(facts["master_pid"])

        def submit(path: str) -> None:
            subprocess.run([*ROOST, "submit", path], env=env, cwd=work, check=True, capture_output=True)
        with StallProbe(probed_addresses(facts)) as probe:
            if args.sleep is not None:
                memory_phase(submit, env, work, procs, args, probe)
                return None
            rates = run_both_phases(submit, work, procs, args)
        base = direct_baseline(["/bin/true"], args.true_jobs)
        print(f"baseline: /bin/true run directly, 2 at a time: {base:.0f} jobs/s; "
              f"pool/direct = {rates[0] / base:.3f}")
        return rates
    finally:
        roost(env, "pool", "down", "--dir", pool_dir)
        if args.stall_watch:
            print_stall_reports(os.path.join(pool_dir, "log"), args.stall_watch)
        if args.keep:
            print(f"pool kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


HOSTS = {"cm": ["CentralManager"], "submit": ["Submit"], "exec1": ["Execute"], "exec2": ["Execute"]}


def namespace_pool(args: argparse.Namespace) -> tuple[float, float]:
    """Both phases through a four-host pool made of network namespaces; their jobs/s."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests.support.netns import netns_pool, why_no_namespaces

    reason = why_no_namespaces()
    if reason:
        raise SystemExit(f"--hosts: {reason}")
    with netns_pool(HOSTS, {"NUM_CPUS": "1", "MEMORY": "1024"}) as pool:
        work = tempfile.mkdtemp(prefix="roost-throughput-hosts-", dir=pool.base)
        os.chmod(work, 0o755)

        def submit(path: str) -> None:
            pool.roost("submit", "submit", path, cwd=work)
        return run_both_phases(submit, work, {}, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--true-jobs", type=int, default=500)
    parser.add_argument("--transfer-jobs", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--hosts", action="store_true",
                        help="also run the jobs through a four-host pool of network namespaces (root)")
    parser.add_argument("--sleep", type=float, default=None,
                        help="instead run --slots jobs of /bin/sleep SLEEP and print the schedd's memory per running job")
    parser.add_argument("--slots", type=int, default=500, help="static 1-CPU slots for --sleep (default 500)")
    parser.add_argument("--keep", action="store_true", help="keep the loopback pool's directory (daemon logs)")
    parser.add_argument("--stall-watch", type=int, default=0, metavar="MS",
                        help="run the daemons with REACTOR_STALL_REPORT_MS = MS and count their reports")
    args = parser.parse_args()
    print("loopback personal pool:")
    rates = loopback_pool(args)
    if rates is None:
        return
    loop_true, loop_transfer = rates
    if args.hosts:
        print("four hosts (network namespaces):")
        hosts_true, hosts_transfer = namespace_pool(args)
        print(f"hosts/loopback: /bin/true jobs {hosts_true / loop_true:.2f}x, "
              f"transfer jobs {hosts_transfer / loop_transfer:.2f}x")


if __name__ == "__main__":
    main()
