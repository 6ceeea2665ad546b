"""The priority table of ``roost userprio``, laid out as condor_userprio's PrintInfo lays
it out (src/condor_tools/user_prio.cpp): ``Last Priority Update:`` and the date, two
heading rows (each heading centred in its column), a rule, a row per user or group, a
rule, and the footer ``Number of users: N`` with the totals. The name column is as wide
as the longest name shown (at least 10 and the footer, at most 99) plus 2, as the
default hierarchical display indents each user under its accounting group (a group's
users show their names without the ``group.`` prefix, users of no group come last).
Columns are those of condor_userprio's default (DetailMost, less the quota columns a
pool without groups has no data for) or of ``-all``. Pure: rows in, text out."""

from __future__ import annotations

import time
from collections.abc import Callable

from attrs import frozen

from bindings.cli.q_tables import short_time

#: the longest name column condor_userprio prints (MAX_NAME_COLUMN_WIDTH), and the narrowest
MAX_NAME_WIDTH, MIN_NAME_WIDTH = 99, 10
FOOTER = "Number of users: {}"
_NONE_GROUPS = (None, "", "<none>")


@frozen
class Column:
    """One column of user_prio.cpp's aCols: its width and its two heading rows."""

    key: str
    width: int
    head: tuple[str, str]


COLUMNS = {column.key: column for column in (
    Column("priority", 12, ("Effective", "Priority")), Column("real", 8, ("Real", "Priority")),
    Column("factor", 9, ("Priority", "Factor")), Column("in_use", 6, ("Wghted", "In Use")),
    Column("usage", 12, ("Total Usage", "(wghted-hrs)")), Column("start", 16, ("Usage", "Start Time")),
    Column("last", 16, ("Last", "Usage Time")), Column("since", 10, ("Time Since", "Last Usage")),
    Column("floor", 9, ("Submitter", "Floor")), Column("ceiling", 9, ("Submitter", "Ceiling")),
)}
#: condor_userprio with no display flag, and with -all (DetailMost and DetailAll in aCols order)
DEFAULT_COLUMNS = ("priority", "factor", "in_use", "usage", "since", "floor", "ceiling")
ALL_COLUMNS = ("priority", "real", "factor", "in_use", "usage", "start", "last", "since", "floor", "ceiling")


def centred(text: str, width: int) -> str:
    """``text`` in ``width`` columns with half the spare room before it (CopyAndPadToWidth, PAD_CENTER)."""
    text = text[:width]
    return (" " * ((width - len(text)) // 2) + text).ljust(width)


def number(value: object, width: int, decimals: int) -> str:
    """FormatFloat: ``%W.Df`` right in ``width``, ``%.(W-6)g`` when that is too wide."""
    value = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    text = f"{value:{width}.{decimals}f}"
    if len(text) > width:
        text = f"{value:.{width - 6}g}"
    return text.rjust(width)


def date_year(epoch: object) -> str:
    """format_date_year: ``m/dd/yyyy hh:mm``; blank for no time."""
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool) or epoch <= 0:
        return ""
    parts = time.localtime(epoch)
    return f"{parts.tm_mon}/{parts.tm_mday:02d}/{parts.tm_year:04d} {parts.tm_hour:02d}:{parts.tm_min:02d}"


def delta(seconds: float) -> str:
    """FormatDeltaTime: ``<now>`` for none, else format_time_nosecs ``d+hh:mm``."""
    if seconds <= 0:
        return "<now>"
    minutes = int(seconds) // 60
    return f"{minutes // 1440}+{minutes // 60 % 24:02d}:{minutes % 60:02d}"


def _effective(row: dict) -> float:
    if isinstance(row.get("EffectivePriority"), (int, float)):
        return row["EffectivePriority"]
    return (row.get("Priority") or 0) * (row.get("PriorityFactor") or 0)


def _hours(row: dict) -> float:
    return (row.get("WeightedAccumulatedUsage", row.get("AccumulatedUsage")) or 0.0) / 3600.0


def _in_use(row: dict) -> object:
    return row.get("WeightedResourcesUsed", row.get("ResourcesUsed"))


def _cells(row: dict, update: float) -> dict[str, Callable[[int], str]]:
    """Each column's cell of ``row`` for a given width."""
    factor, floor, ceiling = row.get("PriorityFactor"), row.get("Floor"), row.get("Ceiling")
    last = row.get("LastUsageTime")
    real = row.get("Priority")
    return {
        "priority": lambda w: number(_effective(row), w, 2),
        "real": lambda w: number(real if isinstance(real, (int, float)) else 0, w, 2),
        "factor": lambda w: number(factor, w, 2) if isinstance(factor, (int, float)) and factor > 0 else " " * w,
        "in_use": lambda w: number(_in_use(row), w, 0),
        "usage": lambda w: number(_hours(row), w, 2),
        "start": lambda w: date_year(row.get("BeginUsageTime")).rjust(w),
        "last": lambda w: date_year(last).rjust(w),
        "since": lambda w: delta(update - last if isinstance(last, (int, float)) else 0).rjust(w),
        "floor": lambda w: number(floor, w, 2) if isinstance(floor, (int, float)) and floor > 0 else " " * w,
        "ceiling": lambda w: number(ceiling, w, 2) if isinstance(ceiling, (int, float)) and ceiling > -1 else " " * w,
    }


def _display_name(row: dict) -> str:
    """A group's name, or a user indented two and without its group's prefix."""
    name = str(row.get("Name", ""))
    if row.get("IsAccountingGroup"):
        return name
    group = row.get("AccountingGroup")
    if group not in _NONE_GROUPS and name.lower().startswith(f"{group}.".lower()):
        name = name[len(group) + 1:]
    return "  " + name


def _name_length(row: dict, shown: str) -> int:
    """The width PrintInfo reserves for a name: a user's counts its indent, and one more
    when its group prefix was cut (it subtracts the group's length but not the dot)."""
    group = row.get("AccountingGroup")
    grouped = not row.get("IsAccountingGroup") and group not in _NONE_GROUPS and \
        str(row.get("Name", "")).lower().startswith(f"{group}.".lower())
    return len(shown) + (1 if grouped else 0)


def hierarchy(rows: list[dict]) -> list[dict]:
    """Groups by effective priority, each followed by its users by effective priority,
    then the users of no group (user_prio.cpp puts the <none> group last)."""
    def order(row: dict) -> tuple:
        return (_effective(row), str(row.get("Name", "")))
    groups = sorted((row for row in rows if row.get("IsAccountingGroup")), key=order)
    names = {str(group.get("Name", "")).lower() for group in groups}
    out = []
    for group in groups:
        out.append(group)
        out += sorted((row for row in rows if not row.get("IsAccountingGroup")
                       and str(row.get("AccountingGroup") or "").lower() == str(group.get("Name", "")).lower()),
                      key=order)
    out += sorted((row for row in rows if not row.get("IsAccountingGroup")
                   and str(row.get("AccountingGroup") or "").lower() not in names), key=order)
    return out


def priority_table(rows: list[dict], keys: tuple[str, ...], last_update: object, now: float,
                   min_last_usage: float | None) -> str:
    """The table of ``rows`` (already chosen) with the columns ``keys``; ``min_last_usage``
    is the oldest last usage shown (None with -allusers), which the footer reports."""
    update = last_update if isinstance(last_update, (int, float)) else now
    shown = hierarchy(rows)
    users = sum(1 for row in shown if not row.get("IsAccountingGroup"))
    names = [_display_name(row) for row in shown]
    width = max(min(max([MIN_NAME_WIDTH, *(_name_length(row, name) for row, name in zip(shown, names))]),
                    MAX_NAME_WIDTH), len(FOOTER.format(len(rows)))) + 2
    columns = [COLUMNS[key] for key in keys]

    def line(first: str, cells: list[str], fill: str = " ") -> str:
        return first[:width].ljust(width, fill) + "".join(" " + cell for cell in cells)
    out = [f"Last Priority Update: {short_time(update)}",
           line("Group", [centred(c.head[0], c.width) for c in columns]),
           line("  User Name", [centred(c.head[1], c.width) for c in columns]),
           line("", ["-" * c.width for c in columns], "-")]
    for row, name in zip(shown, names):
        cells = _cells(row, update)
        out.append(line(name, [cells[c.key](c.width) for c in columns]))
    out.append(line("", ["-" * c.width for c in columns], "-"))
    totals = [r for r in shown if not r.get("IsAccountingGroup")]
    footer = {"in_use": number(sum(float(_in_use(r) or 0) for r in totals), 6, 0),
              "usage": number(sum(_hours(r) for r in totals), 12, 2),
              "last": date_year(min_last_usage).rjust(16),
              "since": (delta(update - min_last_usage) if min_last_usage else "").rjust(10)}
    out.append(line(FOOTER.format(users), [footer.get(c.key, " " * c.width) for c in columns]))
    return "\n".join(out) + "\n"
