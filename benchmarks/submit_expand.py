"""How fast a submit description expands into job ads.

Two descriptions: ``queue 100000`` with per-proc arguments and output, and ``queue x
from`` a 10,000-line item file. For each it prints the time to expand into the stored
form (a cluster ad plus per-proc differences) and to materialise complete ClassAds.

With ``--materialize``: a schedd (the real service and submit route, in a fresh
process each) takes ``queue 1000000`` with ``max_materialize = 100`` as a job factory;
it prints the submit time and how much the schedd's RSS grew, beside a plain submit of
``queue 10000`` as the baseline (the goal: under 5 s and under 50 MiB).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bindings.submit import Submit  # noqa: E402

COUNT_FILE = """executable = /bin/sleep
arguments = $(Process)
output = out.$(Cluster).$(Process)
error = err.$(Cluster).$(Process)
log = job.log
request_memory = 1G
request_cpus = 1
queue 100000
"""

ITEMS_FILE = """executable = /bin/echo
arguments = $(x) $(y)
output = $(x).out
request_disk = 2 GB
queue x, y from items.txt
"""


def measure(name: str, text: str) -> None:
    sub = Submit(text)
    start = time.perf_counter()
    clusters = sub.clusters(clusterid=1, qdate=1700000000, owner="bench")
    expanded = time.perf_counter() - start
    procs = sum(len(c.procs) for c in clusters)
    start = time.perf_counter()
    ads = sub.jobs(clusterid=1, qdate=1700000000, owner="bench")
    full = time.perf_counter() - start
    assert len(ads) == procs
    print(f"{name}: {procs} procs; expand {expanded:.2f} s ({procs / expanded:,.0f} ads/s); "
          f"complete ClassAds {full:.2f} s ({procs / full:,.0f} ads/s)")


FACTORY_FILE = COUNT_FILE.replace("queue 100000", "max_materialize = 100\nqueue 1000000")


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def _schedd_submit(text: str, results) -> None:
    """In a fresh process: a schedd service, one warm-up submit, then ``text`` through
    its submit route; puts (seconds, RSS growth in MiB, procs answered, procs stored)."""
    import json

    from twisted.internet.testing import MemoryReactorClock

    from daemoncore.daemon import DaemonSettings
    from daemoncore.security import AuthorizationLevel
    from daemoncore.security.tokens import Identity
    from daemoncore.wire import schedd_routes as api
    from daemoncore.wire.server import ApiRequest
    from schedd.service import ScheddService, ScheddSettings

    directory = tempfile.mkdtemp()
    settings = DaemonSettings(daemon_type="SCHEDD", ad_type="Scheduler", interface="127.0.0.1", port=0,
                              update_interval=300, ad_lifetime=900, max_body=1 << 24, request_timeout=60,
                              signing_key_file="", address_file=os.path.join(directory, ".address"),
                              log_file=os.path.join(directory, "SchedLog"), collector_host=None, trust_domain="pool")
    reactor = MemoryReactorClock()
    reactor.advance(1700000000)
    service = ScheddService(settings, reactor, ScheddSettings(spool=os.path.join(directory, "spool")),
                            key=os.urandom(32), with_execution=False)
    who = Identity("bench", "pool", frozenset({AuthorizationLevel.WRITE}))

    def submit(description: str) -> dict:
        body = json.dumps({"description": description, "iwd": directory}).encode()
        return service.handlers()[api.SUBMIT](ApiRequest(api.SUBMIT, {}, {}, body, who)).body
    submit("executable = /bin/true\nqueue 1\n")
    before = _rss_mib()
    start = time.perf_counter()
    answer = submit(text)
    seconds = time.perf_counter() - start
    results.put((seconds, _rss_mib() - before, answer["num_procs"], len(service.queue) - 1))


def measure_schedd(name: str, text: str) -> None:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    child = context.Process(target=_schedd_submit, args=(text, results))
    child.start()
    seconds, grew, procs, stored = results.get(timeout=600)
    child.join()
    print(f"{name}: {procs:,} procs submitted in {seconds:.2f} s ({procs / seconds:,.0f} procs/s), "
          f"{stored:,} job rows stored; schedd RSS grew {grew:.1f} MiB")


def materialize() -> None:
    measure_schedd("plain queue 10000 (baseline)", COUNT_FILE.replace("queue 100000", "queue 10000"))
    measure_schedd("factory queue 1000000, max_materialize = 100", FACTORY_FILE)


def main() -> None:
    if "--materialize" in sys.argv[1:]:
        materialize()
        return
    with tempfile.TemporaryDirectory() as directory:
        os.chdir(directory)
        with open("items.txt", "w") as f:
            f.writelines(f"item{i}, {i * 7}\n" for i in range(10000))
        measure("queue 100000", COUNT_FILE)
        measure("queue from a 10,000-line file", ITEMS_FILE)


if __name__ == "__main__":
    main()
