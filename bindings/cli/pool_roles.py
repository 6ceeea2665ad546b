"""What ``roost pool up -role ...`` adds to a personal pool's directory: a central
manager on the network. The host gets the pool's certificate authority beside the
signing key (made once, kept across restarts), a host certificate for its names and
the address ``NETWORK_INTERFACE`` chooses (issued at every start, since the address
may change), and a config that serves every daemon over TLS on that address with the
collector on 9618. Other hosts are added with ``roost pool join-token`` here and
``roost pool join`` there."""

from __future__ import annotations

import os
import socket

from daemoncore.network_interface import resolve_network_interface
from daemoncore.security.tls import (
    authority_paths,
    create_authority,
    issue_host_certificate,
    load_authority,
    write_host_certificate,
)
from daemoncore.wire.address import DEFAULT_COLLECTOR_PORT, Address

#: The roles ``-role`` accepts, as they are written in ``use ROLE :``; the central
#: manager must be among them (submit and execute hosts join an existing pool).
ROLES = {"central-manager": "CentralManager", "submit": "Submit", "execute": "Execute"}
HOST_CERT_FILE = "host.crt"
HOST_KEY_FILE = "host.key"


class RoleError(ValueError):
    """``-role`` names something other than a central manager with optional roles."""


def parse_roles(text: str) -> list[str]:
    """``central-manager[,submit][,execute]`` as ``use ROLE`` names.

    Raises:
        RoleError: an unknown role, or no central manager among them.
    """
    given = [part.strip().lower() for part in text.split(",") if part.strip()]
    unknown = [part for part in given if part not in ROLES]
    if unknown:
        raise RoleError(f"unknown role {unknown[0]!r}: expected central-manager, optionally with submit "
                        f"and execute (central-manager,submit,execute)")
    if "central-manager" not in given:
        raise RoleError("roost pool up starts a central manager (-role central-manager[,submit,execute]); "
                        "a submit or execute host joins one with `roost pool join STRING`")
    return [ROLES[part] for part in dict.fromkeys(given)]


def host_names() -> list[str]:
    """This host's names for its certificate: its host name and fully qualified name."""
    names = [socket.gethostname(), socket.getfqdn()]
    return [name for name in dict.fromkeys(names) if name and name != "localhost"]


def prepare_central_manager(directory: str, key_dir: str, interface: str | None) -> tuple[str, str]:
    """Make (or keep) the pool CA in ``key_dir`` and issue this host's certificate into
    ``directory``; the address chosen by ``interface`` and the config lines for TLS.

    Raises:
        NoInterfaceAddress: ``interface`` matches none of this host's addresses.
        CertificateError: the CA or certificate cannot be made or written.
    """
    address = resolve_network_interface(interface or "*")
    cert_path, _ = authority_paths(key_dir)
    authority = load_authority(key_dir) if os.path.exists(cert_path) else create_authority(key_dir)
    host = issue_host_certificate(authority, host_names() or [address], [address])
    host_cert, host_key = os.path.join(key_dir, HOST_CERT_FILE), os.path.join(key_dir, HOST_KEY_FILE)
    write_host_certificate(host, host_cert, host_key)
    return address, (f"AUTH_SSL_SERVER_CERTFILE = {host_cert}\n"
                     f"AUTH_SSL_SERVER_KEYFILE = {host_key}\n"
                     f"AUTH_SSL_SERVER_CAFILE = {cert_path}\n")


def central_manager_config(roles: list[str], address: str, tls_lines: str) -> str:
    """The config lines that make a pool directory a central manager at ``address``
    (NETWORK_INTERFACE comes before ``use ROLE``, which would otherwise choose ``*``;
    CONDOR_HOST says TLS, so the command line on this host speaks it to the collector)."""
    return (f"NETWORK_INTERFACE = {address}\n"
            f"use ROLE : {', '.join(roles)}\n"
            f"CONDOR_HOST = {Address(address, DEFAULT_COLLECTOR_PORT, tls=True).url()}\n"
            + tls_lines)
