"""The user job event log: events as values, written in HTCondor's text format
(or as JSON lines) to the file a job's ``log`` command names, under an exclusive
``fcntl`` lock so several writers never interleave an event."""

from __future__ import annotations

import enum
import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from jobmodel.errors import EventLogError


class EventType(enum.IntEnum):
    """Event numbers, named as HTCondor's ``JobEventType``."""

    SUBMIT = 0
    EXECUTE = 1
    EXECUTABLE_ERROR = 2
    CHECKPOINTED = 3
    JOB_EVICTED = 4
    JOB_TERMINATED = 5
    IMAGE_SIZE = 6
    SHADOW_EXCEPTION = 7
    GENERIC = 8
    JOB_ABORTED = 9
    JOB_SUSPENDED = 10
    JOB_UNSUSPENDED = 11
    JOB_HELD = 12
    JOB_RELEASED = 13
    NODE_EXECUTE = 14
    NODE_TERMINATED = 15
    POST_SCRIPT_TERMINATED = 16
    GLOBUS_SUBMIT = 17
    GLOBUS_SUBMIT_FAILED = 18
    GLOBUS_RESOURCE_UP = 19
    GLOBUS_RESOURCE_DOWN = 20
    REMOTE_ERROR = 21
    JOB_DISCONNECTED = 22
    JOB_RECONNECTED = 23
    JOB_RECONNECT_FAILED = 24
    GRID_RESOURCE_UP = 25
    GRID_RESOURCE_DOWN = 26
    GRID_SUBMIT = 27
    JOB_AD_INFORMATION = 28
    JOB_STATUS_UNKNOWN = 29
    JOB_STATUS_KNOWN = 30
    JOB_STAGE_IN = 31
    JOB_STAGE_OUT = 32
    ATTRIBUTE_UPDATE = 33
    PRESKIP = 34
    CLUSTER_SUBMIT = 35
    CLUSTER_REMOVE = 36
    FACTORY_PAUSED = 37
    FACTORY_RESUMED = 38
    NONE = 39
    FILE_TRANSFER = 40
    RESERVE_SPACE = 41
    RELEASE_SPACE = 42
    FILE_COMPLETE = 43
    FILE_USED = 44
    FILE_REMOVED = 45
    DATAFLOW_JOB_SKIPPED = 46
    COMMON_FILES = 47


#: ``MyType`` of each event's ClassAd form (JSON lines and the bindings).
MY_TYPES = {
    EventType.SUBMIT: "SubmitEvent", EventType.EXECUTE: "ExecuteEvent",
    EventType.EXECUTABLE_ERROR: "ExecutableErrorEvent", EventType.CHECKPOINTED: "CheckpointedEvent",
    EventType.JOB_EVICTED: "JobEvictedEvent", EventType.JOB_TERMINATED: "JobTerminatedEvent",
    EventType.IMAGE_SIZE: "JobImageSizeEvent", EventType.SHADOW_EXCEPTION: "ShadowExceptionEvent",
    EventType.GENERIC: "GenericEvent", EventType.JOB_ABORTED: "JobAbortedEvent",
    EventType.JOB_SUSPENDED: "JobSuspendedEvent", EventType.JOB_UNSUSPENDED: "JobUnsuspendedEvent",
    EventType.JOB_HELD: "JobHeldEvent", EventType.JOB_RELEASED: "JobReleaseEvent",
    EventType.JOB_DISCONNECTED: "JobDisconnectedEvent", EventType.JOB_RECONNECTED: "JobReconnectedEvent",
    EventType.JOB_RECONNECT_FAILED: "JobReconnectFailedEvent", EventType.FILE_TRANSFER: "FileTransferEvent",
    EventType.CLUSTER_SUBMIT: "ClusterSubmitEvent", EventType.CLUSTER_REMOVE: "ClusterRemoveEvent",
    EventType.FACTORY_PAUSED: "FactoryPausedEvent", EventType.FACTORY_RESUMED: "FactoryResumedEvent",
}

#: The proc and subproc numbers of an event about a whole cluster (035-038): HTCondor
#: writes them as ``-1``, so the header reads ``(123.-01.-01)``.
CLUSTER_EVENT_PROC = -1
#: ``Completion`` of a 036 event, as condor_event.h's ClusterRemoveEvent::CompletionCode,
#: and the word its text form writes for each.
COMPLETION_ERROR, COMPLETION_INCOMPLETE, COMPLETION_COMPLETE, COMPLETION_PAUSED = -1, 0, 1, 2

#: The headline of each 040 event by its ``Type`` (condor_event.h ``FileTransferEventType``).
FILE_TRANSFER_HEADLINES = {2: "Started transferring input files", 3: "Finished transferring input files",
                           5: "Started transferring output files", 6: "Finished transferring output files"}

#: The resources of the 005 table: row label, and the attribute stem of each column.
RESOURCE_ROWS = (("Cpus", "Cpus"), ("Disk (KB)", "Disk"), ("GPUs", "GPUs"), ("Memory (MB)", "Memory"))

ZERO_USAGE = "Usr 0 00:00:00, Sys 0 00:00:00"
USAGE_LINES = (("RunRemoteUsage", "Run Remote Usage"), ("RunLocalUsage", "Run Local Usage"),
               ("TotalRemoteUsage", "Total Remote Usage"), ("TotalLocalUsage", "Total Local Usage"))
BYTES_LINES = (("SentBytes", "Run Bytes Sent By Job"), ("ReceivedBytes", "Run Bytes Received By Job"),
               ("TotalSentBytes", "Total Bytes Sent By Job"),
               ("TotalReceivedBytes", "Total Bytes Received By Job"))


@attrs.frozen
class Event:
    """One event for one job: its type, ``cluster.proc.subproc``, time (epoch seconds)
    and its attributes, named as in HTCondor's event ClassAds."""

    type: EventType
    cluster: int
    proc: int
    time: int
    attributes: Mapping[str, Any] = attrs.field(factory=dict)
    subproc: int = 0


def format_usage(user_seconds: float, system_seconds: float) -> str:
    """CPU usage as the event log writes it: ``Usr D HH:MM:SS, Sys D HH:MM:SS``."""
    return f"Usr {_dhms(user_seconds)}, Sys {_dhms(system_seconds)}"


def _dhms(seconds: float) -> str:
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days} {hours:02d}:{minutes:02d}:{secs:02d}"


def format_timestamp(epoch: int, utc: bool = False) -> str:
    """HTCondor's default (ISO date) event time, in local time unless ``utc``."""
    parts = time.gmtime(epoch) if utc else time.localtime(epoch)
    return time.strftime("%Y-%m-%d %H:%M:%S", parts)


def _get(event: Event, name: str, default: Any = "") -> Any:
    return event.attributes.get(name, default)


def _submit_body(event: Event) -> tuple[str, list[str]]:
    lines = [str(_get(event, key)) for key in ("LogNotes", "UserNotes") if _get(event, key)]
    return f"Job submitted from host: {_get(event, 'SubmitHost')}", lines


def _execute_body(event: Event) -> tuple[str, list[str]]:
    lines = [f"SlotName: {_get(event, 'SlotName')}"] if _get(event, "SlotName") else []
    return f"Job executing on host: {_get(event, 'ExecuteHost')}", lines


def _usage_lines(event: Event, which: Iterable[tuple[str, str]]) -> list[str]:
    return [f"\t{_get(event, key, ZERO_USAGE)}  -  {label}" for key, label in which]


def _bytes_lines(event: Event, which: Iterable[tuple[str, str]]) -> list[str]:
    return [f"{_get(event, key, 0)}  -  {label}" for key, label in which]


def _resource_table(event: Event) -> list[str]:
    rows = []
    for label, stem in RESOURCE_ROWS:
        values = [event.attributes.get(name) for name in (stem + "Usage", "Request" + stem, stem)]
        if all(v is None for v in values):
            continue
        cells = ["" if v is None else str(v) for v in values]
        rows.append(f"   {label:<21}: {cells[0]:>8} {cells[1]:>8} {cells[2]:>9}")
    if not rows:
        return []
    return ["Partitionable Resources :    Usage  Request Allocated"] + rows


def _terminated_body(event: Event) -> tuple[str, list[str]]:
    if _get(event, "TerminatedNormally", True):
        lines = [f"(1) Normal termination (return value {_get(event, 'ReturnValue', 0)})"]
    else:
        lines = [f"(0) Abnormal termination (signal {_get(event, 'TerminatedBySignal', 0)})"]
        core = _get(event, "CoreFile")
        lines.append(f"(1) Corefile in: {core}" if core else "(0) No core file")
    lines += _usage_lines(event, USAGE_LINES)
    lines += _bytes_lines(event, BYTES_LINES)
    lines += _resource_table(event)
    return "Job terminated.", lines


def _evicted_body(event: Event) -> tuple[str, list[str]]:
    if _get(event, "Checkpointed", False):
        lines = ["(1) Job was checkpointed."]
    else:
        lines = ["(0) Job was not checkpointed."]
    lines += _usage_lines(event, USAGE_LINES[:2])
    lines += _bytes_lines(event, BYTES_LINES[:2])
    return "Job was evicted.", lines


def _image_size_body(event: Event) -> tuple[str, list[str]]:
    lines = []
    for key, label in (("MemoryUsage", "MemoryUsage of job (MB)"),
                       ("ResidentSetSize", "ResidentSetSize of job (KB)"),
                       ("ProportionalSetSize", "ProportionalSetSize of job (KB)")):
        if key in event.attributes:
            lines.append(f"{event.attributes[key]}  -  {label}")
    return f"Image size of job updated: {_get(event, 'Size', 0)}", lines


def _held_body(event: Event) -> tuple[str, list[str]]:
    lines = [str(_get(event, "HoldReason")),
             f"Code {_get(event, 'HoldReasonCode', 0)} Subcode {_get(event, 'HoldReasonSubCode', 0)}"]
    return "Job was held.", lines


def _reason_body(title: str):
    def body(event: Event) -> tuple[str, list[str]]:
        reason = _get(event, "Reason")
        return title, [str(reason)] if reason else []
    return body


def _disconnected_body(event: Event) -> tuple[str, list[str]]:
    lines = [str(_get(event, "DisconnectReason", "Connection between submit and execute hosts lost")),
             f"Trying to reconnect to {_get(event, 'StartdName')} {_get(event, 'StartdAddr')}"]
    return "Job disconnected, attempting to reconnect", lines


def _reconnected_body(event: Event) -> tuple[str, list[str]]:
    lines = [f"startd address: {_get(event, 'StartdAddr')}", f"starter address: {_get(event, 'StarterAddr')}"]
    return f"Job reconnected to {_get(event, 'StartdName')}", lines


def _reconnect_failed_body(event: Event) -> tuple[str, list[str]]:
    lines = [str(_get(event, "Reason")),
             f"Can not reconnect to {_get(event, 'StartdName')}, rescheduling job"]
    return "Job reconnection failed", lines


def _cluster_submit_body(event: Event) -> tuple[str, list[str]]:
    return f"Cluster submitted from host: {_get(event, 'SubmitHost')}", []


def completion_text(completion: int) -> str:
    """How a 036 event writes its ``Completion`` (ClusterRemoveEvent::formatBody)."""
    if completion <= COMPLETION_ERROR:
        return f"Error {completion}"
    if completion == COMPLETION_COMPLETE:
        return "Complete"
    return "Paused" if completion >= COMPLETION_PAUSED else "Incomplete"


def _cluster_remove_body(event: Event) -> tuple[str, list[str]]:
    progress = (f"Materialized {_get(event, 'NextProcId', 0)} jobs from {_get(event, 'NextRow', 0)} items."
                f"\t{completion_text(_get(event, 'Completion', COMPLETION_INCOMPLETE))}")
    notes = _get(event, "Notes")
    return "Cluster removed", [progress] + ([str(notes)] if notes else [])


def _factory_paused_body(event: Event) -> tuple[str, list[str]]:
    reason, pause, hold = _get(event, "Reason"), _get(event, "PauseCode", 0), _get(event, "HoldCode", 0)
    lines = [str(reason)] if reason or pause else []
    lines += [f"PauseCode {pause}"] if pause else []
    lines += [f"HoldCode {hold}"] if hold else []
    return "Job Materialization Paused", lines


def _file_transfer_body(event: Event) -> tuple[str, list[str]]:
    headline = FILE_TRANSFER_HEADLINES.get(_get(event, "Type", 0))
    if headline is None:
        raise EventLogError(f"file transfer event type {_get(event, 'Type', 0)!r} cannot be written yet")
    return headline, []


_BODIES = {
    EventType.SUBMIT: _submit_body,
    EventType.EXECUTE: _execute_body,
    EventType.JOB_EVICTED: _evicted_body,
    EventType.JOB_TERMINATED: _terminated_body,
    EventType.IMAGE_SIZE: _image_size_body,
    EventType.JOB_ABORTED: _reason_body("Job was aborted."),
    EventType.JOB_HELD: _held_body,
    EventType.JOB_RELEASED: _reason_body("Job was released."),
    EventType.JOB_DISCONNECTED: _disconnected_body,
    EventType.JOB_RECONNECTED: _reconnected_body,
    EventType.JOB_RECONNECT_FAILED: _reconnect_failed_body,
    EventType.FILE_TRANSFER: _file_transfer_body,
    EventType.CLUSTER_SUBMIT: _cluster_submit_body,
    EventType.CLUSTER_REMOVE: _cluster_remove_body,
    EventType.FACTORY_PAUSED: _factory_paused_body,
    EventType.FACTORY_RESUMED: _reason_body("Job Materialization Resumed"),
}


def format_text(event: Event, utc: bool = False) -> str:
    """One event in HTCondor's text form, ending with its ``...`` line.

    Raises:
        EventLogError: the event type has no text form here.
    """
    body = _BODIES.get(event.type)
    if body is None:
        raise EventLogError(f"event {event.type.name} ({int(event.type):03d}) cannot be written yet")
    headline, lines = body(event)
    header = (f"{int(event.type):03d} ({event.cluster:03d}.{event.proc:03d}.{event.subproc:03d}) "
              f"{format_timestamp(event.time, utc)} {headline}\n")
    return header + "".join(f"\t{line}\n" for line in lines) + "...\n"


def format_json(event: Event, utc: bool = False) -> str:
    """One event as a JSON line: its ClassAd form (``MyType``, ``EventTypeNumber``,
    ``Cluster``, ``Proc``, ``Subproc``, ``EventTime`` and its attributes; a cluster event,
    whose proc is -1, has no ``Proc`` or ``Subproc``, as HTCondor's ``toClassAd`` gives it)."""
    record: dict[str, Any] = {
        "MyType": MY_TYPES.get(event.type, "GenericEvent"), "EventTypeNumber": int(event.type),
        "Cluster": event.cluster, "Proc": event.proc, "Subproc": event.subproc,
        "EventTime": format_timestamp(event.time, utc).replace(" ", "T"),
    }
    for name in ("Proc", "Subproc"):  # a cluster event has neither (HTCondor leaves out negative ids)
        if record[name] < 0:
            del record[name]
    record.update(event.attributes)
    return json.dumps(record, sort_keys=False, default=str) + "\n"


@attrs.frozen
class EventLogWriter:
    """Appends events to one event log file in the text form or as JSON lines."""

    path: str
    log_format: str = attrs.field(default="text", validator=attrs.validators.in_(("text", "json")))
    utc: bool = False

    def write(self, events: Iterable[Event]) -> None:
        """Append ``events`` in order, holding an exclusive lock for the whole batch.
        The writer runs in a daemon's reactor, so it never waits on a FIFO or on a lock
        someone holds for long: such a log is reported, not waited for.

        Raises:
            EventLogError: the file cannot be opened or written.
        """
        form = format_json if self.log_format == "json" else format_text
        text = "".join(form(event, self.utc) for event in events)
        if not text:
            return
        fd = _open_log(self.path)
        try:
            _lock_briefly(self.path, fd)
            data = text.encode("utf-8")
            while data:
                written = os.write(fd, data)
                data = data[written:]
        except OSError as exc:
            raise EventLogError(f"cannot write event log {self.path}: {exc.strerror}") from None
        finally:
            os.close(fd)  # closing drops the lock


#: How long, in all, a writer tries for a log's lock before giving up on the batch.
LOCK_WAIT_SECONDS = 0.05


def _open_log(path: str) -> int:
    """Open ``path`` for appending without blocking; only a regular file will do."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise EventLogError(f"cannot open event log {path}: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EventLogError(f"event log {path} is not a regular file")
    return fd


def _lock_briefly(path: str, fd: int) -> None:
    """Take the exclusive lock on ``fd``, trying for at most ``LOCK_WAIT_SECONDS``."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN) or time.monotonic() >= deadline:
                raise EventLogError(
                    f"event log {path} is locked by another process; events not written") from None
        time.sleep(0.005)
