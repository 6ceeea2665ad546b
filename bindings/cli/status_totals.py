"""The totals block condor_status prints under its slot tables, laid out as
TrackTotals::displayTotals and StartdNormalTotal print it (src/condor_status.V6/
totals.cpp): a heading of state counts, one row per key (the slot's ``Arch/OpSys``, or
the platform of a ``-compact`` row), a blank line, then the ``Total`` row. Pure."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

#: the heading and ``%Nd`` width of each count (StartdNormalTotal::displayHeader)
TOTAL_COLUMNS = (("Total", 6), ("Owner", 5), ("Claimed", 7), ("Unclaimed", 9), ("Matched", 7),
                 ("Preempting", 10), ("Drain", 6), ("Backfill", 8), ("BkIdle", 6))
#: State -> its column; an idle backfill slot goes to BkIdle, a claimed one to Backfill
STATE_COLUMN = {"Owner": 1, "Claimed": 2, "Unclaimed": 3, "Matched": 4, "Preempting": 5, "Drained": 6,
                "Backfill": 7}
BKIDLE = 8
#: the narrowest key column when not -wide (status.cpp: MAX(14, longest key))
MIN_KEY_WIDTH = 14
#: the narrowest with -wide, wide enough for "Total"
MIN_WIDE_KEY_WIDTH = 5


@frozen
class Tally:
    """One slot state to count under a key: ``key`` None for an ad that has no key
    (no Arch or OpSys), which is counted as malformed, as condor_status counts it."""

    key: str | None
    state: object
    backfill: bool = False


def _count(counts: list[int], state: object, backfill: bool) -> bool:
    """Add one slot in ``state`` to ``counts``; False for a state that is no slot state.
    An idle backfill slot counts as BkIdle and not in Total (StartdNormalTotal::update)."""
    if backfill and state == "Unclaimed":
        counts[BKIDLE] += 1
        return True
    if backfill and state == "Claimed":
        state = "Backfill"
    column = STATE_COLUMN.get(state) if isinstance(state, str) else None
    if column is None:
        return False
    counts[column] += 1
    counts[0] += 1
    return True


def _row(label: str, width: int, counts: list[int]) -> str:
    return f"{label[:width]:>{width}}" + " ".join(f"{n:>{w}d}" for n, (_, w) in zip(counts, TOTAL_COLUMNS))


def totals_block(tallies: Iterable[Tally], wide: bool = False) -> str:
    """The block for ``tallies``: the heading line and a blank line, a row per key in
    sorted order, a blank line, the Total row, and a note when some ads were malformed."""
    per_key: dict[str, list[int]] = {}
    overall = [0] * len(TOTAL_COLUMNS)
    malformed = 0
    for tally in tallies:
        if tally.key is None:
            malformed += 1
            continue
        counts = per_key.setdefault(tally.key, [0] * len(TOTAL_COLUMNS))
        if _count(counts, tally.state, tally.backfill):
            _count(overall, tally.state, tally.backfill)
        else:
            malformed += 1
    longest = max((len(key) for key in per_key), default=0)
    width = max(MIN_WIDE_KEY_WIDTH if wide else MIN_KEY_WIDTH, longest)
    lines = [" " * width + " ".join(f"{heading:>{w}}" for heading, w in TOTAL_COLUMNS), ""]
    lines += [_row(key, width, per_key[key]) for key in sorted(per_key)]
    if per_key:
        lines.append("")
    lines.append(_row("Total", width, overall))
    if malformed:
        lines += ["", " " * width + f"(Omitted {malformed} malformed ads in computed attribute totals)", ""]
    return "\n".join(lines) + "\n"


#: the job counts of a schedd ad and a submitter ad, and the headings of their totals
SCHEDD_COUNTS = ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs")
SUBMITTER_COUNTS = ("RunningJobs", "IdleJobs", "HeldJobs")
#: ScheddNormalTotal prints each count %18d, ScheddSubmittorTotal %11d %10d %10d
SCHEDD_WIDTHS = (18, 18, 18)
SUBMITTER_WIDTHS = (11, 10, 10)


def _counts(ad, names: tuple[str, ...], get) -> tuple[list[int], bool]:
    """The whole-number values of ``names`` in ``ad`` (0 where missing) and whether all were there."""
    values = [get(ad, name) for name in names]
    whole = [value if isinstance(value, int) and not isinstance(value, bool) else None for value in values]
    return [value or 0 for value in whole], None not in whole


def _numbers(values: list[int], widths: tuple[int, ...]) -> str:
    return " ".join(f"{value:>{width}d}" for value, width in zip(values, widths))


def _omitted(width: int, malformed: int) -> list[str]:
    if not malformed:
        return []
    return ["", " " * width + f"(Omitted {malformed} malformed ads in computed attribute totals)", ""]


def schedd_totals(ads: list, get, wide: bool = False) -> str:
    """The block under ``-schedd`` (ScheddNormalTotal): every schedd under one blank key,
    whose row prints no counts, then the Total row; ``get(ad, name)`` reads a value."""
    width = MIN_WIDE_KEY_WIDTH if wide else MIN_KEY_WIDTH
    sums, malformed = [0, 0, 0], 0
    for ad in ads:
        counts, complete = _counts(ad, SCHEDD_COUNTS, get)
        sums = [a + b for a, b in zip(sums, counts)]
        malformed += not complete
    head = " " * width + " ".join(f"{name:>{w}}" for name, w in zip(SCHEDD_COUNTS, SCHEDD_WIDTHS))
    lines = [head, "", " " * width, "Total".rjust(width) + _numbers(sums, SCHEDD_WIDTHS), *_omitted(width, malformed)]
    return "\n".join(lines) + "\n"


def submitter_totals(ads: list, get, wide: bool = False) -> str:
    """The block under ``-submitters`` (ScheddSubmittorTotal): a row per submitter Name
    in sorted order, the key column as wide as the longest name, then the Total row."""
    del wide  # condor_status sizes this key column to its keys with or without -wide
    per_name: dict[str, list[int]] = {}
    overall, malformed = [0, 0, 0], 0
    for ad in ads:
        name = get(ad, "Name")
        if not isinstance(name, str):
            malformed += 1
            continue
        counts, complete = _counts(ad, SUBMITTER_COUNTS, get)
        per_name[name] = [a + b for a, b in zip(per_name.get(name, [0, 0, 0]), counts)]
        overall = [a + b for a, b in zip(overall, counts)]
        malformed += not complete
    width = max([MIN_WIDE_KEY_WIDTH, *(len(name) for name in per_name)])
    lines = [" " * width + " ".join(f"{name:>{w}}" for name, w in zip(SUBMITTER_COUNTS, SUBMITTER_WIDTHS)), ""]
    lines += [name.rjust(width) + _numbers(per_name[name], SUBMITTER_WIDTHS) for name in sorted(per_name)]
    if per_name:
        lines.append("")
    lines += ["Total".rjust(width) + _numbers(overall, SUBMITTER_WIDTHS), *_omitted(width, malformed)]
    return "\n".join(lines) + "\n"
