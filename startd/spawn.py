"""Starting a job's process cheaply and learning of its exit under Twisted.

``subprocess`` starts the child with vfork (no copy of the startd's page tables,
which made a fork cost several milliseconds per job), in a new session so the
whole tree can be signalled as one group. Only when the child keeps this process's
ids, though: Python forks for a child that takes another uid, gid or groups (a root
startd's jobs, run as their owner or ``nobody``), and that fork grows with the
startd's memory (a /bin/true as another user, same run: 1.3 ms from an 11 MiB
process, 7 ms from 100 MiB, 29 ms from 200 MiB), all of it on the reactor. A root startd hands such a child to its job launcher
(:mod:`startd.job_launcher`), a small process that forks it instead and reports its
exit; a job that keeps this process's ids is still started here. Twisted's SIGCHLD handling reaps it:
the child is registered as a reap handler, so its exit fires :attr:`JobProcess.ended`
with Twisted's own ``ProcessDone``/``ProcessTerminated``; a timer looks as well, in
case a SIGCHLD was missed (as when the reactor was not running at the time).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence

from twisted.internet import error, process, task
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from daemoncore.security.accounts import Account, can_switch_user
from startd.errors import StarterError
from startd.job_launcher import JobLauncher, LauncherUnavailable

#: How often to check for the child's exit ourselves, besides SIGCHLD.
REAP_CHECK_INTERVAL = 0.5


def exit_reason(status: int) -> Exception:
    """Twisted's reason for a wait status: ``ProcessDone`` for exit 0, else
    ``ProcessTerminated`` with the exit code or the signal."""
    if os.WIFSIGNALED(status):
        return error.ProcessTerminated(None, os.WTERMSIG(status), status)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    if code == 0:
        return error.ProcessDone(status)
    return error.ProcessTerminated(code, None, status)


def identity(account: Account | None) -> dict:
    """``subprocess.Popen``'s arguments that make the child ``account`` (nothing when
    this process cannot switch users, or is that account already)."""
    if account is None or not can_switch_user() or account.uid == os.geteuid():
        return {}
    return {"user": account.uid, "group": account.gid, "extra_groups": list(account.groups)}


# Mutable: a child process from its start until it is reaped.
class JobProcess:
    """``argv`` run from ``executable`` in ``cwd`` with ``env``, standard streams on
    the three file descriptors ``stdio``, in its own session (its pid is the group id);
    ``reactor`` runs the fallback exit check. When this process is root, the child
    takes ``account``'s uid, gid and supplementary groups before it runs the job; such a
    child is started by ``launcher`` when given (and usable), which then reports its exit.

    Raises:
        OSError: (from the constructor) the executable could not be run.
    """

    def __init__(self, reactor, executable: str, argv: Sequence[str], env: Mapping[str, str], cwd: str,
                 stdio: Sequence[int], account: Account | None = None,
                 launcher: JobLauncher | None = None) -> None:
        self.ended: Deferred = Deferred()
        #: Fires with the pid once the child runs (at once, unless the launcher starts it),
        #: or fails with what kept it from running (then ``ended`` fails alike).
        self.started: Deferred = Deferred()
        self.pid: int | None = None
        self._child: subprocess.Popen | None = None
        self._check = None
        self._reactor = reactor
        who = identity(account)
        if launcher is not None and who and self._launch(launcher, (executable, argv, env, cwd, stdio, account), who):
            return
        self._start_here(executable, argv, env, cwd, stdio, account)

    def _launch(self, launcher: JobLauncher, args: tuple, who: dict) -> bool:
        """Have ``launcher`` start the child; False when it cannot take it. Copies of the
        standard streams are kept until it answers, to start the child here should the
        launcher end first."""
        executable, argv, env, cwd, stdio, account = args
        kept = [os.dup(fd) for fd in stdio]
        try:
            spawning = launcher.spawn(executable, argv, env, cwd, stdio, who)
        except LauncherUnavailable:
            for fd in kept:
                os.close(fd)
            return False
        spawning.addCallbacks(self._launched, self._not_launched, callbackArgs=(launcher,),
                              errbackArgs=(executable, argv, env, cwd, kept, account))
        spawning.addBoth(lambda _: [os.close(fd) for fd in kept])
        return True

    def _launched(self, pid: int, launcher: JobLauncher) -> None:
        self.pid = pid
        self.started.callback(pid)
        launcher.watch(pid, self)

    def _not_launched(self, failure, *args) -> None:
        if failure.check(LauncherUnavailable):
            try:  # the launcher ended first: start the child here after all
                self._start_here(*args)
                return
            except Exception as exc:  # noqa: BLE001 - whatever subprocess raised, passed on
                failure = Failure(exc)
        self.started.errback(failure)
        self.ended.errback(failure)

    def _start_here(self, executable: str, argv: Sequence[str], env: Mapping[str, str], cwd: str,
                    stdio: Sequence[int], account: Account | None) -> None:
        """Start the child from this process and have Twisted reap it.

        Raises:
            OSError: the executable could not be run.
        """
        self._child = self._start(executable, argv, env, cwd, stdio, account)
        self.pid = self._child.pid
        self._check = task.LoopingCall(self.reapProcess)
        self._check.clock = self._reactor
        self.started.callback(self.pid)
        # reaps at once (calling processEnded) if the child is already gone
        process.registerReapProcessHandler(self.pid, self)
        if not self.ended.called:
            self._check.start(REAP_CHECK_INTERVAL, now=False)

    @staticmethod
    def _start(executable: str, argv: Sequence[str], env: Mapping[str, str], cwd: str,
               stdio: Sequence[int], account: Account | None) -> subprocess.Popen:
        return subprocess.Popen(list(argv), executable=executable, env=dict(env), cwd=cwd,
                                stdin=stdio[0], stdout=stdio[1], stderr=stdio[2],
                                start_new_session=True, close_fds=True, **identity(account))

    def reapProcess(self) -> None:  # noqa: N802 - the name Twisted's reaper calls
        """Collect the child's exit if it has ended (called on SIGCHLD and by a fallback timer)."""
        if self.ended.called:
            return
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 0
        if pid:
            process.unregisterReapProcessHandler(self.pid, self)
            self.processEnded(status)

    def processEnded(self, status: int) -> None:  # noqa: N802 - the name Twisted's reaper calls
        """The child is reaped: remember it (so ``subprocess`` leaves it alone) and fire ``ended``."""
        if self.ended.called:
            return
        if self._child is not None:
            self._child.returncode = os.waitstatus_to_exitcode(status) if status else 0
        if self._check is not None and self._check.running:
            self._check.stop()
        self.ended.callback(exit_reason(status))

    def launcher_lost(self, reason: str) -> None:
        """The launcher that started the child ended before its exit came (the child was
        killed): ``ended`` fails with :class:`StarterError`, so the run ends as evicted."""
        if not self.ended.called:
            self.ended.errback(StarterError(f"job {self.pid}: {reason}"))


__all__ = ["JobProcess", "exit_reason", "identity"]
