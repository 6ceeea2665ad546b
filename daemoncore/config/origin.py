"""Where a configuration value was set: a file and line, a template, the environment or a default."""

from __future__ import annotations

import attrs

#: the ``source`` of a built-in default
DEFAULT_SOURCE = "<default>"
#: the ``source`` of a ``_ROOST_<NAME>`` environment override
ENVIRONMENT_SOURCE = "<environment>"


@attrs.frozen
class Origin:
    """The place that set a value: ``source`` is a file path (or ``<default>``,
    ``<environment>``, ``<string>``), ``line`` its line, and ``via`` a ``use``
    template or environment variable that supplied the value there."""

    source: str
    line: int | None = None
    via: str | None = None

    @property
    def is_default(self) -> bool:
        """True when the value is one of Roost's built-in defaults."""
        return self.source == DEFAULT_SOURCE

    def describe(self) -> str:
        """Say where the value was set, as ``roost config`` prints it after ``# ``."""
        if self.is_default:
            return "default"
        if self.source == ENVIRONMENT_SOURCE:
            return f"from environment variable {self.via}"
        where = f"at {self.source}" if self.line is None else f"at {self.source}, line {self.line}"
        return f"{where} ({self.via})" if self.via else where


DEFAULT_ORIGIN = Origin(DEFAULT_SOURCE)
