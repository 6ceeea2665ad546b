"""What a submit request becomes before it reaches the queue: a self-contained submit
description (with optional item data and count) expanded into one cluster ad plus
each proc's differences, or ads sent already expanded; either way every attribute
name is a ClassAd identifier and the attributes only the schedd sets (Owner, User,
ClusterId, ProcId, QDate, GlobalJobId) are the schedd's, whatever the ads said.

The schedd never reads a file, runs a command or consults its environment for a
client: ``include``, ``$ENV`` and queue items from files, commands or globs are
refused here and expanded by the client (:func:`schedd.submit.clientside.for_schedd`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import attrs

from classad import ClassAd
from classad.nodes import Literal
from classad.values import UNDEFINED
from schedd.ads import user_name
from schedd.queue import is_attribute_name
from schedd.submit import SubmitOptions, expand, host_predefined, parse_description
from schedd.submit.clientside import MAX_MEASURED_FILES
from schedd.submit.cluster import DELETED, ExpandedCluster
from schedd.submit.jobs import classad_node, planned_procs
from schedd.submit.queue_args import with_queue_args  # noqa: F401 - the route's import

#: Attributes the schedd alone sets on a new job; a client's values are dropped.
SCHEDD_SET = ("ClusterId", "ProcId", "User", "Owner", "QDate", "GlobalJobId", "UidDomain")
_SCHEDD_SET_KEYS = frozenset(name.lower() for name in SCHEDD_SET)


class IntakeError(ValueError):
    """A submit request cannot become jobs; the message says what to fix."""


@attrs.frozen
class ClusterToStore:
    """One cluster ready for :meth:`schedd.queue.JobQueue.submit_cluster`."""

    cluster_ad: ClassAd
    proc_ads: tuple[ClassAd, ...]


def items_queue_args(itemdata: Sequence[Mapping[str, str] | str], count: int) -> str:
    """The arguments of a ``queue`` statement giving ``itemdata``: ``N vars from ( ... )``
    with one line per item (a plain string item is the ``Item`` variable).

    Raises:
        IntakeError: items are neither all strings nor all objects with the same keys.
    """
    if not itemdata:
        raise IntakeError("$.itemdata: the list is empty, so it would submit no job; give at least one item "
                          "(or leave $.itemdata out to use the description's queue statement)")
    if all(isinstance(item, str) for item in itemdata):
        lines = [_one_line(item, index) for index, item in enumerate(itemdata)]
        variables = ""
    elif all(isinstance(item, Mapping) for item in itemdata):
        names = list(itemdata[0])
        for index, item in enumerate(itemdata):
            if set(item) != set(names):
                raise IntakeError(f"$.itemdata[{index}]: has keys {sorted(item)}, but item 0 has {sorted(names)}; "
                                  f"every item must name the same variables")
        lines = [", ".join(_one_line(str(item[name]), index) for name in names) for index, item in enumerate(itemdata)]
        variables = ",".join(names)
    else:
        raise IntakeError("$.itemdata: give a list of strings or a list of objects of variable values, not a mix")
    head = " ".join(part for part in (str(count) if count > 0 else "", variables) if part)
    body = "\n".join(lines)
    return f"{head} from (\n{body}\n)".lstrip()


def _one_line(text: str, index: int) -> str:
    if "\n" in text or ")" == text.strip():
        raise IntakeError(f"$.itemdata[{index}]: an item value cannot hold a newline or be a lone ')'")
    return text


def expand_description(text: str, *, cluster_id: int, owner: str, iwd: str, now: int,
                       environ: Mapping[str, str], file_sizes: Mapping[str, int] | None = None) -> ClusterToStore:
    """The one cluster a submit description makes (every queue statement's procs
    numbered on from the one before), for ``owner`` submitting from ``iwd``.

    Raises:
        SubmitError: the description is wrong (the message names the line).
        IntakeError: it makes no procs, or too many.
    """
    description, options = _parsed(text, cluster_id, owner, iwd, now, environ, file_sizes)
    expanded = [cluster for cluster in expand(description, options) if cluster.procs]
    if not expanded:
        raise IntakeError("the submit description queues no jobs (a queue statement with a count of 0 or no items)")
    return _one_cluster(expanded)


def description_procs(text: str, *, owner: str, iwd: str, now: int, environ: Mapping[str, str],
                      file_sizes: Mapping[str, int] | None = None) -> int:
    """How many procs :func:`expand_description` makes of ``text``, counted from its
    queue statements without expanding a proc.

    Raises:
        SubmitError: the description or a queue statement is wrong.
    """
    return planned_procs(*_parsed(text, 1, owner, iwd, now, environ, file_sizes))


def _parsed(text: str, cluster_id: int, owner: str, iwd: str, now: int, environ: Mapping[str, str],
            file_sizes: Mapping[str, int] | None):
    """The description and the options it is expanded with, in the schedd's mode."""
    description = parse_description(text, cwd=iwd, predefined=host_predefined(), self_contained=True)
    options = SubmitOptions(cluster_id=cluster_id, proc_id=0, qdate=now, owner=owner, cwd=iwd,
                            environ=dict(environ), self_contained=True, file_sizes=dict(file_sizes or {}))
    return description, options


def _node(value: object):
    return Literal(UNDEFINED) if value is DELETED else classad_node(value)


def _one_cluster(expanded: list[ExpandedCluster]) -> ClusterToStore:
    """Merge every queue statement's expansion into one cluster: the first
    statement's common attributes are the cluster's; later statements' procs carry
    whatever differs from them. A proc's ProcId (and any other attribute the schedd
    sets) is left out: the queue numbers procs itself, and a proc with no other
    difference is then stored without being copied."""
    first = expanded[0]
    common_values = {key: value for key, (_, value) in first.cluster.items()}
    cluster_ad = ClassAd.from_entries((name, classad_node(value)) for name, value in first.cluster.values())
    # a proc differing only in what the schedd sets shares one empty ad (ads are never changed)
    nothing = ClassAd()
    diffs = first.procs
    procs = [nothing if diffs.is_plain(index) or diffs[index].keys() <= _SCHEDD_SET_KEYS else
             ClassAd.from_entries((name, _node(value)) for key, (name, value) in diffs[index].items()
                                  if key not in _SCHEDD_SET_KEYS) for index in range(len(diffs))]
    for later in expanded[1:]:
        for index in range(len(later.procs)):
            whole = later.proc_attrs(index)
            differs = [(name, _node(value)) for key, (name, value) in whole.items()
                       if key not in _SCHEDD_SET_KEYS and (key not in common_values or common_values[key] != value)]
            missing = [(name, Literal(UNDEFINED)) for key, (name, _) in first.cluster.items() if key not in whole]
            procs.append(ClassAd.from_entries(differs + missing))
    return ClusterToStore(cluster_ad, tuple(procs))


def owned_by(cluster: ClusterToStore, owner: str, uid_domain: str) -> ClusterToStore:
    """``cluster`` as the schedd stores it for ``owner``: Owner is theirs, User is
    ``owner@UID_DOMAIN`` (:func:`schedd.ads.user_name`, the name of the owner's Submitter
    ad and of its usage, whatever domain the submitter's token names), UidDomain is this
    schedd's ``UID_DOMAIN`` (an execute machine runs the job as its owner only within
    the same domain), and no ad keeps a ClusterId, ProcId, QDate or GlobalJobId of its
    own (the queue sets those)."""
    cluster_ad = without_schedd_set(cluster.cluster_ad)
    cluster_ad["Owner"] = owner
    cluster_ad["User"] = user_name(owner, uid_domain)
    cluster_ad["UidDomain"] = uid_domain
    procs, last, made = [], None, None
    for proc in cluster.proc_ads:
        if proc is not last:  # the procs of a plain ``queue N`` share one ad: looked at once
            last, made = proc, without_schedd_set(proc)
        procs.append(made)
    return ClusterToStore(cluster_ad, tuple(procs))


def without_schedd_set(ad: ClassAd) -> ClassAd:
    """``ad`` without the attributes the schedd sets (sharing its other entries)."""
    keys = ad.entries_by_key()
    if keys.keys().isdisjoint(_SCHEDD_SET_KEYS):
        return ad
    return ad.derive((), deleted=[name for name in SCHEDD_SET if name.lower() in keys])


def checked_names(cluster: ClusterToStore) -> ClusterToStore:
    """``cluster`` when every attribute name is a ClassAd identifier.

    Raises:
        IntakeError: a name that is not (it could forge a line of ``roost q -l``).
    """
    last = None
    for index, ad in enumerate((cluster.cluster_ad, *cluster.proc_ads)):
        if ad is last:  # procs sharing one ad (a plain ``queue N``) are checked once
            continue
        last = ad
        for entry in ad.entries_by_key().values():
            name = entry.name
            if not is_attribute_name(name):
                where = "$.cluster_ad" if index == 0 else f"$.proc_ads[{index - 1}]"
                raise IntakeError(f"{where}: {name!r} is not an attribute name (a letter or '_' followed by "
                                  f"letters, digits or '_')")
    return cluster


def checked_file_sizes(sizes: object) -> dict[str, int]:
    """The file sizes a client measured: absolute paths to KiB, at most
    :data:`MAX_MEASURED_FILES` of them.

    Raises:
        IntakeError: not such a mapping.
    """
    if sizes is None:
        return {}
    if not isinstance(sizes, dict) or len(sizes) > MAX_MEASURED_FILES:
        raise IntakeError(f"$.file_sizes: give at most {MAX_MEASURED_FILES} absolute paths with their sizes in KiB")
    for path, kib in sizes.items():
        if not os.path.isabs(path) or type(kib) is not int or not 0 <= kib < 2**53:
            raise IntakeError(f"$.file_sizes: {path!r}: expected an absolute path with a size in KiB (0 or more)")
    return sizes


def checked_iwd(iwd: object) -> str:
    """The submit directory a request names: an absolute path.

    Raises:
        IntakeError: missing, not a string, or relative.
    """
    if not isinstance(iwd, str) or not os.path.isabs(iwd):
        raise IntakeError(f"$.iwd: the submit directory must be an absolute path, got {iwd!r}")
    return iwd
