"""Grouping idle jobs into resource requests: jobs whose significant attributes are
the same can only match the same slots, so the negotiator matches one representative
with a count instead of every job. The schedd builds them, as HTCondor's does.

A gang (procs sharing a ``GangId``, :mod:`schedd.submit.gangs`) is one request for
all its procs, sent only while every one of them is idle.

The significant attributes are those matching can read from a job: the names slot
ads refer to on the other side (``TARGET.x``, or a name the slot does not define),
the job's own Requirements, Rank and resource requests, and whatever those refer to
in the job in turn. The schedd calls :func:`build_autoclusters` over its idle jobs;
nothing here knows how the schedd stores them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
from attrs import frozen

from classad import ClassAd, ExprTree
from classad.nodes import Literal
from classad.references import references
from classad.signature import ExpressionTexts, attribute_key
from daemoncore.wire.resource_request import ResourceRequest

REQUEST_ATTRIBUTES = (
    "Requirements", "Rank", "RequestCpus", "RequestMemory", "RequestDisk", "RequestGPUs",
    "RequestGPUMemory", "RequestGPUMemoryPercent", "RequestGPUCores", "RequestGPUIds",
    "AvoidGPUIds", "GPUPlacementPolicy", "GPUNumaBind",
)


@frozen
class AutoCluster:
    """Idle jobs that match alike: their shared signature, one job standing for all,
    and the job ids in the order the schedd would run them."""

    cluster_id: int
    signature: tuple
    representative: ClassAd = attrs.field(eq=False)
    job_ids: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.job_ids)


def _other_side_names(ad: ClassAd, node) -> list[str]:
    """Names ``node`` (an expression in ``ad``) reads from the other ad of a match."""
    out = []
    for name in references(ad, node)[1]:
        if name[:7].lower() == "target.":
            name = name[7:]
        out.append(name.split(".")[0].split("[")[0].lower())
    return out


def significant_attributes(slot_ads: Iterable[ClassAd], expressions: Iterable = (),
                           extra: Iterable[str] = ()) -> frozenset[str]:
    """Lower-cased names of job attributes that matching against ``slot_ads`` can read.

    ``expressions`` are further expressions evaluated with the slot as MY and the job
    as TARGET (``NEGOTIATOR_PRE_JOB_RANK``/``POST_JOB_RANK``), ``extra`` names to add
    (``ADD_SIGNIFICANT_ATTRIBUTES``).
    """
    names = {n.lower() for n in REQUEST_ATTRIBUTES}
    names.update(n.lower() for n in extra)
    seen: set[int] = set()
    for slot in slot_ads:
        for entry in slot.entries_by_key().values():
            node = entry.expr
            if type(node) is Literal or id(node) in seen:
                continue
            seen.add(id(node))
            names.update(_other_side_names(slot, node))
    empty = ClassAd()
    for expr in expressions:
        node = expr.node if isinstance(expr, ExprTree) else expr
        names.update(_other_side_names(empty, node))
    return frozenset(names)


_EMPTY = ClassAd()
_OWN_NAMES: dict[int, tuple[object, tuple[str, ...]]] = {}


def _own_side_names(node) -> tuple[str, ...]:
    """Names ``node`` may read from its own ad (everything but ``TARGET.x``), remembered
    per tree since the jobs of one cluster share their trees."""
    hit = _OWN_NAMES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    names = tuple(n.split(".")[0].lower() for n in references(_EMPTY, node)[1]
                  if n[:7].lower() != "target.")
    if len(_OWN_NAMES) > 100_000:
        _OWN_NAMES.clear()
    _OWN_NAMES[id(node)] = (node, names)
    return names


def _closure(job: ClassAd, significant: frozenset[str]) -> list[str]:
    """The significant names ``job`` defines, plus the job attributes they refer to."""
    attrs_ = job.entries_by_key()
    todo = [n for n in significant if n in attrs_]
    found = set(todo)
    while todo:
        node = attrs_[todo.pop()].expr
        if type(node) is Literal:
            continue
        for key in _own_side_names(node):
            if key in attrs_ and key not in found:
                found.add(key)
                todo.append(key)
    return sorted(found)


def signature_of(job: ClassAd, significant: frozenset[str], texts: ExpressionTexts | None = None) -> tuple:
    """The tuple two jobs share exactly when they match alike."""
    texts = texts or ExpressionTexts()
    entries = job.entries_by_key()
    return tuple(attribute_key(key, entries[key].expr, texts) for key in _closure(job, significant))


def build_autoclusters(jobs: Iterable[tuple[str, ClassAd]] | Mapping[str, ClassAd],
                       significant: frozenset[str]) -> list[AutoCluster]:
    """Idle jobs ``(job_id, ad)`` grouped by signature, in order of each group's first
    job; the first job of a group is its representative."""
    if isinstance(jobs, Mapping):
        jobs = jobs.items()
    texts = ExpressionTexts()
    groups: dict[tuple, tuple[ClassAd, list[str]]] = {}
    for job_id, ad in jobs:
        signature = _gang_key(ad) or signature_of(ad, significant, texts)
        group = groups.get(signature)
        if group is None:
            groups[signature] = (ad, [job_id])
        else:
            group[1].append(job_id)
    whole = {sig: group for sig, group in groups.items() if _is_whole(sig, group[1])}
    return [AutoCluster(i + 1, sig, ad, tuple(ids)) for i, (sig, (ad, ids)) in enumerate(whole.items())]


def _gang_key(job: ClassAd) -> tuple | None:
    """A gang's procs are one request whatever they differ in: ``("#gang", GangId, size)``."""
    gang, size = job.evaluate("GangId"), job.evaluate("GangSize")
    if type(gang) is str and type(size) is int and size > 1:
        return ("#gang", gang, size)
    return None


def _is_whole(signature: tuple, job_ids: list[str]) -> bool:
    """False for a gang with fewer idle procs than its size (some still run or are held):
    it asks for nothing until all its pieces can start together."""
    return not (signature[:1] == ("#gang",) and len(job_ids) != signature[2])


def resource_requests(clusters: Iterable[AutoCluster], submitter: str,
                      schedd_address: str) -> list[ResourceRequest]:
    """One resource request per autocluster, as a schedd answers the negotiator."""
    return [
        ResourceRequest(f"{submitter}#{c.cluster_id}", submitter, schedd_address,
                        c.count, c.representative, c.job_ids)
        for c in clusters
    ]
