"""How long one negotiation cycle takes at the design's scale: 100,000 idle jobs in
about 100 autoclusters, from 20 submitters, against 10,000 slots of 25 machine types
(static slots, plus partitionable slots carved within the cycle).

Prints the seconds to build the autoclusters, the seconds per cycle, matches per
second and the number of (request, slot class) evaluations the cycle needed.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from twisted.internet.task import Clock

from classad import ClassAd
from negotiator.accountant import Accountant
from negotiator.cycle import Submitter, negotiate
from negotiator.db import AccountantDatabase
from schedd.autocluster import build_autoclusters, resource_requests, significant_attributes

REQUIREMENTS = (
    '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Disk >= RequestDisk)'
    ' && (TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)'
    ' && (TARGET.GPUs >= RequestGPUs) && (TARGET.HasFileTransfer)'
)


def slot_ads(n: int, partitionable_every: int) -> list[ClassAd]:
    """``n`` slot ads of 25 machine types; every ``partitionable_every``-th is partitionable."""
    out = []
    for i in range(n):
        kind = i % 25
        partitionable = partitionable_every and i % partitionable_every == 0
        cpus = 32 if partitionable else 1 + kind % 8
        memory = (cpus * 2048) if partitionable else 1024 * (1 + kind % 16)
        out.append(ClassAd(
            f'[ MyType = "Machine"; Name = "slot{i % 8 + 1}@node{i // 8}.example.org"; '
            f'Machine = "node{i // 8}.example.org"; SlotID = {i % 8 + 1}; '
            f'SlotType = "{"Partitionable" if partitionable else "Static"}"; '
            f'PartitionableSlot = {"true" if partitionable else "false"}; State = "Unclaimed"; '
            f'Activity = "Idle"; Arch = "X86_64"; OpSys = "{"WINDOWS" if kind == 24 else "LINUX"}"; '
            f'Cpus = {cpus}; Memory = {memory}; Disk = {10_000_000 + 1_000_000 * kind}; '
            f'GPUs = {kind % 3}; KFlops = {900_000 + 1000 * kind}; HasFileTransfer = true; '
            f'Start = (TARGET.RequestMemory <= MY.Memory) && (TARGET.Owner =!= "blocked"); '
            f'Requirements = START; Rank = 0 ]'
        ))
    return out


def job_ads(n: int, clusters: int, submitters: int):
    """``n`` idle jobs as ``(submitter, job_id, ad)``, ``clusters`` distinct shapes."""
    shapes = []
    for c in range(clusters):
        shapes.append(ClassAd(
            f'[ MyType = "Job"; Owner = "user{c % submitters}"; JobStatus = 1; '
            f'RequestCpus = {1 + c % 4}; RequestMemory = {512 * (1 + c % 6)}; '
            f'RequestDisk = {100_000 + 1000 * c}; RequestGPUs = {1 if c % 10 == 0 else 0}; '
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--slots", type=int, default=10_000)
    parser.add_argument("--submitters", type=int, default=20)
    parser.add_argument("--partitionable-every", type=int, default=10)
    args = parser.parse_args()

    slots = slot_ads(args.slots, args.partitionable_every)
    jobs = job_ads(args.jobs, args.clusters, args.submitters)
    significant = significant_attributes(slots)
    start = time.perf_counter()
    by_submitter: dict[str, list] = {}
    for name, job_id, ad in jobs:
        by_submitter.setdefault(name, []).append((job_id, ad))
    submitters = []
    for name, idle in by_submitter.items():
        clusters = build_autoclusters(idle, significant)
        submitters.append(Submitter(name, f"schedd@{name}", tuple(resource_requests(clusters, name, "schedd"))))
    autocluster_seconds = time.perf_counter() - start
    requests = sum(len(s.requests) for s in submitters)

    with tempfile.TemporaryDirectory() as tmp:
        accountant = Accountant(AccountantDatabase(f"{tmp}/accountant.db"), Clock())
        accountant.update_priorities({s.name: float(i) for i, s in enumerate(submitters)})
        start = time.perf_counter()
        result = negotiate(slots, submitters, accountant)
        cycle_seconds = time.perf_counter() - start

    print(f"jobs {args.jobs}, autoclusters {requests}, slots {args.slots} "
          f"(partitionable every {args.partitionable_every})")
    print(f"autoclustering: {autocluster_seconds:.2f} s ({args.jobs / autocluster_seconds:,.0f} jobs/s)")
    print(f"cycle: {cycle_seconds:.2f} s, {len(result.matches)} matches, "
          f"{len(result.matches) / cycle_seconds:,.0f} matches/s, {result.spins} spins, "
          f"{result.evaluations} evaluations")


if __name__ == "__main__":
    main()
