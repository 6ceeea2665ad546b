"""How long the master waits before restarting a daemon that died, after HTCondor's
``MASTER_BACKOFF_CONSTANT``, ``MASTER_BACKOFF_FACTOR``, ``MASTER_BACKOFF_CEILING`` and
``MASTER_RECOVER_FACTOR``: the wait grows with each restart in a row, and a daemon
that stayed up long enough is forgiven its earlier deaths."""

from __future__ import annotations

from attrs import field, frozen, validators

from daemoncore.config import Config

_non_negative = validators.ge(0)


@frozen
class BackoffPolicy:
    """Restart waits: ``constant + factor ** restarts`` seconds, at most ``ceiling``."""

    constant: float = field(default=9.0, validator=_non_negative)
    factor: float = field(default=2.0, validator=validators.ge(1))
    ceiling: float = field(default=3600.0, validator=_non_negative)
    recover_after: float = field(default=300.0, validator=_non_negative)

    def delay(self, restarts: int) -> float:
        """Seconds to wait before restart number ``restarts + 1`` of a daemon."""
        try:
            grown = self.constant + self.factor ** restarts
        except OverflowError:
            return self.ceiling
        return min(self.ceiling, grown)

    def restarts_after(self, restarts: int, ran_for: float) -> int:
        """The count of restarts in a row once a daemon died after ``ran_for`` seconds."""
        return 0 if ran_for >= self.recover_after else restarts + 1

    @classmethod
    def from_config(cls, config: Config) -> BackoffPolicy:
        """The policy set by the ``MASTER_BACKOFF_*`` and ``MASTER_RECOVER_FACTOR`` knobs.

        Raises:
            ConfigError: a knob is not a number.
            ValueError: a knob is negative (or the factor is below 1).
        """
        return cls(
            constant=config.param_float("MASTER_BACKOFF_CONSTANT", 9.0),
            factor=config.param_float("MASTER_BACKOFF_FACTOR", 2.0),
            ceiling=config.param_float("MASTER_BACKOFF_CEILING", 3600.0),
            recover_after=config.param_float("MASTER_RECOVER_FACTOR", 300.0),
        )
