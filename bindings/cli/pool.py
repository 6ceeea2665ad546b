"""``roost pool``: start, inspect and stop a personal pool.

``roost pool up [-dir DIR] [-timeout SECONDS]`` makes the pool directory (log, spool, execute), a signing
key, a token for you and one for the daemons, and a config with ``use ROLE : Personal``
(with ``-role central-manager[,...]``, a central manager on the network instead: see
:mod:`bindings.cli.pool_roles`);
starts the master detached and returns once every daemon answers, leaving the pool's
address file where the CLI and the bindings look. ``roost pool status`` lists the
daemons of every host of the pool with pid, address, uptime and host; ``roost pool
down`` stops them cleanly.
"""

from __future__ import annotations

import contextlib
import functools
import getpass
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping

from attrs import frozen

from bindings.cli import pool_ca, pool_join, pool_trust
from bindings.cli.options import CommandLine, Option, Reading, Subcommand, UsageError, run_subcommands, seconds
from bindings.cli.pool_roles import central_manager_config, parse_roles, prepare_central_manager
from bindings.pool import NO_POOL, default_pool_dir, read_pool_file
from daemoncore.config import Config, ConfigError
from daemoncore.daemon import remove_quietly, write_atomically
from daemoncore.launcher import private_file_opener
from daemoncore.master.routes import DAEMONS
from daemoncore.master.service import write_pool_file
from daemoncore.security import SecurityError, ensure_signing_key, issue_token, write_token
from daemoncore.security.tls import authority_paths
from daemoncore.security.tls_client import PoolTrust, client_trust, use_client_trust
from daemoncore.security.tls_errors import CertificateError
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.collector_routes import QUERY
from daemoncore.wire.daemon_routes import PING
from daemoncore.wire.errors import RemoteError, Unreachable

START_TIMEOUT = 30.0
#: How long `roost pool status` waits for another host's master.
MASTER_TIMEOUT = 5.0
STOP_TIMEOUT = 20.0
USER_SCOPES = ("READ", "WRITE", "ADMINISTRATOR")
POOL_FILE_NAME = "pool.json"
#: Where ``roost pool up -role`` remembers the roles it was given, for later starts.
ROLES_FILE_NAME = "roles.json"
#: Where pools started by root keep their execute directories (HTCondor's is /var/lib/condor/execute).
ROOT_EXECUTE_BASE = "/var/lib/roost/execute"


class PoolError(Exception):
    """A pool could not be started, found or stopped; the message says why and what to do."""


_LAST_POOL = "default: the pool `roost pool up` last started"
#: subcommand -> (one-line help, options)
POOL_COMMANDS = {
    "up": ("start a personal pool and wait until it answers",
           CommandLine("roost pool up", f"""usage: roost pool up [-dir DIR] [-timeout SECONDS] [-role ROLES [-interface ADDRESS]]

  -dir DIR            the pool directory (default $XDG_DATA_HOME/roost/pool or ~/.local/share/roost/pool)
  -timeout SECONDS    how long to wait for the daemons (default {START_TIMEOUT:g})
  -role ROLES         start a central manager on the network instead of a personal pool:
                      central-manager, optionally with submit and/or execute
                      (central-manager,submit,execute); it makes the pool's CA and serves TLS;
                      remembered by the directory for later starts
  -interface ADDRESS  the address to serve and advertise (NETWORK_INTERFACE; default: the
                      host's best address)
""", [Option("-dir", 1), Option("-timeout", 1), Option("-role", 1), Option("-interface", 1)])),
    "status": ("list the daemons of every host of the pool", CommandLine("roost pool status", f"""usage: roost pool status [-dir DIR]

  -dir DIR            the pool directory ({_LAST_POOL})
""", [Option("-dir", 1)])),
    "down": ("stop the pool's daemons", CommandLine("roost pool down", f"""usage: roost pool down [-dir DIR]

  -dir DIR            the pool directory ({_LAST_POOL})
""", [Option("-dir", 1)])),
    # `roost pool ca ...` has subcommands of its own: main() hands it to bindings.cli.pool_ca
    "ca": ("the pool's certificate authority (create, issue, fingerprint)",
           CommandLine("roost pool ca", "usage: roost pool ca (create | issue | fingerprint) [options]\n")),
    # `roost pool trust ...` is bindings.cli.pool_trust's
    "trust": ("trust another pool for flocking (offer, answer, -list, -remove)",
              CommandLine("roost pool trust", "usage: roost pool trust [OFFER | ANSWER] [-list] [-remove NAME]\n")),
    # `roost pool join-token | join | leave` are bindings.cli.pool_join's
    **{name: (summary, CommandLine(f"roost pool {name}", "")) for name, summary in pool_join.SUMMARIES.items()},
}


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost pool`` with ``argv``; 0 on success, 1 on an error it explains, 2 for a bad command line."""
    env = dict(os.environ if env is None else env)
    if argv[:1] == ["ca"]:
        return pool_ca.main(argv[1:], env)
    if argv[:1] == ["trust"]:
        return pool_trust.main(argv[1:], env)
    if argv[:1] and argv[0] in pool_join.SUMMARIES:
        return pool_join.main(argv, env)
    return run_subcommands("roost pool", {
        name: Subcommand(line, summary, functools.partial(_run, name, env=env))
        for name, (summary, line) in POOL_COMMANDS.items()}, argv)


def _run(name: str, reading: Reading, env: dict) -> int:
    """Carry out ``roost pool NAME``; 0, or 1 with the reason on stderr."""
    if reading.operands:
        raise UsageError(f"unexpected argument {reading.operands[0]!r}")
    directory = reading.last("-dir")
    timeouts = [seconds(given) for given in reading.options if given.name == "-timeout"]
    try:
        if name == "up":
            roles = PoolRoles(reading.last("-role"), reading.last("-interface"))
            return pool_up(directory or default_pool_dir(env), env, timeouts[-1] if timeouts else START_TIMEOUT,
                           roles)
        if name == "status":
            return pool_status(directory, env)
        return pool_down(directory, env)
    except (PoolError, ConfigError, SecurityError, CertificateError, ValueError) as err:
        print(f"roost pool {name}: {err}", file=sys.stderr)
        return 1


# --- up ---

@frozen
class PoolRoles:
    """``-role`` and ``-interface`` of ``roost pool up``: None for a personal pool."""

    roles: str | None = None
    interface: str | None = None


def pool_up(directory: str, env: dict, timeout: float, roles: PoolRoles = PoolRoles()) -> int:
    """Start the pool in ``directory`` (unless one runs there) and publish its address file."""
    directory = os.path.abspath(os.path.expanduser(directory))
    user_pool_file(env)  # a broken user config is reported before anything starts
    running = _running_facts(directory)
    if running is not None:
        _publish(directory, running, env)
        print(f"a pool is already running in {directory} (master pid {running.get('master_pid')}, "
              f"collector at {running.get('collector')})")
        return 0
    for name, pid in stop_orphans(directory):
        print(f"stopped {name} (pid {pid}), left running by a master that died")
    if joined_host(directory):
        if roles.roles:
            raise PoolError(f"{directory} belongs to a host that joined a pool (`roost pool join`): it keeps "
                            f"the roles it joined with; `roost pool leave` first to start it as something else")
        config_file = os.path.join(directory, "config")  # written by `roost pool join`: kept as it is
    else:
        config_file = prepare_pool_dir(directory, env, roles)
    facts = _start_master(directory, config_file, env, timeout)
    _publish(directory, facts, env)
    print(f"pool up in {directory}: collector at {facts['collector']}, master pid {facts['master_pid']}")
    print(web_site_line(directory))
    if remembered_roles(directory, roles).roles:
        print("add a host: run `roost pool join-token --role execute` (or submit) here, "
              "and `roost pool join STRING` on the new host")
    return 0


def web_site_line(directory: str) -> str:
    """Where the pool's web site answers (its ``.web_address``), or that it runs none."""
    try:
        with open(os.path.join(directory, "log", ".web_address"), encoding="utf-8") as handle:
            host, _, query = handle.read().strip().strip("<>").partition("?")
    except OSError:
        return "web site: none (add WEB to DAEMON_LIST to serve one)"
    return f"web site at {'https' if 'tls=1' in query else 'http'}://{host}/"


def joined_host(directory: str) -> bool:
    """Whether ``directory`` is the pool directory of a host that joined a pool: it holds
    the pool's public key and daemon token but no signing key (`roost pool join` wrote
    it), so `roost pool up` starts it again with the config the join wrote."""
    keys = os.path.join(directory, "passwords.d")
    return (os.path.exists(os.path.join(keys, "POOL.pub")) and not os.path.exists(os.path.join(keys, "POOL"))
            and os.path.exists(os.path.join(directory, "config")))


def prepare_pool_dir(directory: str, env: Mapping[str, str], roles: PoolRoles = PoolRoles()) -> str:
    """Make the pool's directories, key, tokens and config; the config file's path.

    Raises:
        PoolError: a directory or file cannot be made.
        SecurityError: the signing key or a token cannot be written.
    """
    try:
        for path in (directory, *(os.path.join(directory, sub) for sub in ("log", "spool", "execute", "tokens"))):
            os.makedirs(path, mode=0o700, exist_ok=True)
            os.chmod(path, 0o700)  # one made before, or by hand, may be open to others
    except OSError as exc:
        raise PoolError(f"cannot make the pool directory {directory}: {exc.strerror or exc}") from None
    config_file = os.path.join(directory, "config")
    _write_config(config_file, pool_config_text(directory))
    config = Config.load(config_file, env=_pool_env(env, config_file))
    key_file = config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", "")
    key = ensure_signing_key(key_file)
    roles = remembered_roles(directory, roles)
    if roles.roles:
        _write_role_config(directory, config_file, os.path.dirname(os.path.abspath(key_file)), roles)
        config = Config.load(config_file, env=_pool_env(env, config_file))
    domain = config.param("TRUST_DOMAIN") or "pool"
    user = env.get("USER") or getpass.getuser()
    write_token(user_token_file(directory), issue_token(key, f"{user}@{domain}", USER_SCOPES, issuer=domain))
    write_token(os.path.join(directory, "tokens", "daemon"),
                issue_token(key, f"master@{domain}", ["DAEMON"], issuer=domain))
    return config_file


def remembered_roles(directory: str, given: PoolRoles) -> PoolRoles:
    """``given`` when it names roles (and it is remembered in the directory), else the
    roles an earlier ``roost pool up -role`` left there, else none.

    Raises:
        PoolError: the remembered roles cannot be read or written.
    """
    path = os.path.join(directory, ROLES_FILE_NAME)
    try:
        if given.roles:
            parse_roles(given.roles)  # refuse a bad -role before anything is written
            write_atomically(path, json.dumps({"roles": given.roles, "interface": given.interface}))
            return given
        if not os.path.exists(path):
            return given
        with open(path, encoding="utf-8") as handle:
            saved = json.load(handle)
        return PoolRoles(saved.get("roles"), given.interface or saved.get("interface"))
    except (OSError, ValueError, AttributeError) as exc:
        raise PoolError(f"cannot keep the pool's roles in {path}: {exc}") from None


def _write_role_config(directory: str, config_file: str, key_dir: str, roles: PoolRoles) -> None:
    """Rewrite the config as a central manager's (address, roles, TLS files)."""
    address, tls_lines = prepare_central_manager(directory, key_dir, roles.interface)
    _write_config(config_file, pool_config_text(
        directory, central_manager_config(parse_roles(roles.roles or ""), address, tls_lines)))


def _write_config(config_file: str, text: str) -> None:
    try:
        with open(config_file, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise PoolError(f"cannot write {config_file}: {exc.strerror or exc}") from None


def pool_config_text(directory: str, role_lines: str = "use ROLE : Personal\n") -> str:
    """The config a pool in ``directory`` runs with: a personal pool's, unless
    ``role_lines`` say otherwise (a central manager's, from ``-role``)."""
    execute = root_execute_dir(directory)
    return ("# Written by `roost pool up`; rewritten at each start.\n"
            + role_lines +
            f"LOCAL_DIR = {directory}\n"
            f"POOL_ADDRESS_FILE = $(LOCAL_DIR)/{POOL_FILE_NAME}\n"
            + (f"# started by root: jobs run as other accounts, which may not enter $(LOCAL_DIR)\n"
               f"EXECUTE = {execute}\n" if execute else ""))


def root_execute_dir(directory: str) -> str | None:
    """Where a pool started by root keeps its sandboxes: outside the pool directory
    (mode 0700: jobs, which then run as other accounts, must not reach its key, tokens
    and spool), one directory per pool under :data:`ROOT_EXECUTE_BASE`. None for a pool
    of an ordinary user, whose jobs run as that user inside the pool directory."""
    if os.geteuid() != 0:
        return None
    digest = hashlib.sha256(directory.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(ROOT_EXECUTE_BASE, f"pool-{digest}")


def user_token_file(directory: str) -> str:
    """Where ``roost pool up`` writes your token for the pool in ``directory``."""
    return os.path.join(directory, "tokens", "user")


def _pool_env(env: Mapping[str, str], config_file: str) -> dict:
    return {**env, "ROOST_CONFIG": config_file}


def _start_master(directory: str, config_file: str, env: Mapping[str, str], timeout: float) -> dict:
    pool_file = os.path.join(directory, POOL_FILE_NAME)
    remove_quietly(pool_file)
    stderr_path = os.path.join(directory, "log", "MasterLog.stderr")
    with open(stderr_path, "ab", opener=private_file_opener) as stderr, open(os.devnull, "rb") as stdin:
        master = subprocess.Popen([sys.executable, "-m", "daemoncore.master"], env=_pool_env(env, config_file),
                                  cwd=directory, stdin=stdin, stdout=stderr, stderr=stderr, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        facts = read_pool_file(pool_file)
        if facts and facts.get("master_pid") == master.pid:
            if facts.get("error"):
                _terminate(master.pid)
                raise PoolError(f"{facts['error']} (logs in {os.path.join(directory, 'log')})")
            return facts
        if master.poll() is not None:
            raise PoolError(f"the master exited with status {master.returncode}: {_tail(stderr_path)}")
        time.sleep(0.05)
    _terminate(master.pid)
    raise PoolError(f"the daemons did not all answer within {timeout:g}s; see the logs in "
                    f"{os.path.join(directory, 'log')}")


def _publish(directory: str, facts: dict, env: Mapping[str, str]) -> None:
    """Write the user's pool address file, so clients with no configuration find this
    pool (and, for a pool serving TLS, the CA to check its daemons against)."""
    path = user_pool_file(env)
    if path:
        config_file = os.path.join(directory, "config")
        ca_file = Config.load(config_file, env=_pool_env(env, config_file)).param("AUTH_SSL_SERVER_CAFILE", "")
        write_pool_file(path, {**facts, "dir": directory, "token_file": user_token_file(directory),
                               **({"ca_file": ca_file} if ca_file else {})})


def user_pool_file(env: Mapping[str, str]) -> str:
    """The pool address file clients read when nothing else names a pool."""
    return Config.load(env=env).param("POOL_ADDRESS_FILE", "")


def _tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except OSError:
        return "(no output)"
    return lines[-1] if lines else "(no output)"


# --- finding a running pool ---

def _running_facts(directory: str) -> dict | None:
    """The address file of the pool running in ``directory``, if its master answers."""
    facts = read_pool_file(os.path.join(directory, POOL_FILE_NAME))
    if not facts or facts.get("error") or not facts.get("master"):
        return None
    _trust_pool_ca(directory)
    try:
        answer = BlockingClient(facts["master"], timeout=5).call(PING)
    except (Unreachable, RemoteError, ValueError):
        return None
    return facts if isinstance(answer, dict) and answer.get("pid") == facts.get("master_pid") else None


def _trust_pool_ca(directory: str) -> None:
    """Check the daemons of the pool in ``directory`` against its CA, when it serves TLS
    (a central manager started with ``-role``) and this process trusts no CA yet."""
    ca_file, _ = authority_paths(os.path.join(directory, "passwords.d"))
    config_file = os.path.join(directory, "config")
    if os.path.exists(config_file):
        ca_file = Config.load(config_file, env={}).param("AUTH_SSL_SERVER_CAFILE", "") or ca_file
    if os.path.exists(ca_file) and client_trust() is None:
        use_client_trust(PoolTrust.from_file(ca_file))


def _pool_dir(directory: str | None, env: Mapping[str, str]) -> str:
    if directory is None:
        published = read_pool_file(user_pool_file(env)) if user_pool_file(env) else None
        if not published or not published.get("dir"):
            raise PoolError(NO_POOL)
        directory = published["dir"]
    return os.path.abspath(os.path.expanduser(directory))


def _not_running(directory: str) -> PoolError:
    return PoolError(f"no pool is running in {directory}: start one with `roost pool up --dir {directory}`")


def stop_orphans(directory: str) -> list[tuple[str, int]]:
    """SIGTERM the daemons of ``directory`` that still answer though their master is gone.

    Each daemon's address file and ping answer (which carries its pid) find it; the
    names and pids stopped are returned.
    """
    log_dir = os.path.join(directory, "log")
    try:
        names = sorted(name for name in os.listdir(log_dir) if name.startswith(".") and name.endswith("_address"))
    except OSError:
        return []
    stopped = []
    for name in names:
        try:
            with open(os.path.join(log_dir, name), encoding="utf-8") as handle:
                answer = BlockingClient(handle.read().strip(), timeout=2).call(PING)
        except (OSError, Unreachable, RemoteError, ValueError):
            continue
        pid = answer.get("pid") if isinstance(answer, dict) else None
        if isinstance(pid, int) and pid != os.getpid():
            _terminate(pid)
            _wait_gone(pid, STOP_TIMEOUT)
            stopped.append((str(answer.get("daemon", name)), pid))
    return stopped


# --- status ---

def pool_status(directory: str | None, env: Mapping[str, str]) -> int:
    """Print the daemons of every host of the pool (this host's first) with pid, address,
    uptime, state, restarts and host: this host's master names its own, and the
    collector's DaemonMaster ads lead to the other hosts' masters."""
    directory = _pool_dir(directory, env)
    facts = _running_facts(directory)
    if facts is None:
        raise _not_running(directory)
    token = _read_token(user_token_file(directory))
    local = BlockingClient(facts["master"], token=token, timeout=10).call(DAEMONS)
    others, note = other_hosts(facts.get("collector"), local["master"].get("address"), token)
    hosts = [local, *others]
    rows = [("DAEMON", "PID", "ADDRESS", "UPTIME", "STATE", "RESTARTS", "HOST")]
    now = time.time()
    for answer in hosts:
        rows.extend(daemon_row(daemon, answer["master"].get("host") or "-", now)
                    for daemon in [answer["master"], *answer["daemons"]])
    print(f"pool in {directory}, collector at {facts['collector']}")
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    for answer in hosts:
        if answer.get("why"):
            print(f"the master on {answer['master']['host']} at {answer['master']['address']} "
                  f"did not answer: {answer['why']}")
        for daemon in answer["daemons"]:
            if daemon.get("last_exit"):
                print(f"{daemon['name']} on {answer['master'].get('host') or '-'} last {daemon['last_exit']}")
    if note:
        print(note)
    return 0


def daemon_row(daemon: dict, host: str, now: float) -> tuple[str, ...]:
    """One line of `roost pool status` for ``daemon`` as its master describes it."""
    started = daemon.get("started_at")
    uptime = format_duration(now - started) if started and daemon.get("state") == "ready" else "-"
    return (daemon["name"], str(daemon.get("pid") or "-"), daemon.get("address") or "-", uptime,
            daemon.get("state", "-"), str(daemon.get("restarts", 0)), host)


def other_hosts(collector: str | None, own_master: str | None, token: str | None) -> tuple[list[dict], str]:
    """What the other hosts' masters say of their daemons, found through the collector's
    DaemonMaster ads; a master that does not answer is listed ``unreachable``. Also a
    note when the collector could not be asked."""
    if not collector:
        return [], ""
    try:
        ads = list(BlockingClient(collector, token=token, timeout=10).stream(
            QUERY, {"constraint": "true", "projection": ["Machine", "MyAddress"]}, ad_type="DaemonMaster"))
    except (Unreachable, RemoteError, ValueError) as exc:
        return [], f"other hosts not shown: the collector at {collector} did not answer ({exc})"
    found = []
    for ad in sorted(ads, key=lambda ad: str(ad.get("Machine"))):
        address = str(ad.get("MyAddress", "")).strip("<>")
        if not address or address == own_master:
            continue
        found.append(master_answer(address, str(ad.get("Machine") or "-"), token))
    return found, ""


def master_answer(address: str, host: str, token: str | None) -> dict:
    """The daemons the master at ``address`` (on ``host``) supervises, or that it is unreachable."""
    try:
        answer = BlockingClient(address, token=token, timeout=MASTER_TIMEOUT).call(DAEMONS)
    except (Unreachable, RemoteError, ValueError) as exc:
        return {"master": {"name": "MASTER", "state": "unreachable", "address": address, "host": host,
                           "last_exit": None}, "daemons": [], "why": str(exc)}
    answer["master"].setdefault("host", host)
    return answer


def format_duration(seconds: float) -> str:
    """``D+HH:MM:SS``, as HTCondor's tools print durations."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    return f"{days}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def _read_token(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


# --- down ---

def pool_down(directory: str | None, env: Mapping[str, str]) -> int:
    """SIGTERM the pool's master, wait until it has stopped its daemons and exited."""
    directory = _pool_dir(directory, env)
    facts = _running_facts(directory)
    if facts is None:
        orphans = stop_orphans(directory)
        if not orphans:
            raise _not_running(directory)
        for name, pid in orphans:
            print(f"stopped {name} (pid {pid}), left running by a master that died")
        _forget(directory, env)
        return 0
    pid = int(facts["master_pid"])
    _terminate(pid)
    if not _wait_gone(pid, STOP_TIMEOUT):
        raise PoolError(f"the master (pid {pid}) did not stop within {STOP_TIMEOUT:g}s; "
                        f"see {os.path.join(directory, 'log', 'MasterLog')}")
    _forget(directory, env)
    print(f"pool in {directory} stopped")
    return 0


def _forget(directory: str, env: Mapping[str, str]) -> None:
    """Remove the pool's address files, the user's too when it names this pool, and
    its execute directory outside the pool directory when it holds no file."""
    remove_quietly(os.path.join(directory, POOL_FILE_NAME))
    execute = root_execute_dir(directory)
    if execute:
        remove_empty_directories(execute)
    published_path = user_pool_file(env)
    published = read_pool_file(published_path) if published_path else None
    if published and published.get("dir") == directory:
        remove_quietly(published_path)


def remove_empty_directories(top: str) -> None:
    """Remove ``top`` and the directories under it that hold no file (a startd's
    emptied ``simulated_gpu_usage``, sandboxes' empty directories), deepest first;
    a directory that still holds a file stays, with the directories above it."""
    for path, _, _ in os.walk(top, topdown=False):
        with contextlib.suppress(OSError):
            os.rmdir(path)


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting to be reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True
