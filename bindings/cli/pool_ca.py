"""``roost pool ca``: the pool's certificate authority.

``roost pool ca create [-dir DIR]`` makes the CA (``pool_ca.crt``, and ``pool_ca.key``
with mode 0600) beside the pool's signing key, refusing to replace one that is there,
and prints its fingerprint. ``roost pool ca issue HOST [NAME ...] [-ip ADDRESS ...]
[-dir DIR] [-out DIR]`` signs a certificate for a host's names and addresses and
prints the ``AUTH_SSL_SERVER_*`` lines that make its daemons serve it.
``roost pool ca fingerprint [-dir DIR]`` prints the CA's SHA-256 fingerprint.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping

from bindings.cli.options import CommandLine, Option, Reading, Subcommand, UsageError, run_subcommands
from daemoncore.config import Config, ConfigError
from daemoncore.security.tls import (
    authority_paths,
    create_authority,
    issue_host_certificate,
    load_authority,
    write_host_certificate,
)
from daemoncore.security.tls_errors import CertificateError

_DIR_HELP = "  -dir DIR            where the CA is kept (default: beside SEC_TOKEN_POOL_SIGNING_KEY_FILE)\n"
CREATE = CommandLine("roost pool ca create", "usage: roost pool ca create [-dir DIR]\n\n" + _DIR_HELP,
                     [Option("-dir", 1)])
ISSUE = CommandLine("roost pool ca issue", """usage: roost pool ca issue HOST [NAME ...] [-ip ADDRESS ...] [-dir DIR] [-out DIR]

  HOST [NAME ...]     the host's DNS names; clients that connect by one of them accept it
  -ip ADDRESS         an IP address of the host (repeat for several); clients that
                      connect to <ADDRESS:port?tls=1> accept it
""" + _DIR_HELP + """  -out DIR            where to write HOST.crt and HOST.key (default DIR/hosts)
""", [Option("-ip", 1), Option("-dir", 1), Option("-out", 1)])
FINGERPRINT = CommandLine("roost pool ca fingerprint", "usage: roost pool ca fingerprint [-dir DIR]\n\n" + _DIR_HELP,
                          [Option("-dir", 1)])


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost pool ca`` with ``argv``; 0 on success, 1 on an error it explains, 2 for a bad command line."""
    env = dict(os.environ if env is None else env)
    commands = {
        "create": (CREATE, "make the pool's certificate authority", ca_create),
        "issue": (ISSUE, "sign a certificate for a host", ca_issue),
        "fingerprint": (FINGERPRINT, "print the CA certificate's SHA-256 fingerprint", ca_fingerprint),
    }
    return run_subcommands("roost pool ca", {
        name: Subcommand(line, summary, functools.partial(_run, name, work, env=env))
        for name, (line, summary, work) in commands.items()}, argv)


def _run(name: str, work, reading: Reading, env: dict) -> int:
    try:
        return work(reading, ca_dir(reading.last("-dir"), env))
    except (CertificateError, ConfigError) as err:
        print(f"roost pool ca {name}: {err}", file=sys.stderr)
        return 1


def ca_dir(given: str | None, env: Mapping[str, str]) -> str:
    """The CA's directory: ``-dir``, else that of ``SEC_TOKEN_POOL_SIGNING_KEY_FILE``.

    Raises:
        ConfigError: the configuration has an error.
        CertificateError: no ``-dir`` and no signing key file configured.
    """
    if given:
        return os.path.abspath(os.path.expanduser(given))
    key_file = Config.load(env=env).param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", "")
    if not key_file:
        raise CertificateError("no -dir given and SEC_TOKEN_POOL_SIGNING_KEY_FILE is not set: name the CA's directory")
    return os.path.dirname(os.path.abspath(key_file))


def ca_create(reading: Reading, directory: str) -> int:
    """Make the CA in ``directory`` and say where it is and its fingerprint."""
    if reading.operands:
        raise UsageError(f"unexpected argument {reading.operands[0]!r}")
    authority = create_authority(directory)
    cert_path, key_path = authority_paths(directory)
    print(f"pool CA created: {cert_path} (give it to every host), key {key_path} (mode 0600, keep it here)")
    print(f"fingerprint (SHA-256): {authority.fingerprint}")
    return 0


def ca_issue(reading: Reading, directory: str) -> int:
    """Sign a certificate for the host the operands and ``-ip`` name, write it, and print its config lines."""
    if not reading.operands:
        raise UsageError("name the host (its DNS name) to issue a certificate for")
    addresses = [given.value for given in reading.options if given.name == "-ip"]
    host = issue_host_certificate(load_authority(directory), reading.operands, addresses)
    out = os.path.abspath(os.path.expanduser(reading.last("-out") or os.path.join(directory, "hosts")))
    stem = os.path.join(out, reading.operands[0].rstrip(".").lower())
    write_host_certificate(host, f"{stem}.crt", f"{stem}.key")
    cert_path, _ = authority_paths(directory)
    print(f"certificate for {', '.join([*reading.operands, *addresses])} written to {stem}.crt, "
          f"key {stem}.key (mode 0600)")
    print("copy them to the host and add to its configuration:")
    print(f"AUTH_SSL_SERVER_CERTFILE = {stem}.crt\nAUTH_SSL_SERVER_KEYFILE = {stem}.key\n"
          f"AUTH_SSL_SERVER_CAFILE = {cert_path}")
    return 0


def ca_fingerprint(reading: Reading, directory: str) -> int:
    """Print the fingerprint of the CA in ``directory``."""
    if reading.operands:
        raise UsageError(f"unexpected argument {reading.operands[0]!r}")
    print(load_authority(directory).fingerprint)
    return 0
