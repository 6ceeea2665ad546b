"""Removing a job straight from its stored text: an idle, held or completed job whose
text says plainly (in literals) where it runs and that nothing keeps it in the queue
is removed by :func:`jobmodel.states.removal`'s rules without decoding its
expressions or building its ad, and the jobs of one cluster alike (whose own texts
name none of the attributes involved) by one plan, their texts not even parsed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from jobmodel import states
from jobmodel.errors import InvalidTransitionError
from jobmodel.states import JobId, JobStatus, Transition
from schedd.queue.db import JobRow
from schedd.queue.screen import mentions, quoted
from schedd.queue.stored import ChangeTexts, encode_texts, literal_of, stored_texts

#: What a removal must read plainly from a job's stored text.
REMOVAL_KEYS = ("remotehost", "remotepool", "leavejobinqueue")
#: The statuses a removal takes a job out of the queue from at once (no shadow to wait for).
QUIET_STATUSES = frozenset(int(status) for status in JobStatus if status not in states.ACTIVE)


def changed_texts(texts: dict[str, list], cluster: Mapping[str, tuple], changes: Mapping[str, Any],
                  values: ChangeTexts) -> None:
    """Apply ``changes`` to a proc's stored ``[name, text]`` pairs by lower-case name: a
    deleted attribute its cluster (entries or stored pairs, by lower-case name) has is
    kept as a removal mark (None text); values are printed through ``values``."""
    for name, value in changes.items():
        key = name.lower()
        if value is states.DELETE:
            if key in cluster:
                texts[key] = [cluster[key][0], None]
            else:
                texts.pop(key, None)
        else:
            texts[key] = [name, values.of(value)[1]]


@attrs.frozen
class RemovalPlan:
    """How every job of one cluster in one status is removed from its stored text at one
    time for one reason, when its own text names none of ``keys``: the removal decided for
    the first (see :func:`jobmodel.states.removal_alike`) and the stored pairs its
    history record gains."""

    decided: Transition
    #: The changed pairs as JSON, comma-separated, to follow the proc's own pairs.
    added: str
    #: The lower-case names a proc's text must not mention (see :func:`~schedd.queue.screen.quoted`).
    keys: re.Pattern

    def history_text(self, proc_text: str) -> str:
        """The stored text of the job's history record: its pairs, then the changed ones
        (what re-encoding them all would write, without parsing them)."""
        return f"[{self.added}]" if proc_text == "[]" else f"{proc_text[:-1]},{self.added}]"


def removed(row: JobRow, cluster: Mapping[str, tuple], reason: str, now: int, values: ChangeTexts,
            plans: dict[tuple[int, int], RemovalPlan | None] | None = None
            ) -> tuple[Transition, str | Iterable[list]] | None:
    """The removal of the job of ``row`` (its cluster's stored pairs ``cluster``) from its
    stored text, with its history record's text or stored pairs; None for a job that
    cannot be removed so. ``plans``: the :class:`RemovalPlan` of each cluster and status
    met so far for this reason and time, filled in here.

    Raises:
        InvalidTransitionError: the job is already Removed.
    """
    if plans is not None:
        key = (row.cluster_id, row.status)
        plan = plans[key] if key in plans else plans.setdefault(key, removal_plan(row, cluster, reason, now, values))
        if plan is not None and not mentions(row.attrs, plan.keys):
            return states.removal_alike(plan.decided, JobId(row.cluster_id, row.proc_id)), plan.history_text(row.attrs)
    texts = stored_texts(row.attrs)
    plain = plain_values(cluster, texts, REMOVAL_KEYS)
    if plain is None or plain["leavejobinqueue"] not in (None, False) or row.status not in QUIET_STATUSES:
        return None
    facts = states.JobFacts(JobId(row.cluster_id, row.proc_id), JobStatus(row.status),
                            *(value if type(value) is str else None
                              for value in (plain["remotehost"], plain["remotepool"])))
    transition = states.removal(facts, reason, now)
    changed_texts(texts, cluster, transition.changes, values)
    return transition, texts.values()


def removal_plan(row: JobRow, cluster: Mapping[str, tuple], reason: str, now: int,
                 values: ChangeTexts) -> RemovalPlan | None:
    """The plan removing the jobs of ``row``'s cluster and status whose texts name
    nothing involved (as :func:`removed` would, from their cluster's stored pairs
    alone), or None when such a job cannot be removed from its text."""
    plain = plain_values(cluster, {}, REMOVAL_KEYS)
    if plain is None or plain["leavejobinqueue"] not in (None, False) or row.status not in QUIET_STATUSES:
        return None
    host, pool = (value if type(value) is str else None for value in (plain["remotehost"], plain["remotepool"]))
    try:
        decided = states.removal(states.JobFacts(JobId(row.cluster_id, row.proc_id), JobStatus(row.status), host, pool),
                                 reason, now)
    except InvalidTransitionError:
        return None
    texts: dict[str, list] = {}
    changed_texts(texts, cluster, decided.changes, values)
    return RemovalPlan(decided, encode_texts(texts.values())[1:-1],
                       quoted({*REMOVAL_KEYS, *(name.lower() for name in decided.changes)}))


def plain_values(cluster: Mapping[str, tuple], texts: Mapping[str, list], keys) -> dict[str, object] | None:
    """The values of ``keys`` (lower case) in a job from its proc's stored pairs over its
    cluster's, None for an absent (or deleted) one; None when one is not a plain literal."""
    found: dict[str, object] = {}
    for key in keys:
        pair = texts.get(key) or cluster.get(key)
        if pair is None or pair[1] is None:
            found[key] = None
            continue
        node = literal_of(pair[1])
        if node is None:
            return None
        found[key] = node.value
    return found


__all__ = ["REMOVAL_KEYS", "QUIET_STATUSES", "RemovalPlan", "changed_texts", "plain_values", "removal_plan", "removed"]
