"""A pool of several hosts on one machine, for integration tests: each host is a Linux
network namespace the test makes, with its own address from 198.18.0.0/15 (the
benchmarking range), its own host name (a UTS namespace), its own state directory and
its own master. The hosts' links meet on a bridge living in one more namespace of the
test's own, so nothing is added outside the namespaces the test made.

The pool is built the way an administrator builds one: the central manager runs
``roost pool up -role central-manager[,...] -interface ADDRESS`` (the pool CA, TLS,
the collector on 9618), and every other host joins with the string
``roost pool join-token --role execute|submit`` printed there, through
``roost pool join STRING``. No host but the central manager ever holds the pool
signing key: the users' token is issued on the central manager (``roost token
create`` for ``root@POOL``) and only that token file is copied to the other hosts.
What a test adds to a host's config goes in its ``config.d/`` (read after the config
that ``pool up`` rewrites at each start and ``pool join`` writes).

``netns_pool({"cm": ["CentralManager"], "submit": ["Submit"], ...})`` is the whole of
it; every master is stopped, every namespace deleted, whatever happens.
``netns_pools({"A": {...}, "B": {...}})`` makes several such pools on one bridge (each
with its own central manager, CA, key and name), for flocking between them.
``cut(host)``/``restore(host)`` take one host's link down and up again.

Namespace names carry a random tag per pool, so parallel runs and the leftovers of a
killed run never collide. Tests using it skip, saying why, where namespaces cannot be
made (not root, no ``ip`` or ``unshare``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from attrs import frozen

from tests.support.waiting import wait_for

#: The first three octets of every host address; host number n gets .n+1 (the bridge has none).
SUBNET = "198.18.0"
PREFIX_LENGTH = 15
ROOST = [sys.executable, "-c", "import sys; from bindings.cli import main; sys.exit(main())"]
MASTER = [sys.executable, "-m", "daemoncore.master"]
USER_SCOPES = ("READ", "WRITE", "ADMINISTRATOR")
#: How long a master may take to stop its daemons before it is killed.
STOP_TIMEOUT = 20.0
#: Short intervals, so a pool of hosts settles in seconds as the personal pool does.
QUICK_KNOBS = {
    "UPDATE_INTERVAL": "2", "NEGOTIATOR_INTERVAL": "2", "NEGOTIATOR_MIN_INTERVAL": "1",
    "NEGOTIATOR_CYCLE_DELAY": "1", "SCHEDD_INTERVAL": "2", "MASTER_BACKOFF_CONSTANT": "0",
    "COLLECTOR_SWEEP_INTERVAL": "1",
}
#: ``roost pool up -role`` and ``roost pool join-token --role`` names of the config roles.
ROLE_NAMES = {"centralmanager": "central-manager", "submit": "submit", "execute": "execute"}
#: The file of a host's ``config.d`` holding what the test adds.
TEST_CONFIG = "50-test.conf"


def why_no_namespaces() -> str | None:
    """Why this machine cannot make network namespaces for a test, or None when it can."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs the multi-host tests as root)"
    for tool in ("ip", "unshare", "hostname"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (iproute2 / util-linux)"
    return None


def skip_without_namespaces() -> None:
    """Skip the calling test, with the reason, when namespaces cannot be made here."""
    reason = why_no_namespaces()
    if reason:
        pytest.skip(f"multi-host pool: {reason}")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")
    return done


@frozen
class Host:
    """One host of the pool: its namespace, address, roles and files."""

    name: str
    namespace: str
    address: str
    roles: tuple[str, ...]
    directory: Path
    bridge_port: str

    @property
    def config_file(self) -> Path:
        """The host's config file (``ROOST_CONFIG`` of everything run on it), written by
        ``roost pool up`` or ``roost pool join``."""
        return self.directory / "config"

    @property
    def test_config_file(self) -> Path:
        """What the test adds to the host's config, in its ``config.d``."""
        return self.directory / "config.d" / TEST_CONFIG

    @property
    def user_token_file(self) -> Path:
        """The token of the pool's user on this host."""
        return self.directory / "tokens" / "user"

    @property
    def log_dir(self) -> Path:
        """The host's daemon logs."""
        return self.directory / "log"

    @property
    def is_central_manager(self) -> bool:
        """True for the host running the collector."""
        return any(role.lower() == "centralmanager" for role in self.roles)

    def role_names(self) -> list[str]:
        """The host's roles as ``roost pool`` spells them (``central-manager``, ``submit``, ``execute``)."""
        return [ROLE_NAMES[role.lower()] for role in self.roles]

    def env(self) -> dict:
        """The environment of a process on this host: its config, home and token only."""
        env = {key: value for key, value in os.environ.items()
               if key not in ("ROOST_TOKEN", "XDG_DATA_HOME", "COLLECTOR_HOST", "ROOST_CONFIG")
               and not key.startswith("_ROOST_")}
        env.update({"HOME": str(self.directory / "home"), "ROOST_CONFIG": str(self.config_file),
                    "ROOST_TOKEN": str(self.user_token_file)})
        return env

    def command(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run inside this host's network namespace under its own host name."""
        return ["ip", "netns", "exec", self.namespace, "unshare", "--uts", "--",
                "sh", "-c", 'hostname "$0" && exec "$@"', self.name, *argv]


def added_config_text(extra: Mapping[str, str]) -> str:
    """A ``config.d`` file setting ``extra`` after the quick intervals of a test pool."""
    knobs = {**QUICK_KNOBS, **extra}
    return ("# Added by the test's multi-host pool (tests/support/netns.py).\n"
            + "".join(f"{name} = {value}\n" for name, value in knobs.items()))


class NetnsPool:
    """The hosts of one multi-host pool and what a test does with them."""

    def __init__(self, base: Path, hosts: dict[str, Host], bridge_namespace: str) -> None:
        self.base = base
        self.hosts = hosts
        self.bridge_namespace = bridge_namespace
        #: host -> pid of its running master
        self.masters: dict[str, int] = {}
        self._children: dict[str, subprocess.Popen] = {}

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    @property
    def central_manager(self) -> Host:
        """The first host with the CentralManager role."""
        return next(host for host in self.hosts.values() if host.is_central_manager)

    # --- running things on a host ---

    def run(self, host: str, argv: Sequence[str], *, check: bool = True, timeout: float = 60,
            cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
        """Run ``argv`` on ``host``; its completed process (AssertionError on failure if ``check``)."""
        where = self.hosts[host]
        done = subprocess.run(where.command(argv), env=where.env(), capture_output=True, text=True,
                              timeout=timeout, cwd=cwd)
        if check and done.returncode != 0:
            raise AssertionError(f"on {host}: {' '.join(argv)} exited {done.returncode}:\n"
                                 f"{done.stdout}\n{done.stderr}")
        return done

    def roost(self, host: str, *args: str, **options) -> subprocess.CompletedProcess:
        """Run the `roost` command line on ``host``."""
        return self.run(host, [*ROOST, *args], **options)

    # --- building the pool ---

    def bring_up_central_manager(self) -> None:
        """``roost pool up -role ... -interface ADDRESS`` on the central manager, then a
        token for the pool's user issued there (``root@POOL``), copied to every other host."""
        cm = self.central_manager
        self.roost(cm.name, "pool", "up", "-dir", str(cm.directory), "-role", ",".join(cm.role_names()),
                   "-interface", cm.address, timeout=90)
        self.masters[cm.name] = self._master_pid(cm.name)
        pool_user = cm.directory / "tokens" / "pool-user"
        self.roost(cm.name, "token", "create", "-identity", f"root@{cm.namespace}",
                   *(arg for scope in USER_SCOPES for arg in ("-scope", scope)), "-out", str(pool_user))
        for host in self.hosts.values():
            if host is not cm:
                shutil.copyfile(pool_user, host.user_token_file)
                host.user_token_file.chmod(0o600)

    def join_string(self, role: str, *args: str) -> str:
        """A join string for one host of ``role`` (execute or submit), from the central manager."""
        cm = self.central_manager
        return self.roost(cm.name, "pool", "join-token", "--role", role, "--dir", str(cm.directory),
                          *args).stdout.strip()

    def join(self, host: str, join_string: str | None = None) -> subprocess.CompletedProcess:
        """``roost pool join`` on ``host`` with ``join_string`` (default: a fresh one for
        its role); what the command printed."""
        where = self.hosts[host]
        roles = where.role_names()
        if len(roles) != 1 or roles[0] not in ("execute", "submit"):
            raise ValueError(f"{host}: a host joins as execute or submit, not {'+'.join(where.roles)}")
        done = self.roost(host, "pool", "join", join_string or self.join_string(roles[0]),
                          "--dir", str(where.directory), timeout=90)
        self.masters[host] = self._master_pid(host)
        return done

    # --- masters ---

    def start(self, host: str) -> None:
        """Start ``host``'s master again after :meth:`stop`: ``roost pool up`` on the
        central manager (it remembers its roles), the master itself on a joined host
        (as its service manager would). The first start of a host is its ``pool up`` or join."""
        where = self.hosts[host]
        if where.is_central_manager:
            self.roost(host, "pool", "up", "-dir", str(where.directory), timeout=90)
            self.masters[host] = self._master_pid(host)
            return
        (where.directory / "pool.json").unlink(missing_ok=True)
        with open(where.log_dir / "MasterLog.stderr", "ab") as stderr:
            child = subprocess.Popen(
                where.command(MASTER), env=where.env(), cwd=where.directory, stdin=subprocess.DEVNULL,
                stdout=stderr, stderr=stderr, start_new_session=True)
        self._children[host] = child
        self.masters[host] = child.pid

    def _master_pid(self, host: str) -> int:
        facts = _pool_facts(self.hosts[host])
        if not isinstance(facts.get("master_pid"), int):
            raise AssertionError(f"{host} has no running master (its pool file: {facts})")
        return facts["master_pid"]

    def wait_ready(self, host: str, seconds: float = 60) -> None:
        """Wait until ``host``'s master reports every daemon up (its pool file names them)."""
        where = self.hosts[host]
        pid = self.masters[host]

        def ready() -> bool:
            if not alive(pid):
                raise AssertionError(f"the master of {host} (pid {pid}) exited: "
                                     f"{_tail(where.log_dir / 'MasterLog.stderr')}")
            facts = _pool_facts(where)
            if facts.get("error"):
                raise AssertionError(f"the daemons of {host} did not come up: {facts['error']}")
            return facts.get("master_pid") == pid and bool(facts.get("daemons"))
        wait_for(ready, seconds, f"every daemon of {host} answering")

    def stop(self, host: str) -> None:
        """Stop ``host``'s master with SIGTERM (SIGKILL after the stop timeout)."""
        pid = self.masters.pop(host, None)
        child = self._children.pop(host, None)
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not _wait_gone(pid, child, STOP_TIMEOUT):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, child, 5)

    # --- the network ---

    def cut(self, host: str) -> None:
        """Take ``host``'s link to the others down (its daemons keep running)."""
        _ip("-n", self.bridge_namespace, "link", "set", self.hosts[host].bridge_port, "down")

    def restore(self, host: str) -> None:
        """Bring ``host``'s link back up."""
        _ip("-n", self.bridge_namespace, "link", "set", self.hosts[host].bridge_port, "up")


def _pool_facts(host: Host) -> dict:
    """The host's pool file (written by its master), or {} while there is none."""
    try:
        facts = json.loads((host.directory / "pool.json").read_text())
    except (OSError, ValueError):
        return {}
    return facts if isinstance(facts, dict) else {}


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, child: subprocess.Popen | None, seconds: float) -> bool:
    """Wait up to ``seconds`` for ``pid`` to end (reaping ``child``, our own process, if given)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if child is not None:
            child.poll()
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def _tail(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no output)"
    return "\n".join(lines[-5:]) or "(no output)"


def _make_network(bridge_namespace: str, hosts: list[Host]) -> None:
    """The bridge namespace with its bridge, and each host's namespace linked to it;
    the test is skipped when this machine refuses the first namespace (root in a
    container without CAP_SYS_ADMIN, say)."""
    try:
        _ip("netns", "add", bridge_namespace)
    except RuntimeError as exc:
        pytest.skip(f"multi-host pool: cannot make a network namespace here ({exc})")
    _ip("-n", bridge_namespace, "link", "add", "br0", "type", "bridge")
    _ip("-n", bridge_namespace, "link", "set", "br0", "up")
    for host in hosts:
        _ip("netns", "add", host.namespace)
        _ip("-n", host.namespace, "link", "set", "lo", "up")
        _ip("-n", bridge_namespace, "link", "add", host.bridge_port, "type", "veth",
            "peer", "name", "eth0", "netns", host.namespace)
        _ip("-n", bridge_namespace, "link", "set", host.bridge_port, "master", "br0")
        _ip("-n", bridge_namespace, "link", "set", host.bridge_port, "up")
        _ip("-n", host.namespace, "addr", "add", f"{host.address}/{PREFIX_LENGTH}", "dev", "eth0")
        _ip("-n", host.namespace, "link", "set", "eth0", "up")


def _remove_network(namespaces: list[str]) -> list[str]:
    """Kill what still runs in ``namespaces`` (only processes this pool started) and
    delete them, with their links; the problems met, if any."""
    problems = []
    for namespace in namespaces:
        pids = _ip("netns", "pids", namespace, check=False).stdout.split()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        if pids:
            problems.append(f"{namespace}: killed leftover processes {', '.join(pids)}")
        done = _ip("netns", "del", namespace, check=False)
        if done.returncode != 0 and "No such file" not in done.stderr:
            problems.append(f"{namespace}: {done.stderr.strip()}")
    return problems


@frozen
class _PoolPlan:
    """Where one pool's hosts go: their namespaces' prefix, subnet and bridge ports' prefix."""

    namespace_prefix: str
    subnet: str
    port_prefix: str


def _plan_hosts(roles: Mapping[str, Sequence[str]], plan: _PoolPlan, base: Path) -> dict[str, Host]:
    """The hosts of one pool, numbered in the order given (host n gets address .n+2)."""
    hosts = {name: Host(name=name, namespace=f"{plan.namespace_prefix}{index}",
                        address=f"{plan.subnet}.{index + 2}", roles=tuple(given), directory=base / name,
                        bridge_port=f"{plan.port_prefix}{index}")
             for index, (name, given) in enumerate(roles.items())}
    if not any(host.is_central_manager for host in hosts.values()):
        raise ValueError("a pool of hosts needs one host with the CentralManager role")
    return hosts


def _bring_up(pool: NetnsPool) -> None:
    """The central manager up, every other host joined, every master ready."""
    manager = pool.central_manager
    pool.bring_up_central_manager()
    for name, host in pool.hosts.items():
        if host is not manager:
            pool.join(name)
    for name in pool.hosts:
        pool.wait_ready(name)


@contextlib.contextmanager
def netns_pool(roles: Mapping[str, Sequence[str]], extra_config: Mapping[str, str] | None = None,
               start: bool = True,
               host_config: Mapping[str, Mapping[str, str]] | None = None) -> Iterator[NetnsPool]:
    """A pool of hosts named and given roles by ``roles`` (``{"cm": ["CentralManager"]}``);
    the first host holding ``CentralManager`` is the central manager, every other host
    has one role, Submit or Execute, and joins it. ``extra_config`` is added to every
    host's config, ``host_config[name]`` to that host's alone. Unless ``start`` is false
    the central manager is brought up and every other host joined, each master ready,
    before the pool is yielded (with ``start`` false, the test does that itself:
    :meth:`NetnsPool.bring_up_central_manager`, :meth:`NetnsPool.join`). Everything is
    torn down afterwards, even when the test fails.
    """
    with netns_pools({"": roles}, extra_config, start, host_config) as pools:
        yield pools[""]


@contextlib.contextmanager
def netns_pools(pools: Mapping[str, Mapping[str, Sequence[str]]], extra_config: Mapping[str, str] | None = None,
                start: bool = True, host_config: Mapping[str, Mapping[str, str]] | None = None,
                ) -> Iterator[dict[str, NetnsPool]]:
    """Several pools on one bridge, as :func:`netns_pool` makes one: ``pools`` gives each
    pool's hosts and roles by pool key (``{"A": {"cm-a": [...], ...}, "B": {...}}``), and
    a :class:`NetnsPool` is yielded per key. Each pool has its own central manager, CA,
    signing key and name (``TRUST_DOMAIN``, its central manager's namespace), its hosts
    join only it, and pool number p (in the order given) takes addresses ``198.18.p.*``,
    so every host reaches every other. Host names must differ across the pools (they are
    the hosts' names and directories). ``extra_config`` goes to every host of every pool,
    ``host_config[name]`` to one host.
    """
    skip_without_namespaces()
    if len(pools) > 100:
        raise ValueError(f"at most 100 pools on one bridge, not {len(pools)}")
    names = [name for roles in pools.values() for name in roles]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"host names must differ across pools: {', '.join(repeated)} appear twice")
    tag = secrets.token_hex(3)
    base = Path(tempfile.mkdtemp(prefix=f"roost-netns-{tag}-"))
    base.chmod(0o755)  # jobs run as other accounts here: they must reach their sandboxes
    single = len(pools) == 1
    made: dict[str, NetnsPool] = {}
    bridge_namespace = f"roost-{tag}-br"
    every_host: list[Host] = []
    try:
        for number, (key, roles) in enumerate(pools.items()):
            plan = (_PoolPlan(f"roost-{tag}-", SUBNET, "h") if single
                    else _PoolPlan(f"roost-{tag}-p{number}-", f"198.18.{number}", f"p{number}h"))
            made[key] = NetnsPool(base, _plan_hosts(roles, plan, base), bridge_namespace)
        every_host = [host for pool in made.values() for host in pool.hosts.values()]
        _make_network(bridge_namespace, every_host)
        for pool in made.values():
            manager = pool.central_manager
            for host in pool.hosts.values():
                _prepare_host(host, base, {**(extra_config or {}), **(host_config or {}).get(host.name, {}),
                                           **({"TRUST_DOMAIN": manager.namespace} if host is manager else {})})
        if start:
            for pool in made.values():
                _bring_up(pool)
        yield made
    finally:
        for pool in made.values():
            for name in list(pool.masters):
                pool.stop(name)
        problems = _remove_network([*(host.namespace for host in every_host), bridge_namespace])
        shutil.rmtree(base, ignore_errors=True)
        if problems:
            print("multi-host pool teardown: " + "; ".join(problems), file=sys.stderr)


def _prepare_host(host: Host, base: Path, extra: Mapping[str, str]) -> None:
    """The host's directory with what the test adds to its config (its sandboxes under
    ``base``, so they go with the pool) and an empty config, which `pool up` or
    `pool join` writes (everything run on the host names it in ``ROOST_CONFIG``)."""
    for sub in ("log", "home", "tokens", "config.d"):
        (host.directory / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
    host.directory.chmod(0o700)
    execute = base / f"{host.name}-execute"
    execute.mkdir(mode=0o755)
    host.config_file.write_text("# written by `roost pool up` or `roost pool join`\n")
    host.test_config_file.write_text(added_config_text({"EXECUTE": str(execute), **extra}))
