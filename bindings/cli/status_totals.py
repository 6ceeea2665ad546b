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
