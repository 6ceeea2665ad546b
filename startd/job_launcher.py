"""The startd's end of the job launcher (:mod:`startd.launcher_process`): a small process,
started once, that starts the jobs a root startd runs as other users, so that the fork
each one needs copies a few MiB of page tables instead of the startd's tens of MiB, and
none of it holds the startd's reactor.

:meth:`JobLauncher.spawn` sends the request and fires with the pid once the launcher has
forked and exec'd the job (a few milliseconds the reactor spends on other work), or fails
with the same ``OSError`` as ``subprocess`` would have raised. Exits come back later, read
on the reactor like the answers; each goes to the watcher of its pid
(:class:`startd.spawn.JobProcess`).
When the launcher ends unexpectedly, every watched job is killed and its watcher told
(its run then ends as evicted, to run again), and the next spawn starts a new launcher.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Protocol

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReadDescriptor
from twisted.logger import Logger
from zope.interface import implementer

from startd.launcher_process import MAX_MESSAGE, SOCKET_BUFFER, decode, encode

#: How long :meth:`JobLauncher.spawn` waits for the launcher to answer before giving up on it
#: (a fork and exec of a small process takes milliseconds; this bounds a hung launcher).
REPLY_TIMEOUT = 2.0
#: How long a stopping startd waits for the launcher to exit once its end is closed.
EXIT_WAIT = 2.0
#: After the launcher could not be started, how long jobs are started directly before trying again.
RESTART_PAUSE = 60.0
#: How many of the launcher's messages one read takes (one reactor turn's worth of job exits).
MESSAGES_PER_READ = 16
LAUNCHER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher_process.py")

_log = Logger()


class LauncherUnavailable(Exception):
    """The launcher cannot take this job: start it directly instead."""


class ExitWatcher(Protocol):
    """Told how a launched job ended."""

    def processEnded(self, status: int) -> None: ...  # noqa: N802 - Twisted's reaper name

    def launcher_lost(self, reason: str) -> None: ...


# Mutable: the launcher process, its socket and the jobs it watches.
@implementer(IReadDescriptor)
class JobLauncher:
    """Starts jobs through the launcher process; ``reactor`` reads their exits."""

    def __init__(self, reactor, python: str = sys.executable, reply_timeout: float = REPLY_TIMEOUT) -> None:
        self.reactor = reactor
        self.python = python
        self.reply_timeout = reply_timeout
        self._channel: socket.socket | None = None
        self._process: subprocess.Popen | None = None
        self._watchers: dict[int, ExitWatcher] = {}
        #: Spawn requests waiting for their answer: id -> (Deferred, its timeout).
        self._pending: dict[int, tuple[Deferred, object]] = {}
        #: Exits heard before their pid was watched (the job ended while its spawn was answered).
        self._unwatched: dict[int, int] = {}
        self._next_id = 0
        self._failed_at: float | None = None

    # --- lifecycle ---

    def start(self) -> None:
        """Start the launcher process and read its messages on the reactor.

        Raises:
            OSError: the process or its socket could not be made.
        """
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            for end in (ours, theirs):
                end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
                end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
            self._process = subprocess.Popen([self.python, "-I", "-S", LAUNCHER_SCRIPT, str(theirs.fileno())],
                                             pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                             close_fds=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)
        self._channel = ours
        self.reactor.addReader(self)
        _log.info("job launcher started (pid {pid})", pid=self._process.pid)

    def stop(self) -> None:
        """Close the launcher's socket (it exits on that) and reap it; the jobs it
        started are left to their watchers' owners, who stop them."""
        self._close()
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.wait(EXIT_WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    @property
    def pid(self) -> int | None:
        """The launcher process's pid while it runs."""
        return self._process.pid if self._process is not None else None

    # --- starting jobs ---

    def spawn(self, executable: str, argv: Sequence[str], env: Mapping[str, str], cwd: str,
              stdio: Sequence[int], identity: Mapping) -> Deferred:
        """Start a job as ``identity`` (``user``, ``group``, ``extra_groups`` as for
        ``subprocess.Popen``) in a new session; fires with its pid once it runs, or fails
        with the ``OSError`` (exec failed, no such directory...) or ``ValueError``/``TypeError``
        (arguments refused) ``subprocess`` met, or with :class:`LauncherUnavailable` when
        the launcher ended or did not answer within :attr:`reply_timeout`.

        Raises:
            LauncherUnavailable: (at once) the launcher cannot take the job: start it directly.
        """
        self._ensure_running()
        self._next_id += 1
        request_id = self._next_id
        request = {"id": request_id, "executable": executable, "argv": list(argv), "env": dict(env),
                   "cwd": cwd, "user": identity.get("user"), "group": identity.get("group"),
                   "groups": list(identity.get("extra_groups") or ())}
        packet = encode(request)
        if len(packet) > MAX_MESSAGE:
            raise LauncherUnavailable(f"the request is {len(packet)} bytes, over {MAX_MESSAGE}")
        try:
            socket.send_fds(self._channel, [packet], list(stdio))
        except BlockingIOError:  # its queue is full (never expected): this job starts directly
            raise LauncherUnavailable("the job launcher's queue is full") from None
        except ConnectionError as exc:
            self._lose(f"cannot reach the job launcher: {exc}")
            raise LauncherUnavailable(str(exc)) from None
        answered: Deferred = Deferred()
        timer = self.reactor.callLater(self.reply_timeout, self._lose,
                                       f"the job launcher did not answer within {self.reply_timeout:g} s")
        self._pending[request_id] = (answered, timer)
        return answered.addCallback(_pid_from)

    def _ensure_running(self) -> None:
        if self._channel is not None:
            return
        now = self.reactor.seconds()
        if self._failed_at is not None and now - self._failed_at < RESTART_PAUSE:
            raise LauncherUnavailable("the job launcher could not be started lately")
        try:
            self.start()
        except OSError as exc:
            self._failed_at = now
            _log.warn("job launcher not started ({why}): jobs start from the startd itself", why=exc)
            raise LauncherUnavailable(str(exc)) from None

    # --- exits ---

    def watch(self, pid: int, watcher: ExitWatcher) -> None:
        """Tell ``watcher`` how job ``pid`` ends (at once if that is known already)."""
        if pid in self._unwatched:
            watcher.processEnded(self._unwatched.pop(pid))
            return
        if self._channel is None:
            watcher.launcher_lost("the job launcher ended")
            return
        self._watchers[pid] = watcher

    def doRead(self) -> None:  # noqa: N802 - Twisted's IReadDescriptor
        """Read what the launcher sent: exits of jobs, at most :data:`MESSAGES_PER_READ`
        at a time (the rest wait in the socket, which stays readable, for a later turn:
        500 jobs ending at once each start a report to the schedd)."""
        for message in self._read_messages():
            self._dispatch(message)

    def _read_messages(self) -> list[dict]:
        messages = []
        while self._channel is not None and len(messages) < MESSAGES_PER_READ:
            try:
                packet = self._channel.recv(MAX_MESSAGE)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                self._lose(f"the job launcher's socket failed: {exc}")
                break
            if not packet:
                self._lose("the job launcher ended")
                break
            try:
                messages.append(decode(packet))
            except ValueError:
                _log.warn("job launcher: unreadable message ignored")
        return messages

    def _dispatch(self, message: dict) -> None:
        pending = self._pending.pop(message.get("id"), None) if "id" in message else None
        if pending is not None:
            answered, timer = pending
            if timer.active():
                timer.cancel()
            answered.callback(message)
            return
        pid, status = message.get("exited"), message.get("status")
        if type(pid) is not int or type(status) is not int:
            return
        watcher = self._watchers.pop(pid, None)
        if watcher is not None:
            watcher.processEnded(status)
        elif len(self._unwatched) < 4096:
            self._unwatched[pid] = status

    # --- losing the launcher ---

    def _lose(self, why: str) -> None:
        """The launcher is gone: its jobs' exits will never come, so each is killed and its watcher told."""
        if self._channel is None:
            return
        _log.warn("{why}; its {count} running job(s) are killed and a new launcher starts with the next job",
                  why=why, count=len(self._watchers))
        self._close()
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            try:  # it exits on the closed socket anyway; subprocess reaps it with a later Popen
                process.kill()
            except OSError:
                pass
        pending, self._pending = self._pending, {}
        for answered, timer in pending.values():
            if timer.active():
                timer.cancel()
            answered.errback(LauncherUnavailable(why))
        watchers, self._watchers = self._watchers, {}
        for pid, watcher in watchers.items():
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            watcher.launcher_lost(why)

    def _close(self) -> None:
        if self._channel is not None:
            self.reactor.removeReader(self)
            self._channel.close()
            self._channel = None

    # --- IReadDescriptor ---

    def fileno(self) -> int:
        return self._channel.fileno() if self._channel is not None else -1

    def connectionLost(self, reason) -> None:  # noqa: N802 - Twisted's IReadDescriptor
        self._lose("the job launcher's socket closed")

    def logPrefix(self) -> str:  # noqa: N802 - Twisted's IReadDescriptor
        return "JobLauncher"


def _pid_from(reply: dict) -> int:
    """The pid in a spawn answer.

    Raises:
        OSError, ValueError, TypeError: the launcher could not start the job (the error it met).
    """
    error = reply.get("error")
    if error is None:
        pid = reply.get("pid")
        if type(pid) is not int or pid <= 0:
            raise ValueError(f"job launcher: no pid in its answer {reply!r}")
        return pid
    message = str(reply.get("message") or "the job could not be started")
    if error == "OSError" and type(reply.get("errno")) is int:
        filename = reply.get("filename")
        raise OSError(reply["errno"], message, filename) if filename is not None else OSError(reply["errno"], message)
    raise TypeError(message) if error == "TypeError" else ValueError(message)


__all__ = ["JobLauncher", "LauncherUnavailable", "ExitWatcher", "REPLY_TIMEOUT"]
