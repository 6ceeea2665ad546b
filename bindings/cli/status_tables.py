"""The human-readable tables of ``roost status``, laid out as ``condor_status`` lays
them out: the slot table with its totals block, the one-line-per-machine
``-compact`` table, and the daemon tables of ``-schedd``, ``-submitters``,
``-negotiator``, ``-master``, ``-collector`` and ``-any``. Pure: ads and the current
time in, text out."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from attrs import frozen

from bindings.cli.status_format import plain_value
from bindings.cli.status_gpus import COMPACT_GPU_HEADINGS, COMPACT_GPU_WIDTHS, compact_gpu_columns
from classad.values import Value

SLOT_STATES = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drained")
TOTAL_HEADINGS = ("Owner", "Claimed", "Unclaimed", "Matched", "Preempting", "Drain")
TOTAL_WIDTHS = (8, 5, 7, 9, 7, 10, 6)
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

DAEMON_COLUMNS = {
    "Scheduler": (Column("Name", 30, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                  Column("RunningJobs", 11, number_of("TotalRunningJobs", "%d"), right=True, truncate=False),
                  Column("IdleJobs", 9, number_of("TotalIdleJobs", "%d"), right=True, truncate=False),
                  Column("HeldJobs", 9, number_of("TotalHeldJobs", "%d"), right=True, truncate=False)),
    "Submitter": (Column("Name", 30, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                  Column("RunningJobs", 11, number_of("RunningJobs", "%d"), right=True, truncate=False),
                  Column("IdleJobs", 9, number_of("IdleJobs", "%d"), right=True, truncate=False),
                  Column("HeldJobs", 9, number_of("HeldJobs", "%d"), right=True, truncate=False)),
    "Negotiator": (Column("Name", 30, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                   Column("Address", 24, text_of("MyAddress"), truncate=False)),
    "DaemonMaster": (Column("Name", 30, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                     Column("Address", 24, text_of("MyAddress"), truncate=False),
                     Column("Daemons", 7, text_of("DaemonList"), truncate=False)),
    "Collector": (Column("Name", 30, text_of("Name")), Column("Machine", 20, text_of("Machine")),
                  Column("RunningJobs", 11, number_of("RunningJobs", "%d"), right=True, truncate=False),
                  Column("IdleJobs", 9, number_of("IdleJobs", "%d"), right=True, truncate=False),
                  Column("TotalCPUs", 9, number_of("HostsTotal", "%d"), right=True, truncate=False)),
    "Any": (Column("MyType", 20, text_of("MyType")), Column("TargetType", 20, text_of("TargetType")),
            Column("Name", 30, text_of("Name"), truncate=False)),
}
JOB_TOTALS = {"Scheduler": ("TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs"),
              "Submitter": ("RunningJobs", "IdleJobs", "HeldJobs")}


def render_rows(columns: tuple[Column, ...], ads: list, now: float, wide: bool = False) -> str:
    """The heading line, a blank line and one line per ad."""
    lines = [" ".join(column.head() for column in columns).rstrip(), ""]
    for ad in ads:
        lines.append(" ".join(column.cell(column.text(ad, now), wide) for column in columns).rstrip())
    return "\n".join(lines) + "\n"


def slot_table(ads: list, now: float, wide: bool = False) -> str:
    """The default ``condor_status`` output: the slot rows, then the totals block."""
    if not ads:
        return ""
    return render_rows(SLOT_COLUMNS, ads, now, wide) + "\n" + slot_totals(ads)


def platform(ad) -> str:
    """``ARCH/OPSYS``, the row label of the totals block."""
    arch, opsys = attribute(ad, "Arch"), attribute(ad, "OpSys")
    return f"{arch if isinstance(arch, str) else '?'}/{opsys if isinstance(opsys, str) else '?'}"


def slot_totals(ads: list, first_heading: str = "Machines") -> str:
    """The totals block: counts of slots per state for each platform, then overall."""
    per_platform: dict[str, Counter] = defaultdict(Counter)
    for ad in ads:
        state = attribute(ad, "State")
        per_platform[platform(ad)]["total"] += 1
        if isinstance(state, str):
            per_platform[platform(ad)][state] += 1
    overall = Counter()
    for counts in per_platform.values():
        overall.update(counts)
    headings = (first_heading, *TOTAL_HEADINGS)
    widths = TOTAL_WIDTHS
    label_width = max([24] + [len(name) for name in per_platform])

    def line(label: str, counts: Counter) -> str:
        values = [counts["total"], *(counts[state] for state in SLOT_STATES)]
        return label.rjust(label_width) + "".join(" " + str(v).rjust(w) for v, w in zip(values, widths))

    head = " " * label_width + "".join(" " + heading.rjust(width) for heading, width in zip(headings, widths))
    lines = [head, ""]
    lines += [line(name, per_platform[name]) for name in sorted(per_platform)]
    lines += ["", line("Total", overall)]
    return "\n".join(lines) + "\n"


def daemon_table(my_type: str, ads: list, now: float, wide: bool = False) -> str:
    """The table of ``-schedd``, ``-submitters``, ``-negotiator``, ``-master``, ``-collector`` or ``-any``."""
    if not ads:
        return ""
    columns = DAEMON_COLUMNS.get(my_type, DAEMON_COLUMNS["Any"])
    text = render_rows(columns, ads, now, wide)
    if my_type in JOB_TOTALS:
        text += "\n" + job_totals(ads, JOB_TOTALS[my_type])
    return text


def job_totals(ads: list, names: tuple[str, ...]) -> str:
    """The totals block under the schedd and submitter tables."""
    sums = []
    for name in names:
        values = [attribute(ad, name) for ad in ads]
        sums.append(sum(v for v in values if isinstance(v, int) and not isinstance(v, bool)))
    headings = ("Total" + name if not name.startswith("Total") else name for name in names)
    headings = tuple(headings)
    widths = [len(heading) for heading in headings]
    head = " " * 20 + "".join(" " + heading.rjust(width) for heading, width in zip(headings, widths))
    total = "Total".rjust(20) + "".join(" " + str(value).rjust(width) for value, width in zip(sums, widths))
    return "\n".join([head, "", total]) + "\n"


# --- -compact ---

COMPACT_HEADINGS = ("Machine", "Platform", "Slots", "Cpus", "Gpus", "TotalGb", "FreCpu", "FreeGb", "CpuLoad",
                    "ST", "Jobs/Min", "MaxSlotGb")
COMPACT_WIDTHS = (18, 11, 5, 4, 4, 8, 6, 7, 8, 2, 8, 9)


def compact_table(ads: list, now: float, wide: bool = False) -> str:
    """``-compact``: one line per machine, summed over its slots (with GPU columns when
    the pool has GPUs), then the totals block."""
    if not ads:
        return ""
    machines: dict[str, list] = defaultdict(list)
    for ad in ads:
        machine = attribute(ad, "Machine")
        machines[machine if isinstance(machine, str) else plain_value(attribute(ad, "Name"))].append(ad)
    gpus = compact_gpu_columns(ads)
    headings, widths = COMPACT_HEADINGS, COMPACT_WIDTHS
    if gpus is not None:
        headings, widths = headings + COMPACT_GPU_HEADINGS, widths + COMPACT_GPU_WIDTHS
    head = " ".join(h.rjust(w) if i > 1 and h != "ST" else h.ljust(w)
                    for i, (h, w) in enumerate(zip(headings, widths))).rstrip()
    lines = [head, ""]
    for name in sorted(machines):
        cells = compact_row(name, machines[name])
        if gpus is not None:
            cells += gpus.get(name, ["0", "0", "0.0"])
        lines.append(" ".join((c[:w] if i == 0 and not wide else c).rjust(w) if i > 1 and i != 9 else
                              (c[:w] if i == 0 and not wide else c).ljust(w)
                              for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
    return "\n".join(lines) + "\n\n" + slot_totals(ads)


def compact_row(machine: str, slots: list) -> list[str]:
    """The cells of one machine's ``-compact`` line."""
    partitionable = [ad for ad in slots if attribute(ad, "PartitionableSlot") is True]
    dynamic = [ad for ad in slots if attribute(ad, "SlotType") == "Dynamic"]
    static = [ad for ad in slots if ad not in partitionable and ad not in dynamic]
    owners = partitionable + static
    first = slots[0]
    arch = attribute(first, "Arch")
    opsys = attribute(first, "OpSysAndVer")
    if not isinstance(opsys, str):
        opsys = attribute(first, "OpSys")
    arch_text = "x64" if arch == "X86_64" else (arch if isinstance(arch, str) else "?")
    cpus = _sum(owners, "TotalSlotCpus", "Cpus") if partitionable else _sum(slots, "Cpus")
    memory = _sum(owners, "TotalSlotMemory", "Memory") if partitionable else _sum(slots, "Memory")
    free_cpus = _sum(partitionable, "Cpus") + _sum([ad for ad in static if attribute(ad, "State") == "Unclaimed"], "Cpus")
    free_memory = _sum(partitionable, "Memory") + _sum(
        [ad for ad in static if attribute(ad, "State") == "Unclaimed"], "Memory")
    biggest = max((_number(ad, "Memory") for ad in dynamic), default=None)
    return [machine, f"{arch_text}/{opsys if isinstance(opsys, str) else '?'}", str(len(dynamic) or len(static)),
            _whole(cpus), _whole(_sum(owners, "TotalSlotGPUs", "GPUs") if partitionable else _sum(slots, "GPUs")),
            _short(memory / 1024), _whole(free_cpus), _short(free_memory / 1024), _short(_sum(slots, "LoadAvg")),
            _consensus(dynamic or slots), _short(_sum(owners, "RecentJobStarts") / 20.0),
            _short(biggest / 1024) if biggest is not None else "*"]


def _number(ad, name: str) -> float:
    value = attribute(ad, name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _sum(ads: list, name: str, fallback: str | None = None) -> float:
    total = 0.0
    for ad in ads:
        value = attribute(ad, name)
        if (isinstance(value, bool) or not isinstance(value, (int, float))) and fallback:
            value = attribute(ad, fallback)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            total += value
    return total


def _whole(value: float) -> str:
    return str(int(value))


def _short(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else str(int(value))
    return text[1:] if text.startswith("0.") else text


def _consensus(ads: list) -> str:
    states = {attribute(ad, "State") for ad in ads}
    activities = {attribute(ad, "Activity") for ad in ads}
    state = STATE_LETTERS.get(states.pop(), "?") if len(states) == 1 else "#"
    activity = ACTIVITY_LETTERS.get(activities.pop(), "?") if len(activities) == 1 else "#"
    return state + activity
