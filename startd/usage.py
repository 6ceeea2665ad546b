"""How much CPU time and memory a job's processes use, sampled with psutil.

The job's attributes follow HTCondor: ``RemoteUserCpu``/``RemoteSysCpu`` in seconds,
``ResidentSetSize`` and ``ImageSize`` in KiB, ``MemoryUsage`` in MiB.
"""

from __future__ import annotations

import math
import os

import attrs
import psutil


@attrs.frozen
class Usage:
    """CPU seconds and peak memory (KiB) of a process tree."""

    user_cpu: float = 0.0
    sys_cpu: float = 0.0
    rss_kb: int = 0
    image_kb: int = 0

    def peak(self, other: Usage) -> Usage:
        """The larger of each figure: CPU only grows, memory keeps its peak."""
        return Usage(max(self.user_cpu, other.user_cpu), max(self.sys_cpu, other.sys_cpu),
                     max(self.rss_kb, other.rss_kb), max(self.image_kb, other.image_kb))

    def attributes(self) -> dict[str, float | int]:
        """The job-ad attributes for this usage."""
        return {"RemoteUserCpu": round(self.user_cpu, 3), "RemoteSysCpu": round(self.sys_cpu, 3),
                "ResidentSetSize": self.rss_kb, "ImageSize": self.image_kb,
                "MemoryUsage": math.ceil(self.rss_kb / 1024)}


#: Whether the kernel lists each task's children (``/proc/<pid>/task/<tid>/children``):
#: then a job's tree is found by reading its own processes' entries, not every process's
#: (psutil's way, which costs a startd running 500 jobs a core in sampling alone).
CHILDREN_LISTED = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
#: The most processes one job's tree is walked to.
MAX_TREE = 100_000


def tree_processes(pid: int) -> list[psutil.Process]:
    """Process ``pid`` and all its descendants that still exist."""
    if not CHILDREN_LISTED:
        try:
            root = psutil.Process(pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []
    found: list[psutil.Process] = []
    for each in tree_pids(pid):
        try:
            found.append(psutil.Process(each))
        except psutil.Error:
            continue  # ended meanwhile
    return found


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its descendants, read from the kernel's per-task children lists
    (``pid`` itself only while it exists; a descendant listed may have ended since)."""
    if not CHILDREN_LISTED:
        return [process.pid for process in tree_processes(pid)]
    listing = children_of(pid)
    if listing is None:
        return []
    pids, seen = [pid], {pid}
    index = 0
    while True:  # breadth first: each process's children once its own entry is read
        for child in listing:
            if child not in seen:
                seen.add(child)
                pids.append(child)
        index += 1
        if index >= len(pids) or len(pids) >= MAX_TREE:
            return pids[:MAX_TREE]
        listing = children_of(pids[index]) or ()


def children_of(pid: int) -> list[int] | None:
    """The pids of ``pid``'s children, from each of its threads' ``children`` file
    (None once it is gone)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    found: list[int] = []
    for task_id in tasks:
        try:
            with open(f"/proc/{pid}/task/{task_id}/children", "rb") as listing:
                found.extend(int(word) for word in listing.read().split())
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return found


def signal_tree(pid: int, signum: int) -> None:
    """Send ``signum`` once to each process of the job whose process group ``pid`` leads
    (jobs start in a session of their own): the group with one ``killpg``, and by its pid
    each process of the tree outside the group (one that left it with ``setsid``, or the
    root itself when it leads no group).

    The tree is read before any signal goes out, so a SIGKILL that ends a parent cannot
    hide its children (reparented away) from the walk. Signals go by pid, with no
    per-process object: a startd stopping 500 jobs at once walks 500 trees on its reactor.
    """
    outside = []
    for each in tree_pids(pid):
        try:
            if os.getpgid(each) != pid:
                outside.append(each)
        except OSError:
            continue  # ended meanwhile
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
    for each in outside:
        try:
            os.kill(each, signum)
        except (ProcessLookupError, PermissionError):
            pass


def sample_tree(pid: int) -> Usage:
    """The current total CPU time and memory of ``pid``'s tree (zero once it is gone).

    CPU time includes children each process has already waited for. Where the kernel
    lists task children, each process is read from its own ``stat`` and ``statm`` files
    (the figures psutil gives, without a psutil object and its checks per process).
    """
    user = system = 0.0
    rss = vms = 0
    if CHILDREN_LISTED:
        figures = (process_figures(each) for each in tree_pids(pid))
    else:
        figures = (_psutil_figures(process) for process in tree_processes(pid))
    for found in figures:
        if found is not None:
            user += found[0]
            system += found[1]
            rss += found[2]
            vms += found[3]
    return Usage(user, system, rss // 1024, vms // 1024)


#: Clock ticks per second (the unit of CPU times in ``/proc/<pid>/stat``) and the page size.
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def process_figures(pid: int) -> tuple[float, float, int, int] | None:
    """Process ``pid``'s user and system CPU seconds (with its waited-for children's)
    and its resident and virtual size in bytes, from ``/proc``; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            stat = stat_file.read()
        with open(f"/proc/{pid}/statm", "rb") as statm_file:
            statm = statm_file.read().split()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # the name, in parentheses, may hold anything
    try:
        utime, stime, child_utime, child_stime = (int(word) for word in fields[11:15])
        return ((utime + child_utime) / CLOCK_TICKS, (stime + child_stime) / CLOCK_TICKS,
                int(statm[1]) * PAGE_SIZE, int(statm[0]) * PAGE_SIZE)
    except (ValueError, IndexError):
        return None


def _psutil_figures(process: psutil.Process) -> tuple[float, float, int, int] | None:
    """:func:`process_figures` by psutil, where ``/proc`` lists no task children."""
    try:
        with process.oneshot():
            times = process.cpu_times()
            memory = process.memory_info()
    except psutil.Error:
        return None
    return (times.user + getattr(times, "children_user", 0.0), times.system + getattr(times, "children_system", 0.0),
            memory.rss, memory.vms)
