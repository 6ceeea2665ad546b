"""The macro table: each name's raw value, its parsed form and where it was set."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from daemoncore.config.errors import ConfigError
from daemoncore.config.origin import Origin
from daemoncore.config.references import MacroRef, Segment, parse_value


@attrs.frozen
class Entry:
    """One macro as set: ``name`` as first spelled, the raw text, its parse and origin."""

    name: str
    raw: str
    segments: tuple[Segment, ...] = attrs.field(repr=False, eq=False)
    origin: Origin


class MacroTable:
    """Names (case-insensitive) to entries; a later ``set`` of a name replaces the earlier one."""

    # mutable: the reader fills it line by line
    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}

    def set(self, name: str, raw: str, origin: Origin) -> Entry:
        """Set ``name`` to ``raw``; a ``$(NAME)`` of itself means the value it had before.

        Raises:
            ConfigError: the value has a malformed ``$(...)``, located at ``origin``.
        """
        key = name.upper()
        try:
            segments = parse_value(raw)
        except ConfigError as err:
            raise ConfigError(f"{name}: {err.reason}", origin.source, origin.line) from None
        segments = self._replace_self(key, segments)
        previous = self._entries.get(key)
        spelled = previous.name if previous is not None else name
        entry = Entry(spelled, raw, segments, origin)
        self._entries[key] = entry
        return entry

    def get(self, name: str) -> Entry | None:
        """The entry for ``name`` (any case), or None."""
        return self._entries.get(name.upper())

    def segments(self, key: str) -> tuple[Segment, ...] | None:
        """The parsed value of upper-case ``key``, as the expander wants it."""
        entry = self._entries.get(key)
        return entry.segments if entry is not None else None

    def __contains__(self, name: str) -> bool:
        return name.upper() in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def _replace_self(self, key: str, segments: tuple[Segment, ...]) -> tuple[Segment, ...]:
        """Splice the previous value of ``key`` in place of ``$(KEY)`` (``A = $(A), more``)."""
        previous = self._entries.get(key)
        out: list[Segment] = []
        for seg in segments:
            if isinstance(seg, MacroRef) and seg.name.upper() == key:
                if previous is not None and previous.segments:
                    out.extend(previous.segments)
                elif seg.default:
                    out.extend(seg.default)
            else:
                out.append(seg)
        return tuple(out)
