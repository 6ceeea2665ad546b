"""How fairly the negotiator shares a pool among groups with quotas, surplus weights
and reclaim: the real cycle (:func:`negotiator.cycle.negotiate`) against a simulated
pool of static one-core slots, 20 users in 4 accounting groups, jobs of mixed lengths
arriving over simulated hours.

Simulated time advances cycle by cycle (a task.Clock drives the accountant): jobs end
when their length has run, each match starts a job, and each preempting match first
sends its victims back to their owners' queues. Each group's entitlement at a cycle is
its allocation over the whole pool for that cycle's demand (quota, then surplus split
by GROUP_SURPLUS_WEIGHT). Prints each user's and group's average cores against its
entitlement after the first simulated hour, the largest deviation, the preemptions,
the jobs preempted twice, and any preemption before the victim's minimum runtime.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter

from attrs import define, frozen
from twisted.internet.task import Clock

from classad import ClassAd
from daemoncore.wire.resource_request import ResourceRequest
from negotiator.accountant import Accountant, AccountantSettings
from negotiator.cycle import CycleSettings, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.groups import GroupSettings, allocations
from negotiator.preemption import PreemptionSettings

DOMAIN = "sim"
#: group: (quota share of the pool, surplus weight, users' arrivals per cycle each, first arrival)
GROUPS = {
    "group_a": (0.40, 1.0, 3.0, 0),
    "group_b": (0.30, 3.0, 3.0, 0),
    "group_c": (0.20, 1.0, 3.0, 1800),
    "group_d": (0.10, 1.0, 0.15, 0),
}
LENGTHS = (600, 1800, 7200)
MIN_RUNTIME = 300.0
GROUP_MIN_RUNTIME = {"group_d": 900.0}
SLOT = ('[ MyType = "Machine"; Name = "{name}"; SlotType = "Static"; State = "Unclaimed"; Activity = "Idle"; '
        'Cpus = 1; Memory = 2048; Disk = 100000; Start = true; Requirements = START; Rank = 0 ]')
JOB = ('[ MyType = "Job"; Owner = "{owner}"; JobStatus = 1; RequestCpus = 1; RequestMemory = 1024; '
       'RequestDisk = 1000; Requirements = TARGET.Cpus >= RequestCpus && TARGET.Memory >= RequestMemory ]')


@define
class Job:
    """One simulated job. Mutable: it starts, is preempted and runs again."""

    job_id: str
    user: str
    length: float
    started: float | None = None
    slot: str | None = None
    preempted: int = 0


@frozen
class Figures:
    """What a run measured."""

    groups: dict
    users: dict
    largest_deviation: float
    preemptions: int
    preempted_twice: int
    early_preemptions: int
    cycle_seconds: float


class Simulation:
    """The pool, queues and clock of one run. Mutable: time advances cycle by cycle."""

    def __init__(self, slots: int, users_per_group: int, interval: float, seed: int) -> None:
        self.random = random.Random(seed)
        self.interval = interval
        self.clock = Clock()
        self.slots = [f"slot{i}@m{i // 32}" for i in range(slots)]
        self.running: dict[str, Job] = {}
        self.idle: dict[str, list[Job]] = {}
        self.users = {f"{g}.u{i}@{DOMAIN}": g for g in GROUPS for i in range(users_per_group)}
        names = tuple(GROUPS)
        self.groups = GroupSettings(names, {g: q * slots for g, (q, *_) in GROUPS.items()},
                                    accept_surplus_default=True,
                                    surplus_weights={g: w for g, (_, w, *_) in GROUPS.items()})
        self.settings = CycleSettings(groups=self.groups, preemption=PreemptionSettings(
            min_runtime=MIN_RUNTIME, group_min_runtime=GROUP_MIN_RUNTIME))
        database = AccountantDatabase(tempfile.mktemp(suffix=".sqlite"))
        self.accountant = Accountant(database, self.clock, AccountantSettings(group_names=names))
        self.next_id = 0
        self.preemptions = 0
        self.early = 0
        self.ever_preempted: Counter = Counter()

    def arrive(self) -> None:
        """New jobs for every user whose group has started submitting."""
        now = self.clock.seconds()
        for user, group in self.users.items():
            _, _, rate, first = GROUPS[group]
            rate *= len(self.slots) / 1000
            if now < first:
                continue
            count = int(rate) + (self.random.random() < rate - int(rate))
            for _ in range(count * (20 if now == first else 1)):
                self.next_id += 1
                self.idle.setdefault(user, []).append(Job(f"{self.next_id}.0", user,
                                                          float(self.random.choice(LENGTHS))))

    def finish(self) -> None:
        now = self.clock.seconds()
        for slot, job in list(self.running.items()):
            if now - job.started >= job.length:
                del self.running[slot]

    def slot_ads(self) -> list[ClassAd]:
        ads = []
        for name in self.slots:
            ad = ClassAd(SLOT.format(name=name))
            job = self.running.get(name)
            if job is not None:
                ad["State"], ad["Activity"] = "Claimed", "Busy"
                ad["RemoteUser"] = ad["RemoteOwner"] = job.user.split(".", 1)[1]
                ad["AccountingGroup"] = job.user
                ad["JobStart"] = job.started
            ads.append(ad)
        return ads

    def submitters(self) -> list[Submitter]:
        out = []
        for user, jobs in sorted(self.idle.items()):
            if jobs:
                ad = ClassAd(JOB.format(owner=user.split("@")[0]))
                request = ResourceRequest(f"{user}#1", user, "sim", len(jobs), ad, tuple(j.job_id for j in jobs))
                out.append(Submitter(user, "sim", (request,)))
        return out

    def in_use(self) -> dict[str, float]:
        return dict(Counter(job.user for job in self.running.values()))

    def entitlement(self) -> dict[str, float]:
        """Each group's allocation of the whole pool for the demand now."""
        demand = Counter()
        for user, group in self.users.items():
            demand[group] += len(self.idle.get(user, ()))
        for job in self.running.values():
            demand[self.users[job.user]] += 1
        return allocations(self.groups, len(self.slots), dict(demand))

    def cycle(self) -> float:
        """One negotiation cycle and its matches started; the cycle's seconds."""
        self.finish()
        self.arrive()
        self.accountant.update_priorities(self.in_use())
        started = time.perf_counter()
        result = negotiate(self.slot_ads(), self.submitters(), self.accountant, self.settings)
        took = time.perf_counter() - started
        now = self.clock.seconds()
        for match in result.matches:
            for victim in match.victims:
                self.evict(victim, now)
            queue = self.idle[match.submitter]
            job = next(j for j in queue if j.job_id == match.job_id)
            queue.remove(job)
            job.started, job.slot = now, match.slot_name
            self.running[match.slot_name] = job
        return took

    def evict(self, slot: str, now: float) -> None:
        job = self.running.pop(slot)
        least = GROUP_MIN_RUNTIME.get(self.users[job.user], MIN_RUNTIME)
        self.early += now - job.started < least
        self.preemptions += 1
        job.preempted += 1
        self.ever_preempted[job.job_id] += 1
        job.started = job.slot = None
        self.idle[job.user].insert(0, job)


def run(slots: int = 1000, users_per_group: int = 5, hours: float = 4.0, interval: float = 120.0,
        seed: int = 14) -> Figures:
    """Simulate ``hours`` of cycles every ``interval`` seconds; the figures after the first hour."""
    sim = Simulation(slots, users_per_group, interval, seed)
    got: Counter = Counter()
    owed: Counter = Counter()
    users: Counter = Counter()
    samples = 0
    seconds = 0.0
    cycles = int(hours * 3600 / interval)
    for _ in range(cycles):
        seconds += sim.cycle()
        if sim.clock.seconds() >= 3600:
            samples += 1
            for group, share in sim.entitlement().items():
                owed[group] += share
            for job in sim.running.values():
                got[sim.users[job.user]] += 1
                users[job.user] += 1
        sim.clock.advance(interval)
    groups = {g: (got[g] / max(samples, 1), owed[g] / max(samples, 1)) for g in GROUPS}
    deviation = max(abs(a - e) / e for a, e in groups.values() if e > 0)
    return Figures(groups, {u: n / max(samples, 1) for u, n in users.items()}, deviation, sim.preemptions,
                   sum(1 for n in sim.ever_preempted.values() if n >= 2), sim.early, seconds / max(cycles, 1))


def report(figures: Figures, slots: int) -> None:
    print(f"{'group':10} {'cores':>8} {'entitled':>9} {'deviation':>10}")
    for group, (achieved, entitled) in figures.groups.items():
        print(f"{group:10} {achieved:8.1f} {entitled:9.1f} {(achieved - entitled) / entitled:+10.1%}")
    print(f"\n{'user':22} {'cores':>8}")
    for user, cores in sorted(figures.users.items()):
        print(f"{user:22} {cores:8.1f}")
    print(f"\npool: {slots} slots; largest group deviation after the first hour: {figures.largest_deviation:.1%} "
          f"(target 5%)")
    print(f"preemptions: {figures.preemptions}; jobs preempted twice or more: {figures.preempted_twice}; "
          f"preempted before their minimum runtime: {figures.early_preemptions}")
    print(f"mean cycle time: {figures.cycle_seconds:.3f} s")


def main(argv: list[str] | None = None) -> Figures:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run (100 slots, 2 simulated hours)")
    parser.add_argument("--hours", type=float, default=4.0)
    args = parser.parse_args(argv)
    slots, hours = (100, 2.0) if args.quick else (1000, args.hours)
    figures = run(slots=slots, hours=hours)
    report(figures, slots)
    return figures


if __name__ == "__main__":
    main()
