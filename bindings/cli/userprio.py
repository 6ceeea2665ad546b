"""``roost userprio`` (and ``condor_userprio``): show users' priorities and usage, or
change them, with condor_userprio's flags and table. Rows are named as the negotiator
charges them: ``user@uid_domain``, ``group.user@uid_domain``, or a group's name.

Display: ``[NAME...]`` only those submitters (``user@domain``, or a bare user name), active
or not; the default table of active users (in use now, or used within a day),
``-allusers`` for everyone the negotiator knows, ``-all`` for the wide table with
real priorities and usage times, ``-l`` for every attribute of each user and the
concurrency limits' use (the negotiator ad's ``ConcurrencyLimit_<name>``), ``-quotas`` for the accounting groups' quotas,
limits, surplus weights, use and surplus, ``-json`` for the rows as JSON. Edit (needs an
ADMINISTRATOR token): ``-setfactor USER FACTOR``, ``-resetusage USER``. ``-pool
HOST:PORT`` names the pool's collector.
"""

from __future__ import annotations

import json
import sys
import time

from attrs import define

from bindings.cli.options import CommandLine, Given, Option, Reading, UsageError, run_command

ACTIVE_SECONDS = 86400
USAGE = __doc__.split("\n\n", 1)[1]
RULE_CHAR = "-"


@define
class UserprioRequest:
    """What a ``roost userprio`` command line asks for; mutable while the arguments are read."""

    display: str = "table"
    quotas: bool = False
    long: bool = False
    all_users: bool = False
    set_factor: tuple[str, float] | None = None
    reset_usage: str | None = None
    pool: str | None = None
    full_names: tuple[str, ...] = ()
    short_names: tuple[str, ...] = ()

    def names_given(self) -> bool:
        return bool(self.full_names or self.short_names)

    def wants(self, row: dict) -> bool:
        """Whether a row is one of the submitters named on the command line (all when none
        is): a name with ``@`` matches Name exactly, one without matches the part of Name
        before the ``@`` (user_prio.cpp main, its StringListMember(splitusername(Name)[0], ...))."""
        if not self.names_given():
            return True
        name = str(row.get("Name", ""))
        return name in self.full_names or name.rsplit("@", 1)[0] in self.short_names


COMMAND = CommandLine("roost userprio", "usage: roost userprio [options]\n\n" + USAGE, [
    Option("-all"), Option("-allusers"), Option("-l"), Option("-long"), Option("-json"), Option("-quotas"), Option("-pool", 1, needs="HOST:PORT"),
    Option("-setfactor", 2, needs="USER FACTOR"), Option("-resetusage", 1, needs="USER"),
])


def parse_arguments(argv: list[str]) -> UserprioRequest:
    """The request of ``argv``; flags take one or two dashes, as condor_userprio's.

    Raises:
        UsageError: an unknown flag, or a flag without its values.
    """
    return request_of(COMMAND.read(argv))


def request_of(reading: Reading) -> UserprioRequest:
    """The request a read command line makes; operands name submitters to show (user_prio.cpp
    main: ``user@domain`` exactly or ``<none>``, else a bare user name).

    Raises:
        UsageError: an operand that is no submitter name, or a factor that is not a number.
    """
    for operand in reading.operands:
        if not (operand[:1].isalpha() or operand == "<none>"):
            raise UsageError(f"{operand!r} is not a submitter name (user@domain, or a user name)")
    request = UserprioRequest(
        full_names=tuple(name for name in reading.operands if "@" in name or name == "<none>"),
        short_names=tuple(name for name in reading.operands if "@" not in name and name != "<none>"))
    for given in reading.options:
        if given.name == "-all":
            request.display = "all"
        elif given.name == "-allusers":
            request.all_users = True
        elif given.name in ("-l", "-long"):
            request.long = True
        elif given.name == "-json":
            request.display = "json"
        elif given.name == "-quotas":
            request.quotas = True
        elif given.name == "-pool":
            request.pool = given.value
        elif given.name == "-setfactor":
            request.set_factor = (given.values[0], _factor(given))
        else:
            request.reset_usage = given.value
    return request


def _factor(given: Given) -> float:
    """The factor of ``-setfactor USER FACTOR``: user_prio.cpp wants the submitter's full
    name (user@uid.domain) and a factor of at least 1.

    Raises:
        UsageError: a name without ``@``, or a factor that is not a number of at least 1.
    """
    user, text = given.values
    if "@" not in user:
        raise UsageError(f"-setfactor {user}: give the submitter's full name (user@uid.domain)")
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not factor >= 1:
        raise UsageError(f"-setfactor {user} {text}: the factor must be a number of at least 1")
    return factor


# --- rendering -------------------------------------------------------------------

def is_active(row: dict, now: float) -> bool:
    """In use now, or used within the last day (what condor_userprio lists by default)."""
    last = row.get("LastUsageTime")
    return bool(row.get("ResourcesUsed")) or (isinstance(last, (int, float)) and now - last <= ACTIVE_SECONDS)


def since(row: dict, now: float) -> str:
    """Time since the last usage as ``d+hh:mm``, ``<now`` while in use."""
    if row.get("ResourcesUsed"):
        return "<now"
    last = row.get("LastUsageTime")
    if not isinstance(last, (int, float)):
        return "N/A"
    minutes = max(int(now - last) // 60, 0)
    return f"{minutes // 1440}+{minutes // 60 % 24:02d}:{minutes % 60:02d}"


def when(value) -> str:
    """A Unix time as ``m/d hh:mm`` local time, or N/A."""
    if not isinstance(value, (int, float)):
        return "N/A"
    return time.strftime("%-m/%-d %H:%M", time.localtime(value))


def hours(row: dict) -> float:
    return (row.get("WeightedAccumulatedUsage", row.get("AccumulatedUsage")) or 0.0) / 3600.0


def _table(header: list[tuple[str, str]], lines: list[list[str]], widths: list[int], footer: list[str]) -> str:
    """A fixed-width table: two header lines, a rule, the lines, a rule, the totals (the ``-quotas`` table)."""
    def row(cells):
        first, *rest = cells
        return " ".join([first.ljust(widths[0]), *(c.rjust(w) for c, w in zip(rest, widths[1:]))]).rstrip()

    rule = " ".join(RULE_CHAR * w for w in widths)
    out = [row([h[0] for h in header]), row([h[1] for h in header]), rule]
    out += [row(cells) for cells in lines]
    out += [rule, row(footer)]
    return "\n".join(out) + "\n"


def _effective(row: dict) -> float:
    if isinstance(row.get("EffectivePriority"), (int, float)):
        return row["EffectivePriority"]
    return (row.get("Priority") or 0) * (row.get("PriorityFactor") or 0)


def _number(value) -> str:
    value = value or 0
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def group_rows(groups: list[dict], rows: list[dict]) -> list[dict]:
    """The last cycle's ``groups`` with ``in_use`` from the group's own priority row when
    the accountant has one (it is newer), and ``surplus``: what is in use above the quota."""
    used = {r["Name"].lower(): r.get("ResourcesUsed") for r in rows if r.get("IsAccountingGroup")}
    out = []
    for group in groups:
        in_use = used.get(str(group.get("name", "")).lower())
        in_use = in_use if isinstance(in_use, (int, float)) else group.get("in_use") or 0
        out.append({**group, "in_use": in_use, "surplus": max(in_use - (group.get("quota") or 0), 0)})
    return out


def quota_table(groups: list[dict], last_update) -> str:
    """The ``-quotas`` table (condor_userprio's columns, and Roost's limit and surplus weight):
    effective and configured quota, limit, surplus weight, whether surplus is accepted, in use, surplus."""
    if not groups:
        return "No accounting groups with a quota (GROUP_NAMES and GROUP_QUOTA_<group>) in the last cycle.\n"
    header = [("", "Group"), ("Effective", "Quota"), ("Config", "Quota"), ("", "Limit"), ("Surplus", "Weight"),
              ("Use", "Surplus"), ("In", "Use"), ("", "Surplus")]
    widths = [max([24, *(len(str(g["name"])) for g in groups)]), 10, 8, 8, 8, 8, 8, 8]
    lines = [[str(g["name"]), _cores(g.get("quota")), _cores(g.get("config_quota")), _cores(g.get("limit")),
              _cores(g.get("surplus_weight")), "yes" if g.get("accept_surplus") else "no", _number(g["in_use"]),
              _number(g["surplus"])] for g in groups]
    footer = [f"Number of groups: {len(groups)}", "", "", "", "", "", _number(sum(g["in_use"] for g in groups)),
              _number(sum(g["surplus"] for g in groups))]
    return f"Last Priority Update: {when(last_update)}\n" + _table(header, lines, widths, footer)


def _cores(value) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def render_quotas(request: UserprioRequest, groups: list[dict], rows: list[dict], last_update=None) -> str:
    """What ``roost userprio -quotas`` prints from the last cycle's ``groups`` and the priority ``rows``."""
    shown = group_rows(groups, rows)
    if request.display == "json":
        return json.dumps(shown, indent=2) + "\n"
    return quota_table(shown, last_update)


def shown_rows(request: UserprioRequest, rows: list[dict], now: float) -> list[dict]:
    """The rows a request shows, by effective priority: the named submitters whatever their
    last usage, else the active ones (everyone with ``-allusers``)."""
    everyone = request.all_users or request.names_given()
    shown = [r for r in rows if request.wants(r) and (everyone or is_active(r, now))]
    return sorted(shown, key=lambda r: (_effective(r), r["Name"]))


def render(request: UserprioRequest, rows: list[dict], now: float, last_update=None) -> str:
    """What ``roost userprio`` prints for ``rows`` (the negotiator's answer) at ``now``:
    condor_userprio's table (:mod:`bindings.cli.userprio_table`), its default columns or
    those of ``-all``; the footer reports the oldest last usage shown, a day ago unless
    ``-allusers`` or names show everyone."""
    from bindings.cli.userprio_table import ALL_COLUMNS, DEFAULT_COLUMNS, priority_table

    shown = shown_rows(request, rows, now)
    if request.display == "json":
        return json.dumps(shown, indent=2) + "\n"
    columns = ALL_COLUMNS if request.display == "all" else DEFAULT_COLUMNS
    everyone = request.all_users or request.names_given()
    return priority_table(shown, columns, last_update, now, None if everyone else now - ACTIVE_SECONDS)


def concurrency_limits(negotiator_ad) -> dict[str, float]:
    """The ``ConcurrencyLimit_<name>`` attributes of the negotiator's ad: each limit's use."""
    found = {}
    for name in negotiator_ad.keys():
        value = negotiator_ad.evaluate(name)
        if name.lower().startswith("concurrencylimit_") and type(value) in (int, float):
            found["ConcurrencyLimit_" + name[len("ConcurrencyLimit_"):]] = float(value)
    return dict(sorted(found.items()))


def render_long(request: UserprioRequest, rows: list[dict], limits: dict[str, float], now: float,
                last_update=None) -> str:
    """``roost userprio -l``: every attribute of each shown user or group, one ``Name = value``
    a line, then each concurrency limit's use (as condor_userprio -l shows the negotiator's)."""
    shown = shown_rows(request, rows, now)
    if request.display == "json":
        return json.dumps({"priorities": shown, "concurrency_limits": limits}, indent=2) + "\n"
    blocks = [f"LastUpdate = {_number(last_update)}"]
    for row in shown:
        blocks.append("\n".join(f"{key} = {json.dumps(value)}" for key, value in row.items() if value is not None))
    blocks.append("\n".join(f"{name} = {value:f}" for name, value in limits.items())
                  or "No concurrency limits in use or configured.")
    return "\n\n".join(blocks) + "\n"


# --- running ------------------------------------------------------------------------

def run(request: UserprioRequest) -> str:
    """Carry out ``request`` against the pool's negotiator; what to print."""
    from bindings.negotiator import Negotiator

    negotiator = Negotiator(request.pool)
    if request.set_factor is not None:
        user, factor = request.set_factor
        negotiator.setFactor(user, factor)
        return f"The priority factor of {user} was set to {factor:g}\n"
    if request.reset_usage is not None:
        negotiator.resetUsage(request.reset_usage)
        return f"The accumulated usage of {request.reset_usage} was reset\n"
    rows, last_update = negotiator.priority_report()
    if request.quotas:
        groups = negotiator.last_cycle().get("groups")
        return render_quotas(request, groups if isinstance(groups, list) else [], rows, last_update)
    if request.long:
        from bindings.collector import Collector
        from bindings.enums import DaemonType

        limits = concurrency_limits(Collector(request.pool).locate(DaemonType.Negotiator))
        return render_long(request, rows, limits, time.time(), last_update)
    return render(request, rows, time.time(), last_update)


def main(argv: list[str]) -> int:
    """Run ``roost userprio``; 0 on success, 1 on an error it explains in one line, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(request_of(reading)))


def _run(request: UserprioRequest) -> int:
    from bindings.cli.schedd_session import run_reporting

    def work() -> int:
        sys.stdout.write(run(request))
        return 0

    return run_reporting("roost userprio", work, daemon="negotiator",
                         unreachable_hint="is the pool up, with NEGOTIATOR in its DAEMON_LIST?",
                         forbidden_hint="changing priorities needs an ADMINISTRATOR token")


def condor_userprio() -> int:
    """The ``condor_userprio`` console entry point."""
    return main(sys.argv[1:])
