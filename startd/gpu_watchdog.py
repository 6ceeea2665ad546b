"""The GPU watchdog's decisions: whose processes use which card, and which job stayed over
its memory share long enough to be held.

Pure: samples and the time come in, decisions go out. A job over its share on a card
since its first sample over it is held once that lasted more than the grace time
(``GPU_OVERUSE_GRACE``) with HTCondor's ``HoldReasonCode`` 34 (JobOutOfResources). The
watchdog also keeps each job's peak card memory and average utilisation for the job ad
(``GPUsMemoryUsage``, ``GPUsAverageUsage``) and the latest figures for metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

#: HTCondor's HoldReasonCode 34, JobOutOfResources (memory and disk limits).
JOB_OUT_OF_RESOURCES = 34
DEFAULT_SAMPLE_INTERVAL = 10.0
DEFAULT_OVERUSE_GRACE = 30.0


@attrs.frozen
class ProcessUse:
    """One process's memory on a card, in MiB."""

    pid: int
    used_mib: int


@attrs.frozen
class CardSample:
    """One card at one sample: its utilisation (0..1) and the processes using it."""

    uuid: str
    utilisation: float
    processes: tuple[ProcessUse, ...] = ()


@attrs.frozen
class CardLimit:
    """A job's share of one card: the card's UUID and short id, and its memory share (None: whole card)."""

    uuid: str
    id: str
    memory_mib: int | None


@attrs.frozen
class WatchedJob:
    """A running job: its id, the pids of its process tree, and its cards."""

    job_id: str
    pids: frozenset[int]
    cards: tuple[CardLimit, ...]


@attrs.frozen
class Overuse:
    """A job to hold: it used ``used_mib`` on card ``card_id`` over its ``share_mib`` for more than ``grace``."""

    job_id: str
    card_id: str
    share_mib: int
    used_mib: int
    grace: float

    @property
    def reason(self) -> str:
        """The HoldReason, naming the card, the share and the use."""
        return (f"GPU {self.card_id}: job used {self.used_mib} MiB of its {self.share_mib} MiB share "
                f"for more than {self.grace:g} s")

    def hold_attributes(self) -> dict[str, object]:
        """The hold report's attributes."""
        return {"HoldReason": self.reason, "HoldReasonCode": JOB_OUT_OF_RESOURCES, "HoldReasonSubCode": 0}


#: Per job, per card UUID: (MiB its processes use, the card's utilisation 0..1).
JobCardUse = dict[str, dict[str, tuple[int, float]]]


def attribute(samples: Iterable[CardSample], jobs: Iterable[WatchedJob]) -> JobCardUse:
    """Each job's use of each of its cards: the memory of its own processes there, and the card's
    utilisation (NVML cannot split it between processes). A card a job holds but does not use
    counts as 0 MiB."""
    by_uuid = {sample.uuid: sample for sample in samples}
    found: JobCardUse = {}
    for job in jobs:
        mine: dict[str, tuple[int, float]] = {}
        for card in job.cards:
            sample = by_uuid.get(card.uuid)
            if sample is None:
                continue
            used = sum(p.used_mib for p in sample.processes if p.pid in job.pids)
            mine[card.uuid] = (used, sample.utilisation if used > 0 else 0.0)
        found[job.job_id] = mine
    return found


@attrs.define
class _JobStats:
    """A job's running figures: peak MiB on any card, and the sum and count of utilisation samples."""

    peak_mib: int = 0
    utilisation_sum: float = 0.0
    samples: int = 0
    over_since: dict[str, float] = attrs.field(factory=dict)
    held: bool = False


# Mutable: the figures of the jobs running now, updated every sample.
class GpuWatchdog:
    """Decides, sample by sample, which jobs to hold for overusing their card memory share."""

    def __init__(self, grace: float = DEFAULT_OVERUSE_GRACE) -> None:
        self.grace = grace
        self._stats: dict[str, _JobStats] = {}
        self._latest: JobCardUse = {}

    def observe(self, now: float, samples: Iterable[CardSample], jobs: Iterable[WatchedJob]) -> list[Overuse]:
        """Take one sample at time ``now``; the jobs to hold now (each once). Jobs no longer in
        ``jobs`` are forgotten."""
        jobs = list(jobs)
        use = attribute(samples, jobs)
        for gone in set(self._stats) - {job.job_id for job in jobs}:
            del self._stats[gone]
        self._latest = use
        decisions = []
        for job in jobs:
            stats = self._stats.setdefault(job.job_id, _JobStats())
            found = self._update(stats, job, use.get(job.job_id, {}), now)
            if found is not None:
                decisions.append(found)
        return decisions

    def _update(self, stats: _JobStats, job: WatchedJob, use: Mapping[str, tuple[int, float]],
                now: float) -> Overuse | None:
        if use:
            stats.peak_mib = max(stats.peak_mib, max(used for used, _ in use.values()))
            stats.utilisation_sum += sum(busy for _, busy in use.values()) / len(use)
            stats.samples += 1
        decision = None
        for card in job.cards:
            used = use.get(card.uuid, (0, 0.0))[0]
            if card.memory_mib is None or used <= card.memory_mib:
                stats.over_since.pop(card.uuid, None)
                continue
            since = stats.over_since.setdefault(card.uuid, now)
            if decision is None and not stats.held and now - since > self.grace:
                decision = Overuse(job.job_id, card.id, card.memory_mib, used, self.grace)
        if decision is not None:
            stats.held = True
        return decision

    def latest(self) -> JobCardUse:
        """The last sample's use: per job id, per card UUID, (MiB used, utilisation 0..1)."""
        return {job: dict(cards) for job, cards in self._latest.items()}

    def job_attributes(self, job_id: str) -> dict[str, object]:
        """``GPUsMemoryUsage`` (peak MiB) and ``GPUsAverageUsage`` (0..1) of a job sampled at least once."""
        stats = self._stats.get(job_id)
        if stats is None or stats.samples == 0:
            return {}
        return {"GPUsMemoryUsage": stats.peak_mib,
                "GPUsAverageUsage": round(stats.utilisation_sum / stats.samples, 4)}
