"""The human-readable tables of ``roost status``, laid out as ``condor_status`` lays
them out: the slot table with its totals block (:mod:`bindings.cli.status_totals`)
and the daemon tables of ``-schedd``, ``-submitters``,
``-negotiator``, ``-master``, ``-collector`` and ``-any``. Pure: ads and the current
time in, text out."""

from __future__ import annotations

from collections.abc import Callable

import attrs
from attrs import frozen

from bindings.cli.status_format import plain_value
from bindings.cli.status_totals import Tally, schedd_totals, submitter_totals, totals_block
from classad.values import Value

STATE_LETTERS = {"Owner": "O", "Claimed": "C", "Unclaimed": "U", "Matched": "M", "Preempting": "P",
                 "Drained": "D", "Backfill": "B"}
ACTIVITY_LETTERS = {"Idle": "i", "Busy": "b", "Suspended": "s", "Vacating": "v", "Killing": "k",
                    "Benchmarking": "e", "Retiring": "r"}


@frozen
class Column:
    """One column: heading, width, right-aligned or not, and how to get its text from an ad."""

    heading: str
    width: int
    text: Callable[[object, float], str]
    right: bool = False
    truncate: bool = True

    def cell(self, value: str, wide: bool) -> str:
        """``value`` fitted to the column."""
        if self.truncate and not wide:
            value = value[:self.width]
        return value.rjust(self.width) if self.right else value.ljust(self.width)

    def head(self) -> str:
        """The heading fitted to the column (headings of right-aligned numbers stay left)."""
        return self.heading.rjust(self.width) if self.right and self.heading.endswith("Time") else \
            self.heading.ljust(self.width)


def attribute(ad, name: str):
    """The evaluated value of attribute ``name`` in ``ad``, or ``Value.Undefined``."""
    try:
        return ad.eval(name) if name in ad else Value.Undefined
    except Exception:
        return Value.Error


def text_of(name: str) -> Callable[[object, float], str]:
    """A column getter printing attribute ``name`` plainly (blank when undefined)."""
    def get(ad, _now: float) -> str:
        value = attribute(ad, name)
        return "" if value is Value.Undefined else plain_value(value)
    return get


def number_of(name: str, fmt: str) -> Callable[[object, float], str]:
    """A column getter printing numeric attribute ``name`` with ``fmt`` (blank when not a number)."""
    def get(ad, _now: float) -> str:
        value = attribute(ad, name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return ""
        return fmt % value
    return get


def duration(seconds: float) -> str:
    """``D+HH:MM:SS``, as HTCondor prints activity times."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    return f"{days}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def activity_time(ad, now: float) -> str:
    """How long the slot has been in its current activity."""
    entered = attribute(ad, "EnteredCurrentActivity")
    if isinstance(entered, bool) or not isinstance(entered, (int, float)):
        return ""
    return duration(now - entered)


SLOT_COLUMNS = (
    Column("Name", 18, text_of("Name")),
    Column("OpSys", 10, text_of("OpSys")),
    Column("Arch", 6, text_of("Arch")),
    Column("State", 9, text_of("State")),
    Column("Activity", 8, text_of("Activity")),
    Column("LoadAv", 6, number_of("LoadAvg", "%.3f"), right=True, truncate=False),
    Column("Mem", 4, number_of("Memory", "%d"), right=True, truncate=False),
    Column("ActvtyTime", 11, activity_time, right=True, truncate=False),
)
#: -wide (ppSetStartdNormalCols): the name at least 34 wide and whole, the time headed ActivityTime in 12
WIDE_SLOT_COLUMNS = (Column("Name", 34, text_of("Name"), truncate=False), *SLOT_COLUMNS[1:-1],
                     Column("ActivityTime", 12, activity_time, right=True, truncate=False))

#: The daemon tables (scheddNormal_PrintFormat, submitterNormal_PrintFormat and
#: ppSetCollectorNormalCols, ppSetNegotiatorNormalCols, printAnyNormal in status.cpp);
#: Roost's master table shows each host's address and DAEMON_LIST.
DAEMON_COLUMNS = {
    "Scheduler": (Column("Name", 4, text_of("Name"), truncate=False),
                  Column("Machine", 7, text_of("Machine"), truncate=False),
                  Column("RunningJobs", 11, number_of("TotalRunningJobs", "%d"), right=True, truncate=False),
                  Column("  IdleJobs", 10, number_of("TotalIdleJobs", "%d"), right=True, truncate=False),
                  Column("  HeldJobs", 10, number_of("TotalHeldJobs", "%d"), right=True, truncate=False)),
    "Submitter": (Column("Name", 4, text_of("Name"), truncate=False),
                  Column("Machine", 7, text_of("Machine"), truncate=False),
                  Column("RunningJobs", 11, number_of("RunningJobs", "%d"), right=True, truncate=False),
                  Column("  IdleJobs", 10, number_of("IdleJobs", "%d"), right=True, truncate=False),
                  Column("  HeldJobs", 10, number_of("HeldJobs", "%d"), right=True, truncate=False)),
    "Negotiator": (Column("Name", 20, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                   Column("Address", 24, text_of("MyAddress"), truncate=False)),
    "DaemonMaster": (Column("Name", 30, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                     Column("Address", 24, text_of("MyAddress"), truncate=False),
                     Column("Daemons", 7, text_of("DaemonList"), truncate=False)),
    "Collector": (Column("Name", 28, text_of("Name")), Column("Machine", 18, text_of("Machine")),
                  Column("RunningJobs", 11, number_of("RunningJobs", "%d"), right=True, truncate=False),
                  Column("IdleJobs", 8, number_of("IdleJobs", "%d"), right=True, truncate=False),
                  Column("HostsTotal", 10, number_of("HostsTotal", "%d"), right=True, truncate=False)),
    "Any": (Column("MyType", 18, text_of("MyType")), Column("TargetType", 18, text_of("TargetType")),
            Column("Name", 41, text_of("Name"))),
}
#: the ad types whose tables end with job totals, and how each adds them up
JOB_TOTALS = {"Scheduler": schedd_totals, "Submitter": submitter_totals}


def render_rows(columns: tuple[Column, ...], ads: list, now: float, wide: bool = False) -> str:
    """The heading line, a blank line and one line per ad. A column that does not cut
    its values (or any column with ``-wide``) is as wide as its widest value, as the
    print mask's auto width makes it, so every row lines up."""
    cells = [[column.text(ad, now) for column in columns] for ad in ads]
    fitted = [column if column.truncate and not wide else
              attrs.evolve(column, width=max([column.width, *(len(row[index]) for row in cells)]))
              for index, column in enumerate(columns)]
    lines = [" ".join(column.head() for column in fitted).rstrip(), ""]
    for row in cells:
        lines.append(" ".join(column.cell(cell, wide) for column, cell in zip(fitted, row)).rstrip())
    return "\n".join(lines) + "\n"


def slot_table(ads: list, now: float, wide: bool = False) -> str:
    """The default ``condor_status`` output: the slot rows, then the totals block."""
    if not ads:
        return ""
    return render_rows(WIDE_SLOT_COLUMNS if wide else SLOT_COLUMNS, ads, now, wide) + "\n" + slot_totals(ads, wide)


def platform(ad) -> str:
    """``ARCH/OPSYS``, the row label of the totals block."""
    arch, opsys = attribute(ad, "Arch"), attribute(ad, "OpSys")
    return f"{arch if isinstance(arch, str) else '?'}/{opsys if isinstance(opsys, str) else '?'}"


def _total_key(ad) -> str | None:
    """The totals key of a slot (ClassTotal::makeKey): ``Arch/OpSys``, None without both."""
    arch, opsys = attribute(ad, "Arch"), attribute(ad, "OpSys")
    return f"{arch}/{opsys}" if isinstance(arch, str) and isinstance(opsys, str) else None


def slot_totals(ads: list, wide: bool = False) -> str:
    """The totals block of the slot tables: each slot's state counted under its Arch/OpSys."""
    return totals_block((Tally(_total_key(ad), attribute(ad, "State"), attribute(ad, "SlotBackfill") is True)
                         for ad in ads), wide)


def daemon_table(my_type: str, ads: list, now: float, wide: bool = False) -> str:
    """The table of ``-schedd``, ``-submitters``, ``-negotiator``, ``-master``, ``-collector``
    or ``-any``; the schedd and submitter tables end with their job totals."""
    if not ads:
        return ""
    columns = DAEMON_COLUMNS.get(my_type, DAEMON_COLUMNS["Any"])
    text = render_rows(columns, ads, now, wide)
    if my_type in JOB_TOTALS:
        text += "\n" + job_totals(my_type, ads, wide)
    return text


def job_totals(my_type: str, ads: list, wide: bool = False) -> str:
    """The job totals block of the schedd (``Scheduler``) or submitter table."""
    return JOB_TOTALS[my_type](ads, attribute, wide)
