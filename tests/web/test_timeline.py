"""A job's timeline from its event log: the rows the page draws from the events its
schedd answers, in the order logged, with what tells each apart, shown as text."""

from __future__ import annotations

import re

from bindings.schedd import parse_logged_event
from jobmodel.eventlog import Event, EventType, format_json, format_text
from tests.web.test_pages import HOSTILE, render
from web import pages
from web.timeline import logged_timeline

T0 = 1_764_000_000
AD = {"ClusterId": 4, "ProcId": 0, "Owner": "alice", "JobStatus": 4, "QDate": T0, "CompletionDate": T0 + 300}


def logged(*events: Event, form=format_text) -> list:
    return [parse_logged_event(form(event)) for event in events]


def test_a_job_that_ran_twice_reads_submit_execute_evicted_execute_terminated():
    """Each event becomes one row, oldest first, with the host it ran on and how it ended."""
    rows = logged_timeline(logged(
        Event(EventType.SUBMIT, 4, 0, T0), Event(EventType.EXECUTE, 4, 0, T0 + 10, {"ExecuteHost": "<10.0.0.1:1>"}),
        Event(EventType.JOB_EVICTED, 4, 0, T0 + 100), Event(EventType.EXECUTE, 4, 0, T0 + 110,
                                                            {"ExecuteHost": "<10.0.0.2:1>"}),
        Event(EventType.JOB_TERMINATED, 4, 0, T0 + 300, {"ReturnValue": 3, "TerminatedNormally": True})))
    assert [(row["event"], row["time"]) for row in rows] == [
        ("SubmitEvent", T0), ("ExecuteEvent", T0 + 10), ("JobEvictedEvent", T0 + 100), ("ExecuteEvent", T0 + 110),
        ("JobTerminatedEvent", T0 + 300)]
    assert rows[3]["detail"] == "on <10.0.0.2:1>" and rows[4]["detail"] == "with exit code 3"


def test_a_held_event_from_json_lines_names_its_reason():
    """A JSON-lines log gives the same rows; a hold shows its reason."""
    rows = logged_timeline(logged(Event(EventType.JOB_HELD, 4, 0, T0, {"HoldReason": "tape not mounted",
                                                                        "HoldReasonCode": 1}), form=format_json))
    assert rows == [{"time": T0, "event": "JobHeldEvent", "number": 12, "what": "Held", "detail": "tape not mounted"}]


def test_the_page_draws_the_logged_events_and_escapes_their_text():
    """With logged events the page lists them (data-event, a time each) instead of the
    ad's times; a hold reason holding markup stays text."""
    rows = logged_timeline(logged(Event(EventType.SUBMIT, 4, 0, T0),
                                  Event(EventType.JOB_HELD, 4, 0, T0 + 5, {"HoldReason": HOSTILE})))
    html = render("job", pages.job_page(AD, None, rows), status_word="Completed")
    assert re.findall(r'data-event="(\w+)"', html) == ["SubmitEvent", "JobHeldEvent"]
    assert 'data-source="log"' in html and "<img" not in html and "<script>" not in html
    assert '<time datetime="2025-11-24T16:00:00Z">' in html


def test_without_a_log_the_page_falls_back_to_the_ads_times():
    """No logged events: the rows come from QDate and CompletionDate, and the page says so."""
    data = pages.job_page(AD, None, [])
    assert [event["attribute"] for event in data["events"]] == ["QDate", "CompletionDate"]
    html = render("job", data, status_word="Completed")
    assert 'data-source="ad"' in html and "no event log" in html
