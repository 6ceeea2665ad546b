"""Answers of repeated queries kept by segment (see :mod:`collector.segments`): the
NDJSON lines one query (constraint and projection) answered from one segment, valid
while the segment keeps its version and none of the ads answered has expired. Bounded
in bytes; the oldest parts kept go first."""

from __future__ import annotations

from attrs import define, field

#: Most bytes of answers kept.
MAX_BYTES = 256 * 1024 * 1024


@define
class AnswerCache:
    """Parts of answers by (query, segment). Mutable: a cache."""

    max_bytes: int = MAX_BYTES
    _parts: dict[tuple, tuple[int, float, bytes]] = field(factory=dict)
    _size: int = 0

    def get(self, key: tuple, version: int, now: float) -> bytes | None:
        """The part kept under ``key`` if it was built from this ``version`` of its
        segment and is still valid at ``now``, else None."""
        part = self._parts.get(key)
        if part is None or part[0] != version or part[1] <= now:
            return None
        return part[2]

    def put(self, key: tuple, version: int, valid_until: float, block: bytes) -> None:
        """Keep ``block``, built from ``version`` of its segment, until ``valid_until``
        (the earliest expiry of the ads in it); older parts go to stay in bounds."""
        earlier = self._parts.pop(key, None)
        if earlier is not None:
            self._size -= len(earlier[2])
        if len(block) > self.max_bytes:
            return
        self._parts[key] = (version, valid_until, block)
        self._size += len(block)
        while self._size > self.max_bytes:
            oldest = next(iter(self._parts))
            self._size -= len(self._parts.pop(oldest)[2])

    @property
    def size(self) -> int:
        """Bytes of answers kept."""
        return self._size
