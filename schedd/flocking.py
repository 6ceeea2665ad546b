"""Flocking, the schedd's rules: which remote pools (``FLOCK_TO``) each submitter is
advertised to, and when that list grows or shrinks (HTCondor's per-submitter flock level).

A submitter's level ``n`` means its Submitter ad goes to the first ``n`` flock
collectors (always at least ``MIN_FLOCK_LEVEL``). The level rises by
``FLOCK_INCREMENT`` when the negotiator of the current level asks again for requests
while the submitter still has idle jobs (its last cycle ended with jobs left over), when
no negotiator has asked for ``2 * SCHEDD_INTERVAL`` while jobs are idle, or when an update
to a flock collector fails. It falls back to ``MIN_FLOCK_LEVEL`` once the submitter has
no idle jobs. A collector whose update failed is skipped for
``DEAD_COLLECTOR_MAX_AVOIDANCE_TIME``. Pure logic: time comes from the clock passed in."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from attrs import field, frozen
from twisted.logger import Logger

from daemoncore.config import Config, ConfigError
from daemoncore.wire.address import DEFAULT_COLLECTOR_PORT, Address, parse_address

DEFAULT_FLOCK_INCREMENT = 1
DEFAULT_MIN_FLOCK_LEVEL = 0
#: HTCondor's default: a collector that failed is avoided for an hour.
DEFAULT_DEAD_COLLECTOR_MAX_AVOIDANCE_TIME = 3600.0
#: The home pool's level: its negotiator is level 0, the n-th flock pool's is level n.
HOME_LEVEL = 0

_log = Logger()


def pool_key(address: Address) -> str:
    """``host:port`` of a collector address (TLS or not): how a flock collector is
    compared with a trusted pool's ``collector``."""
    return f"{address.host}:{address.port}"


def _addresses(config: Config, knob: str, fallback: tuple[Address, ...]) -> tuple[Address, ...]:
    names = config.param_list(knob)
    if not names:
        return fallback
    found: list[Address] = []
    for name in names:
        try:
            address = parse_address(name, default_port=DEFAULT_COLLECTOR_PORT)
        except ValueError as exc:
            raise ConfigError(f"{knob}: {exc}") from None
        if pool_key(address) in {pool_key(each) for each in found}:
            raise ConfigError(f"{knob} names {pool_key(address)} twice")
        found.append(address)
    return tuple(found)


def _at_least(config: Config, knob: str, default: int, lowest: int) -> int:
    value = config.param_int(knob, default)
    if value < lowest:
        raise ConfigError(f"{knob} = {value}: must be {lowest} or more")
    return value


@frozen
class FlockSettings:
    """The schedd's flocking knobs. ``collectors`` and ``negotiators`` are the remote
    central managers in order of preference (empty: the schedd does not flock)."""

    collectors: tuple[Address, ...] = ()
    negotiators: tuple[Address, ...] = ()
    increment: int = field(default=DEFAULT_FLOCK_INCREMENT, validator=attrs.validators.ge(1))
    min_level: int = field(default=DEFAULT_MIN_FLOCK_LEVEL, validator=attrs.validators.ge(0))
    dead_collector_avoidance: float = field(default=DEFAULT_DEAD_COLLECTOR_MAX_AVOIDANCE_TIME,
                                            validator=attrs.validators.ge(0))

    @classmethod
    def from_config(cls, config: Config) -> FlockSettings:
        """``FLOCK_TO`` (which sets ``FLOCK_COLLECTOR_HOSTS`` and ``FLOCK_NEGOTIATOR_HOSTS``
        unless they are set), ``FLOCK_INCREMENT``, ``MIN_FLOCK_LEVEL`` and
        ``DEAD_COLLECTOR_MAX_AVOIDANCE_TIME``.

        Raises:
            ConfigError: a knob is malformed or out of range; the message names the knob.
        """
        flock_to = _addresses(config, "FLOCK_TO", ())
        avoidance = config.param_duration("DEAD_COLLECTOR_MAX_AVOIDANCE_TIME",
                                          DEFAULT_DEAD_COLLECTOR_MAX_AVOIDANCE_TIME)
        if avoidance < 0:
            raise ConfigError(f"DEAD_COLLECTOR_MAX_AVOIDANCE_TIME = {avoidance}: must be 0 or more seconds")
        return cls(collectors=_addresses(config, "FLOCK_COLLECTOR_HOSTS", flock_to),
                   negotiators=_addresses(config, "FLOCK_NEGOTIATOR_HOSTS", flock_to),
                   increment=_at_least(config, "FLOCK_INCREMENT", DEFAULT_FLOCK_INCREMENT, 1),
                   min_level=_at_least(config, "MIN_FLOCK_LEVEL", DEFAULT_MIN_FLOCK_LEVEL, 0),
                   dead_collector_avoidance=avoidance)

    @property
    def max_level(self) -> int:
        """The highest level: every flock collector."""
        return len(self.collectors)

    @property
    def lowest_level(self) -> int:
        """``MIN_FLOCK_LEVEL``, never above the number of flock collectors."""
        return min(self.min_level, self.max_level)

    def level_of(self, address: Address) -> int | None:
        """The level at which the pool whose collector is ``address`` is flocked to, or None."""
        key = pool_key(address)
        return next((index + 1 for index, each in enumerate(self.collectors) if pool_key(each) == key), None)


@frozen
class SubmitterFlock:
    """One submitter's flock level, when a negotiator last asked for its requests, and
    whether the negotiator of the current level has asked since the level was set."""

    level: int
    contacted_at: float
    asked_at_level: bool = False


# Mutable: the levels change with every negotiation, advertisement and failed update.
class FlockLevels:
    """The flock level of every submitter of one schedd, and the flock collectors
    being avoided because an update to them failed."""

    def __init__(self, settings: FlockSettings, clock, schedd_interval: float) -> None:
        self.settings = settings
        self.clock = clock
        self.schedd_interval = schedd_interval
        self._submitters: dict[str, SubmitterFlock] = {}
        self._avoided_until: dict[int, float] = {}

    def level(self, submitter: str) -> int:
        """The submitter's flock level (``MIN_FLOCK_LEVEL`` for one not seen yet)."""
        found = self._submitters.get(submitter)
        return found.level if found is not None else self.settings.lowest_level

    def targets(self, submitter: str) -> tuple[int, ...]:
        """The levels (1-based indexes into the flock collectors) the submitter's ad goes
        to now: those up to its level, less the collectors being avoided."""
        now = self.clock.seconds()
        return tuple(level for level in range(1, self.level(submitter) + 1)
                     if self._avoided_until.get(level, now) <= now)

    def effective(self) -> tuple[int, ...]:
        """Every level some submitter is advertised to now (``EffectiveFlockList``)."""
        return tuple(sorted({level for name in self._submitters for level in self.targets(name)}))

    def negotiating(self, submitter: str, pool_level: int | None, idle: int) -> bool:
        """A negotiator asked for the submitter's requests while it has ``idle`` free idle
        jobs; ``pool_level`` is that negotiator's level (0 home, None a pool not flocked
        to). When the current level's negotiator asks a second time with jobs still
        idle, its last cycle left them over: the level goes up. True when it did."""
        now = self.clock.seconds()
        before = self._state(submitter, now)
        state = attrs.evolve(before, contacted_at=now)
        if pool_level == state.level and idle > 0:
            if state.asked_at_level:
                state = self._raised(submitter, state, now, f"the negotiator of level {pool_level} left "
                                                            f"{idle} job(s) idle")
            else:
                state = attrs.evolve(state, asked_at_level=True)
        self._submitters[submitter] = state
        return state.level != before.level

    def update_failed(self, submitter: str, level: int, avoid: bool = True) -> None:
        """An update of the submitter's ad to the flock collector of ``level`` failed (or
        could not be sent: its pool is not trusted, ``avoid`` False): the submitter goes
        one step further, and the collector is avoided for
        ``DEAD_COLLECTOR_MAX_AVOIDANCE_TIME``."""
        now = self.clock.seconds()
        if avoid:
            self._avoided_until[level] = now + self.settings.dead_collector_avoidance
        state = self._state(submitter, now)
        why = "its pool is not trusted" if not avoid else "the update to it failed"
        self._submitters[submitter] = self._raised(submitter, state, now,
                                                   f"flock collector {pool_key(self._collector(level))}: {why}")

    def update_succeeded(self, level: int) -> None:
        """The flock collector of ``level`` answered: stop avoiding it."""
        self._avoided_until.pop(level, None)

    def avoided(self, level: int) -> bool:
        """Whether the flock collector of ``level`` is being skipped now."""
        return self._avoided_until.get(level, 0.0) > self.clock.seconds()

    def check(self, idle_by_submitter: Mapping[str, int]) -> None:
        """The periodic look at every submitter: one with no idle jobs falls back to
        ``MIN_FLOCK_LEVEL``; one with idle jobs that no negotiator has asked about for
        ``2 * SCHEDD_INTERVAL`` goes one step further."""
        now = self.clock.seconds()
        for submitter in list(self._submitters):
            if idle_by_submitter.get(submitter, 0) <= 0:
                gone = self._submitters.pop(submitter)
                if gone.level > self.settings.lowest_level:
                    _log.info("schedd: decreasing flock level for {submitter} to {flock_level}: no idle jobs",
                              submitter=submitter, flock_level=self.settings.lowest_level)
        for submitter, idle in idle_by_submitter.items():
            if idle <= 0:
                continue
            state = self._state(submitter, now)
            if now - state.contacted_at >= 2 * self.schedd_interval:
                state = self._raised(submitter, state, now, f"no negotiator asked for {now - state.contacted_at:.0f} s")
            self._submitters[submitter] = state

    def _state(self, submitter: str, now: float) -> SubmitterFlock:
        found = self._submitters.get(submitter)
        return found if found is not None else SubmitterFlock(self.settings.lowest_level, now)

    def _collector(self, level: int) -> Address:
        return self.settings.collectors[level - 1]

    def _raised(self, submitter: str, state: SubmitterFlock, now: float, why: str) -> SubmitterFlock:
        """The submitter one ``FLOCK_INCREMENT`` further (logged, as HTCondor's schedd
        does, with the flock collector now reached and why)."""
        level = min(self.settings.max_level, state.level + self.settings.increment)
        if level == state.level:
            return attrs.evolve(state, contacted_at=now)
        _log.info("schedd: increasing flock level for {submitter} to {flock_level} ({collector}): {why}",
                  submitter=submitter, flock_level=level, collector=pool_key(self._collector(level)), why=why)
        return SubmitterFlock(level, now)


__all__ = ["FlockSettings", "FlockLevels", "SubmitterFlock", "pool_key", "HOME_LEVEL",
           "DEFAULT_DEAD_COLLECTOR_MAX_AVOIDANCE_TIME"]
