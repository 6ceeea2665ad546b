"""``roost wait LOGFILE`` (condor_wait): follow a job event log until every job it
names has finished (terminated or aborted), drawing a progress bar; the exit status
says whether all succeeded (0), some failed or were removed (1), or time ran out (2)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable

from attrs import define, field

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from bindings.cli.schedd_session import run_reporting

BAR_WIDTH = 30


@define
class WaitProgress:
    """Which jobs an event log has submitted, which have finished, and how."""

    submitted: set[tuple[int, int]] = field(factory=set)
    finished: dict[tuple[int, int], bool] = field(factory=dict)

    def add(self, event) -> None:
        """Take one event into account."""
        from bindings.eventlog import JobEventType

        job = (event.cluster, event.proc)
        if event.type == JobEventType.SUBMIT:
            self.submitted.add(job)
        elif event.type == JobEventType.JOB_TERMINATED:
            self.finished[job] = bool(event.get("TerminatedNormally", False)) and event.get("ReturnValue", 1) == 0
        elif event.type == JobEventType.JOB_ABORTED:
            self.finished[job] = False

    def done(self, job: tuple[int, int] | None) -> bool:
        """Whether the awaited job (or every submitted job) has finished."""
        if job is not None:
            return job in self.finished
        return bool(self.submitted) and self.submitted <= set(self.finished)

    def succeeded(self) -> bool:
        return all(self.finished.values())

    def bar(self) -> str:
        """``[#####.....] 3/10 jobs done``."""
        total = max(len(self.submitted), 1)
        filled = BAR_WIDTH * len(self.finished) // total
        return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {len(self.finished)}/{len(self.submitted)} jobs done"


def follow(events: Iterable, progress: WaitProgress, job: tuple[int, int] | None, show) -> bool:
    """Feed ``events`` into ``progress`` until the awaited jobs finish; whether they did."""
    for event in events:
        progress.add(event)
        show(progress.bar())
        if progress.done(job):
            return True
    return progress.done(job)


USAGE = """usage: roost wait [options] LOGFILE [cluster[.proc]]

  -wait SECONDS       give up after this long (exit status 2)
  -status, -echo, -debug  accepted, as condor_wait's, and make no difference
"""
COMMAND = CommandLine("roost wait", USAGE, [Option("-wait", 1), Option("-status"), Option("-echo"),
                                            Option("-debug")])


def parse_arguments(argv: list[str]) -> tuple[str, float | None, tuple[int, int] | None]:
    """The log file, the time limit and the one job to wait for (if any).

    Raises:
        UsageError: no log file, or a bad -wait value or job id.
    """
    return wait_of(COMMAND.read(argv))


def wait_of(reading: Reading) -> tuple[str, float | None, tuple[int, int] | None]:
    """What a read command line waits for: the log file, the time limit and the job (if one).

    Raises:
        UsageError: no log file, or a bad -wait value or job id.
    """
    text, positional = reading.last("-wait"), reading.operands
    try:
        limit = None if text is None else float(text)
    except ValueError:
        raise UsageError(f"-wait needs a number of seconds, got {text!r}") from None
    if not positional or len(positional) > 2:
        raise UsageError("name one event log (and at most one job)")
    job = None
    if len(positional) == 2:
        cluster, _, proc = positional[1].partition(".")
        if not cluster.isdigit() or not (proc or "0").isdigit():
            raise UsageError(f"{positional[1]!r} is not a job id such as 12.0")
        job = (int(cluster), int(proc or 0))
    return positional[0], limit, job


def main(argv: list[str]) -> int:
    """Run ``roost wait``: 0 all succeeded, 1 some did not (or an error), 2 time ran out or a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(wait_of(reading)))


def _run(what: tuple[str, float | None, tuple[int, int] | None]) -> int:
    return run_reporting("roost wait", lambda: _follow(*what))


def _follow(path: str, limit: float | None, job: tuple[int, int] | None) -> int:
    from bindings.eventlog import JobEventLog

    log = JobEventLog(path)
    progress = WaitProgress()
    interactive = sys.stderr.isatty()

    def show(bar: str) -> None:
        if interactive:
            sys.stderr.write(f"\r{bar}")
            sys.stderr.flush()

    started = time.monotonic()
    finished = False
    while not finished:
        remaining = None if limit is None else max(limit - (time.monotonic() - started), 0)
        finished = follow(log.events(stop_after=1.0 if remaining is None else min(remaining, 1.0)),
                          progress, job, show)
        if not finished and remaining is not None and remaining <= 0:
            break
    if interactive:
        sys.stderr.write("\n")
    if not finished:
        print(f"Time expired: {len(progress.finished)} of {len(progress.submitted)} jobs finished.")
        return 2
    if progress.succeeded():
        print("All jobs done.")
        return 0
    failed = sum(1 for ok in progress.finished.values() if not ok)
    print(f"All jobs done; {failed} did not succeed (non-zero exit, signal or removal).")
    return 1


def condor_wait() -> int:
    """The ``condor_wait`` console entry point."""
    return main(sys.argv[1:])
