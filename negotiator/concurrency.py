"""Concurrency limits: pool-wide counters a job takes a piece of while it runs.

A job's ``ConcurrencyLimits`` is ``"a,b.x,c:3"`` (names case-insensitive, at most one
dot, ``:N`` the weight, default 1), or an expression that gives such a string when
evaluated against the slot (``concurrency_limits_expr``). A limit's maximum is the knob
``<NAME>_LIMIT`` (``A.B_LIMIT`` for ``a.b``), else ``CONCURRENCY_LIMIT_DEFAULT_<A>`` for a
name in set ``a``, else ``CONCURRENCY_LIMIT_DEFAULT``, as in HTCondor. Use is counted
from the claimed slots' ``ConcurrencyLimits`` plus the matches of the running cycle; a
match that would go past a maximum is not made, and the request's reason names the
limit. Pure logic: :class:`ConcurrencyLedger` wraps one cycle's matching.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import attrs
from attrs import frozen

from classad import ClassAd
from classad.values import UNDEFINED
from daemoncore.config import Config, ConfigError
from daemoncore.wire.resource_request import ResourceRequest
from jobmodel.concurrency_limits import NAME, LimitSyntaxError, parse_limits
from negotiator.matchmaking import Prefilter, SlotMatch, SlotPool, match_request

#: HTCondor's ``CONCURRENCY_LIMIT_DEFAULT`` when unset.
DEFAULT_MAXIMUM = 2308032.0
#: States of a slot whose claim's job takes its limits.
_CLAIMED_STATES = ("claimed", "preempting")


def ad_attribute_name(limit: str) -> str:
    """The negotiator ad's attribute for ``limit``: ``ConcurrencyLimit_<name>``, a dot
    written as an underscore (as HTCondor's negotiator ad does)."""
    return "ConcurrencyLimit_" + limit.replace(".", "_")


@frozen
class ConcurrencySettings:
    """The pool's limit maxima, lower-cased names: ``limits`` from ``<NAME>_LIMIT``,
    ``set_defaults`` from ``CONCURRENCY_LIMIT_DEFAULT_<SET>``."""

    limits: Mapping[str, float] = attrs.field(factory=dict)
    set_defaults: Mapping[str, float] = attrs.field(factory=dict)
    default: float = DEFAULT_MAXIMUM

    def maximum(self, limit: str) -> float:
        """The maximum use of ``limit`` (a lower-cased name)."""
        if limit in self.limits:
            return self.limits[limit]
        if "." in limit and limit.split(".", 1)[0] in self.set_defaults:
            return self.set_defaults[limit.split(".", 1)[0]]
        return self.default

    @classmethod
    def from_config(cls, config: Config) -> ConcurrencySettings:
        """The maxima in ``config``: every knob named ``*_LIMIT`` whose value is a number
        (other knobs end in ``_LIMIT`` too; those are not limits), and the defaults.

        Raises:
            ConfigError: ``CONCURRENCY_LIMIT_DEFAULT`` or a ``CONCURRENCY_LIMIT_DEFAULT_<SET>``
                is not a number of 0 or more, naming the knob.
        """
        limits, sets = {}, {}
        for name in config.names():
            upper = name.upper()
            if upper.startswith("CONCURRENCY_LIMIT_DEFAULT_"):
                sets[upper[len("CONCURRENCY_LIMIT_DEFAULT_"):].lower()] = _maximum_knob(config, name)
            elif upper.endswith("_LIMIT") and NAME.match(name[:-len("_LIMIT")]):
                value = _number(config.param(name))
                if value is not None and value >= 0:
                    limits[name[:-len("_LIMIT")].lower()] = value
        default = DEFAULT_MAXIMUM
        if "CONCURRENCY_LIMIT_DEFAULT" in config:
            default = _maximum_knob(config, "CONCURRENCY_LIMIT_DEFAULT")
        return cls(limits, sets, default)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _maximum_knob(config: Config, name: str) -> float:
    value = _number(config.param(name))
    if value is None or value < 0:
        raise ConfigError(f"{name} must be a number of 0 or more (a concurrency limit's maximum), "
                          f"not {config.param(name)!r}")
    return value


def slot_limits(slot: ClassAd) -> tuple[tuple[str, float], ...]:
    """The limits a claimed slot's job holds (its ``ConcurrencyLimits``); none for an
    unclaimed slot or an unreadable value."""
    state = slot.evaluate("State")
    if type(state) is not str or state.lower() not in _CLAIMED_STATES:
        return ()
    text = slot.evaluate("ConcurrencyLimits")
    if type(text) is not str:
        return ()
    try:
        return parse_limits(text)
    except LimitSyntaxError:
        return ()


def usage_from_slots(slots: Iterable[ClassAd]) -> dict[str, float]:
    """Each limit's use, summed over the claimed slots' jobs."""
    used: dict[str, float] = {}
    for slot in slots:
        for name, weight in slot_limits(slot):
            used[name] = used.get(name, 0.0) + weight
    return used


def job_limits(job: ClassAd, slot: ClassAd | None = None) -> tuple[tuple[str, float], ...]:
    """The limits ``job`` takes on ``slot`` (its ``ConcurrencyLimits`` evaluated with the
    slot as TARGET); none when it has no limits.

    Raises:
        LimitSyntaxError: the value is not a string of limits, naming it.
    """
    if "ConcurrencyLimits" not in job:
        return ()
    value = job.evaluate("ConcurrencyLimits", slot) if slot is not None else job.evaluate("ConcurrencyLimits")
    if value is UNDEFINED:
        return ()
    if type(value) is not str:
        raise LimitSyntaxError(f"ConcurrencyLimits = {job.lookup('ConcurrencyLimits')} gives {value!r}, "
                               "not a string of limits")
    return parse_limits(value)


def _depends_on_slot(job: ClassAd) -> bool:
    """Whether the job's ``ConcurrencyLimits`` is an expression (it may read the slot)."""
    return "ConcurrencyLimits" in job and type(job.evaluate("ConcurrencyLimits")) is not str


# Mutable: the use grows as the cycle matches jobs that take limits.
@attrs.define
class ConcurrencyLedger:
    """One cycle's limit use, and the matching that respects it."""

    settings: ConcurrencySettings
    used: dict[str, float] = attrs.field(factory=dict)
    #: Why a request got fewer matches than it asked, by request id.
    reasons: dict[str, str] = attrs.field(factory=dict)

    def room_for(self, limits: Iterable[tuple[str, float]]) -> int | float:
        """How many more jobs taking ``limits`` fit (``math.inf`` when none limits them)."""
        room: int | float = math.inf
        for name, weight in limits:
            left = self.settings.maximum(name) - self.used.get(name, 0.0)
            room = min(room, max(0, math.floor(left / weight + 1e-9)))
        return room

    def take(self, limits: Iterable[tuple[str, float]]) -> None:
        """Count one more job taking ``limits``."""
        for name, weight in limits:
            self.used[name] = self.used.get(name, 0.0) + weight

    def full_reason(self, limits: Iterable[tuple[str, float]]) -> str:
        """Which limit stops one more job taking ``limits``, with its use and maximum."""
        for name, weight in limits:
            used, most = self.used.get(name, 0.0), self.settings.maximum(name)
            if used + weight > most + 1e-9:
                return (f"concurrency limit {name} is used up: {used:g} of {most:g} in use "
                        f"and the job needs {weight:g}")
        return ""

    def gang_shortfall(self, request: ResourceRequest, slots: Sequence[ClassAd | None]) -> str:
        """Why the pieces of the gang ``request``, one on each of ``slots``, cannot all take
        their limits now ("" when they can). Each piece counts, as each proc of a parallel
        job does in HTCondor; a slot of None reads limits that do not depend on the slot."""
        needs: dict[str, float] = {}
        try:
            for slot in slots:
                for name, weight in job_limits(request.ad, slot):
                    needs[name] = needs.get(name, 0.0) + weight
        except LimitSyntaxError as exc:
            return str(exc)
        for name, need in needs.items():
            used, most = self.used.get(name, 0.0), self.settings.maximum(name)
            if used + need > most + 1e-9:
                return (f"concurrency limit {name} has {max(most - used, 0.0):g} of {most:g} free "
                        f"and its {len(slots)} pieces need {need:g}")
        return ""

    def gang_shortfall_unmatched(self, request: ResourceRequest, pieces: int) -> str:
        """:meth:`gang_shortfall` for ``pieces`` pieces read without a slot, or "" when the
        limits depend on the slot (known only once the pieces are matched)."""
        if "ConcurrencyLimits" not in request.ad or _depends_on_slot(request.ad):
            return ""
        return self.gang_shortfall(request, [None] * pieces)

    def take_gang(self, request: ResourceRequest, slots: Sequence[ClassAd]) -> None:
        """Count the gang's pieces, one on each of ``slots`` (checked by :meth:`gang_shortfall`)."""
        for slot in slots:
            self.take(job_limits(request.ad, slot))

    def match(self, pool: SlotPool, request: ResourceRequest, count: int, allowance: float,
              prefilter: Prefilter) -> list[SlotMatch]:
        """Up to ``count`` matches for ``request`` that keep every limit within its
        maximum (see :func:`negotiator.matchmaking.match_request`)."""
        if "ConcurrencyLimits" not in request.ad:
            return match_request(pool, request, count, allowance, prefilter)
        if _depends_on_slot(request.ad):
            return self._match_each(pool, request, count, allowance, prefilter)
        try:
            limits = job_limits(request.ad)
        except LimitSyntaxError as exc:
            self.reasons[request.request_id] = str(exc)
            return []
        room = self.room_for(limits)
        found = match_request(pool, request, int(min(count, room)), allowance, prefilter)
        for _ in found:
            self.take(limits)
        if room < count:  # said once this request's own matches are counted
            self.reasons[request.request_id] = self.full_reason(limits)
        return found

    def _match_each(self, pool: SlotPool, request: ResourceRequest, count: int, allowance: float,
                    prefilter: Prefilter) -> list[SlotMatch]:
        """Matches one at a time, each slot's limits evaluated against it; a slot whose
        limits are used up is put back and left out for this request."""
        found: list[SlotMatch] = []
        got = 0.0
        while len(found) < count and got < allowance:
            mark = pool.checkpoint()
            taken = match_request(pool, request, 1, allowance - got, prefilter)
            if not taken:
                pool.commit(mark)
                return found
            try:
                limits = job_limits(request.ad, taken[0].slot_ad)
            except LimitSyntaxError as exc:
                limits, why = None, str(exc)
            else:
                why = "" if self.room_for(limits) >= 1 else self.full_reason(limits)
            if limits is None or why:
                pool.restore(mark)
                self.reasons[request.request_id] = why
                pool.held = pool.held | {(request.request_id, taken[0].slot_name)}
                continue
            pool.commit(mark)
            self.take(limits)
            found.append(taken[0])
            got += taken[0].weight
        return found


def limits_ad(settings: ConcurrencySettings, used: Mapping[str, float]) -> dict[str, float]:
    """The negotiator ad's ``ConcurrencyLimit_<name> = in use`` for every limit in use or
    configured (``<NAME>_LIMIT``), as HTCondor's negotiator ad shows them."""
    names = sorted(set(used) | set(settings.limits))
    return {ad_attribute_name(name): float(used.get(name, 0.0)) for name in names}
