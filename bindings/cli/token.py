"""``roost token``: create identity tokens with the pool signing key, and list the ones you hold.

``roost token create --identity alice@pool --scope WRITE [--scope READ] [--lifetime 1d]
[--key FILE] [--out FILE | -token NAME]`` prints the token, or writes it with mode 0600.
``roost token list [--dir DIR] [--key FILE]`` shows each token in the token directory
with its identity, scopes, issuer and expiry, and checks it when the key is readable.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Mapping

from daemoncore.config import Config, ConfigError, to_duration
from daemoncore.security import (
    TOKEN_ENV,
    AuthorizationLevel,
    SecurityError,
    TokenError,
    issue_token,
    list_tokens,
    load_signing_key,
    read_unverified,
    verify_token,
    write_token,
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="roost token", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="{create,list}")
    create = commands.add_parser("create", help="sign a new token (needs the pool signing key)")
    create.add_argument("--identity", "-identity", required=True, help="user@domain, e.g. alice@pool")
    create.add_argument("--scope", "-authz", action="append", required=True, metavar="LEVEL",
                        help="READ, WRITE, ADMINISTRATOR or DAEMON; repeat for several")
    create.add_argument("--lifetime", "-lifetime", help="how long it is valid: seconds, or 30m, 1d...")
    create.add_argument("--key", "-key", help="signing key file (default SEC_TOKEN_POOL_SIGNING_KEY_FILE)")
    create.add_argument("--issuer", help="pool name recorded in the token (default TRUST_DOMAIN)")
    where = create.add_mutually_exclusive_group()
    where.add_argument("--out", "-out", help="write the token to this file (mode 0600)")
    where.add_argument("--token", "-token", metavar="NAME", help="write it as NAME in the token directory")
    show = commands.add_parser("list", help="show the tokens in the token directory")
    show.add_argument("--dir", help="token directory (default SEC_TOKEN_DIRECTORY)")
    show.add_argument("--key", "-key", help="signing key to check the tokens with")
    return parser


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost token`` with ``argv``; return 0 on success, 1 on an error it explains."""
    args = _parser().parse_args(argv)
    env = os.environ if env is None else env
    try:
        config = Config.load(env=env)
        return _create(args, config) if args.command == "create" else _list(args, config, env)
    except (ConfigError, SecurityError, ValueError) as err:
        print(f"roost token: {err}", file=sys.stderr)
        return 1


def _create(args: argparse.Namespace, config: Config) -> int:
    lifetime = _lifetime(args.lifetime)
    key = load_signing_key(args.key or config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", ""))
    token = issue_token(key, args.identity, args.scope, lifetime,
                        issuer=args.issuer or config.param("TRUST_DOMAIN"), now=time.time())
    path = args.out or (os.path.join(config.param("SEC_TOKEN_DIRECTORY", ""), args.token) if args.token else None)
    if path is None:
        print(token)
        return 0
    write_token(path, token)
    print(f"wrote a token for {args.identity.strip()} to {path}", file=sys.stderr)
    return 0


def _lifetime(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return to_duration(text)
    except ValueError as err:
        raise ValueError(f"--lifetime {text!r}: {err}") from None


def _list(args: argparse.Namespace, config: Config, env: Mapping[str, str]) -> int:
    directory = args.dir or config.param("SEC_TOKEN_DIRECTORY", "")
    key = _optional_key(args.key or config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", ""), required=bool(args.key))
    if env.get(TOKEN_ENV):
        print(f"# {TOKEN_ENV} is set, so clients use it instead of these files")
    found = list_tokens(directory)
    if not found:
        print(f"no tokens in {directory}")
        return 0
    rows = [("FILE", "IDENTITY", "SCOPES", "ISSUER", "EXPIRES", "STATUS")]
    rows += [_row(item.source, item.text, key) for item in found]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1])
    return 0


def _optional_key(path: str, required: bool) -> bytes | None:
    try:
        return load_signing_key(path)
    except SecurityError:
        if required:
            raise
        return None


def _row(source: str, text: str, key: bytes | None) -> tuple[str, ...]:
    try:
        claims = read_unverified(text)
    except TokenError as err:
        return (source, "-", "-", "-", "-", f"malformed: {err}")
    scopes = ",".join(level.name for level in AuthorizationLevel if level in claims.scopes)
    expires = _when(claims.expires) if claims.expires is not None else "never"
    return (source, claims.name, scopes, claims.issuer or "-", expires, _status(text, key))


def _status(text: str, key: bytes | None) -> str:
    if key is None:
        return "unverified (no signing key)"
    try:
        verify_token(key, text, now=time.time())
    except TokenError as err:
        return f"invalid: {err}"
    return "valid"


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))
