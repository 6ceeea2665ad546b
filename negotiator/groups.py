"""Accounting groups and their quotas: how much of the pool each group may use.

Groups are named in ``GROUP_NAMES`` and nest by dots (``group_physics.hep``). A
static quota (``GROUP_QUOTA_<g>``, cores) wins over a dynamic one
(``GROUP_QUOTA_DYNAMIC_<g>``, a fraction of what the parent has left after its
static children). Children asking for more than their parent are scaled down, unless
``NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION``. Each group first gets
``min(quota, demand)``; what is left flows to siblings that accept surplus
(``GROUP_ACCEPT_SURPLUS[_<g>]``), in proportion to their ``GROUP_SURPLUS_WEIGHT_<g>``
(default: their quotas, HTCondor's proportional rule). ``GROUP_LIMIT_<g>`` (cores) is a
ceiling no allocation passes, surplus or not (KAI's queue limit). The users of a node
that are in no child group (``<none>`` at the top) share the rest like one more child.
A group with ``GROUP_AUTOREGROUP[_<g>]`` negotiates a second time, with the users in
no group, for whatever the pool still has once every group had its turn (its usage
still charged to its users).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs
from attrs import frozen

from negotiator.accountant import NO_GROUP
from negotiator.errors import SettingsError


@frozen
class GroupSettings:
    """The configured groups and their quota rules."""

    names: tuple[str, ...] = ()
    static_quotas: Mapping[str, float] = attrs.field(factory=dict)
    dynamic_quotas: Mapping[str, float] = attrs.field(factory=dict)
    accept_surplus: Mapping[str, bool] = attrs.field(factory=dict)
    accept_surplus_default: bool = False
    allow_oversubscription: bool = False
    limits: Mapping[str, float] = attrs.field(factory=dict)
    surplus_weights: Mapping[str, float] = attrs.field(factory=dict)
    autoregroup: Mapping[str, bool] = attrs.field(factory=dict)
    autoregroup_default: bool = False

    def __attrs_post_init__(self) -> None:
        for knob, values in (("GROUP_LIMIT", self.limits), ("GROUP_SURPLUS_WEIGHT", self.surplus_weights)):
            for group, value in values.items():
                if value < 0:
                    raise SettingsError(f"{knob}_{group} must be 0 or more, not {value}")
        for group, fraction in self.dynamic_quotas.items():
            if not 0 <= fraction <= 1:
                raise SettingsError(f"GROUP_QUOTA_DYNAMIC_{group} must be between 0 and 1, not {fraction}")
        for group, quota in self.static_quotas.items():
            if quota < 0:
                raise SettingsError(f"GROUP_QUOTA_{group} must be 0 or more, not {quota}")

    @classmethod
    def from_config(cls, config) -> GroupSettings:
        """The group settings from a :class:`daemoncore.config.Config`.

        Raises:
            ConfigError: a value has the wrong type, naming where it was set.
            SettingsError: a quota is out of range.
        """
        names = tuple(g.lower() for g in config.param_list("GROUP_NAMES", []))
        static, dynamic, surplus, limits, weights, regroup = {}, {}, {}, {}, {}, {}
        for group in names:
            for knob, into in (("GROUP_LIMIT", limits), ("GROUP_SURPLUS_WEIGHT", weights)):
                value = config.param_float(f"{knob}_{group}")
                if value is not None:
                    into[group] = value
            value = config.param_float(f"GROUP_QUOTA_{group}")
            if value is not None:
                static[group] = value
            value = config.param_float(f"GROUP_QUOTA_DYNAMIC_{group}")
            if value is not None:
                dynamic[group] = value
            for knob, into in (("GROUP_ACCEPT_SURPLUS", surplus), ("GROUP_AUTOREGROUP", regroup)):
                flag = config.param_bool(f"{knob}_{group}")
                if flag is not None:
                    into[group] = flag
        return cls(names, static, dynamic, surplus,
                   config.param_bool("GROUP_ACCEPT_SURPLUS", False),
                   config.param_bool("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", False), limits, weights,
                   regroup, config.param_bool("GROUP_AUTOREGROUP", False))

    @property
    def active(self) -> tuple[str, ...]:
        """Groups with a quota; a group without one is ignored, as in HTCondor."""
        return tuple(g for g in self.names if g in self.static_quotas or g in self.dynamic_quotas)

    def accepts_surplus(self, group: str) -> bool:
        return self.accept_surplus.get(group, self.accept_surplus_default)

    def autoregroups(self, group: str) -> bool:
        """Whether ``group``'s users negotiate again with the users in no group (never
        for a group with a ``GROUP_LIMIT``, a ceiling no allocation passes)."""
        return (group != NO_GROUP and group not in self.limits
                and self.autoregroup.get(group, self.autoregroup_default))

    def limit(self, group: str) -> float:
        """``GROUP_LIMIT_<group>`` in cores (no limit when unset)."""
        return self.limits.get(group, math.inf)

    def surplus_weight(self, group: str, quota: float) -> float:
        """``GROUP_SURPLUS_WEIGHT_<group>``, else the group's quota."""
        return self.surplus_weights.get(group, quota)


def parent_of(group: str, groups: tuple[str, ...]) -> str:
    """The nearest configured ancestor of ``group``, or ``<none>``."""
    parts = group.split(".")
    for i in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in groups:
            return candidate
    return NO_GROUP


def _children(settings: GroupSettings) -> dict[str, list[str]]:
    groups = settings.active
    tree: dict[str, list[str]] = {NO_GROUP: []}
    for group in groups:
        tree.setdefault(group, [])
        tree.setdefault(parent_of(group, groups), []).append(group)
    return tree


def quotas(settings: GroupSettings, pool_total: float) -> dict[str, float]:
    """Each active group's effective quota in cores for a pool of ``pool_total``."""
    tree = _children(settings)
    out: dict[str, float] = {NO_GROUP: pool_total}

    def split(node: str) -> None:
        available = out[node]
        kids = tree.get(node, [])
        static = {k: settings.static_quotas[k] for k in kids if k in settings.static_quotas}
        total = sum(static.values())
        if total > available and not settings.allow_oversubscription and total > 0:
            static = {k: q * available / total for k, q in static.items()}
        left = max(available - sum(static.values()), 0.0)
        dynamic = {k: settings.dynamic_quotas[k] for k in kids if k not in static}
        fractions = sum(dynamic.values())
        scale = 1.0 / fractions if fractions > 1 else 1.0
        for kid in kids:
            out[kid] = static[kid] if kid in static else dynamic[kid] * scale * left
            split(kid)

    split(NO_GROUP)
    return out


def allocations(settings: GroupSettings, pool_total: float, demand: Mapping[str, float]) -> dict[str, float]:
    """How many cores each group's own submitters may use this cycle.

    ``demand`` is what each group's own submitters want (in use plus idle), keyed by
    group, ``<none>`` for submitters in no group. The result has the same keys.
    """
    tree = _children(settings)
    quota = quotas(settings, pool_total)
    subtree: dict[str, float] = {}

    def total_demand(node: str) -> float:
        subtree[node] = demand.get(node, 0.0) + sum(total_demand(k) for k in tree.get(node, []))
        return subtree[node]

    total_demand(NO_GROUP)
    out: dict[str, float] = {}

    def share(node: str, amount: float) -> None:
        kids = tree.get(node, [])
        own = ("#own", node)
        # member: (quota, demand capped by its limit, accepts surplus, surplus weight)
        members = {k: (quota[k], min(subtree[k], settings.limit(k)), settings.accepts_surplus(k),
                       settings.surplus_weight(k, quota[k])) for k in kids}
        own_quota = max(amount - sum(quota[k] for k in kids), 0.0)
        members[own] = (own_quota, demand.get(node, 0.0), True, own_quota)
        given = {k: min(q, d, amount) for k, (q, d, _, _) in members.items()}
        scale = sum(given.values())
        if scale > amount > 0:
            given = {k: v * amount / scale for k, v in given.items()}
        _spread_surplus(members, given, amount - sum(given.values()))
        out[node] = given[own]
        for kid in kids:
            share(kid, given[kid])

    share(NO_GROUP, pool_total)
    return out


def _spread_surplus(members: dict, given: dict, left: float) -> None:
    """Hand ``left`` cores to the members that accept surplus and want more, by their
    surplus weights (equally when all weights are 0), never past their capped demand."""
    while left > 1e-9:
        hungry = {k: w for k, (_, d, s, w) in members.items() if s and given[k] < d - 1e-9}
        if not hungry:
            return
        total = sum(hungry.values())
        handed = 0.0
        for k, weight in hungry.items():
            part = weight / total if total > 0 else 1.0 / len(hungry)
            extra = min(left * part, members[k][1] - given[k])
            given[k] += extra
            handed += extra
        left -= handed
        if handed <= 1e-9:
            return
