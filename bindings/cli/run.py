"""``roost run FILE.sub``: the one command a newcomer needs. It starts a personal pool
if none is running, submits the file (from the file's own directory, so the paths in
it are relative to where it lives), shows progress until every job has finished,
prints where the outputs are and a one-line summary, and leaves the pool running."""

from __future__ import annotations

import os
import sys
import time

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command, seconds

IDLE, RUNNING, REMOVED, COMPLETED, HELD, TRANSFERRING, SUSPENDED = range(1, 8)
_STATE_WORDS = {IDLE: "idle", RUNNING: "running", REMOVED: "removed", COMPLETED: "done",
                HELD: "held", TRANSFERRING: "transferring", SUSPENDED: "suspended"}
_UNFINISHED = (IDLE, RUNNING, TRANSFERRING, SUSPENDED)
_PROJECTION = ["ClusterId", "ProcId", "JobStatus", "ExitCode", "ExitBySignal", "ExitSignal",
               "HoldReason", "Iwd", "Out", "Err", "RemoteWallClockTime"]


COMMAND = CommandLine("roost run", """usage: roost run [options] FILE.sub

  Start a personal pool if none is running, submit FILE.sub from its own directory,
  show progress until every job has finished, and say where the outputs are.

  -dir DIR            the pool directory to start if no pool is running
  -timeout SECONDS    stop waiting after this long (the jobs go on)
  -pool HOST:PORT     use this pool instead of the personal one
""", [Option("-dir", 1), Option("-timeout", 1), Option("-pool", 1)])


def ensure_pool(directory: str | None, pool: str | None) -> None:
    """Start the personal pool unless one is already reachable."""
    from bindings.cli.pool import pool_up
    from bindings.pool import NoPoolFound, default_pool_dir, find_pool

    try:
        find_pool(pool)
        return
    except NoPoolFound:
        if pool is not None:
            raise
    env = dict(os.environ)
    if pool_up(directory or default_pool_dir(env), env, timeout=60.0) != 0:
        raise RuntimeError("could not start a personal pool (see the message above)")


def submit_file(path: str, pool: str | None):
    """Submit ``path`` from its own directory (where its ``include``, item files and
    globs are expanded, as the user); the SubmitResult.

    Raises:
        SubmitError: the description is wrong, naming ``path`` (or an included file) and the line.
    """
    from bindings.schedd import Schedd
    from bindings.submit import Submit
    from schedd.submit import SubmitError

    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    try:
        return Schedd(pool=pool).submit(Submit(text))
    except SubmitError as exc:
        raise SubmitError(exc.reason, file=exc.file or path, line=exc.line, command=exc.command) from None
    finally:
        os.chdir(here)


def job_states(schedd, cluster: int, count: int) -> dict[int, object]:
    """Each proc's latest ad: from the queue while it is there, else from history."""
    found = {ad["ProcId"]: ad for ad in schedd.query(f"ClusterId == {cluster}", _PROJECTION)}
    if len(found) < count:
        for ad in schedd.history(f"ClusterId == {cluster}", _PROJECTION, match=count):
            found.setdefault(ad["ProcId"], ad)
    return found


def progress_line(states: dict[int, object], count: int) -> str:
    tally: dict[str, int] = {}
    for ad in states.values():
        word = _STATE_WORDS.get(ad.get("JobStatus"), "unknown")
        tally[word] = tally.get(word, 0) + 1
    waiting = count - len(states)
    if waiting:
        tally["submitted"] = waiting
    return ", ".join(f"{n} {word}" for word, n in sorted(tally.items()))


def finished(states: dict[int, object], count: int) -> bool:
    return len(states) == count and all(ad.get("JobStatus") not in _UNFINISHED for ad in states.values())


def describe_job(ad) -> str:
    """One line per job: its outcome and where its output went."""
    job = f"{ad['ClusterId']}.{ad['ProcId']}"
    status = ad.get("JobStatus")
    if status == HELD:
        return f"  {job}  held: {ad.get('HoldReason', 'no reason given')}"
    if status == REMOVED:
        return f"  {job}  removed"
    if ad.get("ExitBySignal") is True:
        outcome = f"killed by signal {ad.get('ExitSignal')}"
    else:
        outcome = f"exit code {ad.get('ExitCode')}"
    files = [os.path.join(ad.get("Iwd", ""), ad[name]) for name in ("Out", "Err")
             if isinstance(ad.get(name), str) and ad[name] != "/dev/null"]
    return f"  {job}  {outcome}" + (f"; output in {', '.join(files)}" if files else "")


def succeeded(ad) -> bool:
    return ad.get("JobStatus") == COMPLETED and ad.get("ExitBySignal") is not True and ad.get("ExitCode") == 0


def watch(schedd, cluster: int, count: int, timeout: float | None, out=sys.stdout) -> dict:
    """Poll until every job has finished (or ``timeout``); the last states."""
    started = time.monotonic()
    last = ""
    delay = 0.2
    while True:
        states = job_states(schedd, cluster, count)
        line = progress_line(states, count)
        if line != last:
            print(f"[{time.monotonic() - started:6.1f}s] {line}", file=out, flush=True)
            last = line
        if finished(states, count):
            return states
        if timeout is not None and time.monotonic() - started > timeout:
            print(f"still not finished after {timeout:g} s; the jobs go on (`roost q` shows them)", file=out)
            return states
        time.sleep(delay)
        delay = min(delay * 1.5, 2.0)


def main(argv: list[str]) -> int:
    """Run ``roost run``; 0 when every job succeeded, 1 otherwise or on an error it explains, 2 for a bad command line."""
    return run_command(COMMAND, argv, _run)


def _run(reading: Reading) -> int:
    from bindings.cli.schedd_session import run_reporting

    if len(reading.operands) != 1:
        raise UsageError("name one submit description file")
    path, directory, pool = reading.operands[0], reading.last("-dir"), reading.last("-pool")
    timeouts = [seconds(given) for given in reading.options if given.name == "-timeout"]
    return run_reporting("roost run", lambda: _submit_and_watch(path, directory, pool,
                                                                timeouts[-1] if timeouts else None))


def _submit_and_watch(path: str, directory: str | None, pool: str | None, timeout: float | None) -> int:
    from bindings.schedd import Schedd

    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such submit file")
    ensure_pool(directory, pool)
    began = time.monotonic()
    result = submit_file(path, pool)
    cluster, count = result.cluster(), result.num_procs()
    print(f"{count} job(s) submitted to cluster {cluster}.")
    states = watch(Schedd(pool=pool), cluster, count, timeout)
    for proc in sorted(states):
        print(describe_job(states[proc]))
    good = sum(1 for ad in states.values() if succeeded(ad))
    print(f"{good} of {count} job(s) succeeded in {time.monotonic() - began:.1f} s; "
          "the pool keeps running (`roost pool down` stops it)")
    return 0 if good == count else 1
