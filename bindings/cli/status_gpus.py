"""``roost status -gpus``: one line per GPU of the pool, from the collector's slot ads
(through :mod:`startd.gpu_view`, as the startd's own metrics read them), and the GPU
columns ``-compact`` adds when the pool has GPUs. Pure: ads in, text out."""

from __future__ import annotations

from startd.gpu_view import CardView, card_views

#: The constraint ``-gpus`` adds: slots that own or hold a card.
GPU_SLOTS = "TotalSlotGPUs > 0"

GPU_HEADINGS = ("Machine", "GPU", "DeviceName", "UsedMb", "FreeMb", "UsedCores", "FreeCores", "Shares", "Jobs")
GPU_WIDTHS = (18, 12, 22, 8, 8, 9, 9, 6, 0)
#: Columns printed right-aligned (the numbers).
_RIGHT = {3, 4, 5, 6, 7}


def gpu_row(view: CardView) -> list[str]:
    """The cells of one card's line."""
    card = view.card
    return [view.host, card.id, card.name, str(card.memory_used), str(card.memory_free), f"{card.cores_used}%",
            f"{card.cores_free}%", str(card.tasks), ",".join(view.jobs) or "-"]


def _line(cells: list[str], wide: bool) -> str:
    fitted = []
    for i, (cell, width) in enumerate(zip(cells, GPU_WIDTHS)):
        if width and not wide and i not in _RIGHT:
            cell = cell[:width]
        fitted.append(cell.rjust(width) if i in _RIGHT else cell.ljust(width))
    return " ".join(fitted).rstrip()


def gpu_totals(views: list[CardView]) -> str:
    """The summary under the table: cards, untouched cards, shares, memory free."""
    untouched = sum(view.card.untouched for view in views)
    shares = sum(view.card.tasks for view in views)
    free = sum(view.card.memory_free for view in views)
    total = sum(view.card.memory_total for view in views)
    jobs = sum(len(view.jobs) for view in views)
    return (f"{len(views)} GPUs ({untouched} untouched), {shares} shares, {jobs} jobs on them; "
            f"{free} of {total} MB free\n")


def gpu_table(ads: list, wide: bool = False) -> str:
    """``-gpus``: a line per card with its memory and cores taken and free, its shares
    and the jobs on it, then a summary; empty when the ads hold no card."""
    views = card_views(ads)
    if not views:
        return ""
    lines = [_line(list(GPU_HEADINGS), True), ""]
    lines.extend(_line(gpu_row(view), wide) for view in views)
    return "\n".join(lines) + "\n\n" + gpu_totals(views)


COMPACT_GPU_HEADINGS = ("FreGpu", "GpuShr", "GpuFreeGb")
COMPACT_GPU_WIDTHS = (6, 6, 9)


def compact_gpu_cells(views: list[CardView]) -> list[str]:
    """A machine's ``-compact`` GPU cells: untouched cards, shares held, card memory free (GB)."""
    free = sum(view.card.memory_free for view in views) / 1024
    return [str(sum(view.card.untouched for view in views)), str(sum(view.card.tasks for view in views)),
            f"{free:.1f}"]


def compact_gpu_columns(ads: list) -> dict[str, list[str]] | None:
    """Per machine its ``-compact`` GPU cells, or None when no ad has a card (the columns are left out)."""
    views = card_views(ads)
    if not views:
        return None
    machines: dict[str, list[CardView]] = {}
    for view in views:
        machines.setdefault(view.host, []).append(view)
    return {host: compact_gpu_cells(of_host) for host, of_host in machines.items()}
