"""``roost history`` (condor_history): jobs that left the queue, newest first (oldest
first with ``-forwards``), one line each or as ``-af``, ``-l`` or ``-json``;
``-format``, ``-limit``/``-match``, ``-constraint``, ``-name``, owner and id arguments; ``-file FILE`` reads an
HTCondor history file (ads each closed by a ``***`` line) instead of asking the schedd."""

from __future__ import annotations

import sys

import classad
from bindings.cli.options import WORDS, CommandLine, Option, Reading, run_command, whole_number
from bindings.cli.q_tables import STATUS_LETTERS, run_time, short_time
from bindings.cli.schedd_session import run_reporting
from bindings.cli.status_format import (
    AutoformatOptions,
    attribute_list,
    autoformat,
    autoformat_options,
    custom_format,
    json_form,
    long_form,
    projected,
)

#: condor_history's headings (init_default_custom_format in src/condor_tools/history.cpp):
#: the print mask pads every heading to the left in its column's width, " ID" 7, OWNER 14,
#: SUBMITTED 11, RUN_TIME 12, ST 2, COMPLETED 11, then CMD
HEADING = " ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD"
USAGE = """usage: roost history [options] [owner | cluster | cluster.proc ...]

  -constraint EXPR    only jobs for which EXPR is true
  -limit N, -match N  at most N jobs, newest first
  -forwards           oldest first
  -file FILE          read this HTCondor history file, not the schedd's history
  -af[:jlhVr,tng] A.. the values of attributes or expressions (j: job id first)
  -format FMT EXPR    printf-style output (repeatable)
  -wide[:N]           accepted for condor_history's sake: no column is cut
  -l, -long           whole job ads
  -json               job ads as JSON (with -long too)
  -attributes A,B     with -long or -json: only these attributes
  -pool HOST:PORT     the pool whose schedd to ask
  -name NAME          the schedd of that name (as the collector knows it)
"""
COMMAND = CommandLine("roost history", USAGE, [
    Option("-limit", 1, aliases=("-match",)), Option("-constraint", 1), Option("-long", aliases=("-l",)),
    Option("-json"), Option("-pool", 1), Option("-autoformat", WORDS, aliases=("-af",), qualified=True),
    Option("-forwards"), Option("-file", 1), Option("-attributes", 1), Option("-format", 2),
    Option("-wide", qualified=True), Option("-name", 1),
])
#: the line that closes each ad in an HTCondor history file (``*** ProcId = 0 ClusterId = 12 ...``)
BANNER_PREFIX = "***"


def parse_arguments(argv: list[str]) -> dict:
    """The request of ``argv`` as a dict of constraint, match, display and its options.

    Raises:
        UsageError: an unknown option or a missing argument.
    """
    return request_of(COMMAND.read(argv))


def request_of(reading: Reading) -> dict:
    """The request a read command line makes; operands are job ids or owners."""
    request = {"constraints": [], "match": -1, "display": "table", "af": [], "af_options": AutoformatOptions(),
               "pool": reading.last("-pool"), "forwards": reading.given("-forwards"), "file": reading.last("-file"),
               "attributes": [], "formats": [], "name": reading.last("-name")}
    for given in reading.options:
        if given.name == "-limit":
            request["match"] = whole_number(given)
        elif given.name == "-constraint":
            request["constraints"].append(f"({given.value})")
        elif given.name in ("-long", "-json"):
            if request["display"] != "json":  # -json shows whole ads as -long does, in either order
                request["display"] = given.name[1:]
        elif given.name == "-attributes":
            request["attributes"].extend(attribute_list(given.value))
        elif given.name == "-autoformat":
            request["af_options"] = autoformat_options(given)
            request["af"].extend(given.values)
            request["display"] = "autoformat"
        elif given.name == "-format":
            request["formats"].append(given.values)
            request["display"] = "format"
    request["constraints"] += [_operand_test(arg) for arg in reading.operands]
    return request


def _operand_test(arg: str) -> str:
    """The constraint an operand stands for: a cluster, a job, or an owner (quoted as a ClassAd string)."""
    cluster, _, proc = arg.partition(".")
    if cluster.isdigit() and proc.isdigit():
        return f"(ClusterId == {cluster} && ProcId == {proc})"
    if cluster.isdigit() and not proc:
        return f"ClusterId == {cluster}"
    return f"Owner == {classad.quote(arg)}"


def table(ads: list) -> str:
    """condor_history's one line per job: the id ``%4d.%-3d``, OWNER in 14, SUBMITTED
    and COMPLETED as dates right in 11, RUN_TIME (RemoteWallClockTime, else RemoteUserCpu)
    right in 12, ST in 2, then the command and its arguments."""
    lines = [HEADING]
    for ad in ads:
        get = ad.get
        args = get("Args") or get("Arguments") or ""
        cmd = f"{get('Cmd', '') or ''} {args}".strip()
        finished = get("CompletionDate") or get("EnteredCurrentStatus")
        wall = get("RemoteWallClockTime")
        used = wall if isinstance(wall, (int, float)) else get("RemoteUserCpu", 0)
        lines.append(f"{_job_id(ad):<7} {str(get('Owner', '')):<14} {short_time(get('QDate')):>11} "
                     f"{run_time(used):>12} {STATUS_LETTERS.get(get('JobStatus'), ' '):<2} "
                     f"{short_time(finished):>11} {cmd}".rstrip())
    return "\n".join(lines) + "\n"


def _job_id(ad) -> str:
    """The job id as render_job_id writes it, ``%4d.%-3d``."""
    cluster, proc = ad.get("ClusterId"), ad.get("ProcId")
    if isinstance(cluster, int) and isinstance(proc, int):
        return f"{cluster:4d}.{proc:<3d}"
    return f"{cluster}.{proc}"


def file_ads(text: str, where: str) -> list:
    """The ads of an HTCondor history file in file order (oldest first): each ad's
    ``Name = value`` lines end at a ``***`` banner line.

    Raises:
        ValueError: an ad does not parse, naming the file and the ad's place in it.
    """
    ads, lines = [], []
    for line in text.splitlines():
        if not line.startswith(BANNER_PREFIX):
            lines.append(line)
            continue
        if any(part.strip() for part in lines):
            try:
                ads.append(classad.parseOne("\n".join(lines), classad.ParserType.Old))
            except Exception as exc:
                raise ValueError(f"{where}: ad {len(ads) + 1} does not parse: {exc}") from None
        lines = []
    return ads


def chosen_ads(ads: list, constraint: str, match: int, forwards: bool) -> list:
    """The ads of a history file that match ``constraint``, newest first (oldest first
    with ``forwards``), at most ``match`` of them (all when negative)."""
    test = classad.ExprTree(constraint)
    ordered = ads if forwards else list(reversed(ads))
    chosen = [ad for ad in ordered if test.eval(ad) is True]
    return chosen if match < 0 else chosen[:match]


def main(argv: list[str]) -> int:
    """Run ``roost history``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: run_reporting("roost history",
                                                                    lambda: _run(request_of(reading))))


def _run(request: dict) -> int:
    constraint = " && ".join(request["constraints"]) or "true"
    ads = _file_history(request, constraint) if request["file"] else _schedd_history(request, constraint)
    display = request["display"]
    if request["attributes"] and display in ("long", "json"):
        ads = projected(ads, request["attributes"])
    if display == "long":
        sys.stdout.write(long_form(ads))
    elif display == "json":
        sys.stdout.write(json_form(ads))
    elif display == "autoformat":
        sys.stdout.write(autoformat(ads, request["af"], request["af_options"]))
    elif display == "format":
        sys.stdout.write(custom_format(ads, request["formats"]))
    else:
        sys.stdout.write(table(ads))
    return 0


def _file_history(request: dict, constraint: str) -> list:
    with open(request["file"], encoding="utf-8", errors="replace") as stream:
        ads = file_ads(stream.read(), request["file"])
    return chosen_ads(ads, constraint, request["match"], request["forwards"])


def _schedd_history(request: dict, constraint: str) -> list:
    """The schedd's history, newest first; ``-forwards`` reads all of it and turns it
    round, as the schedd answers newest first only."""
    from bindings.cli.schedd_session import located_schedd

    schedd = located_schedd(request["pool"], request["name"])
    if not request["forwards"]:
        return list(schedd.history(constraint, [], request["match"]))
    ads = list(reversed(list(schedd.history(constraint, [], -1))))
    return ads if request["match"] < 0 else ads[:request["match"]]


def condor_history() -> int:
    """The ``condor_history`` console entry point."""
    return main(sys.argv[1:])
