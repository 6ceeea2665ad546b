"""Tests for startd.job_launcher and startd.launcher_process: jobs that run as another
user are started by a small launcher process, which reports their exits."""

import os
import signal
import tempfile

import pytest
from twisted.internet import defer, error, reactor
from twisted.trial import unittest

import classad
from daemoncore.security.accounts import can_switch_user, local_account
from startd.errors import StarterError
from startd.job_launcher import JobLauncher, _pid_from
from startd.launcher_process import answer_for, decode, encode
from startd.spawn import JobProcess
from startd.starter import Starter

ROOT_ONLY = pytest.mark.skipif(not can_switch_user(), reason="starting jobs as another user needs root")


def devnull_fds():
    return [os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY), os.open(os.devnull, os.O_WRONLY)]


class _Ended:
    def __init__(self):
        self.statuses = []

    def processEnded(self, status):  # noqa: N802 - the watcher's interface
        self.statuses.append(status)


def test_one_read_takes_a_turns_worth_of_exits_and_leaves_the_rest_for_later():
    """Forty exits waiting in the launcher's socket: each read dispatches MESSAGES_PER_READ
    of them (the socket stays readable for the rest), until all forty are told, once."""
    import socket

    from twisted.internet.task import Clock

    from startd.job_launcher import MESSAGES_PER_READ

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.setblocking(False)
    launcher = JobLauncher(Clock())
    launcher._channel = ours  # as start() leaves it, without the launcher process
    watchers = {pid: _Ended() for pid in range(1000, 1040)}
    for pid, watcher in watchers.items():
        launcher.watch(pid, watcher)
        theirs.send(encode({"exited": pid, "status": 0}))
    told = []
    for _ in range(4):
        launcher.doRead()
        told.append(sum(len(w.statuses) for w in watchers.values()))
    assert told == [MESSAGES_PER_READ, 2 * MESSAGES_PER_READ, 40, 40]
    assert all(w.statuses == [0] for w in watchers.values())
    ours.close()
    theirs.close()


def test_messages_round_trip_and_must_be_objects():
    assert decode(encode({"id": 3, "argv": ["a", "é"]})) == {"id": 3, "argv": ["a", "é"]}
    with pytest.raises(ValueError):
        decode(b"[1, 2]")


@pytest.mark.integration  # starts processes
def test_an_answer_carries_the_pid_or_the_error_subprocess_met():
    fds = devnull_fds()
    try:
        reply, child = answer_for({"id": 7, "executable": "/bin/true", "argv": ["/bin/true"], "env": {},
                                   "cwd": "/"}, fds)
        assert reply == {"id": 7, "pid": child.pid}
        child.wait()
        reply, child = answer_for({"id": 8, "executable": "/nonexistent/job", "argv": ["job"], "env": {},
                                   "cwd": "/"}, fds)
        assert child is None and reply["error"] == "OSError" and reply["errno"] == 2
        assert reply["filename"] == "/nonexistent/job"
        reply, _ = answer_for({"id": 9, "executable": "/bin/true", "argv": ["/bin/true"], "env": {"A\0": "b"},
                               "cwd": "/"}, fds)
        assert reply["error"] == "ValueError"
    finally:
        for fd in fds:
            os.close(fd)


def test_an_error_answer_raises_what_subprocess_would_have():
    with pytest.raises(FileNotFoundError) as raised:
        _pid_from({"id": 1, "error": "OSError", "errno": 2, "message": "No such file or directory",
                   "filename": "/x/job"})
    assert str(raised.value) == "[Errno 2] No such file or directory: '/x/job'"
    with pytest.raises(ValueError):
        _pid_from({"id": 1, "error": "ValueError", "message": "embedded null byte"})
    assert _pid_from({"id": 1, "pid": 42}) == 42


class _WithLauncher(unittest.TestCase):
    """A started launcher (stopped afterwards) and the ``nobody`` account its jobs run as."""

    def setUp(self):
        self.nobody = local_account("nobody")
        if self.nobody is None:
            raise unittest.SkipTest("no 'nobody' account")
        self.launcher = JobLauncher(reactor)
        self.launcher.start()
        self.addCleanup(self.launcher.stop)


@pytest.mark.integration  # a real launcher process and real jobs on the global reactor
@ROOT_ONLY
class LaunchedJobTests(_WithLauncher):
    def start(self, argv, cwd="/"):
        fds = devnull_fds()
        try:
            return JobProcess(reactor, argv[0], argv, {"PATH": "/usr/bin:/bin"}, cwd, fds, self.nobody,
                              launcher=self.launcher)
        finally:
            for fd in fds:
                os.close(fd)

    @defer.inlineCallbacks
    def test_job_runs_as_its_account_in_its_own_session_and_its_exit_comes_back(self):
        """The launcher, not the startd, is the job's parent; the job has the account's
        uid and leads its own process group; its exit code fires ``ended``."""
        with tempfile.TemporaryDirectory() as where:
            os.chmod(where, 0o777)
            job = self.start(["/bin/sh", "-c", f'id -u > {where}/uid; exec sleep 0.5'], cwd=where)
            self.assertIsNone(job.pid)  # the launcher answers while the reactor runs
            pid = yield job.started
            self.assertEqual(job.pid, pid)
            self.assertEqual(os.getpgid(job.pid), job.pid)
            reason = yield job.ended
            self.assertIsInstance(reason, error.ProcessDone)
            with open(os.path.join(where, "uid")) as handle:
                self.assertEqual(int(handle.read()), self.nobody.uid)

    @defer.inlineCallbacks
    def test_an_exit_code_comes_back(self):
        with tempfile.TemporaryDirectory() as where:
            job = self.start(["/bin/sh", "-c", "exit 5"], cwd=where)
            reason = yield job.ended
            self.assertEqual(reason.exitCode, 5)

    @defer.inlineCallbacks
    def test_a_job_that_cannot_start_fails_started_and_ended(self):
        """The exec failure comes back as the OSError subprocess raises."""
        job = self.start(["/nonexistent/job"])
        with self.assertRaises(FileNotFoundError) as raised:
            yield job.started
        self.assertEqual(raised.exception.filename, "/nonexistent/job")
        with self.assertRaises(FileNotFoundError):
            yield job.ended

    @defer.inlineCallbacks
    def test_a_signal_death_is_reported(self):
        job = self.start(["/bin/sh", "-c", "sleep 30"])
        yield job.started
        os.killpg(job.pid, signal.SIGTERM)
        reason = yield job.ended
        self.assertIsInstance(reason, error.ProcessTerminated)
        self.assertEqual(reason.signal, signal.SIGTERM)

    @defer.inlineCallbacks
    def test_losing_the_launcher_kills_its_jobs_and_the_next_job_gets_a_new_one(self):
        """A launcher gone mid-run: its job is killed and ``ended`` fails (the run ends as
        evicted); the next job starts a new launcher."""
        job = self.start(["/bin/sleep", "30"])
        yield job.started
        first = self.launcher.pid
        os.kill(first, signal.SIGKILL)
        with self.assertRaises(StarterError):
            yield job.ended
        with self.assertRaises(ProcessLookupError):
            for _ in range(100):  # SIGKILL lands at once, the reaping by init a moment later
                os.kill(job.pid, 0)
                yield defer.succeed(None)
                yield _sleep(0.02)
        again = yield self.start(["/bin/true"]).ended
        self.assertIsInstance(again, error.ProcessDone)
        self.assertNotEqual(self.launcher.pid, first)


@pytest.mark.integration  # a real launcher process and real jobs on the global reactor
@ROOT_ONLY
class LaunchedStarterTests(_WithLauncher):
    def setUp(self):
        super().setUp()
        self.execute = tempfile.mkdtemp(prefix="roost-launched-")
        os.chmod(self.execute, 0o711)
        self.addCleanup(lambda: os.path.isdir(self.execute) and os.rmdir(self.execute))

    def starter(self, cmd, **attrs):
        ad = classad.ClassAd({"ClusterId": 7, "ProcId": 0, "Cmd": cmd, **attrs})
        return Starter(reactor, ad, classad.ClassAd({"Name": "slot1_1@node1"}), self.execute,
                       account=self.nobody, launcher=self.launcher, vacate_time=5)

    @defer.inlineCallbacks
    def test_a_vacate_before_the_pid_comes_stops_the_job_once_it_runs(self):
        """A vacate while the launcher starts the job is kept and sent once it runs."""
        run = self.starter("/bin/sleep", Arguments="30")
        ended = run.start()
        self.assertIsNone(run.pid)
        run.vacate()
        outcome = yield ended
        self.assertTrue(outcome.stopped)
        self.assertEqual(outcome.exit_signal, signal.SIGTERM)
        run.remove_sandbox()

    @defer.inlineCallbacks
    def test_a_job_the_launcher_cannot_exec_fails_started_and_loses_its_sandbox(self):
        with tempfile.NamedTemporaryFile("w", dir=self.execute, suffix=".bin", delete=False) as garbage:
            garbage.write("\x00\x01 not a program")
        os.chmod(garbage.name, 0o755)
        self.addCleanup(os.unlink, garbage.name)
        run = self.starter(garbage.name)
        ended = run.start()
        ended.addErrback(lambda _: None)
        with self.assertRaises(OSError) as raised:
            yield run.started()
        self.assertEqual(raised.exception.strerror, "Exec format error")
        self.assertFalse(os.path.exists(run.sandbox))


def _sleep(seconds):
    waited = defer.Deferred()
    reactor.callLater(seconds, waited.callback, None)
    return waited
