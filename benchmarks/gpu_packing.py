"""How well the negotiator packs GPU shares: a simulated pool of partitionable slots
with four cards each (24 GB, 40 GB and 80 GB models mixed) and a queue of whole-card,
memory-share and core-share jobs in several autoclusters, matched by the real
negotiator cycle (:func:`negotiator.cycle.negotiate`), with node and card placement
binpack and then spread.

Between cycles each match is carved as a startd would carve it (its cards' grants and
its cpus, memory and disk taken from the slot's ad), and the matched jobs leave the
queue. Prints the jobs placed per cycle, each cycle's time, and the fraction of the
pool's GPU memory allocated once no more jobs fit, beside a first-fit-decreasing
packing of the same jobs onto the same cards computed offline in the same run.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time

from attrs import frozen
from twisted.internet.task import Clock

from classad import ClassAd
from gpushare.job_request import request_from_job
from gpushare.placement import Card, Grant, ShareRequest, card_refusal, take
from gpushare.slot_cards import cards_from_slot_ad
from negotiator.accountant import Accountant
from negotiator.cycle import CycleSettings, Match, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.gpu_matching import slot_cards, take_cards
from negotiator.matchmaking import MatchSettings
from schedd.autocluster import build_autoclusters, resource_requests, significant_attributes
from startd.slot_ads import WITHIN_RESOURCE_LIMITS

#: (DeviceName, GlobalMemoryMb) of the three card models, one model per machine.
MODELS = (("NVIDIA A10", 24_576), ("NVIDIA A100-SXM4-40GB", 40_960), ("NVIDIA H100 80GB HBM3", 81_920))
CARDS_PER_MACHINE = 4
SLOT_REQUIREMENTS = WITHIN_RESOURCE_LIMITS  # the startd's own
JOB_REQUIREMENTS = '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Cpus >= RequestCpus)'
#: The job shapes (each its own autocluster per submitter), as extra attributes of the
#: job ad, with their weight in the queue: mostly shares, a few whole cards.
SHAPES = (
    ("RequestGPUs = 1", 2),                                              # a whole card
    ("RequestGPUs = 2", 1),                                              # two whole cards
    ("RequestGPUs = 1; RequestGPUMemory = 20000", 12),
    ("RequestGPUs = 1; RequestGPUMemory = 10000", 14),
    ("RequestGPUs = 1; RequestGPUMemory = 6000", 14),
    ("RequestGPUs = 1; RequestGPUMemory = 3000", 14),
    ("RequestGPUs = 1; RequestGPUMemoryPercent = 25", 12),
    ("RequestGPUs = 1; RequestGPUMemory = 8000; RequestGPUCores = 30", 12),   # compute shares
    ("RequestGPUs = 1; RequestGPUMemory = 4000; RequestGPUCores = 50", 12),
    ("RequestGPUs = 2; RequestGPUMemory = 12000", 7),
)


def machine_ad(n: int, model: tuple[str, int]) -> ClassAd:
    """Partitionable slot of machine ``n``: 64 cpus, 512 GiB and four cards of ``model``
    (two per NUMA node), advertised as the startd advertises them."""
    name, memory = model
    cards, refs = [], []
    for i in range(CARDS_PER_MACHINE):
        short = f"GPU-{n:04x}{i:04x}"
        attr = f"GPUs_{short.replace('-', '_')}"
        refs.append(attr)
        cards.append(f'{attr} = [ Id = "{short}"; UUID = "{short}-0000-4000-8000-{n:012x}"; '
                     f'DeviceName = "{name}"; GlobalMemoryMb = {memory}; NumaNode = {i // 2}; Index = {i}; '
                     f'FreeMemoryMb = {memory}; FreeCores = 100; Shares = 0; SplitCount = 10 ]')
    return ClassAd(
        f'[ MyType = "Machine"; Name = "slot1@gpu{n:03d}.example.org"; Machine = "gpu{n:03d}.example.org"; '
        f'SlotType = "Partitionable"; PartitionableSlot = true; State = "Unclaimed"; Activity = "Idle"; '
        f'Arch = "X86_64"; OpSys = "LINUX"; Cpus = 64; Memory = 524288; Disk = 100000000; '
        f'GPUs = {CARDS_PER_MACHINE}; KFlops = 1000000; Start = true; '
        f'WithinResourceLimits = {SLOT_REQUIREMENTS}; Requirements = START && WithinResourceLimits; Rank = 0; '
        f'AvailableGPUs = {{ {", ".join(refs)} }}; {"; ".join(cards)} ]'
    )


def pool_ads(machines: int) -> list[ClassAd]:
    """``machines`` partitionable slots, the three card models in turn."""
    return [machine_ad(n, MODELS[n % len(MODELS)]) for n in range(machines)]


def queue(jobs: int, submitters: int, seed: int) -> list[tuple[str, str, ClassAd]]:
    """``jobs`` idle jobs as ``(submitter, job id, ad)``, shapes drawn at random."""
    rng = random.Random(seed)
    shapes = [ClassAd(f'[ MyType = "Job"; JobStatus = 1; RequestCpus = 1; RequestMemory = 2048; '
                      f'RequestDisk = 1000; Requirements = {JOB_REQUIREMENTS}; Rank = 0; {extra} ]')
              for extra, _ in SHAPES]
    weights = [weight for _, weight in SHAPES]
    out = []
    for i in range(jobs):
        shape = rng.choices(range(len(shapes)), weights)[0]
        user = f"user{i % submitters}@example.org"
        ad = shapes[shape].copy()
        ad["Owner"] = user.split("@")[0]
        ad["ClusterId"] = shape + 1
        ad["ProcId"] = i
        out.append((user, f"{shape + 1}.{i}", ad))
    return out


def submitters_for(idle: dict[str, tuple[str, str, ClassAd]], significant: frozenset[str]) -> list[Submitter]:
    """The resource requests of the jobs still idle, one per autocluster, by submitter."""
    by_user: dict[str, list] = {}
    for user, job_id, ad in idle.values():
        by_user.setdefault(user, []).append((job_id, ad))
    return [Submitter(user, "schedd", tuple(resource_requests(build_autoclusters(jobs, significant), user, "schedd")))
            for user, jobs in sorted(by_user.items())]


def carve(slots: dict[str, ClassAd], match: Match) -> None:
    """Take a match out of its slot's ad as the startd would (the collector then shows it)."""
    ad = slots[match.slot_name]
    for attr, amount in match.consumed:
        ad[attr] = ad[attr] - int(amount)
    take_cards(ad, slot_cards(ad), match.grants)


@frozen
class Outcome:
    """One policy's run: per cycle (placed, seconds), and the GPU memory it allocated."""

    policy: str
    cycles: tuple[tuple[int, float], ...]
    allocated_mib: int


def run(policy: str, machines: int, jobs: list, max_cycles: int) -> Outcome:
    """Negotiate cycles until one places nothing, carving each match between cycles."""
    slots = {ad["Name"]: ad for ad in pool_ads(machines)}
    idle = {job_id: (user, job_id, ad) for user, job_id, ad in jobs}
    significant = significant_attributes(slots.values())
    settings = CycleSettings(match=MatchSettings(gpu_policy=(policy,), node_policy=policy))
    cycles, allocated = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        accountant = Accountant(AccountantDatabase(f"{tmp}/accountant.db"), Clock())
        for _ in range(max_cycles):
            submitters = submitters_for(idle, significant)
            if not submitters:
                break
            start = time.perf_counter()
            result = negotiate(list(slots.values()), submitters, accountant, settings)
            cycles.append((len(result.matches), time.perf_counter() - start))
            if not result.matches:
                break
            for match in result.matches:
                carve(slots, match)
                allocated += sum(g.memory_mib for g in match.grants)
                idle.pop(match.job_id, None)
    return Outcome(policy, tuple(cycles), allocated)


def first_fit_decreasing(machines: int, jobs: list) -> int:
    """GPU memory allocated by first-fit-decreasing, offline: every job's cards, the
    largest first, each on the first machine whose cards can hold all of them. A card
    holds a share only as the model says (``card_refusal``: its split count, compute
    and exclusivity as well as memory), so the bound is one a real pool could reach."""
    cards = {ad["Name"]: list(cards_from_slot_ad(ad)) for ad in pool_ads(machines)}
    requests: list[ShareRequest] = [r for r in (request_from_job(ad) for _, _, ad in jobs) if r is not None]
    largest_card = max(m for _, m in MODELS)
    requests.sort(key=lambda r: -(r.memory_on(Card("", "", 0, memory_total=largest_card)) * r.count))
    allocated = 0
    for request in requests:
        for name, held in cards.items():
            fits = [c for c in held if card_refusal(c, request) is None]
            if len(fits) < request.count:
                continue
            fits.sort(key=lambda c: -c.fullness)  # first fit within the machine: the fullest cards
            chosen = fits[:request.count]
            grants = [_grant(c, request) for c in chosen]
            cards[name] = list(take(held, grants))
            allocated += sum(g.memory_mib for g in grants)
            break
    return allocated


def _grant(card: Card, request: ShareRequest) -> Grant:
    return Grant(card.uuid, card.id, card.index, request.memory_on(card), request.cores_on(card), request.whole)


def report(outcome: Outcome, total_mib: int, bound_mib: int) -> None:
    placed = [n for n, _ in outcome.cycles]
    seconds = [s for _, s in outcome.cycles]
    print(f"{outcome.policy}: placed per cycle {placed}, cycle seconds "
          f"{', '.join(f'{s:.2f}' for s in seconds)} (longest {max(seconds):.2f} s)")
    print(f"  GPU memory allocated {outcome.allocated_mib / total_mib:.1%} of the pool, "
          f"{outcome.allocated_mib / bound_mib:.1%} of first-fit-decreasing")


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=250)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--submitters", type=int, default=4)
    parser.add_argument("--max-cycles", type=int, default=10)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--quick", action="store_true", help="a small run (20 machines, 800 jobs)")
    args = parser.parse_args(argv)
    if args.quick:
        args.machines, args.jobs = 20, 800
    jobs = queue(args.jobs, args.submitters, args.seed)
    total = sum(c.memory_total for ad in pool_ads(args.machines) for c in cards_from_slot_ad(ad))
    start = time.perf_counter()
    bound = first_fit_decreasing(args.machines, jobs)
    print(f"{args.machines} machines x {CARDS_PER_MACHINE} cards ({total // 1024} GiB of GPU memory), "
          f"{args.jobs} jobs in {len(SHAPES)} shapes from {args.submitters} submitters")
    print(f"first-fit-decreasing: {bound / total:.1%} of the pool's GPU memory "
          f"({time.perf_counter() - start:.2f} s)")
    ratios = {}
    for policy in ("binpack", "spread"):
        outcome = run(policy, args.machines, jobs, args.max_cycles)
        report(outcome, total, bound)
        ratios[policy] = outcome.allocated_mib / bound
        ratios[f"{policy}_longest_cycle"] = max(s for _, s in outcome.cycles)
    return ratios


if __name__ == "__main__":
    main()
