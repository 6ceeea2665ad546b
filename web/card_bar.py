"""A GPU card drawn as one bar of its memory: a segment per job's share, each as wide as
the memory it holds, then the free part, in a fixed SVG view box. Widths are SVG
attributes (the site's CSP allows no inline styles). Pure: numbers in, numbers out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The bar's width in view-box units; the page stretches it to the card's width.
BAR_WIDTH = 1000
#: Utilisation (0..1) from which a card is drawn busy, and full.
BUSY, FULL = 0.5, 0.9


def utilisation_class(ratio: float | None) -> str:
    """The CSS class a card's utilisation colours it with ("unknown" without a sample)."""
    if ratio is None:
        return "unknown"
    return "full" if ratio >= FULL else ("busy" if ratio >= BUSY else "light")


def card_segments(memory_total: float, shares: Sequence[Mapping]) -> list[dict]:
    """The bar of a card of ``memory_total`` MiB holding ``shares`` (each with ``job`` and
    ``memory`` MiB): one segment per share (``x``, ``width``, ``job``, ``memory``), in
    order, then the free memory (``free``: True). Shares that claim more than the card
    (a whole card counted with others) are scaled down so the bar never overflows."""
    total = max(float(memory_total), 0.0)
    held = sum(max(float(share.get("memory") or 0), 0.0) for share in shares)
    scale = BAR_WIDTH / max(total, held) if max(total, held) > 0 else 0.0
    segments, x = [], 0.0
    for share in shares:
        memory = max(float(share.get("memory") or 0), 0.0)
        width = memory * scale
        segments.append({"x": round(x, 2), "width": round(width, 2), "job": share.get("job") or "",
                         "memory": memory, "free": False})
        x += width
    free = max(total - held, 0.0)
    segments.append({"x": round(x, 2), "width": round(BAR_WIDTH - x, 2) if free else 0.0, "job": "",
                     "memory": free, "free": True})
    return segments


__all__ = ["card_segments", "utilisation_class", "BAR_WIDTH"]
