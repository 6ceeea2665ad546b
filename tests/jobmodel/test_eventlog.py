"""The event log writer: HTCondor's exact text form, JSON lines, locking and order."""

import json
import multiprocessing

import pytest

from jobmodel.errors import EventLogError
from jobmodel.eventlog import Event, EventLogWriter, EventType, format_text, format_usage
from tests.schedd.conftest import START

HOST = "<127.0.0.1:9618?addrs=127.0.0.1-9618>"


def test_submit_event_text():
    """000 reads as HTCondor writes it: number, (cluster.proc.subproc), ISO time, host."""
    text = format_text(Event(EventType.SUBMIT, 1, 0, START, {"SubmitHost": HOST}), utc=True)
    assert text == f"000 (001.000.000) 2026-12-02 12:00:00 Job submitted from host: {HOST}\n...\n"


def test_held_event_text():
    """012 carries the reason and a Code/Subcode line."""
    event = Event(EventType.JOB_HELD, 12, 3, START,
                  {"HoldReason": "via condor_hold (by user alice)", "HoldReasonCode": 1, "HoldReasonSubCode": 0})
    assert format_text(event, utc=True) == (
        "012 (012.003.000) 2026-12-02 12:00:00 Job was held.\n"
        "\tvia condor_hold (by user alice)\n\tCode 1 Subcode 0\n...\n")


def test_released_and_aborted_event_text():
    """013 and 009 carry their reason line."""
    released = format_text(Event(EventType.JOB_RELEASED, 1, 0, START, {"Reason": "ok"}), utc=True)
    aborted = format_text(Event(EventType.JOB_ABORTED, 1, 0, START, {"Reason": "via condor_rm"}), utc=True)
    assert released.splitlines()[0].endswith("Job was released.") and released.splitlines()[1] == "\tok"
    assert aborted.splitlines()[0].endswith("Job was aborted.") and aborted.splitlines()[1] == "\tvia condor_rm"


def test_execute_event_text():
    """001 names the execute host and slot."""
    text = format_text(Event(EventType.EXECUTE, 1, 0, START, {"ExecuteHost": HOST, "SlotName": "slot1_1@ep"}),
                       utc=True)
    assert text.splitlines() == [f"001 (001.000.000) 2026-12-02 12:00:00 Job executing on host: {HOST}",
                                 "\tSlotName: slot1_1@ep", "..."]


def test_terminated_event_text_with_usage_and_resources():
    """005 has the return value, usage lines, bytes lines and the resources table."""
    event = Event(EventType.JOB_TERMINATED, 5739, 0, START, {
        "TerminatedNormally": True, "ReturnValue": 0, "SentBytes": 306, "ReceivedBytes": 683,
        "TotalSentBytes": 306, "TotalReceivedBytes": 683, "CpusUsage": 0, "RequestCpus": 1, "Cpus": 1,
        "DiskUsage": 139, "RequestDisk": 1048576, "Disk": 1049858, "MemoryUsage": 4, "RequestMemory": 1024,
        "Memory": 1024})
    assert format_text(event, utc=True) == (
        "005 (5739.000.000) 2026-12-02 12:00:00 Job terminated.\n"
        "\t(1) Normal termination (return value 0)\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n"
        "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
        "\t306  -  Run Bytes Sent By Job\n"
        "\t683  -  Run Bytes Received By Job\n"
        "\t306  -  Total Bytes Sent By Job\n"
        "\t683  -  Total Bytes Received By Job\n"
        "\tPartitionable Resources :    Usage  Request Allocated\n"
        "\t   Cpus                 :        0        1         1\n"
        "\t   Disk (KB)            :      139  1048576   1049858\n"
        "\t   Memory (MB)          :        4     1024      1024\n"
        "...\n")


def test_abnormal_termination_text():
    """A job killed by a signal says so, and whether it left a core file."""
    lines = format_text(Event(EventType.JOB_TERMINATED, 1, 0, START,
                              {"TerminatedNormally": False, "TerminatedBySignal": 9}), utc=True).splitlines()
    assert lines[1:3] == ["\t(0) Abnormal termination (signal 9)", "\t(0) No core file"]


def test_evicted_and_image_size_text():
    """004 and 006 have their usage and size lines."""
    evicted = format_text(Event(EventType.JOB_EVICTED, 1, 0, START, {}), utc=True).splitlines()
    assert evicted[1] == "\t(0) Job was not checkpointed."
    assert evicted[4:6] == ["\t0  -  Run Bytes Sent By Job", "\t0  -  Run Bytes Received By Job"]
    size = format_text(Event(EventType.IMAGE_SIZE, 1, 0, START,
                             {"Size": 72, "MemoryUsage": 1, "ResidentSetSize": 72}), utc=True).splitlines()
    assert size[0].endswith("Image size of job updated: 72")
    assert size[1:3] == ["\t1  -  MemoryUsage of job (MB)", "\t72  -  ResidentSetSize of job (KB)"]


def test_usage_format_counts_days():
    """CPU usage prints days and HH:MM:SS."""
    assert format_usage(90061, 5) == "Usr 1 01:01:01, Sys 0 00:00:05"


def test_unwritable_event_type_is_refused():
    """An event type with no text form yet gets a clear error."""
    with pytest.raises(EventLogError, match="GRID_SUBMIT"):
        format_text(Event(EventType.GRID_SUBMIT, 1, 0, START))


def test_writer_appends_in_order(tmp_path):
    """Events are appended in the order given, across calls."""
    path = tmp_path / "job.log"
    writer = EventLogWriter(str(path), utc=True)
    writer.write([Event(EventType.SUBMIT, 1, 0, START, {"SubmitHost": HOST})])
    writer.write([Event(EventType.JOB_HELD, 1, 0, START + 1, {"HoldReason": "x"}),
                  Event(EventType.JOB_RELEASED, 1, 0, START + 2, {"Reason": "y"})])
    numbers = [line[:3] for line in path.read_text().splitlines() if line[:1].isdigit()]
    assert numbers == ["000", "012", "013"]


def test_json_lines_format(tmp_path):
    """log_format = json writes one JSON object per event."""
    path = tmp_path / "job.json"
    EventLogWriter(str(path), log_format="json", utc=True).write(
        [Event(EventType.JOB_HELD, 1, 0, START, {"HoldReason": "x", "HoldReasonCode": 1})])
    (record,) = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["MyType"] == "JobHeldEvent" and record["EventTypeNumber"] == 12
    assert record["EventTime"] == "2026-12-02T12:00:00" and record["HoldReason"] == "x"


def test_unwritable_path_is_reported(tmp_path):
    """A log in a missing directory gets an error naming the file."""
    with pytest.raises(EventLogError, match="cannot open event log .*nowhere"):
        EventLogWriter(str(tmp_path / "nowhere" / "log")).write([Event(EventType.JOB_ABORTED, 1, 0, START)])


def _write_many(path: str, cluster: int) -> None:
    writer = EventLogWriter(path, utc=True)
    for proc in range(200):
        writer.write([Event(EventType.JOB_HELD, cluster, proc, START, {"HoldReason": "r" * 3000})])


@pytest.mark.integration  # forks writers
def test_concurrent_writers_never_interleave(tmp_path):
    """Several processes writing the same log leave every event whole."""
    path = str(tmp_path / "shared.log")
    workers = [multiprocessing.Process(target=_write_many, args=(path, c)) for c in (1, 2, 3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    chunks = open(path).read().split("...\n")[:-1]
    assert len(chunks) == 600
    assert all(chunk.startswith("012 (") and chunk.count("\n") == 3 for chunk in chunks)


def test_disconnect_reconnect_and_reconnect_failed_event_text():
    """022, 023 and 024 read as HTCondor writes them (disconnected, reconnected, reconnection failed)."""
    where = {"StartdName": "slot1_1@ep", "StartdAddr": "<198.18.0.3:4242>"}
    lost = format_text(Event(EventType.JOB_DISCONNECTED, 1, 0, START,
                             {**where, "DisconnectReason": "no answer from the startd"}), utc=True)
    assert lost.splitlines() == ["022 (001.000.000) 2026-12-02 12:00:00 Job disconnected, attempting to reconnect",
                                 "\tno answer from the startd",
                                 "\tTrying to reconnect to slot1_1@ep <198.18.0.3:4242>", "..."]
    back = format_text(Event(EventType.JOB_RECONNECTED, 1, 0, START, {**where, "StarterAddr": "<198.18.0.3:4242>"}),
                       utc=True)
    assert back.splitlines()[0].endswith("023 (001.000.000) 2026-12-02 12:00:00 Job reconnected to slot1_1@ep")
    assert back.splitlines()[1] == "\tstartd address: <198.18.0.3:4242>"
    failed = format_text(Event(EventType.JOB_RECONNECT_FAILED, 1, 0, START,
                               {**where, "Reason": "Job disconnected too long: JobLeaseDuration (20 seconds) expired"}),
                         utc=True)
    assert failed.splitlines()[1:3] == ["\tJob disconnected too long: JobLeaseDuration (20 seconds) expired",
                                        "\tCan not reconnect to slot1_1@ep, rescheduling job"]


def cluster_event(kind, attributes, cluster=7):
    return Event(kind, cluster, -1, START, attributes, subproc=-1)


def test_factory_cluster_event_text():
    """035-038 as condor_event.cpp's ClusterSubmitEvent, ClusterRemoveEvent, FactoryPausedEvent
    and FactoryResumedEvent format them, about the whole cluster (proc and subproc -1); HTCondor's
    own reader (htcondor2.JobEventLog) reads these texts back with the attributes given here."""
    when = "2026-12-02 12:00:00"
    assert format_text(cluster_event(EventType.CLUSTER_SUBMIT, {"SubmitHost": HOST}), utc=True) == (
        f"035 (007.-01.-01) {when} Cluster submitted from host: {HOST}\n...\n")
    removed = {"NextProcId": 3, "NextRow": 3, "Completion": 0, "Notes": "removed by alice"}
    assert format_text(cluster_event(EventType.CLUSTER_REMOVE, removed), utc=True) == (
        f"036 (007.-01.-01) {when} Cluster removed\n\tMaterialized 3 jobs from 3 items.\tIncomplete\n"
        "\tremoved by alice\n...\n")
    words = [format_text(cluster_event(EventType.CLUSTER_REMOVE, {"Completion": code}), utc=True).split("\n")[1]
             for code in (-3, -1, 1, 2, 5)]
    assert words == ["\tMaterialized 0 jobs from 0 items.\t" + word
                     for word in ("Error -3", "Error -1", "Complete", "Paused", "Paused")]
    paused = {"Reason": "failed to make job 7.3", "PauseCode": 1}
    assert format_text(cluster_event(EventType.FACTORY_PAUSED, paused), utc=True) == (
        f"037 (007.-01.-01) {when} Job Materialization Paused\n\tfailed to make job 7.3\n\tPauseCode 1\n...\n")
    assert format_text(cluster_event(EventType.FACTORY_PAUSED, {}), utc=True) == (
        f"037 (007.-01.-01) {when} Job Materialization Paused\n...\n")
    assert format_text(cluster_event(EventType.FACTORY_RESUMED, {"Reason": "released"}), utc=True) == (
        f"038 (007.-01.-01) {when} Job Materialization Resumed\n\treleased\n...\n")


def test_a_cluster_event_as_json_has_no_proc():
    """The JSON form of a cluster event leaves out Proc and Subproc, as HTCondor's toClassAd
    does for negative ids, and names its MyType."""
    from jobmodel.eventlog import format_json
    record = json.loads(format_json(cluster_event(EventType.CLUSTER_REMOVE, {"NextProcId": 2}), utc=True))
    assert record["MyType"] == "ClusterRemoveEvent" and record["Cluster"] == 7
    assert "Proc" not in record and "Subproc" not in record and record["NextProcId"] == 2
