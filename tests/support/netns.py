"""A pool of several hosts on one machine, for integration tests: each host is a Linux
network namespace the test makes, with its own address from 198.18.0.0/15 (the
benchmarking range), its own host name (a UTS namespace), its own state directory and
config, and its own master. The hosts' links meet on a bridge living in one more
namespace of the test's own, so nothing is added outside the namespaces the test made.

``netns_pool(tmp, {"cm": ["CentralManager"], "submit": ["Submit"], ...})`` is the
whole of it; every master is stopped, every namespace deleted, whatever happens.
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
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from attrs import frozen

from daemoncore.security import ensure_signing_key, issue_token, load_signing_key, write_token
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
        """The host's config file (``ROOST_CONFIG`` of everything run on it)."""
        return self.directory / "config"

    @property
    def user_token_file(self) -> Path:
        """The token of the pool's user on this host."""
        return self.directory / "tokens" / "user"

    @property
    def log_dir(self) -> Path:
        """The host's daemon logs."""
        return self.directory / "log"

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


def host_config_text(host: Host, central_manager: Host, execute_dir: Path,
                     extra: Mapping[str, str]) -> str:
    """The config of ``host``: its roles, the central manager's address, its own address."""
    knobs = {**QUICK_KNOBS, **extra}
    return (f"LOCAL_DIR = {host.directory}\n"
            f"POOL_ADDRESS_FILE = $(LOCAL_DIR)/pool.json\n"
            f"use ROLE : {', '.join(host.roles)}\n"
            f"CONDOR_HOST = {central_manager.address}\n"
            f"NETWORK_INTERFACE = {host.address}\n"
            f"TRUST_DOMAIN = {central_manager.namespace}\n"
            f"EXECUTE = {execute_dir}\n"
            + "".join(f"{name} = {value}\n" for name, value in knobs.items()))


def give_credentials(pool_keys: Path, domain: str, host: Host) -> None:
    """Give ``host`` the pool's signing key (the files of ``pool_keys``, the pool's
    ``passwords.d``) and a token for the pool's user, by copying.

    The one place that hands out identities: when `roost pool join` exists, a host
    will get its own identity through it instead."""
    keys = host.directory / "passwords.d"
    shutil.copytree(pool_keys, keys)
    key = load_signing_key(str(keys / "POOL"))
    write_token(str(host.user_token_file), issue_token(key, f"root@{domain}", USER_SCOPES, issuer=domain))


class NetnsPool:
    """The hosts of one multi-host pool and what a test does with them."""

    def __init__(self, base: Path, hosts: dict[str, Host], bridge_namespace: str) -> None:
        self.base = base
        self.hosts = hosts
        self.bridge_namespace = bridge_namespace
        self.masters: dict[str, subprocess.Popen] = {}

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

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

    # --- masters ---

    def start(self, host: str) -> None:
        """Start ``host``'s master (detached, as `roost pool up` starts one)."""
        where = self.hosts[host]
        with open(where.log_dir / "MasterLog.stderr", "ab") as stderr:
            self.masters[host] = subprocess.Popen(
                where.command(MASTER), env=where.env(), cwd=where.directory, stdin=subprocess.DEVNULL,
                stdout=stderr, stderr=stderr, start_new_session=True)

    def wait_ready(self, host: str, seconds: float = 60) -> None:
        """Wait until ``host``'s master reports every daemon up (its pool file names them)."""
        pool_file = self.hosts[host].directory / "pool.json"
        master = self.masters[host]

        def ready() -> bool:
            if master.poll() is not None:
                raise AssertionError(f"the master of {host} exited with {master.returncode}: "
                                     f"{_tail(self.hosts[host].log_dir / 'MasterLog.stderr')}")
            facts = json.loads(pool_file.read_text()) if pool_file.exists() else {}
            if facts.get("error"):
                raise AssertionError(f"the daemons of {host} did not come up: {facts['error']}")
            return bool(facts.get("daemons"))
        wait_for(ready, seconds, f"every daemon of {host} answering")

    def stop(self, host: str) -> None:
        """Stop ``host``'s master with SIGTERM (SIGKILL after the stop timeout)."""
        master = self.masters.pop(host, None)
        if master is None or master.poll() is not None:
            return
        master.send_signal(signal.SIGTERM)
        try:
            master.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            master.kill()
            master.wait(5)

    # --- the network ---

    def cut(self, host: str) -> None:
        """Take ``host``'s link to the others down (its daemons keep running)."""
        _ip("-n", self.bridge_namespace, "link", "set", self.hosts[host].bridge_port, "down")

    def restore(self, host: str) -> None:
        """Bring ``host``'s link back up."""
        _ip("-n", self.bridge_namespace, "link", "set", self.hosts[host].bridge_port, "up")


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


@contextlib.contextmanager
def netns_pool(roles: Mapping[str, Sequence[str]], extra_config: Mapping[str, str] | None = None,
               start: bool = True,
               host_config: Mapping[str, Mapping[str, str]] | None = None) -> Iterator[NetnsPool]:
    """A pool of hosts named and given roles by ``roles`` (``{"cm": ["CentralManager"]}``);
    the first host holding ``CentralManager`` is the central manager. ``extra_config``
    is added to every host's config, ``host_config[name]`` to that host's alone. Every
    master is started (unless ``start`` is false) and ready before the pool is yielded,
    and everything is torn down afterwards, even when the test fails.
    """
    skip_without_namespaces()
    tag = secrets.token_hex(3)
    base = Path(tempfile.mkdtemp(prefix=f"roost-netns-{tag}-"))
    base.chmod(0o755)  # jobs run as other accounts here: they must reach their sandboxes
    hosts = {name: Host(name=name, namespace=f"roost-{tag}-{index}", address=f"{SUBNET}.{index + 2}",
                        roles=tuple(given), directory=base / name, bridge_port=f"h{index}")
             for index, (name, given) in enumerate(roles.items())}
    managers = [host for host in hosts.values() if any(r.lower() == "centralmanager" for r in host.roles)]
    if not managers:
        raise ValueError("a pool of hosts needs one host with the CentralManager role")
    bridge_namespace = f"roost-{tag}-br"
    pool = NetnsPool(base, hosts, bridge_namespace)
    try:
        _make_network(bridge_namespace, list(hosts.values()))
        pool_keys = base / "passwords.d"
        pool_keys.mkdir(mode=0o700)
        ensure_signing_key(str(pool_keys / "POOL"))
        for host in hosts.values():
            for sub in ("log", "spool", "home", "tokens"):
                (host.directory / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
            host.directory.chmod(0o700)
            execute = base / f"{host.name}-execute"
            execute.mkdir(mode=0o755)
            knobs = {**(extra_config or {}), **(host_config or {}).get(host.name, {})}
            host.config_file.write_text(host_config_text(host, managers[0], execute, knobs))
            give_credentials(pool_keys, managers[0].namespace, host)
        if start:
            for name in sorted(hosts, key=lambda n: hosts[n] is not managers[0]):
                pool.start(name)
            for name in hosts:
                pool.wait_ready(name)
        yield pool
    finally:
        for name in list(pool.masters):
            pool.stop(name)
        problems = _remove_network([*(host.namespace for host in hosts.values()), bridge_namespace])
        shutil.rmtree(base, ignore_errors=True)
        if problems:
            print("multi-host pool teardown: " + "; ".join(problems), file=sys.stderr)
