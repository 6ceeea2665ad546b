"""A job's timeline from its event log (the events the schedd answers for it): each
event's time, kind and a short sentence, oldest first. Pure: events in, rows out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jobmodel.eventlog import FILE_TRANSFER_HEADLINES, MY_TYPES, EventType

#: What the timeline says of each kind of event (others are named by their type).
WHAT = {
    EventType.SUBMIT: "Submitted", EventType.EXECUTE: "Started running", EventType.EXECUTABLE_ERROR:
    "Could not start its executable", EventType.CHECKPOINTED: "Checkpointed", EventType.JOB_EVICTED: "Evicted",
    EventType.JOB_TERMINATED: "Terminated", EventType.IMAGE_SIZE: "Image size updated",
    EventType.SHADOW_EXCEPTION: "Shadow exception", EventType.JOB_ABORTED: "Removed",
    EventType.JOB_SUSPENDED: "Suspended", EventType.JOB_UNSUSPENDED: "Unsuspended", EventType.JOB_HELD: "Held",
    EventType.JOB_RELEASED: "Released", EventType.JOB_DISCONNECTED: "Disconnected",
    EventType.JOB_RECONNECTED: "Reconnected", EventType.JOB_RECONNECT_FAILED: "Reconnect failed",
    EventType.FILE_TRANSFER: "File transfer",
}
#: Longest detail shown beside an event (a hold reason can be long).
MAX_DETAIL_CHARS = 300


def _detail(kind: EventType, event: Mapping) -> str:
    """The few words that tell this event apart: where it ran, how it ended, why it was held."""
    if kind == EventType.EXECUTE:
        return f"on {event.get('ExecuteHost', '?')}"
    if kind == EventType.JOB_TERMINATED:
        if event.get("TerminatedNormally") is False:
            return f"by signal {event.get('TerminatedBySignal', '?')}"
        return f"with exit code {event.get('ReturnValue', '?')}"
    if kind == EventType.JOB_HELD:
        return str(event.get("HoldReason", ""))[:MAX_DETAIL_CHARS]
    if kind in (EventType.JOB_ABORTED, EventType.JOB_RELEASED):
        return str(event.get("Reason", ""))[:MAX_DETAIL_CHARS]
    if kind == EventType.FILE_TRANSFER:
        return FILE_TRANSFER_HEADLINES.get(event.get("Type"), "")
    return ""


def logged_timeline(events: Iterable) -> list[dict]:
    """Rows for the job page of each logged event (``bindings.JobEvent``): ``time``,
    ``event`` (its ``MyType``, such as ``ExecuteEvent``), ``what`` and ``detail``; in the
    order logged, which is the order they happened."""
    rows = []
    for event in events:
        kind = event.type
        rows.append({"time": int(event.timestamp), "event": MY_TYPES.get(kind, "GenericEvent"),
                     "number": int(kind), "what": WHAT.get(kind, kind.name.replace("_", " ").capitalize()),
                     "detail": _detail(kind, event)})
    return rows


__all__ = ["logged_timeline", "WHAT"]
