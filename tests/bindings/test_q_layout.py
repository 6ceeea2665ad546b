"""roost q's human layouts, column by column, from condor_q's print formats
(jobDefault, jobHold, jobRuntime and the standard summary in
src/condor_q.V6/queue.cpp) and format_date in src/condor_utils/format_time.cpp."""

import time

import pytest

import classad
from bindings.cli.options import UsageError
from bindings.cli.q import parse_arguments, render
from bindings.cli.q_tables import (
    hold_table,
    io_table,
    nobatch_table,
    readable_bytes,
    run_table,
    short_time,
    totals_lines,
)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


APRIL_19_1152 = 1713527520  # 2024-04-19 11:52 UTC
DEC_1_0959 = 1733047140  # 2024-12-01 09:59 UTC


def job(**extra):
    ad = {"ClusterId": 23, "ProcId": 0, "Owner": "alice", "QDate": DEC_1_0959, "JobStatus": 1, "JobPrio": 0,
          "ImageSize": 0, "Cmd": "/bin/sleep", "Args": "60", "RemoteWallClockTime": 0, "JobUniverse": 5}
    ad.update(extra)
    return classad.ClassAd(ad)


def test_dates_are_written_as_format_date_writes_them():
    """format_date: %2d/%-2d %02d:%02d, so a one-digit month is padded on the left and a
    one-digit day on the right; a missing or negative date is '    ???    '."""
    assert short_time(APRIL_19_1152) == " 4/19 11:52"
    assert short_time(DEC_1_0959) == "12/1  09:59"
    assert short_time(None) == short_time(-5) == "    ???    "


def test_nobatch_heading_and_row_follow_the_default_print_format():
    """jobDefault_PrintFormat: ' ID' in 5 and ProcId in 3 with no space between, OWNER
    in -14, SUBMITTED right in 11, RUN_TIME right in 12, ST, PRI, SIZE right in 4, CMD;
    headings are left-justified to each column's width and columns joined by a space."""
    heading, row = nobatch_table([job()], now=DEC_1_0959)
    assert heading == " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    assert row == "  23.0   alice          12/1  09:59   0+00:00:00 I  0    0.0 sleep 60"


def test_a_wide_priority_widens_its_column():
    """PRI is WIDTH AUTO: the column grows to its widest value."""
    heading, row = nobatch_table([job(JobPrio=-1000)], now=DEC_1_0959)
    assert " ST PRI   SIZE CMD" in heading
    assert " I  -1000  0.0 sleep 60" in row


def test_hold_columns():
    """jobHold_PrintFormat: ID, OWNER in -14, HELD_SINCE (EnteredCurrentStatus as a
    QDATE) in 11, HOLD_REASON whole."""
    heading, row = hold_table([job(JobStatus=5, EnteredCurrentStatus=APRIL_19_1152, HoldReason="via condor_hold")])
    assert heading == " ID      OWNER          HELD_SINCE  HOLD_REASON"
    assert row == "  23.0   alice           4/19 11:52 via condor_hold"


def test_run_columns():
    """jobRuntime_PrintFormat: ID OWNER SUBMITTED RUN_TIME HOST(S)."""
    heading, row = run_table([job(JobStatus=2, RemoteHost="slot1@exec")], now=DEC_1_0959)
    assert heading == " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)"
    assert row == "  23.0   alice          12/1  09:59   0+00:00:00 slot1@exec"


def test_totals_follow_the_standard_summary():
    """standard_summary3: query, the user, all users; each line but the last ends with a
    space (the next label's cell starts with the newline); Transferring Output counts as
    running and scheduler-universe jobs are not counted (count_job)."""
    jobs = [job(JobStatus=6), job(JobStatus=5), job(JobStatus=1, JobUniverse=7)]
    assert totals_lines(jobs, ("alice", jobs[:1]), jobs) == [
        "Total for query: 2 jobs; 0 completed, 0 removed, 0 idle, 1 running, 1 held, 0 suspended ",
        "Total for alice: 1 jobs; 0 completed, 0 removed, 0 idle, 1 running, 0 held, 0 suspended ",
        "Total for all users: 2 jobs; 0 completed, 0 removed, 0 idle, 1 running, 1 held, 0 suspended"]


def test_allusers_has_no_line_for_the_user():
    """standard_summary2 (no MyName, as with -allusers): the query and all users only."""
    lines = totals_lines([job()], None, [job()])
    assert [line.split(":")[0] for line in lines] == ["Total for query", "Total for all users"]


def _render(argv, ads):
    return render(parse_arguments(argv), ads, ads, "alice", "-- Schedd: s : <1.2.3.4:5>", DEC_1_0959)


def test_the_page_opens_with_two_blank_lines_and_puts_a_blank_line_before_the_totals():
    """print_full_header prints two newlines before '-- Schedd:'; print_full_footer one
    before the summary."""
    text = _render(["-nobatch"], [job()])
    lines = text.split("\n")
    assert lines[:3] == ["", "", "-- Schedd: s : <1.2.3.4:5>"]
    assert lines[5] == "" and lines[6].startswith("Total for query: 1 jobs;")


def test_totals_alone():
    """-totals (jobTotals_PrintFormat, SELECT NOHEADER): the banner, then the totals
    with no heading and no blank line."""
    lines = _render(["-totals"], [job()]).split("\n")
    assert lines[2].startswith("-- Schedd:") and lines[3].startswith("Total for query: 1 jobs;")


def test_rows_are_cut_at_79_columns_unless_wide():
    """initOutputMask: without -wide the table is cut to the console width less one
    (80 when not a terminal); -wide leaves rows whole, -wide:N cuts at N-1; -hold is
    always wide."""
    long_args = job(Args="x" * 200)
    cut = _render(["-nobatch"], [long_args]).split("\n")[4]
    assert len(cut) == 79
    assert len(_render(["-nobatch", "-wide"], [long_args]).split("\n")[4]) > 200
    assert len(_render(["-nobatch", "-wide:100"], [long_args]).split("\n")[4]) == 99
    held = job(JobStatus=5, EnteredCurrentStatus=0, HoldReason="r" * 200)
    assert len(_render(["-hold"], [held]).split("\n")[4]) > 200


def test_a_bad_wide_width_is_refused():
    """-wide:N needs a whole number."""
    with pytest.raises(UsageError, match="-wide:abc"):
        parse_arguments(["-wide:abc"])


def test_readable_bytes_as_metric_units_writes_them():
    """metric_units (condor_utils/metric_units.cpp): divide by 1024 while above 1024,
    %.1f and the unit, 'B ' keeping its trailing space; the header's own example 2096 is
    '2.0 KB'."""
    assert readable_bytes(2096) == "2.0 KB"
    assert readable_bytes(1024) == "1024.0 B "
    assert readable_bytes(3221225472) == "3.0 GB"
    assert readable_bytes(None) == "??"


def test_io_columns_and_which_jobs():
    """jobIO_PrintFormat: ID OWNER RUNS ST INPUT OUTPUT RATE (width 10) MISC, for jobs
    that are transferring or queued to (its WHERE); MISC names the transfer states."""
    moving = job(JobStatus=2, NumJobStarts=1, BytesRecvd=2096, BytesSent=0, TransferringInput=True)
    heading, row = io_table([moving])
    assert heading == " ID      OWNER          RUNS ST  INPUT  OUTPUT  RATE      MISC"
    assert row == "  23.0   alice             1 R  2.0 KB  0.0 B      2.0 KB transfer=in"
    assert "TransferringInput =?= true" in parse_arguments(["-io"]).constraint("alice")
