"""``roost submit FILE`` (condor_submit): submit the jobs a submit description makes
to the pool's schedd, with ``-append``, ``-queue``, ``-batch-name``, ``-terse`` and
``-spool``; ``-dry-run`` prints the job ads instead (old ClassAd syntax, or JSON with
``-json``) without a pool. ``include``, ``$ENV`` and queue items from files, commands
and globs are expanded here, as the user; the schedd gets the items inline."""

from __future__ import annotations

import argparse
import sys
import warnings

from bindings.submit import Submit
from schedd.submit import SubmitError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="roost submit", description=__doc__.splitlines()[0])
    parser.add_argument("file", metavar="FILE", help="the submit description file")
    parser.add_argument("-dry-run", "--dry-run", dest="dry_run", action="store_true",
                        help="print the job ads instead of submitting them")
    parser.add_argument("-json", "--json", dest="json", action="store_true",
                        help="print the ads as a JSON list")
    parser.add_argument("-cluster", "--cluster", type=int, default=1,
                        help="cluster id to number the dry-run ads with (default 1)")
    parser.add_argument("-append", "--append", "-a", dest="append", action="append", default=[],
                        metavar="COMMAND", help="add a submit command before the queue statement (repeatable)")
    parser.add_argument("-queue", "--queue", "-q", dest="queue", metavar="ARGS",
                        help="replace the file's queue statements with `queue ARGS`")
    parser.add_argument("-batch-name", "--batch-name", "-batch_name", dest="batch_name", metavar="NAME",
                        help="the batch name roost q groups these jobs under")
    parser.add_argument("-terse", "--terse", action="store_true", help="print only the job ids (C.first - C.last)")
    parser.add_argument("-spool", "--spool", action="store_true",
                        help="accepted for compatibility: the schedd reads input from the submit directory")
    parser.add_argument("-pool", "--pool", help="the pool whose schedd to submit to")
    return parser


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


def _submit(args, text: str) -> int:
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
        return 0
    return run_reporting("roost submit", work)


def _warning_printer(path: str):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).replace("<submit description>", path, 1)
        print(f"roost submit: warning: {text}", file=sys.stderr)
    return show


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
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
