"""The master's supervision rules, free of processes and sockets: start the daemons of
``DAEMON_LIST`` one after another (each once the one before it answers), restart one
that dies after a growing wait, and stop them all with SIGTERM (SIGKILL for those
that outstay the stop timeout).

Processes come from a ``Spawner`` and time from an ``IReactorTime``, so a test drives
the whole life of a pool with ``task.Clock`` and a fake spawner.
"""

from __future__ import annotations

import signal as signals
from collections.abc import Callable, Mapping
from typing import Protocol

from attrs import define, field
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from daemoncore.master.backoff import BackoffPolicy

_log = Logger()

COLLECTOR = "COLLECTOR"


class ChildProcess(Protocol):
    """A running daemon process as the supervisor sees it."""

    pid: int

    def signal(self, name: str) -> None:
        """Send signal ``TERM`` or ``KILL``; a process already gone is no error."""


class Spawner(Protocol):
    """Starts daemon processes and asks whether they answer."""

    def spawn(self, name: str, port: int, collector: str | None) -> ChildProcess:
        """Start daemon ``name`` on ``port`` (0: any free port), told where the collector is."""

    def probe(self, name: str) -> Deferred:
        """A Deferred firing with the daemon's ``host:port`` once it answers its ping, else None."""


class DaemonStartError(Exception):
    """A daemon of ``DAEMON_LIST`` did not answer within the start timeout."""


@define
class Child:
    """One supervised daemon; mutable because it follows the process through restarts."""

    name: str
    state: str = "idle"  # idle, starting, ready, backoff, stopping, stopped
    process: ChildProcess | None = None
    address: str | None = None
    port: int = 0
    started_at: float | None = None
    restarts: int = 0
    last_exit: str | None = None
    on_ready: Callable[[], None] | None = field(default=None, repr=False)
    pending: object = field(default=None, repr=False)

    @property
    def pid(self) -> int | None:
        """The pid of the running process, if any."""
        return self.process.pid if self.process is not None else None

    def describe(self) -> dict:
        """The child as ``roost pool status`` shows it."""
        return {"name": self.name, "state": self.state, "pid": self.pid, "address": self.address,
                "started_at": self.started_at, "restarts": self.restarts, "last_exit": self.last_exit}


def describe_exit(exit_code: int | None, signal: int | None) -> str:
    """Why a process ended, in words: ``exited with status 2`` or ``was killed by SIGKILL``."""
    if signal is not None:
        try:
            name = signals.Signals(signal).name
        except ValueError:
            name = f"signal {signal}"
        return f"was killed by {name}"
    return f"exited with status {exit_code}"


class Supervisor:
    """Keeps the daemons ``names`` running through ``spawner``, each on its port in
    ``ports`` (``<NAME>_PORT``; absent or 0: any free port, kept across restarts)."""

    def __init__(self, names: list[str], spawner: Spawner, clock, policy: BackoffPolicy | None = None, *,
                 poll_interval: float = 0.1, ready_timeout: float = 30.0, stop_timeout: float = 10.0,
                 say: Callable[[str], None] | None = None, ports: Mapping[str, int] | None = None) -> None:
        ports = ports or {}
        self.children = {name: Child(name, port=ports.get(name, 0)) for name in names}
        self._order = list(names)
        self._spawner = spawner
        self._clock = clock
        self._policy = policy or BackoffPolicy()
        self._poll_interval = poll_interval
        self._ready_timeout = ready_timeout
        self._stop_timeout = stop_timeout
        self._say = say or (lambda text: _log.info("{text}", text=text))
        self._started: Deferred | None = None
        self._start_timer = None
        self._stopping = False
        self._stopped: Deferred | None = None
        self._kill_timer = None

    # --- what the master asks ---

    @property
    def collector_address(self) -> str | None:
        """Where the pool's collector answers, once it has."""
        child = self.children.get(COLLECTOR)
        return child.address if child is not None else None

    def describe(self) -> list[dict]:
        """Every daemon's state, in ``DAEMON_LIST`` order."""
        return [self.children[name].describe() for name in self._order]

    def start(self) -> Deferred:
        """Start the daemons in order; fires with ``{name: address}`` once all answered.

        The Deferred fails with ``DaemonStartError`` if they have not all answered
        within the ready timeout of each start; supervision goes on all the same.
        """
        self._started = Deferred()
        total = self._ready_timeout * max(1, len(self._order))
        self._start_timer = self._clock.callLater(total, self._start_timed_out)
        self._launch_from(0)
        return self._started

    def exited(self, name: str, pid: int, why: str) -> None:
        """Daemon ``name`` (process ``pid``) ended for reason ``why``; restart it unless stopping."""
        child = self.children.get(name)
        if child is None or child.pid != pid:
            return
        child.process = None
        child.last_exit = why
        _cancel(child.pending)
        child.pending = None
        if self._stopping:
            child.state = "stopped"
            self._say(f"{name} (pid {pid}) {why}")
            self._maybe_stopped()
            return
        ran_for = self._clock.seconds() - (child.started_at or self._clock.seconds())
        in_a_row = 0 if ran_for >= self._policy.recover_after else child.restarts
        delay = self._policy.delay(in_a_row)
        child.restarts = in_a_row + 1
        child.state = "backoff"
        self._say(f"{name} (pid {pid}) {why} after {ran_for:.1f}s; restarting it in {delay:g}s "
                  f"(restart {child.restarts} in a row)")
        child.pending = self._clock.callLater(delay, self._launch, child)

    def stop(self) -> Deferred:
        """SIGTERM every daemon; fires once all have exited (SIGKILL after the stop timeout)."""
        if self._stopped is not None:
            return self._stopped
        self._stopping = True
        _cancel(self._start_timer)
        self._stopped = Deferred()
        for name in reversed(self._order):
            child = self.children[name]
            _cancel(child.pending)
            child.pending = None
            if child.process is None:
                child.state = "stopped"
                continue
            child.state = "stopping"
            self._say(f"stopping {name} (pid {child.pid})")
            child.process.signal("TERM")
        self._kill_timer = self._clock.callLater(self._stop_timeout, self._kill_stragglers)
        self._maybe_stopped()
        return self._stopped

    # --- starting ---

    def _launch_from(self, index: int) -> None:
        if self._stopping:
            return
        if index == len(self._order):
            _cancel(self._start_timer)
            if self._started is not None and not self._started.called:
                self._started.callback({name: child.address for name, child in self.children.items()})
            return
        child = self.children[self._order[index]]
        child.on_ready = lambda: self._launch_from(index + 1)
        self._launch(child)

    def _launch(self, child: Child) -> None:
        child.pending = None
        if self._stopping:
            return
        collector = self.collector_address if child.name != COLLECTOR else None
        try:
            child.process = self._spawner.spawn(child.name, child.port, collector)
        except Exception as exc:
            self._say(f"cannot start {child.name}: {exc}")
            child.state = "backoff"
            child.pending = self._clock.callLater(self._policy.delay(child.restarts), self._launch, child)
            child.restarts += 1
            return
        child.state = "starting"
        child.started_at = self._clock.seconds()
        self._say(f"started {child.name} (pid {child.pid})")
        self._poll(child, child.pid, self._clock.seconds() + self._ready_timeout)

    def _poll(self, child: Child, pid: int, deadline: float) -> None:
        child.pending = None
        if child.pid != pid or child.state != "starting":
            return
        if self._clock.seconds() >= deadline:
            self._say(f"{child.name} (pid {pid}) did not answer within {self._ready_timeout:g}s; killing it")
            child.process.signal("KILL")
            return
        answer = self._spawner.probe(child.name)
        answer.addCallbacks(lambda address: self._probed(child, pid, deadline, address),
                            lambda _failure: self._probed(child, pid, deadline, None))

    def _probed(self, child: Child, pid: int, deadline: float, address: str | None) -> None:
        if child.pid != pid or child.state != "starting":
            return
        if address is None:
            child.pending = self._clock.callLater(self._poll_interval, self._poll, child, pid, deadline)
            return
        child.state = "ready"
        child.address = address
        child.port = _port_of(address)
        self._say(f"{child.name} (pid {pid}) answers at {address}")
        ready, child.on_ready = child.on_ready, None
        if ready is not None:
            ready()

    def _start_timed_out(self) -> None:
        self._start_timer = None
        if self._started is not None and not self._started.called:
            waiting = [name for name in self._order if self.children[name].state != "ready"]
            self._started.errback(DaemonStartError(
                f"{', '.join(waiting)} did not answer within {self._ready_timeout:g}s of starting: "
                f"see the daemon logs"))

    # --- stopping ---

    def _kill_stragglers(self) -> None:
        self._kill_timer = None
        for child in self.children.values():
            if child.process is not None:
                self._say(f"{child.name} (pid {child.pid}) outstayed the {self._stop_timeout:g}s stop timeout; "
                          f"killing it")
                child.process.signal("KILL")

    def _maybe_stopped(self) -> None:
        if self._stopped is None or self._stopped.called:
            return
        if all(child.process is None for child in self.children.values()):
            _cancel(self._kill_timer)
            self._kill_timer = None
            self._stopped.callback(None)


def _cancel(call) -> None:
    if call is not None and call.active():
        call.cancel()


def _port_of(address: str) -> int:
    port = address.rsplit(":", 1)[-1].strip("<>")
    return int(port) if port.isdigit() else 0


__all__ = ["COLLECTOR", "Child", "ChildProcess", "DaemonStartError", "Spawner", "Supervisor",
           "describe_exit"]
