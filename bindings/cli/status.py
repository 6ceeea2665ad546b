"""``roost status`` (and ``condor_status``): query the pool's collector and print what
it holds, with condor_status's flags and output.

Query: ``-schedd``, ``-submitters``, ``-negotiator``, ``-master``, ``-collector``,
``-any`` (default: slots), ``-avail`` (slots that can run a job), ``-claimed`` or ``-run``
(claimed slots, with who runs there), ``-constraint EXPR`` (repeatable, all must hold),
names of machines or slots, ``-limit N`` (at most N ads), ``-pool HOST:PORT``. Display:
the default table with its totals, ``-sort EXPR`` (repeatable; the default order is
Machine, then Name), ``-compact``, ``-total``, ``-l``/``-long``, ``-json``, ``-af[:jlhVr,tng] ATTR...``,
``-format FMT ATTR``, ``-wide``, ``-gpus`` (slots with GPUs only; its table is one
line per card: memory and cores taken and free, shares and the jobs on it).
``-direct NAME`` (condor_status: ask that daemon, not the collector) is refused with
the reason: no Roost daemon answers for its own ad yet.
"""

from __future__ import annotations

import sys
import time

from attrs import define, field

from bindings.cli.options import WORDS, CommandLine, Given, Option, Reading, run_command, whole_number
from bindings.cli.options import UsageError as UsageError  # what parse_arguments raises
from bindings.cli.status_compact import compact_table
from bindings.cli.status_format import (
    AutoformatOptions,
    autoformat_options,
    chosen_display,
    compile_expression,
)
from bindings.cli.status_gpus import GPU_SLOTS, gpu_table
from bindings.cli.status_modes import claimed_table, mode_constraint, sort_ads
from bindings.cli.status_tables import (
    JOB_TOTALS,
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
#: condor_status's order without -sort: by machine, then slot name (status.cpp)
DEFAULT_SORT = ["Machine", "Name"]


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
    gpus: bool = False
    mode: str | None = None
    sort: list[str] = field(factory=list)
    limit: int = -1
    direct: str | None = None

    def constraint(self) -> str:
        """All the constraints (and the names asked for, and the slot mode's) as one expression."""
        parts = [f"({text})" for text in self.constraints]
        if self.ad_type is AdType.Startd:
            implied = mode_constraint(self.mode, self.display == "compact")
            if implied:
                parts.append(f"({implied})")
        if self.gpus:
            parts.append(f"({GPU_SLOTS})")
        if self.names:
            parts.append("(" + " || ".join(_name_test(name) for name in self.names) + ")")
        return " && ".join(parts) or "true"


def _name_test(name: str) -> str:
    quoted = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return f"Name == {quoted} || Machine == {quoted} || regexp(\"@\" + {quoted} + \"$\", Name)"


COMMAND = CommandLine("roost status", "usage: roost status [options] [name ...]\n\n" + USAGE, [
    *(Option(flag) for flag in QUERY_FLAGS), *(Option(flag) for flag in DISPLAY_FLAGS),
    Option("-constraint", 1), Option("-pool", 1), Option("-wide"), Option("-gpus"), Option("-format", 2),
    Option("-autoformat", WORDS, aliases=("-af",), qualified=True),
    Option("-avail"), Option("-claimed"), Option("-run"), Option("-sort", 1), Option("-limit", 1),
    Option("-direct", 1, needs="the name of the daemon to ask"),
])
#: why -direct is refused (condor_status asks the named daemon itself for its ad)
DIRECT_REFUSED = ("-direct {name}: Roost's daemons do not answer for their own ads; the collector holds "
                  "what they advertise (drop -direct, and name the machine or slot to see only its ads)")


def parse_arguments(argv: list[str]) -> StatusRequest:
    """The request of command line ``argv``.

    Raises:
        UsageError: an unknown option, or an option missing its argument.
    """
    return request_of(COMMAND.read(argv))


def request_of(reading: Reading) -> StatusRequest:
    """The request a read command line makes."""
    request = StatusRequest(names=list(reading.operands))
    for given in reading.options:
        _take(request, given)
    return request


def _take(request: StatusRequest, given: Given) -> None:
    """Fold one option into ``request``."""
    name = given.name
    if name in QUERY_FLAGS:
        request.ad_type = QUERY_FLAGS[name]
    elif name in DISPLAY_FLAGS:
        request.display = DISPLAY_FLAGS[name]
    elif name == "-constraint":
        request.constraints.append(given.value)
    elif name == "-pool":
        request.pool = given.value
    elif name == "-wide":
        request.wide = True
    elif name == "-gpus":
        request.gpus = True
    elif name in ("-avail", "-claimed", "-run"):
        request.mode = "avail" if name == "-avail" else "claimed"
    elif name == "-sort":
        request.sort.append(given.value)
    elif name == "-limit":
        request.limit = whole_number(given)
    elif name == "-direct":
        request.direct = given.value
    elif name == "-format":
        request.formats.append(given.values)
        request.display = "format"
    else:
        request.autoformat_options = autoformat_options(given)
        request.autoformat.extend(given.values)
        request.display = "autoformat"


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
            return slot_totals(ads, request.wide) if ads else ""
        if request.display == "compact":
            return compact_table(ads, now, request.wide)
        if request.gpus:
            return gpu_table(ads, request.wide)
        if request.mode == "claimed":
            return claimed_table(ads, now, request.wide)
        return slot_table(ads, now, request.wide)
    if request.display == "total":
        return job_totals(my_type, ads, request.wide) if my_type in JOB_TOTALS and ads else ""
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
    for text in request.sort:
        compile_expression(text, "-sort")


def ordered(request: StatusRequest, ads: list) -> list:
    """The ads the collector answered cut to ``-limit`` (as the collector would cut them)
    and sorted by ``-sort``, else by Machine, then Name."""
    if request.limit >= 0:
        ads = ads[:request.limit]
    return sort_ads(ads, request.sort or DEFAULT_SORT)


def main(argv: list[str]) -> int:
    """Run ``roost status``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(request_of(reading)))


def _run(request: StatusRequest) -> int:
    from bindings.cli.schedd_session import run_reporting
    from bindings.collector import Collector

    def work() -> int:
        if request.direct is not None:
            print(f"roost status: {DIRECT_REFUSED.format(name=request.direct)}", file=sys.stderr)
            return 1
        check_expressions(request)
        ads = ordered(request, Collector(request.pool).query(request.ad_type, request.constraint()))
        sys.stdout.write(render(request, ads, time.time()))
        return 0

    return run_reporting("roost status", work, daemon="collector", forbidden_hint="your token does not allow this")


def condor_status() -> int:
    """The ``condor_status`` console entry point."""
    return main(sys.argv[1:])
