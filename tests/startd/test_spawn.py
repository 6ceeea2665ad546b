"""Tests for startd.spawn: job processes started with vfork and reaped by Twisted."""

import os
import signal

import pytest
from twisted.internet import defer, error, reactor
from twisted.trial import unittest

from startd.spawn import JobProcess, exit_reason


def devnull_fds():
    return [os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY), os.open(os.devnull, os.O_WRONLY)]


def start(argv, cwd="/"):
    fds = devnull_fds()
    try:
        return JobProcess(reactor, argv[0], argv, {"PATH": "/usr/bin:/bin"}, cwd, fds)
    finally:
        for fd in fds:
            os.close(fd)


def test_exit_reason_tells_done_from_exit_code_from_signal():
    assert isinstance(exit_reason(0), error.ProcessDone)
    coded = exit_reason(3 << 8)
    assert isinstance(coded, error.ProcessTerminated) and coded.exitCode == 3 and coded.signal is None
    killed = exit_reason(signal.SIGKILL)
    assert isinstance(killed, error.ProcessTerminated) and killed.signal == signal.SIGKILL


@pytest.mark.integration  # real jobs on the global reactor
class JobProcessTests(unittest.TestCase):
    @defer.inlineCallbacks
    def test_exit_code_arrives_through_the_reactor(self):
        """A job's exit code fires ``ended`` once SIGCHLD reaps it."""
        reason = yield start(["/bin/sh", "-c", "exit 5"]).ended
        self.assertEqual(reason.exitCode, 5)

    @defer.inlineCallbacks
    def test_job_leads_its_own_session_and_dies_by_signal(self):
        """The child's pid is its process group, so the group can be signalled as one."""
        job = start(["/bin/sh", "-c", "sleep 30"])
        self.assertEqual(os.getpgid(job.pid), job.pid)
        os.killpg(job.pid, signal.SIGTERM)
        reason = yield job.ended
        self.assertEqual(reason.signal, signal.SIGTERM)

    def test_missing_executable_raises_at_once(self):
        """An executable that cannot be run is an OSError from the start, not a lost child."""
        with self.assertRaises(OSError):
            start(["/nonexistent/job"])

    @defer.inlineCallbacks
    def test_working_directory_is_the_one_given(self):
        """The job runs in ``cwd``."""
        where = self.mktemp()
        os.makedirs(where)
        reason = yield start(["/bin/sh", "-c", f'test "$PWD" = "{os.path.abspath(where)}"'], cwd=where).ended
        self.assertIsInstance(reason, error.ProcessDone)
