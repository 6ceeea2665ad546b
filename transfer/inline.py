"""Which transfer steps are small enough to run in the daemon's own thread.

A worker thread costs each step two hand-overs (a wake-up there and one back),
more than packing or unpacking a few kilobytes takes, and a job runs four such
steps. Steps that touch the network (URL inputs and outputs) or may walk big
trees or files stay in the thread pool; the rest run inline.
"""

from __future__ import annotations

import os

from transfer.plan import InputPlan, OutputPlan, is_url

#: Payloads up to this size are packed or unpacked inline.
INLINE_BYTES = 256 * 1024


def input_send_is_light(plan: InputPlan) -> bool:
    """Whether planning the input stream needs no thread: no URL inputs, no directories
    to walk (the stream's bytes are read as it is sent, not here)."""
    if plan.urls:
        return False
    return not any(os.path.isdir(item.source) for item in plan.files)


def stream_is_small(size: int, plan: InputPlan | OutputPlan) -> bool:
    """Whether a received stream of ``size`` bytes can be unpacked inline: small, and
    no URL to fetch or upload to afterwards."""
    return size <= INLINE_BYTES and not _has_urls(plan)


def sandbox_is_small(sandbox: str, plan: OutputPlan) -> bool:
    """Whether packing ``sandbox``'s outputs can run inline: its top level holds only
    files, together at most :data:`INLINE_BYTES`, and no output goes to a URL."""
    if _has_urls(plan):
        return False
    total = 0
    try:
        with os.scandir(sandbox) as entries:
            for entry in entries:
                if not entry.is_file(follow_symlinks=False):
                    return False
                total += entry.stat(follow_symlinks=False).st_size
                if total > INLINE_BYTES:
                    return False
    except OSError:
        return False
    return True


def outputs_go_to_urls(plan: OutputPlan) -> bool:
    """Whether any output may go to a URL (``OutputDestination``, a URL remap or stream)."""
    targets = [target for _, target in plan.remaps] + [plan.stdout or "", plan.stderr or ""]
    return plan.destination is not None or any(is_url(target) for target in targets)


def _has_urls(plan: InputPlan | OutputPlan) -> bool:
    return bool(plan.urls) if isinstance(plan, InputPlan) else outputs_go_to_urls(plan)


__all__ = ["INLINE_BYTES", "input_send_is_light", "stream_is_small", "sandbox_is_small", "outputs_go_to_urls"]
