"""Expand parsed values lazily against a macro table, with cycle detection.

Expansion happens at lookup, as in HTCondor, so ``LOG = $(LOCAL_DIR)/log`` follows a
later change of ``LOCAL_DIR``. An undefined ``$(NAME)`` without a default expands to
the empty string.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from daemoncore.config.errors import ConfigError
from daemoncore.config.references import EnvRef, MacroRef, Segment

#: looks up the parsed raw value of a macro (upper-case name), or None
RawLookup = Callable[[str], "tuple[Segment, ...] | None"]


class Expander:
    """Expands values of one macro table; results are memoised per name."""

    def __init__(self, lookup: RawLookup, env: Mapping[str, str]) -> None:
        self._lookup = lookup
        self._env = env
        self._cache: dict[str, str] = {}

    def expand_name(self, name: str) -> str | None:
        """The fully expanded value of macro ``name``, or None when it is not defined.

        Raises:
            ConfigError: the value refers to itself, directly or through others.
        """
        return self._expand_name(name.upper(), ())

    def expand(self, segments: tuple[Segment, ...]) -> str:
        """Expand already parsed text that is not itself a macro (an ``if`` line, say).

        Raises:
            ConfigError: a referenced value refers to itself.
        """
        return self._expand(segments, ())

    def _expand_name(self, key: str, chain: tuple[str, ...]) -> str | None:
        if key in self._cache:
            return self._cache[key]
        if key in chain:
            loop = " -> ".join(chain[chain.index(key):] + (key,))
            raise ConfigError(f"{key} refers to itself: {loop}")
        raw = self._lookup(key)
        if raw is None:
            return None
        value = self._expand(raw, chain + (key,))
        self._cache[key] = value
        return value

    def _expand(self, segments: tuple[Segment, ...], chain: tuple[str, ...]) -> str:
        out: list[str] = []
        for seg in segments:
            if isinstance(seg, str):
                out.append(seg)
            elif isinstance(seg, MacroRef):
                value = self._expand_name(seg.name.upper(), chain)
                out.append(self._or_default(value, seg.default, chain))
            elif isinstance(seg, EnvRef):
                out.append(self._or_default(self._env.get(seg.name), seg.default, chain))
        return "".join(out)

    def _or_default(self, value: str | None, default: tuple | None, chain: tuple[str, ...]) -> str:
        if value is not None and (value != "" or default is None):
            return value
        return self._expand(default, chain) if default is not None else ""
