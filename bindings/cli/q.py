"""``roost q`` (condor_q): show jobs in the queue, grouped in batches by default,
one line per job with ``-nobatch``, with hold reasons (``-hold``) or hosts (``-run``),
or in a script-readable form (``-af``, ``-format``, ``-l``, ``-json``)."""

from __future__ import annotations

import socket
import sys
import time

from attrs import define, field

from bindings.cli.q_tables import (TABLE_ATTRIBUTES, batch_table, hold_table, nobatch_table, run_table,
                                   schedd_banner, totals_line)
from bindings.cli.schedd_session import UsageError, current_user, normalized, option_value, run_reporting
from bindings.cli.status_format import AutoformatOptions, FormatError, chosen_display, read_autoformat

USAGE = """usage: roost q [options] [owner | cluster | cluster.proc ...]

  -nobatch            one line per job
  -batch              one line per batch of jobs (the default)
  -hold               held jobs, with their hold reasons
  -run                running jobs, with their hosts
  -totals             only the totals lines
  -allusers           every user's jobs (by default, only yours)
  -constraint EXPR    only jobs for which EXPR is true
  -af[:lhVr,tng] A..  the values of attributes or expressions
  -format FMT EXPR    printf-style output (repeatable)
  -l, -long           whole job ads
  -json               job ads as JSON
  -limit N            at most N jobs
  -pool HOST:PORT     the pool whose schedd to ask
"""


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
    help: bool = False

    def constraint(self, me: str) -> str:
        """Every restriction as one expression; only ``me``'s jobs unless owners,
        ids or ``-allusers`` say otherwise."""
        parts = [f"({text})" for text in self.constraints]
        picks = [f"Owner == {_quoted(owner)}" for owner in self.owners] + [_id_test(text) for text in self.ids]
        if picks:
            parts.append("(" + " || ".join(picks) + ")")
        elif not self.all_users:
            parts.append(f"Owner == {_quoted(me)}")
        if self.display == "hold":
            parts.append("JobStatus == 5")
        elif self.display == "run":
            parts.append("(JobStatus == 2 || JobStatus == 6 || JobStatus == 7)")
        return " && ".join(parts) or "true"


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _id_test(text: str) -> str:
    cluster, _, proc = text.partition(".")
    return f"(ClusterId == {cluster} && ProcId == {proc})" if proc else f"ClusterId == {cluster}"


def _is_id(text: str) -> bool:
    cluster, _, proc = text.partition(".")
    return cluster.isdigit() and (proc == "" or proc.isdigit())


DISPLAYS = {"-nobatch": "nobatch", "-batch": "batch", "-dag": "batch", "-hold": "hold", "-run": "run",
            "-l": "long", "-long": "long", "-json": "json"}


def parse_arguments(argv: list[str]) -> QueueRequest:
    """The request of command line ``argv``.

    Raises:
        UsageError: an unknown option, or one missing its argument.
    """
    request = QueueRequest()
    args, index = list(argv), 0
    while index < len(args):
        arg = args[index]
        option = normalized(arg) if arg.startswith("-") else None
        if option in ("-h", "-help"):
            request.help = True
        elif option in DISPLAYS:
            request.display = DISPLAYS[option]
        elif option == "-totals":
            request.totals_only = True
        elif option in ("-allusers", "-all"):
            request.all_users = True
        elif option in ("-constraint", "-const"):
            text, index = option_value(args, index, arg)
            request.constraints.append(text)
        elif option == "-pool":
            request.pool, index = option_value(args, index, arg)
        elif option in ("-name", "-global"):
            if option == "-name":
                _, index = option_value(args, index, arg)
        elif option == "-limit":
            text, index = option_value(args, index, arg)
            if not text.isdigit():
                raise UsageError(f"-limit needs a whole number, got {text!r}")
            request.limit = int(text)
        elif option == "-format":
            fmt, index = option_value(args, index, arg)
            expr, index = option_value(args, index, arg)
            request.formats.append((fmt, expr))
            request.display = "format"
        elif option is not None and option.split(":", 1)[0] in ("-af", "-autoformat"):
            try:
                request.autoformat_options, attributes, index = read_autoformat(args, index)
            except FormatError as exc:
                raise UsageError(str(exc)) from None
            request.autoformat.extend(attributes)
            request.display = "autoformat"
        elif option is not None:
            raise UsageError(f"unknown option {arg}; run `roost q -help` for the options")
        elif _is_id(arg):
            request.ids.append(arg)
        else:
            request.owners.append(arg)
        index += 1
    return request


def render(request: QueueRequest, ads: list, everyone: list, me: str, banner: str, now: float) -> str:
    """The text ``roost q`` prints; ``everyone`` holds every job's Owner and JobStatus."""
    chosen = chosen_display(request, ads)
    if chosen is not None:
        return chosen
    lines = ["", banner]
    if not request.totals_only:
        table = {"batch": batch_table, "hold": hold_table}.get(request.display)
        rows = table(ads) if table else (nobatch_table(ads, now) if request.display == "nobatch"
                                         else run_table(ads, now))
        lines += rows
    lines += ["", totals_line("query", ads),
              totals_line(me, [ad for ad in everyone if ad.get("Owner") == me]),
              totals_line("all users", everyone), ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Run ``roost q``; 0 on success, 1 on an error it explains in one line."""
    from bindings.cli import analyze

    if analyze.wants_analysis(argv):
        return analyze.main(argv)
    return run_reporting("roost q", lambda: _run(argv))


def _run(argv: list[str]) -> int:
    from bindings.schedd import Schedd

    request = parse_arguments(argv)
    if request.help:
        print(USAGE, end="")
        return 0
    schedd = Schedd(pool=request.pool)
    me = current_user(request.pool)
    tables = request.display in ("batch", "nobatch", "hold", "run")
    projection = TABLE_ATTRIBUTES if tables else []
    ads = schedd.query(request.constraint(me), projection, limit=request.limit)
    everyone = schedd.query("true", ["Owner", "JobStatus"]) if tables else []
    banner = schedd_banner(socket.gethostname(), schedd.address, time.time())
    sys.stdout.write(render(request, ads, everyone, me, banner, time.time()))
    return 0


def condor_q() -> int:
    """The ``condor_q`` console entry point."""
    return main(sys.argv[1:])
