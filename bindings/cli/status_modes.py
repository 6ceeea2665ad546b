"""condor_status's slot modes and sorting, by HTCondor's src/condor_status.V6:
``-avail`` and ``-claimed`` (``-run``) narrow the slots with the constraints of its
prettyPrint.h (PMODE_AVAIL_CONSTRAINT, PMODE_CLAIMED_CONSTRAINT and their -compact
forms); ``-claimed`` shows who runs on each slot and a per-platform summary; ``-sort
EXPR`` orders rows by the values of expressions compared as text in natural order
(status.cpp ClassadSortSpecs::RenderKey, natural_cmp), ties kept in collector order.
Pure functions."""

from __future__ import annotations

import re
from collections import defaultdict

from bindings.cli.status_format import compile_expression, plain_value
from bindings.cli.status_tables import Column, attribute, number_of, platform, render_rows, text_of

#: the constraint each slot mode adds, and the one it adds with -compact
MODE_CONSTRAINTS = {
    "avail": ('State == "Unclaimed" && Cpus > 0 && Memory > 0',
              'State == "Unclaimed" && Cpus > 0 && Memory > 0'),
    "claimed": ('State == "Claimed"',
                '(State == "Claimed" && DynamicSlot =!= true) || (NumDynamicSlots isnt undefined && NumDynamicSlots > 0)'),
}

CLAIMED_COLUMNS = (
    Column("Name", 18, text_of("Name")),
    Column("OpSys", 10, text_of("OpSys")),
    Column("Arch", 6, text_of("Arch")),
    Column("LoadAv", 6, number_of("LoadAvg", "%.3f"), right=True, truncate=False),
    Column("RemoteUser", 20, text_of("RemoteUser")),
    Column("ClientMachine", 13, text_of("ClientMachine"), truncate=False),
)


def mode_constraint(mode: str | None, compact: bool) -> str | None:
    """The constraint slot mode ``mode`` (avail, claimed or None) adds to the query
    (-compact alone keeps every slot: its table folds dynamic slots into their machine)."""
    if mode is None:
        return None
    plain, with_compact = MODE_CONSTRAINTS[mode]
    return with_compact if compact else plain


def claimed_table(ads: list, now: float, wide: bool = False) -> str:
    """``-claimed``: Name, OpSys, Arch, LoadAv, RemoteUser, ClientMachine for each slot,
    then each platform's machine count and average load."""
    if not ads:
        return ""
    platforms: dict[str, list] = defaultdict(list)
    for ad in ads:
        platforms[platform(ad)].append(ad)
    label = max([20, *(len(name) for name in platforms)])
    lines = [" " * label + f" {'Machines':>8} {'MIPS':>12} {'KFLOPS':>12}   AvgLoadAvg", ""]
    for name in sorted(platforms):
        lines.append(_summary_line(name.rjust(label), platforms[name]))
    lines += ["", _summary_line("Total".rjust(label), ads)]
    return render_rows(CLAIMED_COLUMNS, ads, now, wide) + "\n" + "\n".join(lines) + "\n"


def _summary_line(label: str, ads: list) -> str:
    def total(name: str) -> float:
        values = [attribute(ad, name) for ad in ads]
        return sum(v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
    load = total("LoadAvg") / len(ads)
    return f"{label} {len(ads):>8} {int(total('Mips')):>12} {int(total('KFlops')):>12}   {load:.3f}"


def _natural(text: str) -> tuple:
    """``text`` as a key that orders runs of digits by their value (slot2 before slot10)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def sort_ads(ads: list, expressions: list[str]) -> list:
    """``ads`` ordered by the values of ``expressions`` in turn, each rendered as text
    and compared in natural order; equal rows keep their order.

    Raises:
        FormatError: an expression does not parse.
    """
    trees = [compile_expression(text, "-sort") for text in expressions]
    return sorted(ads, key=lambda ad: tuple(_natural(plain_value(tree.eval(ad))) for tree in trees))
