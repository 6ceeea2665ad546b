"""bindings.eventlog reads Roost's logs and logs written by HTCondor itself."""

import threading
import time
from pathlib import Path

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from jobmodel.errors import EventLogError
from jobmodel.eventlog import Event, EventLogWriter, EventType
from tests.schedd.conftest import START

DATA = Path(__file__).parent / "data"


def read(path) -> list:
    with JobEventLog(str(path)) as log:
        return list(log.events(stop_after=0))


def test_event_type_names_are_htcondors():
    """JobEventType has HTCondor's member names and numbers."""
    assert JobEventType.SUBMIT == 0 and JobEventType.JOB_TERMINATED == 5
    assert JobEventType.JOB_HELD == 12 and JobEventType.JOB_RELEASED == 13 and JobEventType.JOB_ABORTED == 9


def test_reads_what_the_writer_wrote(tmp_path):
    """Every event written comes back with its type, ids, time and attributes."""
    path = tmp_path / "job.log"
    EventLogWriter(str(path)).write([
        Event(EventType.SUBMIT, 3, 1, START, {"SubmitHost": "<127.0.0.1:5>"}),
        Event(EventType.JOB_HELD, 3, 1, START + 5,
              {"HoldReason": "disk", "HoldReasonCode": 3, "HoldReasonSubCode": 2}),
        Event(EventType.JOB_TERMINATED, 3, 1, START + 9, {"ReturnValue": 4, "Memory": 512, "RequestMemory": 256}),
    ])
    events = read(path)
    assert [e.type for e in events] == [JobEventType.SUBMIT, JobEventType.JOB_HELD, JobEventType.JOB_TERMINATED]
    assert [(e.cluster, e.proc) for e in events] == [(3, 1)] * 3
    assert [e.timestamp for e in events] == [START, START + 5, START + 9]
    assert events[0]["SubmitHost"] == "<127.0.0.1:5>"
    assert (events[1]["HoldReason"], events[1]["HoldReasonCode"], events[1]["HoldReasonSubCode"]) == ("disk", 3, 2)
    assert events[2]["ReturnValue"] == 4 and events[2]["Memory"] == 512 and events[2]["RequestMemory"] == 256


def test_reads_json_lines(tmp_path):
    """JSON-lines logs read the same way."""
    path = tmp_path / "job.json"
    EventLogWriter(str(path), log_format="json").write([Event(EventType.JOB_RELEASED, 2, 0, START, {"Reason": "ok"})])
    (event,) = read(path)
    assert event.type == JobEventType.JOB_RELEASED and event["Reason"] == "ok" and event.timestamp == START


def test_reads_an_htcondor_completed_job():
    """An HTCondor 24-style log: submit, execute with slot ad, image size, termination table."""
    events = read(DATA / "htcondor_completed.log")
    assert [e.type.name for e in events] == ["SUBMIT", "EXECUTE", "IMAGE_SIZE", "JOB_TERMINATED"]
    execute, size, done = events[1], events[2], events[3]
    assert execute["SlotName"] == "slot1_3@ep42.example.org" and execute["Memory"] == 1024
    assert execute["ExecuteHost"].startswith("<10.0.7.42:9618?")
    assert size["Size"] == 72 and size["ResidentSetSize"] == 72 and size["MemoryUsage"] == 1
    assert done["TerminatedNormally"] is True and done["ReturnValue"] == 0
    assert (done["SentBytes"], done["TotalReceivedBytes"]) == (306, 683)
    assert (done["DiskUsage"], done["RequestDisk"], done["Disk"]) == (139, 1048576, 1049858)
    assert done["GPUs"] == 0 and "GPUsUsage" not in done
    assert done["RunRemoteUsage"] == "Usr 0 00:00:00, Sys 0 00:00:00"
    assert done.timestamp == int(time.mktime(time.strptime("2025-04-28 10:46:11", "%Y-%m-%d %H:%M:%S")))


def test_reads_htcondor_holds_releases_and_aborts():
    """Held (code/subcode), released and aborted events from HTCondor, with DAG notes."""
    events = read(DATA / "htcondor_held_released_aborted.log")
    assert events[0]["LogNotes"] == "DAG Node: prepare"
    held = [e for e in events if e.type == JobEventType.JOB_HELD]
    assert [(e.proc, e["HoldReasonCode"], e["HoldReasonSubCode"]) for e in held] == [(0, 1, 0), (1, 3, 42)]
    assert held[1]["HoldReason"].startswith("The job attribute PeriodicHold expression")
    assert [e["Reason"] for e in events if e.type in (JobEventType.JOB_RELEASED, JobEventType.JOB_ABORTED)] == [
        "via condor_release (by user alice)", "via condor_rm (by user alice)"]


def test_reads_legacy_dates_evictions_and_signals():
    """Old-style MM/DD dates, an eviction and a termination by signal."""
    events = read(DATA / "htcondor_legacy_evicted_signal.log")
    assert [e.type.name for e in events] == ["SUBMIT", "EXECUTE", "JOB_EVICTED", "EXECUTE", "JOB_TERMINATED"]
    assert events[2]["Checkpointed"] is False and events[2]["RunRemoteUsage"] == "Usr 0 00:01:21, Sys 0 00:00:00"
    assert events[4]["TerminatedNormally"] is False and events[4]["TerminatedBySignal"] == 9
    assert time.localtime(events[0].timestamp)[1:3] == (10, 20)


def test_event_mapping_access():
    """JobEvent is a mapping: get, in, keys, KeyError for a missing key."""
    (submit, *_rest) = read(DATA / "htcondor_completed.log")
    assert "SubmitHost" in submit and "submithost" in submit and submit.get("Nope") is None
    with pytest.raises(KeyError):
        submit["ReturnValue"]


def test_incomplete_event_waits_for_its_end(tmp_path):
    """An event without its ``...`` line yet is not returned until the line arrives."""
    path = tmp_path / "grow.log"
    path.write_text("000 (001.000.000) 2026-12-02 12:00:00 Job submitted from host: <h:1>\n")
    log = JobEventLog(str(path))
    assert list(log.events(stop_after=0)) == []
    with open(path, "a") as f:
        f.write("...\n")
    assert [e.type for e in log.events(stop_after=0)] == [JobEventType.SUBMIT]


def test_follows_a_growing_file(tmp_path):
    """events(stop_after=...) waits for events written after it started."""
    path = tmp_path / "follow.log"
    path.write_text("")
    writer = EventLogWriter(str(path))

    def later() -> None:
        time.sleep(0.3)
        writer.write([Event(EventType.SUBMIT, 1, 0, START, {"SubmitHost": "<h:1>"})])

    threading.Thread(target=later).start()
    events = list(JobEventLog(str(path)).events(stop_after=2))
    assert [e.type for e in events] == [JobEventType.SUBMIT]


def test_garbage_is_reported_with_file_and_line(tmp_path):
    """A chunk that is not an event names the file and line."""
    path = tmp_path / "bad.log"
    path.write_text("000 (001.000.000) 2026-12-02 12:00:00 Job submitted from host: <h:1>\n...\nhello\n...\n")
    with pytest.raises(EventLogError, match=r"bad.log, line 3: expected an event header"):
        read(path)


def test_missing_file_is_reported(tmp_path):
    """Opening a log that does not exist names it."""
    with pytest.raises(EventLogError, match="cannot open event log"):
        JobEventLog(str(tmp_path / "nope.log"))


#: Cluster events as HTCondor writes them, and what htcondor2.JobEventLog reads from each
#: (HTCondor 24's bindings, run on this text: proc -1, no Proc or Subproc in the ad).
HTCONDOR_CLUSTER_EVENTS = """035 (007.-01.-01) 2026-12-02 12:00:00 Cluster submitted from host: <127.0.0.1:9618>
...
037 (007.-01.-01) 2026-12-02 12:00:01 Job Materialization Paused
\tfailed to make job 7.3: bad
\tPauseCode 1
...
038 (007.-01.-01) 2026-12-02 12:00:02 Job Materialization Resumed
\treleased by alice
...
036 (007.-01.-01) 2026-12-02 12:00:03 Cluster removed
\tMaterialized 10 jobs from 10 items.\tComplete
...
036 (008.-01.-01) 2026-12-02 12:00:03 Cluster removed
\tMaterialized 3 jobs from 3 items.\tIncomplete
\tremoved by alice
...
036 (009.-01.-01) 2026-12-02 12:00:04 Cluster removed
\tMaterialized 1 jobs from 1 items.\tError -4
...
"""
HTCONDOR_READS = [
    (JobEventType.CLUSTER_SUBMIT, 7, {"SubmitHost": "<127.0.0.1:9618>"}),
    (JobEventType.FACTORY_PAUSED, 7, {"Reason": "failed to make job 7.3: bad", "PauseCode": 1, "HoldCode": 0}),
    (JobEventType.FACTORY_RESUMED, 7, {"Reason": "released by alice"}),
    (JobEventType.CLUSTER_REMOVE, 7, {"NextProcId": 10, "NextRow": 10, "Completion": 1}),
    (JobEventType.CLUSTER_REMOVE, 8, {"NextProcId": 3, "NextRow": 3, "Completion": 0, "Notes": "removed by alice"}),
    (JobEventType.CLUSTER_REMOVE, 9, {"NextProcId": 1, "NextRow": 1, "Completion": -4}),
]


def test_factory_cluster_events_read_as_htcondor_reads_them(tmp_path):
    """035-038 (condor_event.cpp readEvent/toClassAd): the same type, cluster, proc -1 and
    attributes as htcondor2.JobEventLog gives for the same text, no Proc or Subproc."""
    path = tmp_path / "factory.log"
    path.write_text(HTCONDOR_CLUSTER_EVENTS)
    events = read(path)
    assert [(e.type, e.cluster, e.proc) for e in events] == [(kind, cluster, -1) for kind, cluster, _ in HTCONDOR_READS]
    for event, (kind, _, expected) in zip(events, HTCONDOR_READS):
        body = {k: v for k, v in event.items() if k not in ("MyType", "EventTypeNumber", "Cluster", "EventTime")}
        assert body == expected, kind
        assert event["MyType"] == {35: "ClusterSubmitEvent", 36: "ClusterRemoveEvent", 37: "FactoryPausedEvent",
                                   38: "FactoryResumedEvent"}[int(kind)]


def test_factory_events_written_by_roost_read_back(tmp_path):
    """What the writer makes of 035-038 reads back with its attributes, text or JSON."""
    written = [
        Event(EventType.CLUSTER_SUBMIT, 4, -1, START, {"SubmitHost": "<10.0.0.1:5>"}, subproc=-1),
        Event(EventType.FACTORY_PAUSED, 4, -1, START, {"Reason": "bad", "PauseCode": 1}, subproc=-1),
        Event(EventType.CLUSTER_REMOVE, 4, -1, START, {"NextProcId": 6, "NextRow": 2, "Completion": 2}, subproc=-1),
    ]
    for form in ("text", "json"):
        path = tmp_path / f"{form}.log"
        EventLogWriter(str(path), form).write(written)
        events = read(path)
        assert [(e.type, e.proc) for e in events] == [(w.type, -1) for w in written]
        assert events[2]["NextRow"] == 2 and events[2]["Completion"] == 2 and events[1]["Reason"] == "bad"


def test_waiting_looks_again_soon_then_less_often_and_soon_again_after_an_event(tmp_path):
    """A wait for new events looks after 5 ms, then twice as long each time up to 100 ms;
    an event found starts the short looks over, so a close next event is seen at once."""
    path = tmp_path / "job.log"
    path.write_text("")
    writer = EventLogWriter(str(path))
    clock = {"now": 0.0}
    pauses = []

    def sleep(seconds):
        pauses.append(seconds)
        clock["now"] += seconds
        if len(pauses) == 7:  # the job terminates while the reader waits
            writer.write([Event(EventType.JOB_TERMINATED, 3, 0, START, {"ReturnValue": 0})])

    log = JobEventLog(str(path), sleep=sleep, monotonic=lambda: clock["now"])
    found = list(log.events(stop_after=0.5))
    assert [e.type for e in found] == [JobEventType.JOB_TERMINATED]
    assert pauses[:7] == [0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1]
    assert pauses[7:9] == [0.005, 0.01]
    log.close()
