"""``roost q`` (condor_q): show jobs in the queue, grouped in batches by default,
one line per job with ``-nobatch``, with hold reasons (``-hold``) or hosts (``-run``),
or in a script-readable form (``-af``, ``-format``, ``-l``, ``-json``); ``-analyze``
and ``-better-analyze`` hand the request to :mod:`bindings.cli.analyze`."""

from __future__ import annotations

import socket
import sys
import time

from attrs import define, field

import classad
from bindings.cli.options import WORDS, CommandLine, Given, Option, Reading, UsageError, run_command, whole_number
from bindings.cli.q_autoclusters import autocluster_ads, autocluster_table, extra_significant
from bindings.cli.q_tables import (
    IO_CONSTRAINT,
    TABLE_ATTRIBUTES,
    batch_table,
    fitted,
    hold_table,
    io_table,
    nobatch_table,
    run_table,
    schedd_banner,
    totals_lines,
)
from bindings.cli.schedd_session import current_user, located_schedd, run_reporting
from bindings.cli.status_format import (
    AutoformatOptions,
    attribute_list,
    autoformat_options,
    chosen_display,
    projected,
)

USAGE = """usage: roost q [options] [owner | cluster | cluster.proc ...]

  -nobatch            one line per job
  -batch              one line per batch of jobs (the default)
  -hold               held jobs, with their hold reasons
  -run                running jobs, with their hosts
  -io                 jobs moving files: runs, bytes in and out, transfer state
  -totals             only the totals lines
  -autocluster        one line per autocluster (jobs that match alike): its id, how many
                      jobs, its significant attributes; with -long, -json or -af, the
                      autocluster ads
  -wide[:N]           rows whole (by default cut at 79 columns), or cut at N
  -allusers           every user's jobs (by default, only yours)
  -constraint EXPR    only jobs for which EXPR is true
  -af[:jlhVr,tng] A.. the values of attributes or expressions (j: job id first)
  -format FMT EXPR    printf-style output (repeatable)
  -l, -long           whole job ads
  -json               job ads as JSON (with -long too)
  -attributes A,B     with -long or -json: only these attributes
  -limit N            at most N jobs
  -pool HOST:PORT     the pool whose schedd to ask
  -name NAME          the schedd of that name (as the collector knows it)
  -analyze            why the chosen jobs do not run, in short
  -better-analyze     the same, with each Requirements clause counted against the slots
"""


#: condor_q cuts its tables one short of the console width, 80 when not a terminal.
DEFAULT_WIDTH = 79


@define
class QueueRequest:
    """What a ``roost q`` command line asks for."""

    owners: list[str] = field(factory=list)
    ids: list[str] = field(factory=list)
    constraints: list[str] = field(factory=list)
    display: str = "batch"
    autoformat: list[str] = field(factory=list)
    autoformat_options: AutoformatOptions = AutoformatOptions()
    formats: list[tuple[str, str]] = field(factory=list)
    totals_only: bool = False
    all_users: bool = False
    limit: int = -1
    pool: str | None = None
    name: str | None = None
    analysis: str | None = None
    attributes: list[str] = field(factory=list)
    width: int | None = DEFAULT_WIDTH
    autocluster: bool = False

    def constraint(self, me: str) -> str:
        """Every restriction as one expression; only ``me``'s jobs unless owners,
        ids or ``-allusers`` say otherwise."""
        parts = [f"({text})" for text in self.constraints]
        picks = [f"Owner == {classad.quote(owner)}" for owner in self.owners] + [_id_test(text) for text in self.ids]
        if picks:
            parts.append("(" + " || ".join(picks) + ")")
        elif not self.all_users:
            parts.append(f"Owner == {classad.quote(me)}")
        if self.display == "hold":
            parts.append("JobStatus == 5")
        elif self.display == "run":
            parts.append("(JobStatus == 2 || JobStatus == 6 || JobStatus == 7)")
        elif self.display == "io":
            parts.append(IO_CONSTRAINT)
        return " && ".join(parts) or "true"


def _id_test(text: str) -> str:
    cluster, _, proc = text.partition(".")
    return f"(ClusterId == {cluster} && ProcId == {proc})" if proc else f"ClusterId == {cluster}"


def _is_id(text: str) -> bool:
    cluster, _, proc = text.partition(".")
    return cluster.isdigit() and (proc == "" or proc.isdigit())


DISPLAYS = {"-nobatch": "nobatch", "-batch": "batch", "-dag": "batch", "-hold": "hold", "-run": "run", "-io": "io",
            "-long": "long", "-json": "json"}
ANALYSES = {"-analyze": "short", "-better-analyze": "better"}
COMMAND = CommandLine("roost q", USAGE, [
    *(Option(flag) for flag in DISPLAYS if flag != "-long"), Option("-long", aliases=("-l",)),
    Option("-analyze", aliases=("-analyse",)), Option("-better-analyze", aliases=("-better-analyse",)),
    Option("-totals"), Option("-allusers", aliases=("-all",)), Option("-constraint", 1), Option("-pool", 1),
    Option("-name", 1), Option("-global"), Option("-limit", 1), Option("-format", 2), Option("-attributes", 1),
    Option("-autoformat", WORDS, aliases=("-af",), qualified=True), Option("-wide", qualified=True),
    Option("-autocluster"),
])


def parse_arguments(argv: list[str]) -> QueueRequest:
    """The request of command line ``argv``.

    Raises:
        UsageError: an unknown option, or one missing its argument.
    """
    return request_of(COMMAND.read(argv))


def request_of(reading: Reading) -> QueueRequest:
    """The request a read command line makes; operands are job ids or owners.

    Raises:
        UsageError: an option's value is wrong, or -batch is given with -autocluster
            (queue.cpp: "-batch conflicts with -autocluster").
    """
    if reading.given("-autocluster") and reading.given("-batch"):
        raise UsageError("-batch conflicts with -autocluster")
    request = QueueRequest(owners=[arg for arg in reading.operands if not _is_id(arg)],
                           ids=[arg for arg in reading.operands if _is_id(arg)])
    for given in reading.options:
        _take(request, given)
    return request


def _take(request: QueueRequest, given: Given) -> None:
    """Fold one option into ``request``."""
    name = given.name
    if name in DISPLAYS:
        if not (name == "-long" and request.display == "json"):  # -json shows whole ads as -long does
            request.display = DISPLAYS[name]
    elif name == "-attributes":
        request.attributes.extend(attribute_list(given.value))
    elif name in ANALYSES:
        if request.analysis != "better":  # -better-analyze wins over -analyze, in either order
            request.analysis = ANALYSES[name]
    elif name in ("-totals", "-allusers", "-autocluster"):
        setattr(request, {"-totals": "totals_only", "-allusers": "all_users", "-autocluster": "autocluster"}[name],
                True)
    elif name == "-constraint":
        request.constraints.append(given.value)
    elif name in ("-pool", "-name"):
        setattr(request, name[1:], given.value)
    elif name == "-limit":
        request.limit = whole_number(given)
    elif name == "-wide":
        request.width = wide_width(given)
    elif name == "-format":
        request.formats.append(given.values)
        request.display = "format"
    elif name == "-autoformat":
        request.autoformat_options = autoformat_options(given)
        request.autoformat.extend(given.values)
        request.display = "autoformat"


def wide_width(given: Given) -> int | None:
    """``-wide`` leaves rows whole; ``-wide:N`` cuts them at N-1 columns, as condor_q
    treats N as the console's width.

    Raises:
        UsageError: N is not a whole number above 1.
    """
    if not given.qualifiers:
        return None
    if not given.qualifiers.isdigit() or int(given.qualifiers) < 2:
        raise UsageError(f"-wide:{given.qualifiers}: the width must be a whole number above 1")
    return int(given.qualifiers) - 1


def render(request: QueueRequest, ads: list, everyone: list, me: str, banner: str, now: float) -> str:
    """The text ``roost q`` prints; ``everyone`` holds every job's Owner, JobStatus and
    JobUniverse. As condor_q: two blank lines and the schedd's banner, the table (cut to
    the width unless ``-wide``; ``-hold`` is never cut), a blank line, the totals; with
    ``-totals`` the banner is followed by the totals alone."""
    if request.attributes and request.display in ("long", "json"):
        ads = projected(ads, request.attributes)
    chosen = chosen_display(request, ads)
    if chosen is not None:
        return chosen
    lines = ["", "", banner]
    if request.autocluster:  # its table has no totals: its rows are no jobs to count
        return "\n".join(lines + fitted(autocluster_table(ads), request.width)) + "\n"
    if not request.totals_only:
        table = {"batch": batch_table, "hold": hold_table, "io": io_table}.get(request.display)
        rows = table(ads) if table else (nobatch_table(ads, now) if request.display == "nobatch"
                                         else run_table(ads, now))
        lines += fitted(rows, None if request.display == "hold" else request.width) + [""]
    mine = None if request.all_users else (me, [ad for ad in everyone if ad.get("Owner") == me])
    lines += totals_lines(ads, mine, everyone)
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Run ``roost q``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _dispatch(request_of(reading)))


def _dispatch(request: QueueRequest) -> int:
    from bindings.cli import analyze

    if request.analysis is not None:
        return run_reporting("roost q", lambda: analyze.run(request))
    return run_reporting("roost q", lambda: _run(request))


def _run(request: QueueRequest) -> int:
    schedd = located_schedd(request.pool, request.name)
    me = current_user(request.pool)
    if request.autocluster:
        ads = autocluster_ads(schedd.query(request.constraint(me), []), extra_significant())
        ads = ads if request.limit < 0 else ads[:request.limit]
        banner = schedd_banner(socket.gethostname(), schedd.address, time.time())
        sys.stdout.write(render(request, ads, [], me, banner, time.time()))
        return 0
    tables = request.display in ("batch", "nobatch", "hold", "run", "io")
    projection = TABLE_ATTRIBUTES if tables else request.attributes if request.display in ("long", "json") else []
    ads = schedd.query(request.constraint(me), projection, limit=request.limit)
    everyone = schedd.query("true", ["Owner", "JobStatus", "JobUniverse"]) if tables else []
    banner = schedd_banner(socket.gethostname(), schedd.address, time.time())
    sys.stdout.write(render(request, ads, everyone, me, banner, time.time()))
    return 0


def condor_q() -> int:
    """The ``condor_q`` console entry point."""
    return main(sys.argv[1:])
