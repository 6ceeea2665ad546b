"""The job launcher: a small process the startd starts once, which starts jobs as other
users on its behalf and tells it of their exits.

Python forks (it cannot vfork) for a child that takes another uid, gid or groups, and a
fork copies the page tables of the process that forks: from the startd (tens of MiB)
that cost 5-15 ms of its reactor per job, from this process (a bare interpreter, a few
MiB) about a millisecond, and none of it on the startd's reactor. It imports the
standard library only and runs as ``python -I -S launcher_process.py <fd>``.

The startd and the launcher talk over a ``SOCK_SEQPACKET`` Unix socket pair, one JSON
message per packet:

- startd to launcher: ``{"id", "executable", "argv", "env", "cwd", "user", "group",
  "groups"}`` with the job's stdin, stdout and stderr passed as three descriptors;
- launcher to startd: ``{"id", "pid"}`` once the job runs, ``{"id", "error", "errno",
  "message", "filename"}`` when it could not be started (``error`` is ``"OSError"``
  for a failed exec, ``"ValueError"``/``"TypeError"`` for arguments ``subprocess``
  refused), and ``{"exited": pid, "status": wait status}`` when a job ends.

When the startd's end closes (the startd stopped or died) the launcher exits; the jobs
it started are the startd's to stop, as before.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys

#: The largest message either side sends (a request carries the job's argv and environment).
MAX_MESSAGE = 1 << 20
#: The socket buffer each end asks for, so a request of up to :data:`MAX_MESSAGE` fits.
SOCKET_BUFFER = 2 * MAX_MESSAGE + (64 << 10)


def encode(message: dict) -> bytes:
    """One message as a packet."""
    return json.dumps(message, separators=(",", ":")).encode("utf-8")


def decode(packet: bytes) -> dict:
    """A packet as a message.

    Raises:
        ValueError: not a JSON object.
    """
    message = json.loads(packet)
    if not isinstance(message, dict):
        raise ValueError("a launcher message is a JSON object")
    return message


def start_job(request: dict, stdio: list[int]) -> subprocess.Popen:
    """Start the job ``request`` describes with ``stdio`` as its standard streams, in a
    new session, as its user when one is given.

    Raises:
        OSError: the executable could not be run (as ``subprocess`` raises it).
        ValueError, TypeError: ``subprocess`` refused the arguments.
    """
    identity = {}
    if request.get("user") is not None:
        identity = {"user": int(request["user"]), "group": int(request["group"]),
                    "extra_groups": [int(g) for g in request.get("groups") or ()]}
    return subprocess.Popen(list(request["argv"]), executable=request["executable"], env=dict(request["env"]),
                            cwd=request["cwd"], stdin=stdio[0], stdout=stdio[1], stderr=stdio[2],
                            start_new_session=True, close_fds=True, **identity)


def answer_for(request: dict, stdio: list[int]) -> tuple[dict, subprocess.Popen | None]:
    """Start the job and say how it went: its pid, or the error."""
    reply = {"id": request.get("id")}
    try:
        child = start_job(request, stdio)
    except OSError as exc:
        return {**reply, "error": "OSError", "errno": exc.errno, "message": exc.strerror or str(exc),
                "filename": exc.filename}, None
    except (ValueError, TypeError, KeyError) as exc:
        kind = type(exc).__name__ if isinstance(exc, (ValueError, TypeError)) else "ValueError"
        return {**reply, "error": kind, "message": str(exc)}, None
    return {**reply, "pid": child.pid}, child


class Launcher:
    """The launcher's loop over its end of the socket pair: start jobs, report exits."""

    def __init__(self, channel: socket.socket) -> None:
        self.channel = channel
        self.children: dict[int, subprocess.Popen] = {}
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)

    def run(self) -> None:
        """Serve until the startd's end closes."""
        signal.set_wakeup_fd(self._wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        selector = selectors.DefaultSelector()
        selector.register(self.channel, selectors.EVENT_READ, self._request)
        selector.register(self._wake_read, selectors.EVENT_READ, self._reap)
        while True:
            for key, _ in selector.select():
                if key.data() is False:
                    return

    def _request(self) -> bool:
        try:
            packet, fds, _flags, _addr = socket.recv_fds(self.channel, MAX_MESSAGE, 3)
        except InterruptedError:
            return True
        if not packet:
            return False
        try:
            request = decode(packet)
            reply, child = answer_for(request, fds) if len(fds) == 3 else (
                {"id": request.get("id"), "error": "ValueError", "message": "three descriptors expected"}, None)
        except ValueError as exc:
            reply, child = {"id": None, "error": "ValueError", "message": f"bad request: {exc}"}, None
        finally:
            for fd in fds:
                os.close(fd)
        if child is not None:
            self.children[child.pid] = child
        self.channel.send(encode(reply))
        self._reap()
        return True

    def _reap(self) -> bool:
        try:
            while os.read(self._wake_read, 4096):
                pass
        except BlockingIOError:
            pass
        while True:  # every child of this process is a job it started
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if not pid:
                return True
            child = self.children.pop(pid, None)
            if child is not None:
                child.returncode = 0  # reaped here: subprocess must not wait for it again
            self.channel.send(encode({"exited": pid, "status": status}))


def main(argv: list[str]) -> int:
    """``launcher_process.py <fd>``: serve the socket inherited as descriptor ``fd``."""
    channel = socket.socket(fileno=int(argv[1]))
    Launcher(channel).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
