"""``roost history`` (condor_history): jobs that left the queue, newest first, one
line each or as ``-af``, ``-l`` or ``-json``; ``-limit``, ``-constraint``, owner and
id arguments."""

from __future__ import annotations

import os
import sys

from bindings.cli.q_tables import STATUS_LETTERS, run_time, short_time
from bindings.cli.schedd_session import UsageError, normalized, option_value, run_reporting
from bindings.cli.status_format import AutoformatOptions, FormatError, autoformat, json_form, long_form, read_autoformat

HEADING = " ID     OWNER          SUBMITTED   RUN_TIME     ST  COMPLETED   CMD"


def parse_arguments(argv: list[str]) -> dict:
    """The request of ``argv`` as a dict of constraint, match, display and its options.

    Raises:
        UsageError: an unknown option or a missing argument.
    """
    request = {"constraints": [], "match": -1, "display": "table", "af": [], "af_options": AutoformatOptions(),
               "pool": None}
    args, index = list(argv), 0
    while index < len(args):
        arg = args[index]
        option = normalized(arg) if arg.startswith("-") else None
        if option in ("-limit", "-match"):
            text, index = option_value(args, index, arg)
            if not text.isdigit():
                raise UsageError(f"{arg} needs a whole number, got {text!r}")
            request["match"] = int(text)
        elif option in ("-constraint", "-const"):
            text, index = option_value(args, index, arg)
            request["constraints"].append(f"({text})")
        elif option in ("-l", "-long"):
            request["display"] = "long"
        elif option == "-json":
            request["display"] = "json"
        elif option == "-pool":
            request["pool"], index = option_value(args, index, arg)
        elif option is not None and option.split(":", 1)[0] in ("-af", "-autoformat"):
            try:
                request["af_options"], attributes, index = read_autoformat(args, index)
            except FormatError as exc:
                raise UsageError(str(exc)) from None
            request["af"].extend(attributes)
            request["display"] = "autoformat"
        elif option is not None:
            raise UsageError(f"unknown option {arg}; options: -limit N, -constraint EXPR, -af ATTR..., -l, -json")
        else:
            cluster, _, proc = arg.partition(".")
            if cluster.isdigit() and proc.isdigit():
                request["constraints"].append(f"(ClusterId == {cluster} && ProcId == {proc})")
            elif cluster.isdigit() and not proc:
                request["constraints"].append(f"ClusterId == {cluster}")
            else:
                request["constraints"].append(f'Owner == "{arg}"')
        index += 1
    return request


def table(ads: list) -> str:
    """condor_history's one line per job."""
    lines = [HEADING]
    for ad in ads:
        get = ad.get
        cmd = f"{os.path.basename(str(get('Cmd', '')))} {get('Args', '') or ''}".strip()
        finished = get("CompletionDate") or get("EnteredCurrentStatus")
        lines.append(f"{get('ClusterId', '?'):>4}.{get('ProcId', '?'):<3} {str(get('Owner', '')):<14} "
                     f"{short_time(get('QDate')):>11} {run_time(get('RemoteWallClockTime', 0)):>12} "
                     f"{STATUS_LETTERS.get(get('JobStatus'), '?'):<3} {short_time(finished):>11} {cmd}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    return run_reporting("roost history", lambda: _run(argv))


def _run(argv: list[str]) -> int:
    from bindings.schedd import Schedd

    request = parse_arguments(argv)
    schedd = Schedd(pool=request["pool"])
    ads = list(schedd.history(" && ".join(request["constraints"]) or "true", [], request["match"]))
    display = request["display"]
    if display == "long":
        sys.stdout.write(long_form(ads))
    elif display == "json":
        sys.stdout.write(json_form(ads))
    elif display == "autoformat":
        sys.stdout.write(autoformat(ads, request["af"], request["af_options"]))
    else:
        sys.stdout.write(table(ads))
    return 0


def condor_history() -> int:
    """The ``condor_history`` console entry point."""
    return main(sys.argv[1:])
