"""Gangs at submit: jobs that start on all their slots together or not at all.

Two forms make one. HTCondor's parallel universe (``universe = parallel``,
``machine_count = N``): submit makes the one proc HTCondor's submit makes, with
``MinHosts``/``MaxHosts`` = N and ``$(Node)`` left as HTCondor's node placeholder; the
schedd then queues it as N procs, one per node, the placeholder replaced by the node's
number (HTCondor's shadow does that replacement when it starts the nodes). And, for
vanilla jobs, ``gang_size = N``: the cluster's N procs are one gang. Either way every
proc carries ``GangId`` ("<schedd name>#<ClusterId>") and ``GangSize`` (N).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from schedd.submit.cluster import RuleReader
from schedd.submit.errors import SubmitError

if TYPE_CHECKING:  # the ClassAd library loads only where gangs are made (the schedd), not to expand a description
    from classad import ClassAd

#: What HTCondor's submit writes for ``$(Node)`` in a parallel universe job.
NODE_PLACEHOLDER = "#pArAlLeLnOdE#"
PARALLEL_UNIVERSE = 11
#: No gang may ask for more slots at once than this (a negotiator reserves them all in one cycle).
MAX_GANG_SIZE = 4096


def gang_size(r: RuleReader) -> None:
    """``gang_size = N``: the cluster's N procs start together (vanilla jobs only)."""
    text = r.get("gang_size")
    if text is None or not text.strip():
        return
    universe = (r.get("universe") or "vanilla").strip().lower()
    if universe == "parallel":
        raise SubmitError("gang_size is for vanilla jobs; a parallel universe job gives machine_count",
                          command="gang_size")
    r["GangSize"] = _size(text, "gang_size")


def machine_count(r: RuleReader) -> None:
    """``machine_count`` of a parallel universe job must be a whole number of slots."""
    text = r.get("machine_count")
    if text is not None and (r.get("universe") or "").strip().lower() == "parallel":
        _size(text, "machine_count")


def _size(text: str, command: str) -> int:
    try:
        size = int(text.strip())
    except ValueError:
        raise SubmitError(f"{command} must be a whole number of slots, got {text.strip()!r}",
                          command=command) from None
    if not 1 <= size <= MAX_GANG_SIZE:
        raise SubmitError(f"{command} must be between 1 and {MAX_GANG_SIZE}, got {size}", command=command)
    return size


def gang_procs(cluster_ad: ClassAd, proc_ads: tuple[ClassAd, ...], schedd_name: str,
               cluster_id: int) -> tuple[ClassAd, tuple[ClassAd, ...]]:
    """The cluster as the schedd queues it: a parallel universe job's procs become one
    proc per node, and a gang (parallel, or ``GangSize``) gets ``GangId``/``GangSize``.
    Any other cluster comes back unchanged.

    Raises:
        SubmitError: ``gang_size`` does not equal the number of procs, or a gang is too large.
    """
    if cluster_ad.evaluate("JobUniverse") == PARALLEL_UNIVERSE:
        nodes: list[ClassAd] = []
        for proc in proc_ads:
            nodes += _nodes(cluster_ad, proc, first=len(nodes))
        proc_ads = tuple(nodes)
        size = len(proc_ads)
    else:
        size = cluster_ad.evaluate("GangSize")
        if type(size) is not int or size <= 1:
            return cluster_ad, proc_ads
        if size != len(proc_ads):
            raise SubmitError(f"gang_size = {size} but the description queues {len(proc_ads)} jobs; "
                              f"a gang is one cluster of exactly gang_size jobs", command="gang_size")
    if size > MAX_GANG_SIZE:
        raise SubmitError(f"a gang of {size} slots is more than the {MAX_GANG_SIZE} one job may ask for",
                          command="machine_count")
    cluster_ad = cluster_ad.copy()
    cluster_ad["GangId"] = f"{schedd_name}#{cluster_id}"
    cluster_ad["GangSize"] = size
    return cluster_ad, proc_ads


def _nodes(cluster_ad: ClassAd, proc: ClassAd, first: int) -> list[ClassAd]:
    """One proc per node of a parallel proc, ``$(Node)`` replaced by the node's number
    counted across the cluster from ``first`` (the node's proc number once queued)."""
    hosts = proc.evaluate("MaxHosts") if "MaxHosts" in proc else cluster_ad.evaluate("MaxHosts")
    count = hosts if type(hosts) is int and hosts >= 1 else 1
    if first + count > MAX_GANG_SIZE:
        raise SubmitError(f"the parallel job asks for {first + count} or more slots, more than the "
                          f"{MAX_GANG_SIZE} one job may ask for", command="machine_count")
    from classad.unparse import unparse_expr

    texts = {name: unparse_expr(ad.expression(name)) for ad in (cluster_ad, proc) for name in ad}
    marked = {name: text for name, text in texts.items() if NODE_PLACEHOLDER in text}
    return [_node(proc, marked, first + node) for node in range(count)]


def _node(proc: ClassAd, marked: dict[str, str], node: int) -> ClassAd:
    if not marked:
        return proc.copy()
    from classad import ExprTree

    changes = [(name, ExprTree(text.replace(NODE_PLACEHOLDER, str(node))).node) for name, text in marked.items()]
    return proc.derive(changes)
