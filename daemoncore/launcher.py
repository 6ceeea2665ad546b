"""Running a daemon as a process: read config and arguments, log to the daemon's
file, start its service on the reactor and stop it cleanly on SIGTERM or SIGINT.
Daemon code is handed its reactor; this module is where a daemon process takes the
global one (the only other use is the async client's default, for callers that pass
none)."""

from __future__ import annotations

import argparse
import gc
import os
import sys

import attrs
from twisted.logger import FileLogObserver, Logger, formatEventAsClassicLogText, globalLogBeginner

from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonSettings, ServiceFactory
from daemoncore.prompt_reactor import install_prompt_reactor
from daemoncore.security import SecurityError
from daemoncore.security.pool_trust import trust_watcher_from_config
from daemoncore.security.revocation_watch import watcher_from_config
from daemoncore.stall_watch import stall_watch_from_config

_log = Logger()

#: A daemon log is its owner's alone: it records addresses, job ids and who asked what.
LOG_FILE_MODE = 0o600
#: A log directory Roost creates is its owner's alone too.
LOG_DIR_MODE = 0o700


def private_file_opener(path: str, flags: int) -> int:
    """An ``opener`` for ``open()`` that creates the file 0600 and tightens an existing
    one to 0600 (a log left by an older Roost may be readable by all)."""
    descriptor = os.open(path, flags, LOG_FILE_MODE)
    try:
        os.fchmod(descriptor, LOG_FILE_MODE)
    except OSError:
        pass  # not ours to change (a shared log set up by hand): keep it as it is
    return descriptor


def open_daemon_log(path: str):
    """The daemon's log file, opened for appending, line-buffered, 0600; its directory is
    created 0700 when missing.

    Raises:
        OSError: the directory or the file cannot be created or opened.
    """
    directory = os.path.dirname(path)
    if directory and not os.path.isdir(directory):
        os.makedirs(directory, mode=LOG_DIR_MODE, exist_ok=True)
    return open(path, "a", encoding="utf-8", buffering=1, opener=private_file_opener)


def parse_arguments(daemon_type: str, argv: list[str] | None) -> argparse.Namespace:
    """The command line of a daemon process."""
    parser = argparse.ArgumentParser(prog=f"roost-{daemon_type.lower()}", description=f"Run the Roost {daemon_type.lower()}.")
    parser.add_argument("--port", type=int, help="port to listen on (default: config, else any free port)")
    parser.add_argument("--address-file", help="file to write <host:port> to once listening")
    parser.add_argument("--log-file", help="file to log to (default: config's LOG directory)")
    parser.add_argument("-f", "--foreground", action="store_true", help="accepted for HTCondor compatibility")
    return parser.parse_args(argv)


def _stop_when_orphaned(reactor, daemon_type: str) -> None:
    """Stop cleanly when the master that started this daemon dies (the daemon is
    re-parented), so a killed master never leaves daemons behind."""
    from twisted.internet.error import ReactorNotRunning
    from twisted.internet.task import LoopingCall

    master = os.environ.get("ROOST_MASTER_PID", "")
    if not master.isdigit() or int(master) != os.getppid():
        return  # not started by a master (the master itself, or run by hand)
    parent = int(master)

    def check() -> None:
        if os.getppid() != parent:
            loop.stop()
            _log.info("{daemon}: the master (pid {pid}) is gone; shutting down", daemon=daemon_type, pid=parent)
            try:
                reactor.stop()
            except ReactorNotRunning:  # a signal had already begun the shutdown
                pass

    loop = LoopingCall(check)
    loop.clock = reactor
    loop.start(2.0, now=False)


def freeze_startup_heap() -> None:
    """Leave what the daemon made to start (its modules, grammars, services: alive as
    long as it is) out of every later garbage collection (``gc.freeze``), after one
    collection of the start's garbage. A full collection scans every tracked object
    with the reactor held; a burst of work sets one off."""
    gc.collect()
    gc.freeze()


def run_daemon(daemon_type: str, ad_type: str, build: ServiceFactory, argv: list[str] | None = None) -> int:
    """Run daemon ``daemon_type`` until the reactor stops; the process exit status."""
    args = parse_arguments(daemon_type, argv)
    try:
        config = Config.load().for_subsystem(daemon_type)
        settings = DaemonSettings.from_config(config, daemon_type, ad_type)
    except ConfigError as exc:
        print(f"roost {daemon_type.lower()}: {exc}", file=sys.stderr)
        return 2
    overrides = {"port": args.port, "address_file": args.address_file, "log_file": args.log_file}
    settings = attrs.evolve(settings, **{k: v for k, v in overrides.items() if v is not None})
    try:
        log_file = open_daemon_log(settings.log_file)
    except OSError as exc:
        print(f"roost {daemon_type.lower()}: cannot open log file {settings.log_file}: {exc.strerror}", file=sys.stderr)
        return 2
    globalLogBeginner.beginLoggingTo([FileLogObserver(log_file, formatEventAsClassicLogText)], redirectStandardIO=False)

    install_prompt_reactor()
    from twisted.internet import reactor

    try:
        daemon = build(settings, reactor, config)
        daemon.addService(watcher_from_config(config, reactor, settings.update_interval,
                                              read=daemon.revocation_source()))
        daemon.addService(trust_watcher_from_config(config, reactor, settings.update_interval,
                                                    fetch=daemon.trust_source()))
        stall_watch = stall_watch_from_config(config, reactor)
        if stall_watch is not None:
            daemon.addService(stall_watch)
    except (ConfigError, SecurityError) as exc:
        print(f"roost {daemon_type.lower()}: {exc}", file=sys.stderr)
        return 2
    status = {"code": 0}

    def start() -> None:
        try:
            daemon.startService()
        except Exception as exc:
            _log.failure("{daemon} could not start", daemon=daemon_type)
            print(f"roost {daemon_type.lower()}: could not start: {exc}", file=sys.stderr)
            status["code"] = 1
            reactor.stop()
            return
        reactor.addSystemEventTrigger("before", "shutdown", daemon.stopService)
        _stop_when_orphaned(reactor, daemon_type)
        freeze_startup_heap()

    reactor.callWhenRunning(start)
    reactor.run()
    return status["code"]
