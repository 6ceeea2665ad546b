"""Reading user job event logs, with the names of HTCondor's ``htcondor2``:
``JobEventLog(path)`` yields :class:`JobEvent` values, and ``events(stop_after=s)``
follows a file that is still being written. Logs written by HTCondor itself (text
form, ISO or legacy dates) and Roost's JSON lines are both read."""

from __future__ import annotations

import calendar
import json
import re
import time
from collections.abc import Iterator, Mapping
from typing import Any, Callable

from jobmodel.errors import EventLogError
from jobmodel.eventlog import COMPLETION_COMPLETE, COMPLETION_ERROR, COMPLETION_INCOMPLETE, COMPLETION_PAUSED, MY_TYPES
from jobmodel.eventlog import EventType as JobEventType

_HEADER = re.compile(
    r"(?P<num>\d{3}) \((?P<cluster>-?\d+)\.(?P<proc>-?\d+)\.(?P<subproc>-?\d+)\) "
    r"(?P<when>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?Z?|\d\d/\d\d(?:/\d{2,4})? \d\d:\d\d:\d\d(?:\.\d+)?)"
    r" ?(?P<text>.*)\Z")
_DASHED = re.compile(r"\s*(?P<value>\S.*?)\s+-\s+(?P<label>.+?)\s*\Z")
_ASSIGN = re.compile(r"\s*(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(?P<value>.*?)\s*\Z")

#: Labels of ``value  -  label`` lines and the attribute each sets.
_LABELS = {
    "Run Remote Usage": "RunRemoteUsage", "Run Local Usage": "RunLocalUsage",
    "Total Remote Usage": "TotalRemoteUsage", "Total Local Usage": "TotalLocalUsage",
    "Run Bytes Sent By Job": "SentBytes", "Run Bytes Received By Job": "ReceivedBytes",
    "Total Bytes Sent By Job": "TotalSentBytes", "Total Bytes Received By Job": "TotalReceivedBytes",
    "MemoryUsage of job (MB)": "MemoryUsage", "ResidentSetSize of job (KB)": "ResidentSetSize",
    "ProportionalSetSize of job (KB)": "ProportionalSetSize",
}


class JobEvent(Mapping):
    """One event: ``type`` (a :class:`JobEventType`), ``cluster``, ``proc``,
    ``timestamp`` (epoch seconds) and its attributes by name (``event["HoldReason"]``)."""

    __slots__ = ("type", "cluster", "proc", "subproc", "timestamp", "_attrs", "_text")

    def __init__(self, type: JobEventType, cluster: int, proc: int, timestamp: int,
                 attributes: Mapping[str, Any], subproc: int = 0, text: str = "") -> None:
        self.type = type
        self.cluster = cluster
        self.proc = proc
        self.subproc = subproc
        self.timestamp = timestamp
        self._attrs = {k.lower(): (k, v) for k, v in attributes.items()}
        self._text = text

    def __getitem__(self, key: str) -> Any:
        return self._attrs[key.lower()][1]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._attrs

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._attrs.values())

    def __len__(self) -> int:
        return len(self._attrs)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"JobEvent({self.type.name}, {self.cluster}.{self.proc}, {self.timestamp})"


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


def _epoch(when: str) -> int:
    when = when.split(".")[0] if "." in when and not when.endswith("Z") else when
    if when.endswith("Z"):
        stamp = when[:-1].split(".")[0].replace("T", " ")
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))
    if "/" in when:  # legacy: MM/DD[/YY] HH:MM:SS, local time, year implied
        date, clock = when.split(" ")
        parts = date.split("/")
        year = int(parts[2]) if len(parts) == 3 else time.localtime().tm_year
        year = year + 2000 if year < 100 else year
        return int(time.mktime(time.strptime(f"{year}-{parts[0]}-{parts[1]} {clock}", "%Y-%m-%d %H:%M:%S")))
    return int(time.mktime(time.strptime(when.replace("T", " "), "%Y-%m-%d %H:%M:%S")))


def _resource_rows(lines: list[str], start: int, attrs: dict[str, Any]) -> None:
    header = lines[start]
    ends = [m.end() for m in re.finditer(r"\S+", header[header.index(":") + 1:])]
    for line in lines[start + 1:]:
        label, colon, rest = line.partition(":")
        if not colon:
            break
        stem = label.strip().split(" (")[0]
        for match in re.finditer(r"\S+", rest):
            column = min(range(len(ends)), key=lambda i: abs(ends[i] - match.end()))
            name = (f"{stem}Usage", f"Request{stem}", stem)[min(column, 2)]
            attrs[name] = _number(match.group())


def _body_attributes(kind: JobEventType, headline: str, lines: list[str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    free: list[str] = []
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("Partitionable Resources"):
            _resource_rows([x.strip("\t") for x in lines], index, attrs)
            break
        normal = re.fullmatch(r"\(1\) Normal termination \(return value (-?\d+)\)", line)
        abnormal = re.fullmatch(r"\(0\) Abnormal termination \(signal (\d+)\)", line)
        held = re.fullmatch(r"Code (-?\d+) Subcode (-?\d+)", line)
        dashed = _DASHED.fullmatch(line)
        assign = _ASSIGN.fullmatch(line)
        if normal:
            attrs.update(TerminatedNormally=True, ReturnValue=int(normal.group(1)))
        elif abnormal:
            attrs.update(TerminatedNormally=False, TerminatedBySignal=int(abnormal.group(1)))
        elif line.startswith("(1) Corefile in: "):
            attrs["CoreFile"] = line[len("(1) Corefile in: "):]
        elif line == "(0) No core file":
            continue
        elif line in ("(0) CPU times", "(0) Job was not checkpointed."):
            attrs["Checkpointed"] = False
        elif line == "(1) Job was checkpointed.":
            attrs["Checkpointed"] = True
        elif held and kind == JobEventType.JOB_HELD:
            attrs.update(HoldReasonCode=int(held.group(1)), HoldReasonSubCode=int(held.group(2)))
        elif dashed and dashed.group("label") in _LABELS:
            value = dashed.group("value")
            attrs[_LABELS[dashed.group("label")]] = value if "Usr" in value else _number(value)
        elif line.startswith("SlotName: "):
            attrs["SlotName"] = line[len("SlotName: "):]
        elif assign and kind not in (JobEventType.JOB_HELD, JobEventType.JOB_ABORTED, JobEventType.JOB_RELEASED):
            attrs[assign.group("name")] = _classad_value(assign.group("value"))
        else:
            free.append(line)
    _headline_attributes(kind, headline, attrs)
    _free_text_attributes(kind, free, attrs)
    return attrs


_MATERIALIZED = re.compile(r"Materialized (-?\d+) jobs from (-?\d+) items\.\s*(?P<rest>.*)\Z")
_COMPLETIONS = (("error", None), ("complete", COMPLETION_COMPLETE), ("paused", COMPLETION_PAUSED))


def _completion(text: str) -> int:
    """A 036 event's ``Completion`` from its word (ClusterRemoveEvent::readEvent: ``Error N``
    keeps a negative N, any other error is -1; an unknown word is incomplete)."""
    lowered = text.lower()
    for word, code in _COMPLETIONS:
        if lowered.startswith(word):
            if code is not None:
                return code
            number = re.match(r"\s*(-?\d+)", text[len(word):])
            value = int(number.group(1)) if number else COMPLETION_ERROR
            return value if value < 0 else COMPLETION_ERROR
    return COMPLETION_INCOMPLETE


def _cluster_event_attributes(kind: JobEventType, headline: str, lines: list[str]) -> dict[str, Any]:
    """The attributes of a factory cluster's 035-038 event, as HTCondor's ``readEvent``
    and ``toClassAd`` of ClusterSubmitEvent, ClusterRemoveEvent, FactoryPausedEvent and
    FactoryResumedEvent give them (condor_event.cpp)."""
    body = [line.strip() for line in lines if line.strip()]
    if kind == JobEventType.CLUSTER_SUBMIT:
        prefix = "Cluster submitted from host: "
        return {"SubmitHost": headline[len(prefix):].strip()} if headline.startswith(prefix) else {}
    if kind == JobEventType.CLUSTER_REMOVE:
        attrs: dict[str, Any] = {"NextProcId": 0, "NextRow": 0, "Completion": COMPLETION_INCOMPLETE}
        if body:
            progress = _MATERIALIZED.match(body[0])
            rest = body[0]
            if progress:
                attrs.update(NextProcId=int(progress.group(1)), NextRow=int(progress.group(2)))
                rest = progress.group("rest")
            attrs["Completion"] = _completion(rest)
            if len(body) > 1:
                attrs["Notes"] = body[1]
        return attrs
    attrs = {"Reason": body[0]} if body and not body[0].startswith(("PauseCode ", "HoldCode ")) else {}
    if kind == JobEventType.FACTORY_PAUSED:
        attrs.update(PauseCode=0, HoldCode=0)
        for line in body:
            for name in ("PauseCode", "HoldCode"):
                found = re.search(name + r" (-?\d+)", line)
                if found:
                    attrs[name] = int(found.group(1))
    return attrs


_CLUSTER_EVENTS = frozenset({JobEventType.CLUSTER_SUBMIT, JobEventType.CLUSTER_REMOVE,
                             JobEventType.FACTORY_PAUSED, JobEventType.FACTORY_RESUMED})


def _classad_value(text: str) -> Any:
    import classad
    try:
        return classad.ExprTree(text).eval()
    except ValueError:
        return text


def _headline_attributes(kind: JobEventType, headline: str, attrs: dict[str, Any]) -> None:
    for prefix, name in (("Job submitted from host: ", "SubmitHost"), ("Job executing on host: ", "ExecuteHost"),
                         ("Image size of job updated: ", "Size")):
        if headline.startswith(prefix):
            value = headline[len(prefix):].strip()
            attrs[name] = _number(value) if name == "Size" else value


def _free_text_attributes(kind: JobEventType, free: list[str], attrs: dict[str, Any]) -> None:
    if not free:
        return
    if kind == JobEventType.JOB_HELD:
        attrs["HoldReason"] = free[0]
    elif kind in (JobEventType.JOB_ABORTED, JobEventType.JOB_RELEASED):
        attrs["Reason"] = free[0]
    elif kind == JobEventType.SUBMIT:
        attrs["LogNotes"] = free[0]
        if len(free) > 1:
            attrs["UserNotes"] = free[1]
    else:
        attrs.setdefault("Info", "\n".join(free))


def parse_text_event(text: str, where: str = "event log") -> JobEvent:
    """One event in HTCondor's text form (its lines up to, not including, ``...``).

    Raises:
        EventLogError: the first line is not an event header.
    """
    lines = text.split("\n")
    match = _HEADER.fullmatch(lines[0].rstrip())
    if match is None:
        raise EventLogError(f"{where}: expected an event header such as "
                            f"'000 (001.000.000) 2026-12-02 12:00:00 Job submitted ...', got {lines[0][:80]!r}")
    number = int(match.group("num"))
    try:
        kind = JobEventType(number)
    except ValueError:
        kind = JobEventType.GENERIC
    headline = match.group("text")
    body = [x.rstrip() for x in lines[1:]]
    attrs = (_cluster_event_attributes if kind in _CLUSTER_EVENTS else _body_attributes)(kind, headline, body)
    cluster, proc, subproc = int(match.group("cluster")), int(match.group("proc")), int(match.group("subproc"))
    attrs.update(MyType=MY_TYPES.get(kind, "GenericEvent"), EventTypeNumber=number, Cluster=cluster)
    attrs.update((name, value) for name, value in (("Proc", proc), ("Subproc", subproc)) if value >= 0)
    timestamp = _epoch(match.group("when"))
    attrs["EventTime"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(timestamp))
    return JobEvent(kind, cluster, proc, timestamp, attrs, subproc, text + "\n...\n")


def parse_json_event(text: str, where: str = "event log") -> JobEvent:
    """One event as a JSON object (its ClassAd form).

    Raises:
        EventLogError: the text is not a JSON object with ``EventTypeNumber``.
    """
    try:
        record = json.loads(text)
        number = int(record["EventTypeNumber"])
    except (ValueError, KeyError, TypeError) as exc:
        raise EventLogError(f"{where}: not a JSON event with EventTypeNumber: {exc}") from None
    when = str(record.get("EventTime", "1970-01-01T00:00:00"))
    try:
        kind = JobEventType(number)
    except ValueError:
        kind = JobEventType.GENERIC
    return JobEvent(kind, int(record.get("Cluster", -1)), int(record.get("Proc", -1)), _epoch(when),
                    record, int(record.get("Subproc", 0)), text)


class JobEventLog:
    """The events of one log file, read as they appear.

    Iterating waits for new events without end, as HTCondor's does; use
    ``events(stop_after=seconds)`` to stop waiting (0: only what is there now).
    """

    #: Seconds between looks at a file that does not grow: the first wait is
    #: FIRST_POLL_INTERVAL, each next one twice as long, up to POLL_INTERVAL (an
    #: event that follows closely on another is seen within milliseconds).
    POLL_INTERVAL = 0.1
    FIRST_POLL_INTERVAL = 0.005

    def __init__(self, filename: str, *, sleep: Callable[[float], None] = time.sleep,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.filename = filename
        self._sleep = sleep
        self._monotonic = monotonic
        try:
            self._file = open(filename, "rb")
        except OSError as exc:
            raise EventLogError(f"cannot open event log {filename}: {exc.strerror}") from None
        self._buffer = b""
        self._line = 1
        self._ready: list[JobEvent] = []

    def close(self) -> None:
        """Close the file."""
        self._file.close()

    def __enter__(self) -> "JobEventLog":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_more(self) -> None:
        self._buffer += self._file.read()
        while True:
            text = self._buffer.decode("utf-8", errors="replace")
            chunk, consumed = _next_chunk(text)
            if chunk is None:
                return
            where = f"{self.filename}, line {self._line}"
            self._line += text[:consumed].count("\n")
            self._buffer = text[consumed:].encode("utf-8")
            if chunk.strip():
                self._ready.append(parse_json_event(chunk, where) if chunk.lstrip().startswith("{")
                                   else parse_text_event(chunk.strip("\n"), where))

    def events(self, stop_after: float | None = None) -> Iterator[JobEvent]:
        """Events in file order; when none is left, wait up to ``stop_after`` seconds
        (None: forever) for the file to grow."""
        deadline = None if stop_after is None else self._monotonic() + stop_after
        pause = self.FIRST_POLL_INTERVAL
        while True:
            self._read_more()
            if self._ready:
                yield self._ready.pop(0)
                if deadline is not None:
                    deadline = self._monotonic() + stop_after
                pause = self.FIRST_POLL_INTERVAL
                continue
            if deadline is not None and self._monotonic() >= deadline:
                return
            self._sleep(pause)
            pause = min(pause * 2, self.POLL_INTERVAL)

    def __iter__(self) -> "JobEventLog":
        return self

    def __next__(self) -> JobEvent:
        return next(self.events(None))


def _next_chunk(text: str) -> tuple[str | None, int]:
    """The next complete event's text and how many characters it used, or None."""
    stripped = text.lstrip("\n")
    skipped = len(text) - len(stripped)
    if stripped.startswith("{"):
        end = stripped.find("\n")
        if end < 0:
            return None, 0
        line = stripped[:end]
        try:
            json.loads(line)
        except ValueError:
            pass
        else:
            return line, skipped + end + 1
    match = re.search(r"^\.\.\.[ \t]*(\n|\Z)", stripped, re.MULTILINE)
    if match is None or (match.group(1) == "" and not stripped.endswith("\n")):
        return None, 0
    return stripped[:match.start()], skipped + match.end()


__all__ = ["JobEventLog", "JobEvent", "JobEventType", "parse_text_event", "parse_json_event"]
