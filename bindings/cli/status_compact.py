"""``roost status -compact``: one line per machine, as condor_status's
startdCompact_PrintFormat lays it out (src/condor_status.V6/status.cpp): Machine and
Platform as wide as their widest value, Slots ``%5d``, Cpus and Gpus ``%4d``, TotalGb
``%8.2f``, FreCpu ``%6d``, FreeGb ``%8.2f``, CpuLoad ``%7.2f`` (the machine's load per
cpu), ST (state and activity letters), Jobs/Min ``%8.2f`` or ``_``, MaxSlotGb ``%9.2f``
or ``*``; Roost adds its GPU columns when the pool has GPUs. Under it the totals block,
counted as condor_status counts it for -compact (each dynamic slot's state under its
machine's platform, a partitionable slot's own state only while it has cpus and memory
left). Pure: ads in, text out."""

from __future__ import annotations

from collections import defaultdict

from bindings.cli.status_format import plain_value
from bindings.cli.status_gpus import COMPACT_GPU_HEADINGS, COMPACT_GPU_WIDTHS, compact_gpu_columns
from bindings.cli.status_tables import ACTIVITY_LETTERS, STATE_LETTERS, attribute
from bindings.cli.status_totals import Tally, totals_block

#: (heading, width, right-aligned); width 0 is as wide as the widest value
COMPACT_COLUMNS = (("Machine", 0, False), ("Platform", 0, False), ("Slots", 5, True), ("Cpus", 4, True),
                   ("Gpus", 4, True), (" TotalGb", 8, True), ("FreCpu", 6, True), (" FreeGb ", 8, True),
                   ("CpuLoad", 7, True), ("ST", 2, False), ("Jobs/Min", 8, True), ("MaxSlotGb", 9, True))
GPU_COLUMNS = tuple((heading, width, True) for heading, width in zip(COMPACT_GPU_HEADINGS, COMPACT_GPU_WIDTHS))


def _number(ad, name: str) -> float | None:
    value = attribute(ad, name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _sum(ads: list, name: str, fallback: str | None = None) -> float:
    """The sum of ``name`` (else ``fallback``) over ``ads``, leaving out ads with neither."""
    total = 0.0
    for ad in ads:
        value = _number(ad, name)
        if value is None and fallback:
            value = _number(ad, fallback)
        total += value or 0.0
    return total


def _kinds(slots: list) -> tuple[list, list, list]:
    """A machine's partitionable, dynamic and static slots."""
    partitionable = [ad for ad in slots if attribute(ad, "PartitionableSlot") is True]
    dynamic = [ad for ad in slots if attribute(ad, "SlotType") == "Dynamic" or attribute(ad, "DynamicSlot") is True]
    static = [ad for ad in slots if not any(ad is other for other in partitionable + dynamic)]
    return partitionable, dynamic, static


def compact_platform(ad) -> str:
    """The Platform cell: the architecture (X86_64 as x64) and OpSysAndVer, else OpSys."""
    arch = attribute(ad, "Arch")
    opsys = attribute(ad, "OpSysAndVer")
    if not isinstance(opsys, str):
        opsys = attribute(ad, "OpSys")
    arch_text = "x64" if arch == "X86_64" else (arch if isinstance(arch, str) else "?")
    return f"{arch_text}/{opsys if isinstance(opsys, str) else '?'}"


def compact_row(machine: str, slots: list) -> list[str]:
    """The cells of one machine's line."""
    partitionable, dynamic, static = _kinds(slots)
    owners = partitionable + static
    unclaimed = [ad for ad in static if attribute(ad, "State") == "Unclaimed"]
    cpus = _sum(owners, "TotalSlotCpus", "Cpus") if partitionable else _sum(slots, "Cpus")
    memory = _sum(owners, "TotalSlotMemory", "Memory") if partitionable else _sum(slots, "Memory")
    gpus = _sum(owners, "TotalSlotGPUs", "GPUs") if partitionable else _sum(slots, "GPUs")
    free_cpus = _sum(partitionable + unclaimed, "Cpus")
    free_memory = _sum(partitionable + unclaimed, "Memory")
    load = _sum(slots, "LoadAvg") / cpus if cpus else 0.0
    starts = [value for value in (_number(ad, "RecentJobStarts") for ad in owners) if value is not None]
    biggest = max((_number(ad, "Memory") or 0.0 for ad in dynamic), default=None)
    return [machine, compact_platform(slots[0]), f"{len(dynamic) or len(static):5d}", f"{int(cpus):4d}",
            f"{int(gpus):4d}", f"{memory / 1024:8.2f}", f"{int(free_cpus):6d}", f"{free_memory / 1024:8.2f}",
            f"{load:7.2f}", _consensus(dynamic or slots), f"{sum(starts) / 20.0:8.2f}" if starts else "_",
            f"{biggest / 1024:9.2f}" if biggest is not None else "*"]


def _consensus(ads: list) -> str:
    """State and activity letters the slots share, ``#`` where they differ."""
    states = {attribute(ad, "State") for ad in ads}
    activities = {attribute(ad, "Activity") for ad in ads}
    state = STATE_LETTERS.get(states.pop(), "?") if len(states) == 1 else "#"
    activity = ACTIVITY_LETTERS.get(activities.pop(), "?") if len(activities) == 1 else "#"
    return state + activity


def _exhausted(ad) -> bool:
    """A partitionable slot with no cpus or no memory left."""
    return (_number(ad, "Cpus") or 0) < 1 or (_number(ad, "Memory") or 0) < 1


def compact_tallies(key: str, slots: list) -> list[Tally]:
    """What a machine adds to the totals: its dynamic slots' states (a partitionable slot's
    children, status.cpp ROLLUP_PARTITIONABLE), a partitionable slot's own state while it
    is not exhausted, and each static slot's state."""
    partitionable, dynamic, static = _kinds(slots)
    counted = dynamic + static + [ad for ad in partitionable if not _exhausted(ad)]
    return [Tally(key, attribute(ad, "State"), attribute(ad, "SlotBackfill") is True) for ad in counted]


def _line(cells: list[str], columns: tuple, widths: list[int]) -> str:
    return " ".join(cell.rjust(width) if right else cell.ljust(width)
                    for cell, (_, _, right), width in zip(cells, columns, widths)).rstrip()


def compact_table(ads: list, _now: float = 0.0, wide: bool = False) -> str:
    """``-compact``: a line per machine, a blank line, then the totals block (the
    columns show no times, so the current time is not used)."""
    if not ads:
        return ""
    machines: dict[str, list] = defaultdict(list)
    for ad in ads:
        machine = attribute(ad, "Machine")
        machines[machine if isinstance(machine, str) else plain_value(attribute(ad, "Name"))].append(ad)
    gpus = compact_gpu_columns(ads)
    columns = COMPACT_COLUMNS + (GPU_COLUMNS if gpus is not None else ())
    rows = []
    for name in sorted(machines):
        cells = compact_row(name, machines[name])
        rows.append(cells + (gpus.get(name, ["0", "0", "0.0"]) if gpus is not None else []))
    widths = [max([len(heading), width, *(len(row[index]) for row in rows)])
              for index, (heading, width, _) in enumerate(columns)]
    lines = [_line([heading for heading, _, _ in columns], tuple((h, w, False) for h, w, _ in columns), widths), ""]
    lines += [_line(row, columns, widths) for row in rows]
    tallies = [tally for name in sorted(machines) for tally in compact_tallies(compact_platform(machines[name][0]),
                                                                                machines[name])]
    return "\n".join(lines) + "\n\n" + totals_block(tallies, wide)
