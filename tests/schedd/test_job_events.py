"""GET /v1/jobs/{id}/events: one job's events read back from the event log the schedd
writes for it, bounded in bytes read and events answered, each event as written."""

from __future__ import annotations

import os

import pytest

from bindings.schedd import parse_logged_event
from daemoncore.security import AuthorizationLevel
from daemoncore.security.accounts import current_account
from daemoncore.security.tokens import Identity
from daemoncore.wire import schedd_routes
from daemoncore.wire.errors import BadRequest
from daemoncore.wire.server import ApiRequest
from jobmodel.eventlog import Event, EventLogWriter, EventType, format_json, format_text
from jobmodel.states import JobId
from schedd.job_events import JobEvents, events_of_job, read_job_events, read_tail
from schedd.service import LogTarget
from shadow.shadow import maybe_call
from tests.support.deferreds import resolved

T0 = 1_764_000_000
#: The owner the logs are read as: this test's own account (a root schedd reads as the job's owner).
ME = current_account().name


def life(cluster: int, proc: int) -> list[Event]:
    """Submit, execute and terminate of one job, a minute apart."""
    return [Event(EventType.SUBMIT, cluster, proc, T0, {"SubmitHost": "<127.0.0.1:9618>"}),
            Event(EventType.EXECUTE, cluster, proc, T0 + 60, {"ExecuteHost": "<127.0.0.1:9619>"}),
            Event(EventType.JOB_TERMINATED, cluster, proc, T0 + 120, {"ReturnValue": 0, "TerminatedNormally": True})]


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_only_the_jobs_own_events_come_back_in_order(tmp_path, log_format):
    """Two jobs share a log; the answer for 7.1 holds its three events only, oldest first,
    and the bindings read each back with its type and time."""
    path = str(tmp_path / "shared.log")
    writer = EventLogWriter(path, log_format)
    for one, other in zip(life(7, 1), life(7, 0)):
        writer.write([other, one])
    answer = read_job_events(path, ME, JobId(7, 1))
    events = [parse_logged_event(text) for text in answer["events"]]
    assert [(e.type, e.cluster, e.proc, e.timestamp) for e in events] == [
        (EventType.SUBMIT, 7, 1, T0), (EventType.EXECUTE, 7, 1, T0 + 60), (EventType.JOB_TERMINATED, 7, 1, T0 + 120)]
    assert "problem" not in answer


def test_a_log_mixing_text_and_json_lines_keeps_the_order():
    """A log whose form changed (text, then JSON lines) still answers in file order."""
    submit, execute, end = life(3, 0)
    text = format_text(submit) + format_json(execute) + format_text(end)
    assert [parse_logged_event(e).type for e in events_of_job(text, JobId(3, 0))] == [
        EventType.SUBMIT, EventType.EXECUTE, EventType.JOB_TERMINATED]


def test_only_the_tail_is_read_and_a_cut_event_is_left_out(tmp_path):
    """A log bigger than the read bound answers from its end; the event cut in two by the
    bound is dropped rather than answered half."""
    path = str(tmp_path / "big.log")
    writer = EventLogWriter(path)
    writer.write([Event(EventType.EXECUTE, 1, 0, T0 + n, {"ExecuteHost": "<h:1>"}) for n in range(400)])
    tail = read_tail(path, max_bytes=5000)
    assert len(tail) == 5000
    events = [parse_logged_event(text) for text in events_of_job(tail, JobId(1, 0))]
    assert 0 < len(events) < 400 and events[-1].timestamp == T0 + 399
    assert [e.timestamp for e in events] == list(range(events[0].timestamp, T0 + 400))


def test_at_most_the_last_events_are_answered():
    """Past the limit, the newest events are kept."""
    text = "".join(format_text(Event(EventType.EXECUTE, 2, 0, T0 + n, {"ExecuteHost": "<h:1>"})) for n in range(30))
    kept = events_of_job(text, JobId(2, 0), limit=10)
    assert [parse_logged_event(e).timestamp for e in kept] == [T0 + n for n in range(20, 30)]


def test_a_missing_log_is_no_events_and_a_fifo_is_refused_without_waiting(tmp_path):
    """A log not written yet answers nothing; a FIFO named as the log is not opened for
    reading in a way that waits for a writer, and the answer says why it has no events."""
    assert read_job_events(str(tmp_path / "none.log"), ME, JobId(1, 0)) == {"job": "1.0", "events": []}
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    answer = read_job_events(str(fifo), ME, JobId(1, 0))
    assert answer["events"] == [] and "not a regular file" in answer["problem"]


def request(job_id: str) -> ApiRequest:
    identity = Identity("bob", "pool", frozenset({AuthorizationLevel.READ}))
    return ApiRequest(schedd_routes.JOB_EVENTS, {"job_id": job_id}, {}, b"", identity=identity, headers={})


def test_the_route_reads_the_located_log_and_refuses_a_bad_id(tmp_path):
    """The route answers the located job's events, [] for a job without a log, and a 400
    naming the form of an id for a malformed one."""
    path = str(tmp_path / "job.log")
    EventLogWriter(path).write(life(5, 0))
    located = {JobId(5, 0): LogTarget(path, owner=ME)}
    route = JobEvents(located.get, run_blocking=maybe_call)
    answer = resolved(route.handlers()[schedd_routes.JOB_EVENTS](request("5.0")))
    assert len(answer.body["events"]) == 3 and answer.body["job"] == "5.0"
    assert resolved(route.job_events(request("6.0"))).body == {"job": "6.0", "events": []}
    with pytest.raises(BadRequest, match="ClusterId.ProcId"):
        route.job_events(request("5.x"))
