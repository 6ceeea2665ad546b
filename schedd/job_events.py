"""One job's events, read back from the event log the schedd writes for it (the job's
``UserLog``), for ``GET /v1/jobs/{id}/events``: the web site's timeline and the
bindings' ``Schedd.job_events``.

Only the tail of the file is read (``MAX_READ_BYTES``), in a worker thread and with the
owner's rights (the log is written with them), and only the last ``MAX_EVENTS`` events of
that one job are answered, each exactly as written: a text-form event up to and including
its ``...`` line, or one JSON line. The bindings parse them as they parse any log."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable

from twisted.internet.defer import Deferred

from daemoncore.security.acting_as import ActingAsError, acting_as
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.errors import BadRequest
from daemoncore.wire.server import ApiRequest, JsonReply
from daemoncore.worker_threads import in_worker_thread
from jobmodel.states import JobId
from shadow.owner_rights import EVENT_LOG, NoOwnerAccountError, owner_account

#: The most bytes read from the end of a job's event log.
MAX_READ_BYTES = 1024 * 1024
#: The most events of one job answered (the newest).
MAX_EVENTS = 1000

_TEXT_HEADER = re.compile(r"\d{3} \((-?\d+)\.(-?\d+)\.-?\d+\) ")
_EVENT_END = "...\n"



def _text_events(text: str) -> list[tuple[str, str]]:
    """(``cluster.proc``, event text) of each text-form event in ``text``."""
    found = []
    for block in text.split("\n" + _EVENT_END):
        block = block.lstrip("\n")
        header = _TEXT_HEADER.match(block)
        if header is not None:
            found.append((f"{int(header.group(1))}.{int(header.group(2))}", block + "\n" + _EVENT_END))
    return found


def _json_event(line: str) -> tuple[str, str] | None:
    """(``cluster.proc``, the line) of one JSON event line; None when it is not one."""
    try:
        record = json.loads(line)
        return f"{int(record['Cluster'])}.{int(record['Proc'])}", line + "\n"
    except (ValueError, KeyError, TypeError):
        return None


def events_of_job(text: str, job_id: JobId, limit: int = MAX_EVENTS) -> list[str]:
    """The last ``limit`` events of ``job_id`` in ``text`` (the tail of an event log,
    text form or JSON lines or both), oldest first, each as written. A partial event at
    the start of a tail fails its header check and is left out."""
    wanted = f"{job_id.cluster}.{job_id.proc}"
    found: list[str] = []
    text_part: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("{"):
            event = _json_event(line.rstrip("\n"))
            if event is not None and event[0] == wanted:
                found.extend(body for job, body in _text_events("".join(text_part)) if job == wanted)
                text_part = []
                found.append(event[1])
                continue
        text_part.append(line)
    found.extend(body for job, body in _text_events("".join(text_part)) if job == wanted)
    return found[-limit:] if limit > 0 else []


def read_tail(path: str, max_bytes: int = MAX_READ_BYTES) -> str:
    """The last ``max_bytes`` of the regular file ``path`` as text ("" when it is missing).

    Raises:
        OSError: it cannot be opened or read, or it is not a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"event log {path} is not a regular file")
        start = max(0, info.st_size - max_bytes)
        data = os.pread(fd, max_bytes, start)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def read_job_events(path: str, owner: str | None, job_id: JobId) -> dict:
    """The answer of the route for a job whose log is ``path``: its events, or none and
    why (``problem``) when the log cannot be read with the owner's rights."""
    try:
        with acting_as(owner_account(owner, str(job_id), EVENT_LOG)):
            text = read_tail(path)
    except (NoOwnerAccountError, ActingAsError, OSError) as exc:
        return {"job": str(job_id), "events": [], "problem": f"the job's event log cannot be read: {exc}"}
    return {"job": str(job_id), "events": events_of_job(text, job_id)}


class JobEvents:
    """The JOB_EVENTS route of one schedd; ``locate`` gives a queued or finished job's
    log target (``path``, ``owner``), or None for a job without a log."""

    def __init__(self, locate: Callable[[JobId], object], run_blocking: Callable[..., Deferred] | None = None) -> None:
        self._locate = locate
        self._run_blocking = run_blocking or in_worker_thread

    def handlers(self) -> dict:
        """The route, for the schedd's route table."""
        return {api.JOB_EVENTS: self.job_events}

    def job_events(self, request: ApiRequest) -> Deferred | JsonReply:
        """JOB_EVENTS: the job's events from its own event log, read in a worker thread;
        a job without a log (or not known) answers an empty list."""
        try:
            job_id = JobId.parse(request.params["job_id"])
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        where = self._locate(job_id)
        if where is None:
            return JsonReply({"job": str(job_id), "events": []})
        reading = self._run_blocking(read_job_events, where.path, where.owner, job_id)
        reading.addCallback(JsonReply)
        return reading


__all__ = ["JobEvents", "events_of_job", "read_tail", "read_job_events", "MAX_READ_BYTES", "MAX_EVENTS"]
