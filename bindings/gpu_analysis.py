"""Why a GPU job does not run, card by card: the part of ``roost q -better-analyze``
that the Requirements cannot show, since a share job asks for part of a card and the
placement model (:mod:`gpushare.placement`), not a ClassAd clause, decides which card
can hold it. Pure: ads in, an :class:`GpuAnalysis` and its report lines out."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

import classad
from gpushare.errors import GpuRequestError
from gpushare.job_request import request_from_job
from gpushare.placement import CLAUSES, ShareRequest, explain, fit
from gpushare.slot_cards import cards_from_slot_ad

#: What each refusal clause means, in the submit commands' words.
CLAUSE_WORDS = {
    "uuid": "not among use_gpu_uuids, or named by avoid_gpu_uuids",
    "type": "model not among use_gpu_types, or named by avoid_gpu_types",
    "exclusive": "held whole or at 100% cores by another job, or the job wants a card no one uses",
    "split count": "already holds as many shares as its GPU_SPLIT_COUNT allows",
    "cores": "too few free cores (request_gpu_cores)",
    "memory": "too little free memory (request_gpu_memory / request_gpu_memory_percent)",
}


@frozen
class GpuAnalysis:
    """How the pool's cards judge one job's GPU request: cards able to hold one share,
    cards refused per clause, and machines able to hold the whole request."""

    job_id: str
    request: str
    cards: int
    fit: int
    refused: tuple[tuple[str, int], ...]
    machines: int
    machines_fitting: int
    #: machines with enough fitting cards, but not on one NUMA node as gpu_numa_bind demands
    numa_refused: int = 0
    problem: str | None = None


def describe_request(request: ShareRequest) -> str:
    """The request in the submit commands' words."""
    if request.whole:
        size = "whole, untouched card(s)"
    else:
        parts = [f"{request.memory_mib} MiB" if request.memory_mib is not None else None,
                 f"{request.memory_percent}% of memory" if request.memory_percent is not None else None,
                 f"{request.cores}% of cores" if request.cores is not None else None]
        size = "a share of " + ", ".join(p for p in parts if p) + " on each card"
    return f"{request.count} GPU(s), {size}"


def gpu_slots(slots: Iterable[classad.ClassAd]) -> list[classad.ClassAd]:
    """The slots a new job could get cards from: every slot with cards but the claimed
    pieces (dynamic slots) of a partitionable one, whose cards its parent also shows."""
    return [slot for slot in slots if slot.get("DynamicSlot") is not True and cards_from_slot_ad(slot)]


def analyze_gpus(job: classad.ClassAd, slots: Iterable[classad.ClassAd], job_id: str) -> GpuAnalysis | None:
    """The card-by-card analysis of ``job``'s GPU request, or None when it asks for no GPU."""
    try:
        request = request_from_job(job)
    except GpuRequestError as exc:
        return GpuAnalysis(job_id, "unreadable", 0, 0, (), 0, 0, problem=str(exc))
    if request is None:
        return None
    counts = dict.fromkeys((*CLAUSES, "fit"), 0)
    machines = fitting = numa = 0
    for slot in gpu_slots(slots):
        cards = cards_from_slot_ad(slot)
        here = explain(cards, request)
        for clause, count in here.items():
            counts[clause] += count
        machines += 1
        if fit(cards, request) is not None:
            fitting += 1
        elif here["fit"] >= request.count:
            numa += 1
    refused = tuple((clause, counts[clause]) for clause in CLAUSES if counts[clause])
    return GpuAnalysis(job_id, describe_request(request), sum(counts.values()), counts["fit"], refused,
                       machines, fitting, numa)


def render_gpu_analysis(analysis: GpuAnalysis) -> str:
    """The report's GPU section."""
    job = analysis.job_id
    if analysis.problem is not None:
        return f"Job {job}'s GPU request cannot be read: {analysis.problem}\n\n"
    lines = [f"Job {job} asks for {analysis.request}.",
             f"Of the {analysis.cards} GPU card(s) in the pool, {analysis.fit} can hold one share; refused:"]
    if analysis.refused:
        width = max(len(clause) for clause, _ in analysis.refused)
        lines += [f"  {count:>6}  {clause:<{width}}  {CLAUSE_WORDS[clause]}" for clause, count in analysis.refused]
    else:
        lines.append("       none")
    lines.append(f"{analysis.machines_fitting} of {analysis.machines} slot(s) with cards can hold the whole request.")
    if analysis.numa_refused:
        lines.append(f"{analysis.numa_refused} slot(s) have enough cards only across NUMA nodes (gpu_numa_bind).")
    if analysis.cards == 0:
        lines.append("WARNING: no slot in the pool advertises GPU cards.")
    elif analysis.machines_fitting == 0:
        lines.append(f"WARNING: no slot's cards can hold job {job}'s GPU request now.")
    return "\n".join(lines) + "\n\n"


__all__ = ["CLAUSE_WORDS", "GpuAnalysis", "analyze_gpus", "describe_request", "gpu_slots", "render_gpu_analysis"]
