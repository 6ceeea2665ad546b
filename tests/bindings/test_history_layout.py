"""roost history's table, column by column, from condor_history's default print mask
(init_default_custom_format, render_job_id and render_hist_runtime in
src/condor_tools/history.cpp; AttrListPrintMask::display_Headings pads each heading to
the left), and its -format output."""

import time

import pytest

import classad
from bindings.cli.history import main, table


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def job(**extra):
    ad = {"ClusterId": 23, "ProcId": 0, "Owner": "alice", "QDate": 1733047140, "JobStatus": 4,
          "RemoteWallClockTime": 65.0, "CompletionDate": 1733047205, "Cmd": "/bin/sleep", "Args": "60"}
    ad.update(extra)
    return classad.ClassAd(ad)


def test_heading_and_row_line_up_as_condor_history_prints_them():
    """ID %4d.%-3d in 7, OWNER 14, SUBMITTED 11, RUN_TIME 12, ST 2, COMPLETED 11, then the
    command as given with its arguments; headings padded on the left of their columns."""
    lines = table([job()]).splitlines()
    assert lines[0] == " ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD"
    assert lines[1] == "  23.0   alice          12/1  09:59   0+00:01:05 C  12/1  10:00 /bin/sleep 60"


def test_run_time_falls_back_to_cpu_time_and_new_arguments_are_shown():
    """render_hist_runtime: RemoteWallClockTime, else RemoteUserCpu; Arguments when no Args."""
    ad = job(Args=None, Arguments="-x 1", RemoteUserCpu=3661.0)
    del ad["RemoteWallClockTime"]
    del ad["Args"]
    assert table([ad]).splitlines()[1].endswith(" 0+01:01:01 C  12/1  10:00 /bin/sleep -x 1")


def test_format_prints_each_pair_per_job(tmp_path, capsys):
    """condor_history -format FMT ATTR, as condor_q and condor_status print it."""
    path = tmp_path / "history"
    path.write_text('ClusterId = 4\nProcId = 1\n*** ProcId = 1 ClusterId = 4\n')
    assert main(["-file", str(path), "-format", "%d.", "ClusterId", "-format", "%d\\n", "ProcId"]) == 0
    assert capsys.readouterr().out == "4.1\n"
