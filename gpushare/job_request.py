"""Reading a job ad's GPU request: the attributes the submit commands make
(``RequestGPUs``, ``RequestGPUMemory``, ``RequestGPUMemoryPercent``, ``RequestGPUCores``,
``RequestGPUIds``, ``AvoidGPUIds``, ``RequestGPUTypes``, ``AvoidGPUTypes``,
``GPUPlacementPolicy``, ``GPUNumaBind``) as one :class:`ShareRequest`."""

from __future__ import annotations

import math

import classad
from classad.values import Value
from gpushare.errors import GpuRequestError
from gpushare.placement import DEFAULT_POLICY, ShareRequest, parse_policy

SHARE_ATTRIBUTES = ("RequestGPUMemory", "RequestGPUMemoryPercent", "RequestGPUCores")


def _number(job: classad.ClassAd, attr: str, target: classad.ClassAd | None) -> int | None:
    """An attribute's value as a whole number (a fraction rounds up, as the startd's
    requests do), None when the job does not give it."""
    if attr not in job:
        return None
    value = job.evaluate(attr, target)
    if isinstance(value, Value) or value is None:
        return None
    if type(value) is bool or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise GpuRequestError(f"{attr} must be a number, not {value!r}")
    return math.ceil(value)


def _words(job: classad.ClassAd, attr: str, target: classad.ClassAd | None) -> tuple[str, ...]:
    """A list attribute given as a comma string (or a ClassAd list of strings)."""
    if attr not in job:
        return ()
    value = job.evaluate(attr, target)
    if isinstance(value, Value) or value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split(",")
    return tuple(str(item).strip() for item in items if str(item).strip())


def request_from_job(job: classad.ClassAd, target: classad.ClassAd | None = None,
                     default_policy: tuple[str, ...] = DEFAULT_POLICY) -> ShareRequest | None:
    """The GPU request of ``job`` (evaluated against ``target``, a slot, when given), or
    None when it asks for no GPU. A share attribute without ``RequestGPUs`` means one
    card, as HAMi's default count does.

    Raises:
        GpuRequestError: a value has the wrong type or is out of range, naming it.
    """
    count = _number(job, "RequestGPUs", target)
    shares = {attr: _number(job, attr, target) for attr in SHARE_ATTRIBUTES}
    if not count and all(v is None for v in shares.values()):
        return None
    if count is not None and count < 0:
        raise GpuRequestError(f"RequestGPUs must be 0 or more, not {count}")
    policy = job.evaluate("GPUPlacementPolicy", target) if "GPUPlacementPolicy" in job else None
    bind = job.evaluate("GPUNumaBind", target) if "GPUNumaBind" in job else None
    return ShareRequest(
        count=count or 1,
        memory_mib=shares["RequestGPUMemory"],
        memory_percent=shares["RequestGPUMemoryPercent"],
        cores=shares["RequestGPUCores"],
        use_ids=_words(job, "RequestGPUIds", target),
        avoid_ids=_words(job, "AvoidGPUIds", target),
        use_types=_words(job, "RequestGPUTypes", target),
        avoid_types=_words(job, "AvoidGPUTypes", target),
        policy=parse_policy(policy) if type(policy) is str else default_policy,
        numa_bind=bind is True,
    )
