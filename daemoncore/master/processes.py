"""Daemon processes for the master: each daemon of ``DAEMON_LIST`` runs as
``python -m <name>`` (or the command in config knob ``<NAME>``) with ``--port``,
``--address-file`` and ``--log-file``, spawned on the reactor it is given. Its
address file and its ping route tell the master when it is up."""

from __future__ import annotations

import os
import shlex
import signal
import sys
from collections.abc import Callable, Mapping

from twisted.internet import protocol
from twisted.internet.defer import Deferred, succeed

from daemoncore.config import Config
from daemoncore.daemon import remove_quietly
from daemoncore.master.supervisor import describe_exit
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.daemon_routes import PING

STDERR_TAIL_BYTES = 2048
PING_TIMEOUT = 2.0


def daemon_command(config: Config, name: str) -> list[str]:
    """The command line that runs daemon ``name``: config knob ``NAME``, else ``python -m name``."""
    configured = config.param(name.upper())
    if configured:
        return shlex.split(configured)
    return [sys.executable, "-m", name.lower()]


def daemon_files(log_dir: str, name: str) -> tuple[str, str]:
    """The address file and log file of daemon ``name`` under the pool's log directory."""
    return (os.path.join(log_dir, f".{name.lower()}_address"),
            os.path.join(log_dir, f"{name.capitalize()}Log"))


class _DaemonProtocol(protocol.ProcessProtocol):
    """Keeps the tail of a daemon's stderr and reports its end, with the reason."""

    def __init__(self, name: str, ended: Callable[[str, int, str], None]) -> None:
        self.name = name
        self.pid = 0
        self._ended = ended
        self._stderr = b""

    def connectionMade(self) -> None:
        self.pid = self.transport.pid

    def childDataReceived(self, fd: int, data: bytes) -> None:
        self._stderr = (self._stderr + data)[-STDERR_TAIL_BYTES:]

    def processEnded(self, reason) -> None:
        why = describe_exit(getattr(reason.value, "exitCode", None), getattr(reason.value, "signal", None))
        last = self._stderr.decode("utf-8", "replace").strip().splitlines()
        if last:
            why += f" (its last words: {last[-1].strip()})"
        self._ended(self.name, self.pid, why)


#: Set for every daemon the master starts, so the daemon can stop if the master dies.
MASTER_PID_VARIABLE = "ROOST_MASTER_PID"


class _RunningDaemon:
    """A spawned daemon process, signalled by name."""

    def __init__(self, transport, pid: int) -> None:
        self._transport = transport
        self.pid = pid

    def signal(self, name: str) -> None:
        try:
            os.kill(self.pid, getattr(signal, f"SIG{name}"))
        except (ProcessLookupError, PermissionError):
            pass


class ProcessSpawner:
    """Spawns the pool's daemons with ``reactor.spawnProcess`` and pings them."""

    def __init__(self, reactor, config: Config, log_dir: str, ended: Callable[[str, int, str], None],
                 env: Mapping[str, str] | None = None) -> None:
        self._reactor = reactor
        self._config = config
        self._log_dir = log_dir
        self._ended = ended
        self._env = dict(os.environ if env is None else env)
        self._pids: dict[str, int] = {}

    def spawn(self, name: str, port: int, collector: str | None) -> _RunningDaemon:
        address_file, log_file = daemon_files(self._log_dir, name)
        command = daemon_command(self._config, name) + [
            "--port", str(port), "--address-file", address_file, "--log-file", log_file]
        env = dict(self._env)
        env[MASTER_PID_VARIABLE] = str(os.getpid())
        if collector:
            env["_ROOST_COLLECTOR_HOST"] = collector
        remove_quietly(address_file)
        proto = _DaemonProtocol(name, self._ended)
        transport = self._reactor.spawnProcess(proto, command[0], command, env=env, path=self._log_dir,
                                               childFDs={0: "w", 1: "r", 2: "r"})
        proto.pid = transport.pid
        self._pids[name] = transport.pid
        return _RunningDaemon(transport, transport.pid)

    def probe(self, name: str) -> Deferred:
        address_file, _ = daemon_files(self._log_dir, name)
        try:
            with open(address_file, encoding="utf-8") as handle:
                address = handle.read().strip().strip("<>")
        except OSError:
            return succeed(None)
        if not address:
            return succeed(None)
        expected = self._pids.get(name)
        answer = AsyncClient(address, timeout=PING_TIMEOUT).call(PING)
        answer.addCallback(lambda reply: address if isinstance(reply, dict) and reply.get("pid") == expected else None)
        answer.addErrback(lambda _failure: None)
        return answer

