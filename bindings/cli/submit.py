"""``roost submit FILE`` (condor_submit): submit the jobs a submit description makes
to the pool's schedd, with ``-append``, ``-queue``, ``-batch-name``, ``-terse`` and
``-spool``; ``-dry-run [FILE]`` writes the job ads instead (old ClassAd syntax, or JSON
with ``-json``; to standard output, or FILE, ``-`` meaning standard output) without a
pool. With no FILE, or ``-``, the description is read from standard input. ``include``,
``$ENV`` and queue items from files, commands and globs are expanded here, as the user;
the schedd gets the items inline. Before anything is sent, the files the jobs need are
checked here and unused commands are warned about (:mod:`bindings.cli.submit_checks`)."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable

import attrs
from attrs import frozen

from bindings.cli.options import WORDS, CommandLine, Option, Reading, UsageError, run_command, whole_number
from bindings.cli.submit_checks import expanded_jobs, file_problems, unused_commands
from bindings.cli.submit_gpu_check import check_submitted
from bindings.submit import Submit
from schedd.submit import SubmitError, to_classads

USAGE = """usage: roost submit [options] [FILE | -]

  FILE                the submit description; standard input when none is named or -
  -dry-run [FILE]     write the job ads to FILE (- or none: standard output) instead of submitting them
  -json               with -dry-run, print the ads as a JSON list
  -cluster N          the cluster id to number the dry-run ads with (default 1)
  -a, -append CMD     add a submit command before the queue statement (repeatable;
                      an appended `queue ...` is taken as -queue)
  -q, -queue ARGS...  queue the jobs with `queue ARGS` (every word up to the next option),
                      for a description that has no queue statement of its own
  -batch-name NAME    the batch name roost q groups these jobs under
  -terse              print only the job ids (C.first - C.last)
  -spool              send the input files to the schedd's spool now; outputs stay there
                      until `roost transfer_data` fetches them
  -allow-crlf-script  submit a script with CRLF (DOS) line endings anyway
  -interactive        refused: Roost opens no interactive shell on a slot
  -pool HOST:PORT     the pool whose schedd to submit to
"""
COMMAND = CommandLine("roost submit", USAGE, [
    Option("-dry-run"), Option("-json"), Option("-cluster", 1), Option("-append", 1, aliases=("-a",)),
    Option("-queue", WORDS, aliases=("-q",), needs="queue arguments (such as 3, or `in A B C`)"), Option("-batch-name", 1, aliases=("-batch_name",)), Option("-terse"),
    Option("-spool"), Option("-pool", 1), Option("-allow-crlf-script"), Option("-interactive", aliases=("-i",)),
])
#: condor_submit's words when both the command line and the file give a queue statement
QUEUE_CONFLICT = "-queue argument conflicts with queue statement in submit file"
#: The name a description read from standard input goes by in messages.
STDIN_NAME = "(standard input)"
#: ... and one given wholly by -append and -queue
COMMAND_LINE_NAME = "(command line)"
_DRY_RUN = ("-dry-run", "--dry-run", "-dry_run")


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
    #: where -dry-run writes the ads: None or "-" for standard output
    dry_run_file: str | None = None
    allow_crlf: bool = False
    spool: bool = False


def request_of(reading: Reading) -> SubmitRequest:
    """The request a read command line makes.

    Raises:
        UsageError: more than one submit file, more than one queue statement given,
            -interactive, or a -cluster that is not a whole number.
    """
    if len(reading.operands) > 1:
        raise UsageError(f"one submit file at a time (got {', '.join(reading.operands)})")
    if reading.given("-interactive"):
        raise UsageError("-interactive is not supported: Roost opens no interactive shell on an execute "
                         "slot; submit a batch job (and read its output) instead")
    cluster = [whole_number(given) for given in reading.options if given.name == "-cluster"]
    append, queue = command_line_queue(reading)
    if reading.operands:
        file = reading.operands[0]
    else:  # condor_submit needs no file when the command line gives commands and a queue statement
        file = "" if queue is not None and append else "-"
    return SubmitRequest(file, reading.given("-dry-run"),
                         reading.given("-json"), cluster[-1] if cluster else 1, append,
                         queue, reading.last("-batch-name"), reading.given("-terse"),
                         reading.last("-pool"), allow_crlf=reading.given("-allow-crlf-script"),
                         spool=reading.given("-spool"))


def queue_arguments(line: str) -> str | None:
    """The arguments of ``line`` when it is a queue statement (``queue``, then the end
    or white space, as submit.cpp's is_queue_statement reads it), else None."""
    text = line.strip()
    if text[:5].lower() != "queue" or (len(text) > 5 and not text[5].isspace()):
        return None
    rest = text[5:].strip()
    return None if rest.startswith("=") else rest


def command_line_queue(reading: Reading) -> tuple[tuple[str, ...], str | None]:
    """The ``-append`` commands and the queue arguments of the command line: ``-queue
    ARGS...`` joined by spaces, or an appended ``queue ...`` statement (condor_submit.rst,
    -append), of which there may be one.

    Raises:
        UsageError: two queue statements on the command line.
    """
    append: list[str] = []
    queue: str | None = None
    for given in reading.options:
        if given.name == "-append" and queue_arguments(given.value) is None:
            append.append(given.value)
        elif given.name in ("-append", "-queue"):
            if queue is not None:
                raise UsageError(f"{given.spelled}: only one -queue (or appended queue statement) is allowed")
            queue = (queue_arguments(given.value) if given.name == "-append" else " ".join(given.values))
    return tuple(append), queue


def split_dry_run_file(argv: list[str]) -> tuple[list[str], str | None]:
    """``argv`` without the file after ``-dry-run`` and that file (condor_submit's
    ``-dry-run FILE``, ``-`` meaning standard output). A ``-dry-run`` last or followed by
    another option writes to standard output, as before; so does one whose word turns out
    to be the only file named (that word is the description, see :func:`main`)."""
    for at, word in enumerate(argv[:-1]):
        after = argv[at + 1]
        if word.lower() in _DRY_RUN and (after == "-" or not after.startswith("-")):
            return argv[:at + 1] + argv[at + 2:], after
    return argv, None


def edited_description(text: str, append: list[str], queue: str | None, batch_name: str | None) -> str:
    """``text`` with ``-append`` commands and ``-batch-name`` before its first queue
    statement, or, with ``-queue``, after its last line and followed by ``queue ARGS``.

    Raises:
        SubmitError: ``-queue`` is given and ``text`` has a queue statement of its own
            (submit.cpp refuses the pair, naming neither as the one to keep).
    """
    extra = list(append) + ([f"batch_name = {batch_name}"] if batch_name else [])
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if queue_arguments(line) is not None), None)
    if queue is not None:
        if at is not None:
            raise SubmitError(QUEUE_CONFLICT, line=at + 1, command="queue")
        return "\n".join(lines + extra + [f"queue {queue}".rstrip()]) + "\n"
    at = len(lines) if at is None else at
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
                result = schedd.submit(Submit(text), spool=args.spool)
            except SubmitError as exc:
                print(f"roost submit: {str(exc).replace('<submit description>', args.file, 1)}", file=sys.stderr)
                return 1
            except RemoteError as exc:
                raise RemoteError(exc.status, exc.code, exc.message.replace("<submit description>", args.file),
                                  exc.url) from None
        if args.spool:  # the jobs stay held (code 16) until their inputs are in the spool
            schedd.spool(schedd.query(f"ClusterId == {result.cluster()}"))
        sys.stdout.write(submit_report(result.cluster(), result.first_proc(), result.num_procs(), args.terse))
        warning = check_submitted(result, args.pool)
        if warning:
            print(f"roost submit: warning: {args.file}: {warning}", file=sys.stderr)
        return 0
    return run_reporting("roost submit", work)


def _warning_printer(path: str, quiet_misspellings: bool = False):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).replace("<submit description>", path, 1)
        if quiet_misspellings and "is not a submit command (kept as a macro)" in text:
            return  # the unused-command warning of submit_checks says it, with more

        print(f"roost submit: warning: {text}", file=sys.stderr)
    return show


def main(argv: list[str]) -> int:
    """Run ``roost submit``; 0 on success, 1 on an error it explains, 2 for a bad command line."""
    argv, dry_run_file = split_dry_run_file(list(argv))

    def work(reading: Reading) -> int:
        if dry_run_file not in (None, "-") and not reading.operands:
            # `roost submit -dry-run job.sub`: the word is the description, never overwritten
            reading = attrs.evolve(reading, operands=(dry_run_file,))
            return _run(request_of(reading))
        return _run(attrs.evolve(request_of(reading), dry_run_file=dry_run_file))
    return run_command(COMMAND, argv, work)


def _read_description(path: str) -> str:
    """The description's text, from the file ``path`` or (``-``) standard input.

    Raises:
        OSError: the file cannot be read.
    """
    if path == "-":
        return sys.stdin.read()
    if path == "":  # the command line holds the whole description
        return ""
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def _run(args: SubmitRequest) -> int:
    try:
        text = _read_description(args.file)
    except OSError as exc:
        print(f"roost submit: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    if args.file in ("-", ""):
        args = attrs.evolve(args, file=STDIN_NAME if args.file == "-" else COMMAND_LINE_NAME)
    try:
        text = edited_description(text, args.append, args.queue, args.batch_name)
    except SubmitError as exc:
        print(f"roost submit: {str(exc).replace('<submit description>', args.file, 1)}", file=sys.stderr)
        return 1
    # Relative paths are relative to the current directory, as condor_submit (and a
    # real `roost submit`) take them.
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(args.file, quiet_misspellings=True)
            warnings.simplefilter("always")
            clusters = Submit(text).clusters(clusterid=args.cluster, owner=_owner())
            # job ads (and the ClassAd library) only for -dry-run: the checks read the expansion
            ads = list(to_classads(clusters)) if args.dry_run else None
    except SubmitError as exc:
        message = str(exc).replace("<submit description>", args.file, 1)
        print(f"roost submit: {message}", file=sys.stderr)
        return 1
    if not _checked(args, text, ads if ads is not None else expanded_jobs(clusters)):
        return 1
    if not args.dry_run:
        return _submit(args, text)
    _write_dry_run(args, ads)
    return 0


def _checked(args: SubmitRequest, text: str, ads: Iterable) -> bool:
    """Warn about unused commands and report the files the jobs lack; False when any is missing."""
    from schedd.submit.description import parse_description

    description = parse_description(text, cwd=os.getcwd(), environ=dict(os.environ))
    for warning in unused_commands(description):
        print(f"roost submit: warning: {warning.replace('<submit description>', args.file, 1)}", file=sys.stderr)
    skip = str(Submit(text).get("skip_filechecks", "")).strip().lower() in ("true", "yes", "1")
    problems = [] if skip else file_problems(ads, args.allow_crlf)
    for problem in problems:
        print(f"roost submit: ERROR: {problem}", file=sys.stderr)
    if problems:
        print(f"roost submit: nothing was submitted from {args.file}", file=sys.stderr)
    return not problems


def _write_dry_run(args: SubmitRequest, ads: list) -> None:
    if args.json:
        text = "[\n" + ",\n".join(ad.printJson().rstrip() for ad in ads) + "\n]\n"
    else:
        text = "\n".join(ad.printOld() for ad in ads)
    if args.dry_run_file in (None, "-"):
        sys.stdout.write(text)
        return
    with open(args.dry_run_file, "w", encoding="utf-8") as handle:
        handle.write(text)


def _owner() -> str | None:
    try:
        import getpass

        return getpass.getuser()
    except (KeyError, OSError):
        return None


def condor_submit() -> int:
    """The ``condor_submit`` console entry point."""
    return main(sys.argv[1:])
