"""One ad type's stored ads in segments of 64 consecutive places in stored order, each
with a version that changes whenever one of its ads is stored, replaced or removed: a
query's answer for a segment can be kept and reused until the segment's version moves,
so a repeated query over 100,000 ads rebuilds only the few segments updated since."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from attrs import define, field

#: A segment holds the ads whose stored order (``seq``) agrees above these low bits.
SEGMENT_BITS = 6


@define
class Segment:
    """The ads of one segment by key, in stored order, and its version. Mutable: it
    follows the store's updates, by replacing ``ads`` with a changed copy (64 entries at
    most), never changing it in place, so a query's snapshot of the segments holds each
    one's ads as they were without copying them."""

    ads: dict = field(factory=dict)
    version: int = 0


@define
class Segments:
    """The segments of one ad type's ads, in stored order (a segment emptied is dropped;
    its places are never used again, since an ad stored anew gets a new place)."""

    _by_id: dict[int, Segment] = field(factory=dict)
    _versions: Iterator[int] = field(factory=lambda: itertools.count(1))
    #: Told of every ad held (``added``) and let go (``dropped``), e.g. running totals.
    watchers: list = field(factory=list)

    def put(self, stored) -> None:
        """Hold ``stored`` (a :class:`collector.store.StoredAd`) in its segment, in place
        of the ad with its key."""
        segment_id = stored.seq >> SEGMENT_BITS
        segment = self._by_id.get(segment_id)
        if segment is None:
            segment = self._by_id[segment_id] = Segment()
        earlier = segment.ads.get(stored.key)
        segment.ads = {**segment.ads, stored.key: stored}
        segment.version = next(self._versions)
        for watcher in self.watchers:
            if earlier is not None:
                watcher.dropped(earlier)
            watcher.added(stored)

    def drop(self, stored) -> None:
        """Forget ``stored`` if it is the ad its segment holds under its key."""
        segment_id = stored.seq >> SEGMENT_BITS
        segment = self._by_id.get(segment_id)
        if segment is not None and segment.ads.get(stored.key) is stored:
            segment.ads = {key: held for key, held in segment.ads.items() if key != stored.key}
            segment.version = next(self._versions)
            if not segment.ads:
                del self._by_id[segment_id]
            for watcher in self.watchers:
                watcher.dropped(stored)

    def snapshot(self) -> list[tuple[int, int, Iterable]]:
        """Every segment now as (id, version, its ads in stored order), which later
        changes to the segments leave as they are."""
        return [(segment_id, segment.version, segment.ads.values()) for segment_id, segment in self._by_id.items()]
