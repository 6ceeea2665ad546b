"""A query's answer as blocks of NDJSON lines: the matching ads of a snapshot, each as
its ready line or projected line, joined into blocks that end every few milliseconds
(or at a size), so the server writes large answers in few pieces and the reactor gets
control back between blocks however slow the constraint is in each ad."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from collector.answer_cache import AnswerCache
from collector.screening import Screen
from collector.store import StoredAd, projection_key

#: Longest the reactor is held building one block.
SLICE_SECONDS = 0.005
#: A block ends once it holds this many bytes.
BLOCK_BYTES = 256 * 1024


def answer_blocks(snapshot: Iterable[StoredAd], now: float, screen: Screen, projection: list[str],
                  limit: int | None = None) -> Iterator[bytes | None]:
    """The live ads of ``snapshot`` that ``screen`` matches, at most ``limit``, as
    blocks of NDJSON lines (projected to ``projection``, every attribute when empty);
    ``None`` for a slice that found nothing, so a caller on the reactor can pause.

    Each ad's screening verdict and projected line are kept in the ad for the next
    query asking the same, so a repeated query mostly looks things up."""
    if limit is not None and limit <= 0:
        return
    wanted = tuple(dict.fromkeys(name.lower() for name in projection))
    key = projection_key(wanted)
    everything = screen.everything
    predicate = screen.predicate
    clock = time.perf_counter
    lines: list[bytes] = []
    size = found = 0
    deadline = clock() + SLICE_SECONDS
    for stored in snapshot:
        if stored.expires_at > now:
            verdict = True if everything else stored.verdict(screen)
            if verdict or (verdict is None and predicate(stored.ad)):
                line = stored.projected_line(wanted, key) if wanted else stored.line
                lines.append(line)
                size += len(line)
                found += 1
                if found == limit:
                    break
        if size >= BLOCK_BYTES or clock() >= deadline:
            yield b"".join(lines) if lines else None
            lines, size = [], 0
            deadline = clock() + SLICE_SECONDS
    if lines:
        yield b"".join(lines)


def segment_answer_blocks(segments: list[tuple[int, int, Iterable[StoredAd]]], now: float, screen: Screen,
                          projection: list[str], cache: AnswerCache, query: tuple) -> Iterator[bytes | None]:
    """As :func:`answer_blocks` without a limit, over ``segments`` (see
    :meth:`collector.store.AdStore.segments`), reusing each segment's part of the
    answer kept in ``cache`` under ``query`` (what identifies the ad type, constraint
    and projection) while the segment is unchanged. Only for a screen that decides
    (nearly) every ad on its own, everything or complete: a segment's part is then
    quick to build, and kept only when no ad in it needed the constraint evaluated
    (which may read the time)."""
    wanted = tuple(dict.fromkeys(name.lower() for name in projection))
    key = projection_key(wanted)
    clock = time.perf_counter
    parts: list[bytes] = []
    size = 0
    deadline = clock() + SLICE_SECONDS
    for segment_id, version, ads in segments:
        part = cache.get((query, segment_id), version, now)
        if part is None:
            part, valid_until = _segment_part(ads, now, screen, wanted, key)
            if valid_until is not None:
                cache.put((query, segment_id), version, valid_until, part)
        if part:
            parts.append(part)
            size += len(part)
        if size >= BLOCK_BYTES or clock() >= deadline:
            yield b"".join(parts) if parts else None
            parts, size = [], 0
            deadline = clock() + SLICE_SECONDS
    if parts:
        yield b"".join(parts)


def _segment_part(ads: Iterable[StoredAd], now: float, screen: Screen, wanted: tuple[str, ...],
                  key: str) -> tuple[bytes, float | None]:
    """The lines ``ads`` answer, and until when they stay valid (the earliest expiry of
    the ads answered), or None when an ad needed the constraint evaluated."""
    everything = screen.everything
    lines = []
    valid_until = float("inf")
    kept = True
    for stored in ads:
        if stored.expires_at > now:
            verdict = True if everything else stored.verdict(screen)
            if verdict is None:
                kept = False
                verdict = screen.predicate(stored.ad)
            if verdict:
                lines.append(stored.projected_line(wanted, key) if wanted else stored.line)
                valid_until = min(valid_until, stored.expires_at)
    return b"".join(lines), valid_until if kept else None
