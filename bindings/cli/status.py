"""``roost status`` (and ``condor_status``): query the pool's collector and print what
it holds, with condor_status's flags and output.

Query: ``-schedd``, ``-submitters``, ``-negotiator``, ``-master``, ``-collector``,
``-any`` (default: slots), ``-constraint EXPR`` (repeatable, all must hold), names of
machines or slots, ``-pool HOST:PORT``. Display: the default table with its totals,
``-compact``, ``-total``, ``-l``/``-long``, ``-json``, ``-af[:lhVr,tng] ATTR...``,
``-format FMT ATTR``, ``-wide``.
"""

from __future__ import annotations

import sys
import time

from attrs import define, field

from bindings.cli.status_format import (
    AutoformatOptions,
    FormatError,
    chosen_display,
    compile_expression,
    plain_value,
    read_autoformat,
)
from bindings.cli.status_tables import (
    JOB_TOTALS,
    attribute,
    compact_table,
    daemon_table,
    job_totals,
    slot_table,
    slot_totals,
)
from bindings.enums import AdType

QUERY_FLAGS = {
    "-schedd": AdType.Schedd, "-submitters": AdType.Submitter, "-submitter": AdType.Submitter,
    "-negotiator": AdType.Negotiator, "-master": AdType.Master, "-collector": AdType.Collector,
    "-any": AdType.Any, "-startd": AdType.StartDaemon, "-generic": AdType.Generic,
}
DISPLAY_FLAGS = {"-l": "long", "-long": "long", "-json": "json", "-compact": "compact", "-total": "total",
                 "-totals": "total"}
USAGE = __doc__.split("\n\n", 1)[1]


class UsageError(ValueError):
    """The command line is not one roost status understands."""


@define
class StatusRequest:
    """What a ``roost status`` command line asks for; mutable while the arguments are read."""

    ad_type: AdType = AdType.Startd
    constraints: list[str] = field(factory=list)
    names: list[str] = field(factory=list)
    display: str = "table"
    autoformat: list[str] = field(factory=list)
    autoformat_options: AutoformatOptions = AutoformatOptions()
    formats: list[tuple[str, str]] = field(factory=list)
    pool: str | None = None
    wide: bool = False
    help: bool = False

    def constraint(self) -> str:
        """All the constraints (and the names asked for) as one expression."""
        parts = [f"({text})" for text in self.constraints]
        if self.names:
            parts.append("(" + " || ".join(_name_test(name) for name in self.names) + ")")
        return " && ".join(parts) or "true"


def _name_test(name: str) -> str:
    quoted = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"Name == {quoted} || Machine == {quoted} || regexp(\"@\" + {quoted} + \"$\", Name)"


def parse_arguments(argv: list[str]) -> StatusRequest:
    """The request of command line ``argv``.

    Raises:
        UsageError: an unknown option, or an option missing its argument.
    """
    request = StatusRequest()
    args = list(argv)
    index = 0

    def value(option: str) -> str:
        nonlocal index
        if index + 1 >= len(args):
            raise UsageError(f"{option} needs an argument")
        index += 1
        return args[index]

    while index < len(args):
        arg = args[index]
        lower = arg.lower() if arg.startswith("-") else arg
        if lower.startswith("--"):
            lower = lower[1:]
        if lower in ("-h", "-help"):
            request.help = True
        elif lower in QUERY_FLAGS:
            request.ad_type = QUERY_FLAGS[lower]
        elif lower in DISPLAY_FLAGS:
            request.display = DISPLAY_FLAGS[lower]
        elif lower in ("-constraint", "-const"):
            request.constraints.append(value(arg))
        elif lower == "-pool":
            request.pool = value(arg)
        elif lower == "-wide":
            request.wide = True
        elif lower == "-format":
            fmt = value(arg)
            request.formats.append((fmt, value(arg)))
            request.display = "format"
        elif lower.split(":", 1)[0] in ("-af", "-autoformat"):
            try:
                request.autoformat_options, attributes, index = read_autoformat(args, index)
            except FormatError as exc:
                raise UsageError(str(exc)) from None
            request.autoformat.extend(attributes)
            request.display = "autoformat"
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg}; run `roost status -help` for the options")
        else:
            request.names.append(arg)
        index += 1
    return request


def render(request: StatusRequest, ads: list, now: float) -> str:
    """The text ``roost status`` prints for ``ads``.

    Raises:
        FormatError: an ``-af`` or ``-format`` expression does not parse.
    """
    chosen = chosen_display(request, ads)
    if chosen is not None:
        return chosen
    my_type = request.ad_type.collector_type
    if my_type == "Machine":
        if request.display == "total":
            return slot_totals(ads) if ads else ""
        if request.display == "compact":
            return compact_table(ads, now, request.wide)
        return slot_table(ads, now, request.wide)
    if request.display == "total":
        return job_totals(ads, JOB_TOTALS[my_type]) if my_type in JOB_TOTALS and ads else ""
    return daemon_table(my_type, ads, now, request.wide)


def check_expressions(request: StatusRequest) -> None:
    """Parse every expression of the command line before asking the pool anything.

    Raises:
        FormatError: an ``-af``, ``-format`` or ``-constraint`` expression does not parse.
    """
    for text in request.autoformat:
        compile_expression(text, "-af")
    for _, text in request.formats:
        compile_expression(text, "-format")
    for text in request.constraints:
        compile_expression(text, "-constraint")


def sort_key(ad) -> tuple:
    """Rows in machine, then name order, as condor_status sorts them."""
    return (plain_value(attribute(ad, "Machine")), plain_value(attribute(ad, "Name")))


def main(argv: list[str]) -> int:
    """Run ``roost status``; 0 on success, 1 on an error it explains in one line."""
    from bindings.cli.schedd_session import run_reporting
    from bindings.collector import Collector

    try:
        request = parse_arguments(argv)
    except UsageError as exc:
        print(f"roost status: {exc}", file=sys.stderr)
        return 1
    if request.help:
        print("usage: roost status [options] [name ...]\n\n" + USAGE)
        return 0
    def work() -> int:
        check_expressions(request)
        ads = Collector(request.pool).query(request.ad_type, request.constraint())
        ads.sort(key=sort_key)
        sys.stdout.write(render(request, ads, time.time()))
        return 0

    return run_reporting("roost status", work, daemon="collector", forbidden_hint="your token does not allow this")


def condor_status() -> int:
    """The ``condor_status`` console entry point."""
    return main(sys.argv[1:])
