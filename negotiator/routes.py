"""The negotiator's HTTP handlers: user priorities for ``roost userprio`` and the
bindings, the last cycle's waiting requests and why (for ``roost q -better-analyze``),
changing factors and usage (ADMINISTRATOR), and RESCHEDULE (DAEMON)."""

from __future__ import annotations

from collections.abc import Callable

from daemoncore.wire import negotiator_routes as api
from daemoncore.wire.errors import BadRequest
from daemoncore.wire.request_body import reject_unknown, take
from daemoncore.wire.server import ApiRequest, JsonReply
from negotiator.accountant import Accountant, PriorityRecord
from negotiator.errors import AccountantError
from negotiator.last_cycle import LastCycle, to_wire

MAX_NAME_LENGTH = 256


def priority_row(record: PriorityRecord) -> dict:
    """One customer as the PRIORITIES route answers it (HTCondor's accountant attribute
    names; ``Priority`` is the real priority, usage in core-seconds)."""
    return {
        "Name": record.name, "Priority": record.real_priority, "EffectivePriority": record.effective_priority,
        "PriorityFactor": record.factor, "ResourcesUsed": record.resources_in_use,
        "WeightedResourcesUsed": record.resources_in_use, "AccumulatedUsage": record.accumulated_usage,
        "WeightedAccumulatedUsage": record.accumulated_usage, "BeginUsageTime": record.begin_usage_time,
        "LastUsageTime": record.last_usage_time, "IsAccountingGroup": record.is_group,
        "AccountingGroup": record.accounting_group, "Floor": record.floor, "Ceiling": record.ceiling,
    }


class NegotiatorRoutes:
    """Binds the negotiator's routes to its accountant and its reschedule hook."""

    def __init__(self, accountant: Accountant, reschedule: Callable[[], float],
                 last_cycle: Callable[[], LastCycle | None] = lambda: None) -> None:
        self._accountant = accountant
        self._reschedule = reschedule
        self._last_cycle = last_cycle

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        return {
            api.PRIORITIES: self.priorities,
            api.SET_FACTOR: self.set_factor,
            api.RESET_USAGE: self.reset_usage,
            api.RESCHEDULE: self.reschedule,
            api.LAST_CYCLE: self.last_cycle,
        }

    def priorities(self, _request: ApiRequest) -> JsonReply:
        """Every customer, best effective priority first."""
        rows = [priority_row(record) for record in self._accountant.priorities()]
        return JsonReply({"priorities": rows, "last_update": self._accountant.database.get_last_update()})

    def last_cycle(self, request: ApiRequest) -> JsonReply:
        """The last cycle's waiting requests and why each waits, narrowed by the query's
        ``submitter`` and ``job`` (``cluster.proc``)."""
        submitter = _query_value(request, "submitter", _customer_name)
        job = _query_value(request, "job", _job_id)
        return JsonReply(to_wire(self._last_cycle(), submitter, job))

    def set_factor(self, request: ApiRequest) -> JsonReply:
        """Set one customer's priority factor (1 or more)."""
        body = request.json()
        reject_unknown(body, {"name", "factor"})
        name = _customer(body)
        factor = take(body, "factor", float)
        try:
            self._accountant.set_factor(name, float(factor))
        except AccountantError as exc:
            raise BadRequest(f"$.factor: {exc}") from None
        return JsonReply({"ok": True})

    def reset_usage(self, request: ApiRequest) -> JsonReply:
        """Forget one customer's usage."""
        body = request.json()
        reject_unknown(body, {"name"})
        self._accountant.reset_usage(_customer(body))
        return JsonReply({"ok": True})

    def reschedule(self, _request: ApiRequest) -> JsonReply:
        """Ask for a negotiation cycle soon."""
        return JsonReply({"started": True, "in_seconds": self._reschedule()})


def _customer(body: dict) -> str:
    return _customer_name(take(body, "name", str), "$.name")


def _customer_name(text: str, where: str = "submitter") -> str:
    name = text.strip()
    if not name or len(name) > MAX_NAME_LENGTH or any(c.isspace() for c in name):
        raise BadRequest(f"{where}: expected a user (user@domain) or group name of at most "
                         f"{MAX_NAME_LENGTH} characters without spaces, got {name[:MAX_NAME_LENGTH + 1]!r}")
    return name


def _job_id(text: str, where: str = "job") -> str:
    cluster, dot, proc = text.strip().partition(".")
    if not (dot and cluster.isdigit() and proc.isdigit()) or len(text) > 40:
        raise BadRequest(f"{where}: expected a job id such as 3.0 (cluster.proc), got {text[:40]!r}")
    return f"{int(cluster)}.{int(proc)}"


def _query_value(request: ApiRequest, name: str, check: Callable[[str, str], str]) -> str | None:
    """The one value of query argument ``name``, checked, or None when it is absent.

    Raises:
        BadRequest: it is given more than once, or ``check`` refuses it.
    """
    values = request.query.get(name) or []
    if len(values) > 1:
        raise BadRequest(f"{name}: give it at most once, got {len(values)} values")
    return check(values[0], name) if values else None
