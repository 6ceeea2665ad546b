"""``roost pool join-token``, ``roost pool join`` and ``roost pool leave``: adding a host
to a pool with one string, and taking it out again.

On the central manager, ``roost pool join-token --role execute [--lifetime 1h]`` prints
a join string: the collector's address, the pool CA's SHA-256 fingerprint and a
bootstrap token good for one host. On the new host, ``roost pool join STRING [--dir DIR]``
fetches the collector's CA (anyone may read it), refuses it unless its fingerprint is the
string's, and only then, over TLS checked against that CA, sends the token and gets the
host's identity: a daemon token for ``startd@HOST`` (or ``schedd@HOST``), a host
certificate, the CA and the pool's public key. It writes the pool directory and starts
the master. ``roost pool leave [--dir DIR]`` stops the master and has the collector
revoke the host's token.
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import socket
import ssl
import sys
from collections.abc import Mapping

from cryptography.hazmat.primitives import serialization

from bindings.cli.options import CommandLine, Option, Reading, Subcommand, UsageError, run_subcommands
from bindings.pool import default_pool_dir, read_pool_file
from daemoncore.config import Config, ConfigError
from daemoncore.config.conversions import to_duration
from daemoncore.daemon import configured_collector
from daemoncore.security import SecurityError, read_unverified, write_token
from daemoncore.security.daemon_credentials import DAEMON_TOKEN_KNOB, PUBLIC_KEY_KNOB
from daemoncore.security.joining import (
    DEFAULT_JOIN_LIFETIME,
    ROLE_DAEMONS,
    JoinError,
    JoinString,
    check_role,
    decode_join_string,
    encode_join_string,
    issue_join_token,
    join_role,
)
from daemoncore.security.signing_key import is_shared_secret, load_signing_key, write_public_key
from daemoncore.security.tls import fingerprint, load_certificate_file
from daemoncore.security.tls_client import PoolTrust, use_client_trust
from daemoncore.security.token_files import read_token_file, replace_file
from daemoncore.wire.address import Address, parse_address
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.collector_routes import JOIN, JOIN_CA, LEAVE
from daemoncore.wire.errors import RemoteError, Unreachable

#: The config role each join role runs (HTCondor's ``use ROLE``).
CONFIG_ROLES = {"execute": "Execute", "submit": "Submit"}
CA_TIMEOUT = 10.0
_DIR_HELP = "  --dir DIR           the host's pool directory (default $XDG_DATA_HOME/roost/pool or ~/.local/share/roost/pool)\n"

JOIN_TOKEN = CommandLine("roost pool join-token", f"""usage: roost pool join-token --role execute|submit [--lifetime DURATION] [--dir DIR]

Run on the central manager: prints one join string for one new host.
  --role ROLE         execute (the host runs a startd) or submit (a schedd)
  --lifetime DURATION how long the string may be used (default {DEFAULT_JOIN_LIFETIME / 3600:g}h; at most 7d)
  --dir DIR           the central manager's pool directory (default: the configuration's)
""", [Option("-role", 1), Option("-lifetime", 1), Option("-dir", 1)])
JOIN_HOST = CommandLine("roost pool join", """usage: roost pool join STRING [--dir DIR] [-timeout SECONDS]

Run on the new host: checks the central manager's CA against the string's fingerprint,
gets this host's identity and certificate, writes the pool directory and starts its master.
""" + _DIR_HELP + "  -timeout SECONDS    how long to wait for the daemons (default 30)\n",
                        [Option("-dir", 1), Option("-timeout", 1)])
LEAVE_HOST = CommandLine("roost pool leave", "usage: roost pool leave [--dir DIR]\n\n"
                         "Stops this host's daemons and revokes the token it was given at join.\n" + _DIR_HELP,
                         [Option("-dir", 1)])

#: subcommand -> one-line help, for `roost pool -help`
SUMMARIES = {"join-token": "print a join string for a new host (on the central manager)",
             "join": "join this host to a pool with a join string and start its daemons",
             "leave": "stop this host's daemons and revoke its identity"}


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost pool join-token|join|leave`` with ``argv``; 0, 1 on an error it explains, 2 for a bad command line."""
    env = dict(os.environ if env is None else env)
    commands = {"join-token": (JOIN_TOKEN, join_token), "join": (JOIN_HOST, join_host), "leave": (LEAVE_HOST, leave)}
    return run_subcommands("roost pool", {
        name: Subcommand(line, SUMMARIES[name], functools.partial(_run, name, work, env=env))
        for name, (line, work) in commands.items()}, argv)


def _run(name: str, work, reading: Reading, env: dict) -> int:
    try:
        return work(reading, env)
    except (SecurityError, ConfigError, RemoteError, Unreachable, OSError, ValueError) as err:
        print(f"roost pool {name}: {err}", file=sys.stderr)
        return 1


# --- join-token (central manager) ---

def join_token(reading: Reading, env: dict) -> int:
    """Print a join string for one host of ``--role``."""
    if reading.operands:
        raise UsageError(f"unexpected argument {reading.operands[0]!r}")
    role = reading.last("-role")
    if role is None:
        raise UsageError(f"--role is required: one of {', '.join(ROLE_DAEMONS)}")
    check_role(role.lower())
    lifetime = _duration(reading.last("-lifetime"))
    config = pool_config(reading.last("-dir"), env)
    key_file = config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", "")
    key = load_signing_key(key_file)
    if is_shared_secret(key):
        raise JoinError(f"the pool signing key {key_file} is an old shared secret (HS256): a joined host would need "
                        f"the secret itself to check tokens. Stop the pool, move the key aside, start the pool again "
                        f"(an Ed25519 key is made) and issue users' tokens again")
    ca_file = config.param("AUTH_SSL_SERVER_CAFILE")
    if not ca_file:
        raise JoinError("this pool has no CA (AUTH_SSL_SERVER_CAFILE is not set): hosts join only over TLS; "
                        "make one with `roost pool ca create` and serve TLS on the central manager")
    collector = own_collector(config)
    pool = config.param("TRUST_DOMAIN") or "pool"
    token = issue_join_token(key, role.lower(), pool, lifetime)
    ca_pem = load_certificate_file(ca_file).public_bytes(serialization.Encoding.PEM)
    print(encode_join_string(JoinString(collector, fingerprint(ca_pem), token)))
    return 0


def _duration(text: str | None) -> float:
    if text is None:
        return DEFAULT_JOIN_LIFETIME
    try:
        return to_duration(text)
    except ValueError:
        raise UsageError(f"--lifetime needs a duration such as 3600, 30m or 1h, got {text!r}") from None


def own_collector(config: Config) -> str:
    """The address of this central manager's collector, which must serve TLS.

    Raises:
        JoinError: no collector runs here, or it serves plain HTTP.
    """
    pool_file = config.param("POOL_ADDRESS_FILE", "")
    facts = read_pool_file(pool_file) if pool_file else None
    address = (facts or {}).get("collector") or configured_collector(config)
    if not address:
        raise JoinError("no collector of this pool is known here (no pool file, no COLLECTOR_HOST): "
                        "run join-token on the central manager, with its pool up")
    parsed = parse_address(address)
    if not parsed.tls:
        raise JoinError(f"the collector at {address} serves plain HTTP: hosts join only over TLS "
                        f"(set AUTH_SSL_SERVER_CERTFILE/KEYFILE/CAFILE on the central manager)")
    return str(parsed)


# --- join (new host) ---

def join_host(reading: Reading, env: dict) -> int:
    """Join this host with the string given, write its pool directory and start its master."""
    if len(reading.operands) != 1:
        raise UsageError("give the join string printed by `roost pool join-token` on the central manager")
    join = decode_join_string(reading.operands[0])
    role = join_role(read_unverified(join.token))
    collector = parse_address(join.collector)
    ca_pem = checked_authority(collector, join.ca_fingerprint)
    own_address = address_towards(collector)
    answer = BlockingClient(collector, token=join.token, trust=PoolTrust.from_pem(ca_pem, "the pool CA")).call(
        JOIN, {"role": role, "host": socket.gethostname(), "addresses": [own_address]})
    directory = os.path.abspath(os.path.expanduser(reading.last("-dir") or default_pool_dir(env)))
    config_file = write_host_files(directory, role, collector, own_address, answer)
    from bindings.cli import pool  # the pool commands import this module

    timeouts = [float(given.value) for given in reading.options if given.name == "-timeout"]
    facts = pool._start_master(directory, config_file, env, timeouts[-1] if timeouts else pool.START_TIMEOUT)
    pool._publish(directory, facts, env)
    print(f"joined pool {answer['pool']} as {answer['identity']}: master pid {facts['master_pid']}, "
          f"pool directory {directory}")
    return 0


def checked_authority(collector: Address, expected: str) -> bytes:
    """The CA certificate the collector presents, once its fingerprint is ``expected``;
    nothing but this anonymous request is sent before the check.

    Raises:
        JoinError: the collector has no CA, or another one (the message gives both fingerprints).
        Unreachable: the collector cannot be reached.
    """
    ca = presented_authority(collector)
    if ca is None:
        raise JoinError(f"the collector at {collector} offers no pool CA: it cannot be joined")
    found = fingerprint(ca.encode())
    if found != expected:
        raise JoinError(f"refused: the collector at {collector} presents a CA with fingerprint {found}, but the "
                        f"join string expects {expected}; nothing was sent and the join token is unused. Check "
                        f"that the string comes from this pool's central manager")
    return ca.encode()


def presented_authority(collector: Address) -> str | None:
    """The CA certificate (PEM) the collector shows anyone at ``JOIN_CA``, unchecked, or None.

    Raises:
        Unreachable: the collector cannot be reached.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the caller compares the CA with what it expects
    connection = http.client.HTTPSConnection(collector.host, collector.port, timeout=CA_TIMEOUT, context=context)
    try:
        connection.request("GET", JOIN_CA.path())
        response = connection.getresponse()
        body = json.loads(response.read(256 * 1024) or b"{}")
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise Unreachable(f"cannot fetch the CA of the collector at {collector}: {exc}") from None
    finally:
        connection.close()
    ca = body.get("ca") if isinstance(body, dict) else None
    return ca if isinstance(ca, str) else None


def address_towards(collector: Address) -> str:
    """This host's address on the route to the collector (no packet is sent)."""
    family = socket.AF_INET6 if ":" in collector.host else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.connect((collector.host, collector.port))
        return probe.getsockname()[0]


def write_host_files(directory: str, role: str, collector: Address, own_address: str, answer: dict) -> str:
    """Write the joined host's pool directory from the join ``answer``; the config file's path."""
    for sub in ("", "log", "spool", "execute", "tokens", "passwords.d", "ssl"):
        os.makedirs(os.path.join(directory, sub), mode=0o700, exist_ok=True)
    ssl_dir = os.path.join(directory, "ssl")
    replace_file(os.path.join(ssl_dir, "pool_ca.crt"), answer["ca"], 0o644)
    replace_file(os.path.join(ssl_dir, "host.crt"), answer["certificate"], 0o644)
    replace_file(os.path.join(ssl_dir, "host.key"), answer["key"], 0o600)
    write_public_key(os.path.join(directory, "passwords.d", "POOL.pub"), answer["public_key"])
    write_token(os.path.join(directory, "tokens", "daemon"), answer["token"])
    config_file = os.path.join(directory, "config")
    replace_file(config_file, host_config_text(directory, role, collector, own_address, answer["pool"]), 0o644)
    return config_file


def host_config_text(directory: str, role: str, collector: Address, own_address: str, pool: str) -> str:
    """The config of a host that joined ``pool`` as ``role``."""
    from bindings.cli.pool import POOL_FILE_NAME, root_execute_dir

    execute = root_execute_dir(directory)
    return (f"# Written by `roost pool join`.\n"
            f"use ROLE : {CONFIG_ROLES[role]}\n"
            f"LOCAL_DIR = {directory}\n"
            f"POOL_ADDRESS_FILE = $(LOCAL_DIR)/{POOL_FILE_NAME}\n"
            f"CONDOR_HOST = {collector}\n"
            f"NETWORK_INTERFACE = {own_address}\n"
            f"TRUST_DOMAIN = {pool}\n"
            f"# no signing key here: daemons check tokens with the pool's public key and send the token given at join\n"
            f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = $(LOCAL_DIR)/passwords.d/POOL\n"
            f"{PUBLIC_KEY_KNOB} = $(LOCAL_DIR)/passwords.d/POOL.pub\n"
            f"{DAEMON_TOKEN_KNOB} = $(LOCAL_DIR)/tokens/daemon\n"
            f"AUTH_SSL_SERVER_CERTFILE = $(LOCAL_DIR)/ssl/host.crt\n"
            f"AUTH_SSL_SERVER_KEYFILE = $(LOCAL_DIR)/ssl/host.key\n"
            f"AUTH_SSL_SERVER_CAFILE = $(LOCAL_DIR)/ssl/pool_ca.crt\n"
            f"AUTH_SSL_CLIENT_CAFILE = $(LOCAL_DIR)/ssl/pool_ca.crt\n"
            + (f"EXECUTE = {execute}\n" if execute else ""))


# --- leave ---

def leave(reading: Reading, env: dict) -> int:
    """Stop this host's master and have the collector revoke the host's token."""
    if reading.operands:
        raise UsageError(f"unexpected argument {reading.operands[0]!r}")
    directory = os.path.abspath(os.path.expanduser(reading.last("-dir") or default_pool_dir(env)))
    env = {**env, "ROOST_CONFIG": os.path.join(directory, "config")}
    config = Config.load(env["ROOST_CONFIG"], env=env)
    token_file = config.param(DAEMON_TOKEN_KNOB, "")
    if not token_file:
        raise JoinError(f"{directory} is not the directory of a host that joined a pool ({DAEMON_TOKEN_KNOB} unset)")
    token = read_token_file(token_file)
    trust = PoolTrust.from_file(config.param("AUTH_SSL_CLIENT_CAFILE", ""))
    use_client_trust(trust)  # the host's own master serves TLS
    from bindings.cli import pool  # the pool commands import this module

    try:
        pool.pool_down(directory, env)
    except pool.PoolError as exc:
        print(f"roost pool leave: {exc}; revoking the token anyway", file=sys.stderr)
    answer = BlockingClient(configured_collector(config), token=token, trust=trust).call(LEAVE, {})
    print(f"left the pool: the token {answer['revoked']} of {answer['identity']} is revoked")
    return 0


def pool_config(directory: str | None, env: dict) -> Config:
    """The configuration of the pool directory ``directory`` (its config file), else the usual one."""
    if directory is None:
        return Config.load(env=env)
    path = os.path.join(os.path.abspath(os.path.expanduser(directory)), "config")
    return Config.load(path, env={**env, "ROOST_CONFIG": path})

