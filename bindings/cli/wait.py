"""``roost wait LOGFILE [job]`` (condor_wait): follow a job event log until every job
it names (or the one job given) has terminated or been aborted, as HTCondor's
``condor_wait`` does (src/condor_tools/wait.cpp): ``All jobs done.`` and status 0 once
they have; ``Time expired.`` and status 1 when ``-wait`` runs out first; ``-num N`` is
satisfied by N ended jobs; ``-wait 0`` reads what is there and stops."""

from __future__ import annotations

import sys
import time

from attrs import define, field, frozen

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from bindings.cli.schedd_session import run_reporting

#: a job number part condor_wait was not given: any cluster, proc or subproc matches
ANY = -1


@frozen
class JobPattern:
    """``cluster[.proc[.subproc]]`` as condor_wait reads it; a missing part matches any."""

    cluster: int = ANY
    proc: int = ANY
    subproc: int = ANY

    @classmethod
    def parse(cls, text: str) -> JobPattern:
        """The pattern ``text`` spells; a bare ``-1`` means every cluster.

        Raises:
            UsageError: ``text`` does not start with a job number.
        """
        parts = []
        for piece in text.split(".")[:3]:
            if not piece.lstrip("-").isdigit():
                break
            parts.append(int(piece))
        if not parts:
            raise UsageError(f"Couldn't understand job number: {text}")
        return cls(*parts)

    def matches(self, event) -> bool:
        return all(want in (ANY, got) for want, got in
                   ((self.cluster, event.cluster), (self.proc, event.proc), (self.subproc, event.subproc)))


@define
class WaitProgress:
    """The jobs submitted and not yet ended, and how many were submitted, completed and aborted."""

    pattern: JobPattern = JobPattern()
    pending: set[str] = field(factory=set)
    submitted: int = 0
    completed: int = 0
    aborted: int = 0

    def add(self, event) -> str | None:
        """Take one event into account; the ``-status`` line it makes, if any."""
        from bindings.eventlog import JobEventType

        if not self.pattern.matches(event):
            return None
        key = f"{event.cluster}.{event.proc}.{event.subproc}"
        if event.type == JobEventType.SUBMIT:
            self.pending.add(key)
            self.submitted += 1
            return f"{key} submitted"
        if event.type in (JobEventType.JOB_TERMINATED, JobEventType.JOB_ABORTED):
            self.pending.discard(key)
            if event.type == JobEventType.JOB_TERMINATED:
                self.completed += 1
                return f"{key} completed"
            self.aborted += 1
            return f"{key} aborted"
        if event.type == JobEventType.EXECUTE:
            return f"{key} executing on host {event.get('ExecuteHost', '')}"
        return None

    def verdict(self, wanted: int) -> str | None:
        """The closing line once the wait is over (``wanted`` ended jobs, or all when 0), else None."""
        if wanted and self.completed + self.aborted >= wanted:
            return f"Specifed number of jobs ({wanted}) done."  # sic: condor_wait's own spelling
        if not wanted and self.submitted and not self.pending:
            return "All jobs done."
        return None

    def nothing_mentioned(self) -> str:
        """What condor_wait says of a log that names none of the awaited jobs."""
        return "This log does not mention any jobs!" if self.pattern.cluster == ANY else \
            "This log does not mention that job!"


@frozen
class WaitRequest:
    """What a ``roost wait`` command line asks for."""

    path: str
    pattern: JobPattern = JobPattern()
    limit: int | None = None
    wanted: int = 0
    status: bool = False
    echo: bool = False


USAGE = """usage: roost wait [options] LOGFILE [cluster[.proc[.subproc]]]

  -wait SECONDS       give up after this long: "Time expired." and status 1
                      (0: read what the log holds now and stop)
  -num N              wait for N jobs to end rather than all
  -status             print each job's submit, execute and end
  -echo               print the awaited jobs' events
  -debug              accepted, as condor_wait's
Status 0 only once the awaited jobs are all done; 1 otherwise.
"""
COMMAND = CommandLine("roost wait", USAGE, [Option("-wait", 1), Option("-num", 1), Option("-status"),
                                            Option("-echo"), Option("-debug")])


def parse_arguments(argv: list[str]) -> WaitRequest:
    """The request of command line ``argv``.

    Raises:
        UsageError: no log file, a bad number, or an extra argument.
    """
    return wait_of(COMMAND.read(argv))


def _integer(reading: Reading, name: str) -> int | None:
    """The value of option ``name`` as condor_wait's ``atoi`` would take it, refusing non-numbers."""
    text = reading.last(name)
    if text is None:
        return None
    if not text.lstrip("-").isdigit():
        raise UsageError(f"{name} needs a whole number, got {text!r}")
    return int(text)


def wait_of(reading: Reading) -> WaitRequest:
    """What a read command line waits for.

    Raises:
        UsageError: no log file, a bad number, or an extra argument.
    """
    operands = reading.operands
    if not operands:
        raise UsageError("name the event log to follow")
    if len(operands) > 2:
        raise UsageError(f"Extra argument: {operands[2]}")
    wanted = _integer(reading, "-num")
    if wanted is not None and wanted < 1:
        raise UsageError("-num must be greater than zero")
    pattern = JobPattern.parse(operands[1]) if len(operands) == 2 else JobPattern()
    return WaitRequest(operands[0], pattern, _integer(reading, "-wait"), wanted or 0,
                       reading.given("-status"), reading.given("-echo"))


def main(argv: list[str]) -> int:
    """Run ``roost wait``: 0 once the awaited jobs are done, 1 otherwise, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(wait_of(reading)))


def _run(request: WaitRequest) -> int:
    return run_reporting("roost wait", lambda: _follow(request))


def _follow(request: WaitRequest) -> int:
    from bindings.eventlog import JobEventLog

    log = JobEventLog(request.path)
    progress = WaitProgress(request.pattern)
    read_once = request.limit == 0
    stop = None if not request.limit else time.monotonic() + request.limit
    while True:
        if stop is not None and time.monotonic() > stop:
            print("Time expired." if progress.submitted else progress.nothing_mentioned(),
                  file=sys.stdout if progress.submitted else sys.stderr)
            return 1
        step = 0.0 if read_once else (1.0 if stop is None else max(min(stop - time.monotonic(), 1.0), 0.0))
        for event in log.events(stop_after=step):
            line = progress.add(event)
            if line is not None and request.echo:
                sys.stdout.write(str(event))
            if line is not None and request.status:
                print(line)
            verdict = progress.verdict(request.wanted)
            if verdict is not None:
                print(verdict)
                return 0
        if read_once:
            if not progress.submitted:
                print(progress.nothing_mentioned(), file=sys.stderr)
            return 0


def condor_wait() -> int:
    """The ``condor_wait`` console entry point."""
    return main(sys.argv[1:])
