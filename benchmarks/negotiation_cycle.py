"""How long one negotiation cycle takes at the design's scale: 100,000 idle jobs in
about 100 autoclusters, from 20 submitters, against 10,000 slots of 25 machine types
(static slots, plus partitionable slots carved within the cycle).

The cycle runs twice on the same pool: plain, then with what issues 13 and 14 added
(GPU card ads on some partitionable slots, claimed slots offered as preemption
candidates under the default PREEMPTION_REQUIREMENTS, concurrency limits on some
jobs), so a regression in either shows. Each run prints its seconds, matches, the
(autocluster x slot class) pairs it had to weigh and the cost of one such pair as a
ratio to a bare two-way match of one job ad against one slot ad timed in the same
run. Also printed: the cycle's CPU seconds (on a shared machine wall time drifts with
the load), the negotiator's peak RSS during the cycle, and the longest stall of a
reactor while the cycle runs in a worker thread, as the daemon runs it (with the heap
frozen, :func:`negotiator.driver.with_heap_frozen`): a probe thread
standing in for the reactor wakes every 2 ms; a wake-up late by more than the worker's
CPU time in that gap was late for the machine's other load, so the stall counted is
the lesser of the two (the longest wait caused by the worker holding the interpreter),
printed beside the longest lateness seen and the longest garbage collection.

Last, the reactor's side of reading the collector: the feature run's slot ads are
served as the collector streams them (NDJSON over HTTP, from a server in another
process) and read by the negotiator's own client on a real Twisted reactor, once
decoded in one piece (``AsyncClient.call``), once ad by ad (:func:`negotiator.driver.query_collector`)
and once kept as bytes for the cycle's worker to decode, as the cycle reads slot ads
(:func:`negotiator.driver.collector_chunks`), while a probe on the reactor wakes every
2 ms; the longest lateness of each is printed beside the probe's lateness on an idle
reactor measured just before.

The full scale of issue 17 is ``--slots 100000 --autoclusters 1000``.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

from twisted.internet.defer import Deferred
from twisted.internet.task import Clock, LoopingCall, react

from classad import ClassAd
from classad.matching import rank, requirements_accept
from daemoncore.wire import collector_routes
from daemoncore.wire.adcodec import ad_to_json
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.ndjson import encode_line
from negotiator.accountant import Accountant
from negotiator.concurrency import ConcurrencySettings
from negotiator.cycle import CycleSettings, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.driver import collector_chunks, query_collector, with_heap_frozen
from negotiator.matchmaking import SlotPool
from schedd.autocluster import build_autoclusters, resource_requests, significant_attributes

REQUIREMENTS = (
    '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk)'
    ' && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)'
    ' && (TARGET.GPUs >= RequestGPUs) && (TARGET.HasFileTransfer)'
)
CARDS = 2
CARD_MIB = 40_960


def _cards(machine: int) -> str:
    """Two nested card ads and AvailableGPUs, as the startd advertises a GPU machine."""
    refs, ads = [], []
    for i in range(CARDS):
        short = f"GPU-{machine:06x}{i:02x}"
        attr = f"GPUs_{short.replace('-', '_')}"
        refs.append(attr)
        ads.append(f'{attr} = [ Id = "{short}"; UUID = "{short}-0000-4000-8000-{machine:012x}"; '
                   f'DeviceName = "NVIDIA A100-SXM4-40GB"; GlobalMemoryMb = {CARD_MIB}; Index = {i}; '
                   f'FreeMemoryMb = {CARD_MIB}; FreeCores = 100; Shares = 0; SplitCount = 10 ]')
    return f'AvailableGPUs = {{ {", ".join(refs)} }}; {"; ".join(ads)}; '


def slot_ad(i: int, partitionable: bool, cards: bool, claimed_by: str | None) -> ClassAd:
    """Slot ``i`` of 25 machine types: partitionable (with cards when ``cards``), or a
    static slot, idle or claimed by ``claimed_by``."""
    kind = i % 25
    cpus = 32 if partitionable else 1 + kind % 8
    memory = (cpus * 2048) if partitionable else 1024 * (1 + kind % 16)
    gpus = CARDS if cards else (0 if partitionable else kind % 3)
    state = (f'State = "Claimed"; Activity = "Busy"; RemoteOwner = "{claimed_by}"; '
             f'RemoteUser = "{claimed_by}"; JobStart = 1000; ') if claimed_by else \
        'State = "Unclaimed"; Activity = "Idle"; '
    return ClassAd(
        f'[ MyType = "Machine"; Name = "slot{i % 8 + 1}@node{i // 8}.example.org"; '
        f'Machine = "node{i // 8}.example.org"; SlotID = {i % 8 + 1}; '
        f'SlotType = "{"Partitionable" if partitionable else "Static"}"; '
        f'PartitionableSlot = {"true" if partitionable else "false"}; {state}'
        f'Arch = "X86_64"; OpSys = "{"WINDOWS" if kind == 24 else "LINUX"}"; '
        f'Cpus = {cpus}; Memory = {memory}; Disk = {10_000_000 + 1_000_000 * kind}; '
        f'GPUs = {gpus}; KFlops = {900_000 + 1000 * kind}; HasFileTransfer = true; '
        f'{_cards(i) if cards else ""}'
        f'Start = (TARGET.RequestMemory <= MY.Memory) && (TARGET.Owner =!= "blocked"); '
        f'Requirements = START; Rank = 0 ]'
    )


def slot_ads(n: int, partitionable_every: int, gpu_every: int = 0, claimed_every: int = 0,
             submitters: int = 20) -> list[ClassAd]:
    """``n`` slot ads; every ``partitionable_every``-th is partitionable, every
    ``gpu_every``-th partitionable one has cards, every ``claimed_every``-th static
    one is claimed by one of the submitters (0 turns a feature off)."""
    out = []
    for i in range(n):
        partitionable = bool(partitionable_every) and i % partitionable_every == 0
        cards = partitionable and bool(gpu_every) and (i // partitionable_every) % gpu_every == 0
        claimed = not partitionable and bool(claimed_every) and i % claimed_every == 1
        out.append(slot_ad(i, partitionable, cards, f"user{i % submitters}@example.org" if claimed else None))
    return out


def job_ads(n: int, clusters: int, submitters: int, limited_every: int = 0, gpu_share_every: int = 0):
    """``n`` idle jobs as ``(submitter, job_id, ad)``, ``clusters`` distinct shapes;
    every ``limited_every``-th shape names a concurrency limit and every
    ``gpu_share_every``-th GPU shape asks for a share of a card."""
    shapes = []
    for c in range(clusters):
        extra = ""
        if limited_every and c % limited_every == 0:
            extra += f'ConcurrencyLimits = "license{c % 3}"; '
        if gpu_share_every and c % 10 == 0 and (c // 10) % gpu_share_every == 0:
            extra += "RequestGPUMemory = 10000; "
        shapes.append(ClassAd(
            f'[ MyType = "Job"; Owner = "user{c % submitters}"; JobStatus = 1; '
            f'RequestCpus = {1 + c % 4}; RequestMemory = {512 * (1 + c % 6)}; '
            f'RequestDisk = {100_000 + 1000 * c}; RequestGPUs = {1 if c % 10 == 0 else 0}; {extra}'
            f'Requirements = {REQUIREMENTS}; Rank = TARGET.KFlops / 1000 ]'
        ))
    out = []
    for i in range(n):
        c = i % clusters
        ad = shapes[c].copy()
        ad["ClusterId"] = c + 1
        ad["ProcId"] = i // clusters
        out.append((f"user{c % submitters}@example.org", f"{c + 1}.{i // clusters}", ad))
    return out


def build_submitters(jobs, slots: list[ClassAd]) -> tuple[list[Submitter], float]:
    """The schedds' autoclusters of ``jobs`` as Submitters, and the seconds it took."""
    significant = significant_attributes(slots)
    start = time.perf_counter()
    by_submitter: dict[str, list] = {}
    for name, job_id, ad in jobs:
        by_submitter.setdefault(name, []).append((job_id, ad))
    out = []
    for name, idle in by_submitter.items():
        clusters = build_autoclusters(idle, significant)
        out.append(Submitter(name, f"schedd@{name}", tuple(resource_requests(clusters, name, "schedd"))))
    return out, time.perf_counter() - start


def bare_match_seconds(job: ClassAd, slot: ClassAd, repeat: int = 2000) -> float:
    """Seconds of one two-way Requirements check plus the job's Rank, the baseline."""
    start = time.perf_counter()
    for _ in range(repeat):
        requirements_accept(job, slot)
        requirements_accept(slot, job)
        rank(job, slot)
    return (time.perf_counter() - start) / repeat


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak_rss() -> bool:
    """Start a new peak-RSS measurement (Linux's clear_refs 5); False when not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_worker_thread(function, *args) -> tuple[object, float, float, tuple[float, float, float]]:
    """``function(*args)`` in a worker thread while this thread wakes every 2 ms as a
    reactor waiting on its sockets would; returns the result, the wall and CPU seconds
    of the worker, and the longest stall the worker caused, lateness seen and
    garbage collection (seconds)."""
    out: dict = {}
    collections: list[float] = [0.0]
    started: list[float] = []

    def timed_gc(phase: str, _info: dict) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            collections[0] = max(collections[0], time.perf_counter() - started.pop())

    def work() -> None:
        start, cpu = time.perf_counter(), time.thread_time()
        out["result"] = function(*args)
        out["cpu"] = time.thread_time() - cpu
        out["wall"] = time.perf_counter() - start

    worker = threading.Thread(target=work)
    stall = late_most = 0.0
    gc.callbacks.append(timed_gc)
    worker.start()
    clock = time.pthread_getcpuclockid(worker.ident)
    while worker.is_alive():
        before, cpu_before = time.perf_counter(), time.clock_gettime(clock)
        time.sleep(0.002)
        late = time.perf_counter() - before - 0.002
        try:
            held = time.clock_gettime(clock) - cpu_before
        except OSError:  # the worker ended meanwhile
            held = late
        late_most = max(late_most, late)
        stall = max(stall, min(late, held))
    worker.join()
    gc.callbacks.remove(timed_gc)
    return out["result"], out["wall"], out["cpu"], (stall, late_most, collections[0])


def run_cycle(label: str, slots: list[ClassAd], submitters: list[Submitter], settings: CycleSettings,
              bare: float) -> float:
    """One cycle over ``slots``; prints its figures and returns its seconds."""
    requests = sum(len(s.requests) for s in submitters)
    classes = len(SlotPool(slots, [r.ad for s in submitters for r in s.requests], settings.match).classes)
    gc.collect()
    peak_known = _reset_peak_rss()
    with tempfile.TemporaryDirectory() as tmp:
        accountant = Accountant(AccountantDatabase(f"{tmp}/accountant.db"), Clock())
        accountant.update_priorities({s.name: float(i) for i, s in enumerate(submitters)})
        result, seconds, cpu, (stall, late, collection) = in_worker_thread(
            with_heap_frozen, negotiate, slots, submitters, accountant, settings)
    pairs = requests * classes
    per_pair = seconds / pairs if pairs else 0.0
    victims = sum(1 for m in result.matches if m.victims)
    print(f"{label}: cycle {seconds:.2f} s ({cpu:.2f} s CPU), {len(result.matches)} matches ({victims} preempting), "
          f"{len(result.matches) / seconds:,.0f} matches/s, {result.spins} spins, {result.evaluations} evaluations")
    print(f"  {requests} autoclusters x {classes} slot classes at start: {per_pair * 1e6:.2f} us per pair, "
          f"{per_pair / bare:.3f}x a bare match ({bare * 1e6:.1f} us)")
    peak = f"peak {_peak_rss_mib():,.0f} MiB" if peak_known else f"lifetime peak {_peak_rss_mib():,.0f} MiB"
    print(f"  negotiator RSS {peak} during the cycle (now {_rss_mib():,.0f} MiB)")
    print(f"  longest reactor stall while the cycle ran in a worker thread: {stall * 1000:.0f} ms "
          f"(wake-up late by up to {late * 1000:.0f} ms on this machine; longest gc {collection * 1000:.0f} ms)")
    return seconds


#: A stand-in collector in its own process: answers every request with the file named
#: by argv[1] as NDJSON, after printing its port.
_SERVER = """
import http.server, sys
body = open(sys.argv[1], "rb").read()
class Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class ReactorProbe:
    """Wakes every 2 ms on the reactor and keeps the longest lateness seen. Mutable:
    it accumulates while it runs."""

    PERIOD = 0.002

    def __init__(self) -> None:
        self.worst = 0.0
        self._last = 0.0
        self._loop = LoopingCall(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self._last - self.PERIOD)
        self._last = now

    def start(self) -> None:
        self.worst, self._last = 0.0, time.perf_counter()
        self._loop.start(self.PERIOD, now=False)

    def stop(self) -> float:
        """Stop probing; returns the longest lateness in seconds."""
        self._loop.stop()
        return self.worst


async def _probe_reads(reactor, port: int) -> list[tuple[str, float, int, float]]:
    """Lateness on an idle reactor, then while the collector's answer is read in one
    piece and ad by ad: ``(label, lateness, ads, seconds)`` each."""
    client = AsyncClient(f"127.0.0.1:{port}", timeout=None)
    body = {"constraint": "true"}
    probe = ReactorProbe()
    out = []

    def pause(seconds: float) -> Deferred:
        later = Deferred()
        reactor.callLater(seconds, later.callback, None)
        return later

    probe.start()
    await pause(0.5)
    out.append(("idle reactor", probe.stop(), 0, 0.5))
    reads = (("decoded in one piece (AsyncClient.call)",
              lambda: client.call(collector_routes.QUERY, body, ad_type="Machine")),
             ("decoded ad by ad as it arrives (query_collector)",
              lambda: Deferred.fromCoroutine(query_collector(client, body, "Machine"))),
             ("kept as bytes, decoded off the reactor (collector_chunks, as the cycle reads slots)",
              lambda: Deferred.fromCoroutine(collector_chunks(client, body, "Machine"))))
    for label, read in reads:
        gc.collect()
        probe.start()
        start = time.perf_counter()
        answer = await read()
        seconds = time.perf_counter() - start
        await pause(0.02)  # the probe's next wake-up sees a stall that ended the read
        count = sum(chunk.count(b"\n") for chunk in answer) if answer and type(answer[0]) is bytes else len(answer)
        out.append((label, probe.stop(), count, seconds))
        del answer
    return out


def reactor_stalls(slots: list[ClassAd]) -> None:
    """Serve ``slots`` as the collector streams them and print the reactor's longest
    stall while the negotiator's client reads them each way (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ads.ndjson")
        with open(path, "wb") as out:
            for ad in slots:
                out.write(encode_line(ad_to_json(ad)))
        size = os.path.getsize(path)
        server = subprocess.Popen([sys.executable, "-c", _SERVER, path], stdout=subprocess.PIPE, text=True)
        try:
            port = int(server.stdout.readline())
            results: list = []

            async def run(reactor):
                results.extend(await _probe_reads(reactor, port))

            try:
                react(lambda reactor: Deferred.fromCoroutine(run(reactor)))
            except SystemExit:
                pass
        finally:
            server.terminate()
            server.wait()
    print(f"reading {len(slots):,} slot ads ({size / 2**20:,.1f} MiB of NDJSON) from a collector process "
          f"on a real reactor, 2 ms probe:")
    for label, late, count, seconds in results:
        ads = f", {count:,} ads in {seconds:.2f} s" if count else ""
        print(f"  {label}: longest reactor stall {late * 1000:.0f} ms{ads}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--autoclusters", "--clusters", dest="clusters", type=int, default=100)
    parser.add_argument("--slots", type=int, default=10_000)
    parser.add_argument("--submitters", type=int, default=20)
    parser.add_argument("--partitionable-every", type=int, default=10)
    parser.add_argument("--gpu-every", type=int, default=5,
                        help="every Nth partitionable slot has two 40 GB cards (feature run)")
    parser.add_argument("--claimed-every", type=int, default=20,
                        help="every Nth static slot is claimed, a preemption candidate (feature run)")
    parser.add_argument("--limited-every", type=int, default=4,
                        help="every Nth autocluster names a concurrency limit (feature run)")
    args = parser.parse_args()

    plain_slots = slot_ads(args.slots, args.partitionable_every)
    jobs = job_ads(args.jobs, args.clusters, args.submitters)
    plain, autocluster_seconds = build_submitters(jobs, plain_slots)
    feature_slots = slot_ads(args.slots, args.partitionable_every, args.gpu_every, args.claimed_every,
                             args.submitters)
    jobs = job_ads(args.jobs, args.clusters, args.submitters, args.limited_every, gpu_share_every=2)
    featured, _ = build_submitters(jobs, feature_slots)
    bare = bare_match_seconds(jobs[1][2], plain_slots[1])
    del jobs
    print(f"jobs {args.jobs}, autoclusters {sum(len(s.requests) for s in plain)}, slots {args.slots} "
          f"(partitionable every {args.partitionable_every})")
    print(f"autoclustering: {autocluster_seconds:.2f} s ({args.jobs / autocluster_seconds:,.0f} jobs/s)")
    limits = ConcurrencySettings({f"license{n}": 50.0 * (n + 1) for n in range(3)})
    base = run_cycle("plain", plain_slots, plain, CycleSettings(), bare)
    featured_seconds = run_cycle(
        f"GPU cards on 1/{args.gpu_every} partitionable, 1/{args.claimed_every} static claimed, "
        f"limits on 1/{args.limited_every} autoclusters", feature_slots, featured,
        CycleSettings(concurrency=limits), bare)
    print(f"features cost {featured_seconds / base:.2f}x the plain cycle")
    reactor_stalls(feature_slots)


if __name__ == "__main__":
    main()
