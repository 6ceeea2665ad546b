"""A user's event log can never make the schedd wait: a lock someone else holds, or a
FIFO named as the log, is reported as an EventLogError within a bounded time."""

import os
import subprocess
import sys
import time

import pytest

from jobmodel.errors import EventLogError
from jobmodel.eventlog import LOCK_WAIT_SECONDS, Event, EventLogWriter, EventType
from tests.schedd.conftest import START

EVENT = Event(EventType.JOB_ABORTED, 1, 0, START)


@pytest.mark.integration  # a process holds the lock
def test_log_locked_by_another_process_is_reported_not_waited_for(tmp_path):
    path = tmp_path / "job.log"
    path.write_text("")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.lockf(f, fcntl.LOCK_EX);"
         " print('locked', flush=True); time.sleep(30)", str(path)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        began = time.monotonic()
        with pytest.raises(EventLogError, match="locked by another process"):
            EventLogWriter(str(path)).write([EVENT])
        assert time.monotonic() - began < LOCK_WAIT_SECONDS + 1.0
    finally:
        holder.kill()
        holder.wait()
    assert path.read_text() == ""


def test_fifo_as_event_log_is_refused_without_blocking(tmp_path):
    path = tmp_path / "job.log"
    os.mkfifo(path)
    with pytest.raises(EventLogError):
        EventLogWriter(str(path)).write([EVENT])


def test_unlocked_log_is_still_written(tmp_path):
    path = tmp_path / "job.log"
    EventLogWriter(str(path)).write([EVENT])
    assert path.read_text().startswith("009 (001.000.000)")
