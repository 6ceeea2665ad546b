"""How fast a submit description expands into job ads.

Two descriptions: ``queue 100000`` with per-proc arguments and output, and ``queue x
from`` a 10,000-line item file. For each it prints the time to expand into the stored
form (a cluster ad plus per-proc differences) and to materialise complete ClassAds.
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


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        os.chdir(directory)
        with open("items.txt", "w") as f:
            f.writelines(f"item{i}, {i * 7}\n" for i in range(10000))
        measure("queue 100000", COUNT_FILE)
        measure("queue from a 10,000-line file", ITEMS_FILE)


if __name__ == "__main__":
    main()
