"""The master daemon: supervises the pool's other daemons, advertises a DaemonMaster
ad once the collector answers, and writes the pool's address file (``POOL_ADDRESS_FILE``)
when every daemon is up, so clients find the pool with no configuration."""

from __future__ import annotations

import json
import os
import socket

import attrs
from twisted.internet.defer import Deferred
from twisted.logger import Logger

from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonService, DaemonSettings, remove_quietly, write_atomically
from daemoncore.master.backoff import BackoffPolicy
from daemoncore.master.metrics import MasterMetrics
from daemoncore.master.processes import ProcessSpawner
from daemoncore.master.routes import DAEMONS
from daemoncore.master.supervisor import Supervisor
from daemoncore.wire.server import JsonReply

_log = Logger()


class MasterService(DaemonService):
    """The master of one pool: its supervisor, its status route and the pool's address file."""

    def __init__(self, settings: DaemonSettings, reactor, supervisor: Supervisor, pool_file: str,
                 pool_facts: dict, key: bytes | None = None) -> None:
        super().__init__(settings, reactor, key)
        self.supervisor = supervisor
        self.pool_file = pool_file
        self._facts = pool_facts
        self.metrics_registry.register(MasterMetrics(supervisor.describe))

    def handlers(self) -> dict:
        return {DAEMONS: self._daemons}

    def own_ad(self) -> dict:
        ad = super().own_ad()
        ad["DaemonList"] = ", ".join(["MASTER", *self.supervisor.children])
        ad["MasterIpAddr"] = ad["MyAddress"]
        return ad

    def startService(self) -> None:
        super().startService()
        started = self.supervisor.start()
        started.addCallbacks(self._pool_ready, self._pool_failed)

    def stopService(self) -> Deferred:
        remove_quietly(self.pool_file)
        stopping = self.supervisor.stop()
        stopping.addCallback(lambda _: DaemonService.stopService(self))
        return stopping

    def _pool_ready(self, addresses: dict) -> None:
        collector = self.supervisor.collector_address
        if collector:
            self.settings = attrs.evolve(self.settings, collector_host=collector)
        collector = collector or self.settings.collector_host  # a host without the collector: CONDOR_HOST's
        facts = {**self._facts, "collector": collector, "master": self.address, "master_pid": os.getpid(),
                 "daemons": addresses, "started_at": self.start_time}
        write_pool_file(self.pool_file, facts)
        _log.info("pool is up: {addresses}", addresses=addresses)
        self._advertise_quietly()

    def _pool_failed(self, failure) -> None:
        message = failure.getErrorMessage()
        _log.error("pool did not come up: {message}", message=message)
        write_pool_file(self.pool_file, {**self._facts, "error": message, "master_pid": os.getpid()})

    def _daemons(self, _request) -> JsonReply:
        master = {"name": "MASTER", "state": "ready", "pid": os.getpid(), "address": self.address,
                  "started_at": self.start_time, "restarts": 0, "last_exit": None, "host": socket.gethostname()}
        return JsonReply({"master": master, "daemons": self.supervisor.describe()})


def write_pool_file(path: str, facts: dict) -> None:
    """Write the pool's address file (JSON) atomically."""
    write_atomically(path, json.dumps(facts, indent=2) + "\n")


def supervised_daemons(config: Config) -> list[str]:
    """``DAEMON_LIST`` without the master itself, upper case, collector first."""
    names = [name.upper() for name in config.param_list("DAEMON_LIST") if name.upper() != "MASTER"]
    return sorted(dict.fromkeys(names), key=lambda name: name != "COLLECTOR")


def configured_ports(config: Config, names: list[str]) -> dict[str, int]:
    """``<NAME>_PORT`` of each daemon that has one (the central manager's collector: 9618).

    Raises:
        ConfigError: a port is not a number from 0 to 65535.
    """
    ports = {}
    for name in names:
        port = config.param_int(f"{name}_PORT", 0)
        if not 0 <= port < 65536:
            raise ConfigError(f"{name}_PORT = {port}: a port is a number from 0 to 65535")
        if port:
            ports[name] = port
    return ports


def build_master(settings: DaemonSettings, reactor, config: Config) -> MasterService:
    """The master for ``settings``, spawning real processes on ``reactor``.

    Raises:
        ConfigError: a ``MASTER_*`` knob has the wrong type.
        SigningKeyError: the pool signing key cannot be loaded.
    """
    log_dir = config.param("LOG", ".")
    holder: dict = {}
    spawner = ProcessSpawner(reactor, config, log_dir, ended=lambda *args: holder["supervisor"].exited(*args))
    try:
        policy = BackoffPolicy.from_config(config)
    except ValueError as exc:
        raise ConfigError(f"MASTER_BACKOFF_*: {exc}") from None
    names = supervised_daemons(config)
    supervisor = Supervisor(
        names, spawner, reactor, policy,
        ready_timeout=config.param_duration("MASTER_DAEMON_READY_TIMEOUT", 30.0),
        stop_timeout=config.param_duration("MASTER_SHUTDOWN_GRACEFUL_TIMEOUT", 10.0),
        ports=configured_ports(config, names),
    )
    holder["supervisor"] = supervisor
    facts = {"dir": config.param("LOCAL_DIR"), "config": os.environ.get("ROOST_CONFIG")}
    return MasterService(settings, reactor, supervisor, config.param("POOL_ADDRESS_FILE", ""), facts)
