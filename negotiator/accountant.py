"""The accountant: usage and user priorities per submitter and accounting group.

A customer's real priority moves toward the resources it has in use with a
half-life (``PRIORITY_HALFLIFE``): ``p = beta * p + (1 - beta) * in_use`` with
``beta = 0.5 ** (dt / halflife)``, never below 0.5. Its effective priority is the
real priority times its priority factor; lower is better. Time comes from an
injected clock; rows persist through :class:`negotiator.db.AccountantDatabase`.

Users of other pools (flocked in) are charged by their full ``user@domain`` like
anyone and get ``REMOTE_PRIO_FACTOR``: with ``ACCOUNTANT_LOCAL_DOMAIN`` set, every user
of another domain is remote (HTCondor's rule); unset, the remote domains are those of
the submitters that flocked in, remembered in the database. (A pool's own hosts each
have their own ``UID_DOMAIN`` by default, so a single domain cannot stand for them.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
from attrs import frozen

from negotiator.db import AccountantDatabase, CustomerRow
from negotiator.errors import AccountantError
from negotiator.flocked import user_domain

MIN_PRIORITY = 0.5
NICE_USER_PREFIX = "nice-user."
NO_GROUP = "<none>"


@frozen
class AccountantSettings:
    """The accountant's knobs, with HTCondor's defaults."""

    halflife: float = attrs.field(default=86400.0, validator=attrs.validators.gt(0))
    default_factor: float = 1000.0
    nice_user_factor: float = 1e10
    remote_factor: float = 1e7
    local_domain: str | None = None
    group_names: tuple[str, ...] = ()
    group_factors: Mapping[str, float] = attrs.field(factory=dict)

    @classmethod
    def from_config(cls, config) -> AccountantSettings:
        """The settings from a :class:`daemoncore.config.Config`.

        Raises:
            ConfigError: a value has the wrong type, naming where it was set.
        """
        groups = tuple(g.lower() for g in config.param_list("GROUP_NAMES", []))
        factors = {}
        for group in groups:
            value = config.param_float(f"GROUP_PRIO_FACTOR_{group}")
            if value is not None:
                factors[group] = value
        return cls(
            halflife=config.param_duration("PRIORITY_HALFLIFE", 86400.0),
            default_factor=config.param_float("DEFAULT_PRIO_FACTOR", 1000.0),
            nice_user_factor=config.param_float("NICE_USER_PRIO_FACTOR", 1e10),
            remote_factor=config.param_float("REMOTE_PRIO_FACTOR", 1e7),
            local_domain=config.param("ACCOUNTANT_LOCAL_DOMAIN"),
            group_names=groups,
            group_factors=factors,
        )


@frozen
class PriorityRecord:
    """One line of ``roost userprio``: a customer's priorities and usage."""

    name: str
    effective_priority: float
    real_priority: float
    factor: float
    resources_in_use: float
    accumulated_usage: float
    begin_usage_time: float | None
    last_usage_time: float | None
    is_group: bool
    accounting_group: str
    floor: float | None = None
    ceiling: float | None = None


def group_of(submitter: str, group_names: tuple[str, ...]) -> str:
    """The configured accounting group of ``submitter`` (``group_a.b.user@domain`` is
    in ``group_a.b`` when that is the longest configured prefix), else ``<none>``."""
    user = submitter.rsplit("@", 1)[0].lower()
    best = NO_GROUP
    for group in group_names:
        if user.startswith(group + ".") and (best == NO_GROUP or len(group) > len(best)):
            best = group
    return best


def ancestors(group: str) -> list[str]:
    """``group_a.b.c`` -> ``[group_a.b.c, group_a.b, group_a]``."""
    if group == NO_GROUP:
        return []
    parts = group.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


class Accountant:
    """Usage and priorities of every customer, kept in SQLite.

    Mutable: it caches the database rows and updates them each cycle.
    """

    def __init__(self, database: AccountantDatabase, clock, settings: AccountantSettings | None = None) -> None:
        self.database = database
        self.clock = clock
        self.settings = settings or AccountantSettings()
        self._customers = database.get_customers()
        self._last_update = database.get_last_update()
        self._remote_domains = database.get_remote_domains()

    # --- factors and priorities ---------------------------------------------
    def _row(self, name: str) -> CustomerRow:
        row = self._customers.get(name)
        return row if row is not None else CustomerRow(name, MIN_PRIORITY)

    def factor(self, name: str) -> float:
        """The priority factor of ``name``: set explicitly, else by the defaults for nice
        users, group members, remote users and everyone else."""
        row = self._customers.get(name)
        if row is not None and row.factor is not None:
            return row.factor
        s = self.settings
        if name.lower().startswith(NICE_USER_PREFIX):
            return s.nice_user_factor
        if name.lower() in s.group_names:
            return s.group_factors.get(name.lower(), s.default_factor)
        group = group_of(name, s.group_names)
        if group != NO_GROUP and group in s.group_factors:
            return s.group_factors[group]
        if self.is_remote(name):
            return s.remote_factor
        return s.default_factor

    def is_remote(self, name: str) -> bool:
        """Whether ``name`` is a user of another pool (see the module's docstring)."""
        domain = user_domain(name)
        if domain is None:
            return False
        if self.settings.local_domain:
            return domain != self.settings.local_domain.lower()
        return domain in self._remote_domains

    def note_remote_users(self, names: Iterable[str]) -> None:
        """Remember the domains of ``names``, submitters flocked in from other pools."""
        new = {d for d in map(user_domain, names) if d is not None} - self._remote_domains
        if new:
            self._remote_domains |= new
            self.database.add_remote_domains(sorted(new))

    def real_priority(self, name: str) -> float:
        return self._row(name).priority

    def effective_priority(self, name: str) -> float:
        """Real priority times factor: what submitters are ordered by (lower first)."""
        return self.real_priority(name) * self.factor(name)

    def resources_in_use(self, name: str) -> float:
        return self._row(name).resources_in_use

    # --- changes ---------------------------------------------------------------
    def update_priorities(self, in_use: Mapping[str, float]) -> None:
        """Fold the time since the last update into every customer's priority and usage,
        given what each submitter has in use now; groups are charged their members'."""
        now = self.clock.seconds()
        dt = 0.0 if self._last_update is None else max(now - self._last_update, 0.0)
        beta = 0.5 ** (dt / self.settings.halflife)
        charged: dict[str, float] = {}
        for name, amount in in_use.items():
            if amount < 0:
                raise AccountantError(f"resources in use by {name} must be 0 or more, not {amount}")
            charged[name] = charged.get(name, 0.0) + amount
            for group in ancestors(group_of(name, self.settings.group_names)):
                charged[group] = charged.get(group, 0.0) + amount
        changed = []
        for name in set(self._customers) | set(charged):
            row = self._row(name)
            amount = charged.get(name, 0.0)
            previous = row.resources_in_use
            priority = max(beta * row.priority + (1.0 - beta) * previous, MIN_PRIORITY)
            row = attrs.evolve(
                row,
                priority=priority,
                accumulated_usage=row.accumulated_usage + previous * dt,
                resources_in_use=amount,
                begin_usage_time=row.begin_usage_time if row.begin_usage_time is not None or not amount else now,
                last_usage_time=now if amount or previous else row.last_usage_time,
            )
            self._customers[name] = row
            changed.append(row)
        self._last_update = now
        self.database.set_customers(changed, last_update=now)

    def set_factor(self, name: str, factor: float) -> None:
        """Set ``name``'s priority factor (1 or more, as in ``condor_userprio -setfactor``).

        Raises:
            AccountantError: the factor is below 1 or not a number.
        """
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not factor >= 1:
            raise AccountantError(f"priority factor for {name} must be a number of at least 1, not {factor!r}")
        self._store(attrs.evolve(self._row(name), factor=float(factor)))

    def set_priority(self, name: str, priority: float) -> None:
        """Set ``name``'s real priority (``condor_userprio -setprio``).

        Raises:
            AccountantError: the priority is below 0.5.
        """
        if not isinstance(priority, (int, float)) or not priority >= MIN_PRIORITY:
            raise AccountantError(f"priority for {name} must be at least {MIN_PRIORITY}, not {priority!r}")
        self._store(attrs.evolve(self._row(name), priority=float(priority)))

    def set_floor(self, name: str, floor: float | None) -> None:
        """Guarantee ``name`` at least ``floor`` cores before anyone above theirs (None clears)."""
        self._store(attrs.evolve(self._row(name), floor=floor))

    def set_ceiling(self, name: str, ceiling: float | None) -> None:
        """Cap ``name`` at ``ceiling`` cores (None clears)."""
        self._store(attrs.evolve(self._row(name), ceiling=ceiling))

    def reset_usage(self, name: str | None = None) -> None:
        """Forget ``name``'s usage (everyone's when None): best priority, no accumulated use."""
        names = [name] if name is not None else list(self._customers)
        rows = [attrs.evolve(self._row(n), priority=MIN_PRIORITY, accumulated_usage=0.0,
                             begin_usage_time=None) for n in names]
        for row in rows:
            self._customers[row.name] = row
        self.database.set_customers(rows)

    def _store(self, row: CustomerRow) -> None:
        self._customers[row.name] = row
        self.database.set_customers([row])

    def floor(self, name: str) -> float | None:
        return self._row(name).floor

    def ceiling(self, name: str) -> float | None:
        return self._row(name).ceiling

    # --- reports -----------------------------------------------------------------
    def priorities(self) -> list[PriorityRecord]:
        """Every customer's record, best effective priority first."""
        groups = set(self.settings.group_names)
        out = []
        for name, row in self._customers.items():
            is_group = name.lower() in groups
            out.append(PriorityRecord(
                name=name, effective_priority=row.priority * self.factor(name),
                real_priority=row.priority, factor=self.factor(name),
                resources_in_use=row.resources_in_use, accumulated_usage=row.accumulated_usage,
                begin_usage_time=row.begin_usage_time, last_usage_time=row.last_usage_time,
                is_group=is_group,
                accounting_group=name.lower() if is_group else group_of(name, self.settings.group_names),
                floor=row.floor, ceiling=row.ceiling,
            ))
        out.sort(key=lambda r: (r.effective_priority, r.name))
        return out
