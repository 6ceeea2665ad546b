"""``roost submit FILE`` (condor_submit): submit the jobs a submit description makes
to the pool's schedd, with ``-append``, ``-queue``, ``-batch-name``, ``-terse`` and
``-spool``; ``-dry-run`` prints the job ads instead (old ClassAd syntax, or JSON with
``-json``) without a pool. ``include``, ``$ENV`` and queue items from files, commands
and globs are expanded here, as the user; the schedd gets the items inline."""

from __future__ import annotations

import sys
import warnings

from attrs import frozen

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command, whole_number
from bindings.cli.submit_gpu_check import check_gpu_memory
from bindings.submit import Submit
from schedd.submit import SubmitError

USAGE = """usage: roost submit [options] FILE

  -dry-run            print the job ads instead of submitting them
  -json               with -dry-run, print the ads as a JSON list
  -cluster N          the cluster id to number the dry-run ads with (default 1)
  -a, -append CMD     add a submit command before the queue statement (repeatable)
  -q, -queue ARGS     replace the file's queue statements with `queue ARGS`
  -batch-name NAME    the batch name roost q groups these jobs under
  -terse              print only the job ids (C.first - C.last)
  -spool              accepted: the schedd reads input from the submit directory
  -pool HOST:PORT     the pool whose schedd to submit to
"""
COMMAND = CommandLine("roost submit", USAGE, [
    Option("-dry-run"), Option("-json"), Option("-cluster", 1), Option("-append", 1, aliases=("-a",)),
    Option("-queue", 1, aliases=("-q",)), Option("-batch-name", 1, aliases=("-batch_name",)), Option("-terse"),
    Option("-spool"), Option("-pool", 1),
])


@frozen
class SubmitRequest:
    """What a ``roost submit`` command line asks for."""

    file: str
    dry_run: bool = False
    json: bool = False
    cluster: int = 1
    append: tuple[str, ...] = ()
    queue: str | None = None
    batch_name: str | None = None
    terse: bool = False
    pool: str | None = None


def request_of(reading: Reading) -> SubmitRequest:
    """The request a read command line makes.

    Raises:
        UsageError: not exactly one submit file, or a -cluster that is not a whole number.
    """
    if len(reading.operands) != 1:
        raise UsageError("name one submit description file" if not reading.operands
                         else f"one submit file at a time (got {', '.join(reading.operands)})")
    cluster = [whole_number(given) for given in reading.options if given.name == "-cluster"]
    return SubmitRequest(reading.operands[0], reading.given("-dry-run"), reading.given("-json"),
                         cluster[-1] if cluster else 1,
                         tuple(given.value for given in reading.options if given.name == "-append"),
                         reading.last("-queue"), reading.last("-batch-name"), reading.given("-terse"),
                         reading.last("-pool"))


def edited_description(text: str, append: list[str], queue: str | None, batch_name: str | None) -> str:
    """``text`` with ``-append`` commands and ``-batch-name`` before its first queue
    statement, and with ``-queue`` replacing its queue statements."""
    from schedd.intake import with_queue_args

    extra = list(append) + ([f"batch_name = {batch_name}"] if batch_name else [])
    if queue is not None:
        return with_queue_args(text.rstrip("\n") + "\n" + "\n".join(extra), queue)
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.strip().lower().split(None, 1)[:1] == ["queue"]),
              len(lines))
    return "\n".join(lines[:at] + extra + lines[at:]) + "\n"


def submit_report(cluster: int, first: int, count: int, terse: bool) -> str:
    """What condor_submit prints after a submit."""
    if terse:
        return f"{cluster}.{first} - {cluster}.{first + count - 1}\n"
    return f"Submitting job(s){'.' * count}\n{count} job(s) submitted to cluster {cluster}.\n"


def _submit(args: SubmitRequest, text: str) -> int:
    from bindings.cli.schedd_session import run_reporting
    from bindings.schedd import Schedd
    from daemoncore.wire.errors import RemoteError

    def work() -> int:
        schedd = Schedd(pool=args.pool)
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(args.file)
            warnings.simplefilter("always")
            try:
                result = schedd.submit(Submit(text))
            except SubmitError as exc:
                print(f"roost submit: {str(exc).replace('<submit description>', args.file, 1)}", file=sys.stderr)
                return 1
            except RemoteError as exc:
                raise RemoteError(exc.status, exc.code, exc.message.replace("<submit description>", args.file),
                                  exc.url) from None
        sys.stdout.write(submit_report(result.cluster(), result.first_proc(), result.num_procs(), args.terse))
        warning = check_gpu_memory(result.clusterad(), args.pool)
        if warning:
            print(f"roost submit: warning: {args.file}: {warning}", file=sys.stderr)
        return 0
    return run_reporting("roost submit", work)


def _warning_printer(path: str):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).replace("<submit description>", path, 1)
        print(f"roost submit: warning: {text}", file=sys.stderr)
    return show


def main(argv: list[str]) -> int:
    """Run ``roost submit``; 0 on success, 1 on an error it explains, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(request_of(reading)))


def _run(args: SubmitRequest) -> int:
    try:
        with open(args.file, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as exc:
        print(f"roost submit: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    text = edited_description(text, args.append, args.queue, args.batch_name)
    if not args.dry_run:
        return _submit(args, text)
    # Relative paths are relative to the current directory, as condor_submit (and a
    # real `roost submit`) take them.
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(args.file)
            warnings.simplefilter("always")
            ads = Submit(text).jobs(clusterid=args.cluster, owner=_owner())
    except SubmitError as exc:
        message = str(exc).replace("<submit description>", args.file, 1)
        print(f"roost submit: {message}", file=sys.stderr)
        return 1
    if args.json:
        print("[\n" + ",\n".join(ad.printJson().rstrip() for ad in ads) + "\n]")
    else:
        print("\n".join(ad.printOld() for ad in ads), end="")
    return 0


def _owner() -> str | None:
    try:
        import getpass

        return getpass.getuser()
    except (KeyError, OSError):
        return None


def condor_submit() -> int:
    """The ``condor_submit`` console entry point."""
    return main(sys.argv[1:])
