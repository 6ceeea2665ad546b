"""The events a job factory (late materialisation) writes to its cluster's event log,
as HTCondor's schedd writes them (``WriteClusterSubmitToUserLog``,
``WriteClusterRemoveToUserLog`` and ``WriteFactoryPauseToUserLog`` in schedd.cpp; the
texts are condor_event.cpp's ClusterSubmitEvent, ClusterRemoveEvent, FactoryPausedEvent
and FactoryResumedEvent):

- 035 "Cluster submitted" when a factory cluster is stored, before its procs' 000s;
- 037 "Job Materialization Paused" when its factory pauses (in Roost, only when a proc
  cannot be made: ``JobMaterializePaused`` = 1 with ``JobMaterializePauseReason``), and
  038 "Job Materialization Resumed" if it runs again (Roost has no command that resumes
  a paused factory yet, neither condor_qedit of ``JobMaterializePaused`` nor a release of
  the factory, so none is written today);
- 036 "Cluster removed" once the cluster ad goes: the factory is complete or removed and
  its last proc has left the queue. It says how many procs were made, from how many
  item rows, and whether the factory was complete, paused or cut short.

Each event is about the whole cluster: proc and subproc -1. The cluster ad is read only
for the factories being watched, after each materialisation pass.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from jobmodel.eventlog import (
    CLUSTER_EVENT_PROC,
    COMPLETION_COMPLETE,
    COMPLETION_INCOMPLETE,
    COMPLETION_PAUSED,
    Event,
    EventType,
)
from jobmodel.states import now_from
from schedd.queue.factory import NEXT_PROC_ID, PAUSED, MaterializeMode
from schedd.queue.stored import decode_entries, value_in

PAUSE_REASON = "JobMaterializePauseReason"
_WATCHED_KEYS = frozenset({NEXT_PROC_ID.lower(), PAUSED.lower(), PAUSE_REASON.lower()})


@attrs.frozen
class FactoryWatch:
    """What was last seen of one factory cluster: where its events go (a LogTarget, or
    None when it has no log), its next proc id, its mode and pause reason, and how many
    procs each item row makes (the ``queue N`` count)."""

    target: object
    next_proc_id: int = 0
    mode: int = MaterializeMode.RUNNING
    reason: str | None = None
    per_row: int = 1


def cluster_event(kind: EventType, cluster_id: int, now: int, attributes: dict) -> Event:
    """An event about the whole of cluster ``cluster_id`` (proc and subproc -1)."""
    return Event(kind, cluster_id, CLUSTER_EVENT_PROC, now, attributes, subproc=CLUSTER_EVENT_PROC)


def rows_begun(next_proc_id: int, per_row: int) -> int:
    """How many item rows the procs made so far come from (each row makes ``per_row``)."""
    per_row = max(per_row, 1)
    return -(-next_proc_id // per_row)


def completion(mode: int) -> int:
    """ClusterRemoveEvent's ``Completion`` for a factory last seen in ``mode``: complete
    when it ran out of items, paused when held, else cut short (removed)."""
    if mode == MaterializeMode.NO_MORE_ITEMS:
        return COMPLETION_COMPLETE
    if mode == MaterializeMode.HOLD:
        return COMPLETION_PAUSED
    return COMPLETION_INCOMPLETE


def removed_event(cluster_id: int, watch: FactoryWatch, now: int) -> Event:
    """The 036 event of a factory cluster whose ad has gone."""
    return cluster_event(EventType.CLUSTER_REMOVE, cluster_id, now, {
        "NextProcId": watch.next_proc_id, "NextRow": rows_begun(watch.next_proc_id, watch.per_row),
        "Completion": completion(watch.mode)})


def pause_events(cluster_id: int, before: FactoryWatch, after: FactoryWatch, now: int) -> list[Event]:
    """037 when the factory went from running to held, 038 when it went back."""
    if before.mode == MaterializeMode.RUNNING and after.mode == MaterializeMode.HOLD:
        attributes = {"PauseCode": int(MaterializeMode.HOLD)}
        if after.reason:
            attributes["Reason"] = after.reason
        return [cluster_event(EventType.FACTORY_PAUSED, cluster_id, now, attributes)]
    if before.mode == MaterializeMode.HOLD and after.mode == MaterializeMode.RUNNING:
        return [cluster_event(EventType.FACTORY_RESUMED, cluster_id, now, {})]
    return []


def _seen(text: str, watch: FactoryWatch) -> FactoryWatch:
    """``watch`` brought up to date from the cluster ad's stored ``text``."""
    entries = decode_entries(text, _WATCHED_KEYS)
    next_proc, mode, reason = (value_in(entries, name.lower()) for name in (NEXT_PROC_ID, PAUSED, PAUSE_REASON))
    return attrs.evolve(watch, next_proc_id=next_proc if type(next_proc) is int else watch.next_proc_id,
                        mode=mode if type(mode) is int else watch.mode,
                        reason=reason if type(reason) is str else None)


# Mutable: the factories being watched.
class FactoryEvents:
    """Writes one schedd's factory events. ``db`` is the queue's database, ``log_of``
    gives a cluster's log target from its stored ad text, ``write(target, events)``
    appends to a log, and ``clock`` gives time."""

    def __init__(self, db, log_of: Callable[[str], object], write: Callable[[object, list[Event]], None],
                 clock) -> None:
        self.db = db
        self.log_of = log_of
        self.write = write
        self.clock = clock
        self.watched: dict[int, FactoryWatch] = {}

    def resume(self, per_row: Callable[[int], int]) -> None:
        """Watch every factory cluster already in the queue (after a restart), without
        writing their 035 again; ``per_row(cluster_id)`` gives each one's queue count."""
        for cluster_id in self.db.factory_cluster_ids():
            text = self.db.get_cluster_attrs(cluster_id)
            if text is not None:
                self.watched[cluster_id] = _seen(text, FactoryWatch(self.log_of(text), per_row=per_row(cluster_id)))

    def submitted(self, cluster_id: int, host: str, per_row: int) -> None:
        """A factory cluster was stored: write its 035 and watch it."""
        text = self.db.get_cluster_attrs(cluster_id)
        if text is None:
            return
        watch = _seen(text, FactoryWatch(self.log_of(text), per_row=per_row))
        self.watched[cluster_id] = watch
        self._write(watch, [cluster_event(EventType.CLUSTER_SUBMIT, cluster_id, self._now(), {"SubmitHost": host})])

    def check(self) -> None:
        """After a materialisation pass: 037/038 for factories that paused or resumed,
        036 for those whose cluster ad has gone."""
        now = self._now()
        for cluster_id, watch in list(self.watched.items()):
            text = self.db.get_cluster_attrs(cluster_id)
            if text is None:
                del self.watched[cluster_id]
                self._write(watch, [removed_event(cluster_id, watch, now)])
                continue
            seen = _seen(text, watch)
            if seen != watch:
                self.watched[cluster_id] = seen
                self._write(seen, pause_events(cluster_id, watch, seen, now))

    def _write(self, watch: FactoryWatch, events: list[Event]) -> None:
        if watch.target is not None and events:
            self.write(watch.target, events)

    def _now(self) -> int:
        return now_from(self.clock)


__all__ = ["FactoryEvents", "FactoryWatch", "cluster_event", "completion", "pause_events", "removed_event",
           "rows_begun"]
