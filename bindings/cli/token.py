"""``roost token``: create identity tokens with the pool signing key, and list the ones you hold.

``roost token create -identity alice@pool -scope WRITE [-scope READ] [-lifetime 1d]
[-key FILE] [-out FILE | -token NAME]`` prints the token, or writes it with mode 0600.
``roost token list [-dir DIR] [-key FILE]`` shows each token in the token directory
with its identity, scopes, issuer and expiry, and checks it when the key is readable.
``roost token revoke -id JTI | -identity NAME | -token FILE [-pool DIR]`` adds a rule to
the pool's revocation file; every daemon refuses the token within one ``UPDATE_INTERVAL``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping

from bindings.cli.options import CommandLine, Option, Reading, Subcommand, UsageError, run_subcommands
from bindings.pool import read_pool_file
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
from daemoncore.security.daemon_credentials import PUBLIC_KEY_KNOB
from daemoncore.security.revocation import add_revocation, revocation_file, rule_for_identity, rule_for_token_id
from daemoncore.security.signing_key import load_public_key, public_key_file
from daemoncore.security.token_files import read_token_file

CREATE = CommandLine("roost token create", """usage: roost token create -identity USER@DOMAIN -scope LEVEL [options]

  -identity USER@DOMAIN   whom the token names, e.g. alice@pool
  -scope LEVEL, -authz LEVEL  READ, WRITE, ADMINISTRATOR or DAEMON; repeat for several
  -lifetime TIME      how long it is valid: seconds, or 30m, 1d...
  -key FILE           the signing key (default SEC_TOKEN_POOL_SIGNING_KEY_FILE)
  -issuer NAME        the pool name recorded in the token (default TRUST_DOMAIN)
  -out FILE           write the token to FILE (mode 0600) instead of printing it
  -token NAME         write it as NAME in the token directory
""", [Option("-identity", 1), Option("-scope", 1, aliases=("-authz",)), Option("-lifetime", 1), Option("-key", 1),
      Option("-issuer", 1), Option("-out", 1), Option("-token", 1)])
LIST = CommandLine("roost token list", """usage: roost token list [-dir DIR] [-key FILE]

  -dir DIR            the token directory (default SEC_TOKEN_DIRECTORY)
  -key FILE           the signing key to check the tokens with
""", [Option("-dir", 1), Option("-key", 1)])

REVOKE = CommandLine("roost token revoke", """usage: roost token revoke (-id JTI | -identity USER@DOMAIN | -token FILE) [-pool DIR]

  -id JTI             revoke the one token with this id (its jti claim)
  -identity NAME      revoke every token of this identity, e.g. startd@hostB
  -token FILE         revoke the token held in FILE
  -pool DIR           the pool directory, whose config names the revocation file
                      (default: the pool `roost pool up` last started, else your config)
""", [Option("-id", 1), Option("-identity", 1), Option("-token", 1), Option("-pool", 1)])


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost token`` with ``argv``; 0 on success, 1 on an error it explains, 2 for a bad command line."""
    env = os.environ if env is None else env
    return run_subcommands("roost token", {
        "create": Subcommand(CREATE, "sign a new token (needs the pool signing key)",
                             lambda reading: _guarded(_create, _creation(reading), env)),
        "list": Subcommand(LIST, "show the tokens in the token directory",
                           lambda reading: _guarded(_list, _no_operands(reading), env)),
        "revoke": Subcommand(REVOKE, "refuse a token, or every token of an identity, at every daemon",
                             lambda reading: _guarded(_revoke, _revocation(reading), env)),
    }, argv)


def _creation(reading: Reading) -> Reading:
    """``reading`` once it names an identity, at least one scope, and at most one place to write.

    Raises:
        UsageError: it does not.
    """
    _no_operands(reading)
    for needed in ("-identity", "-scope"):
        if not reading.given(needed):
            raise UsageError(f"{needed} is required")
    if reading.given("-out") and reading.given("-token"):
        raise UsageError("-out and -token both say where to write; give one")
    return reading


def _revocation(reading: Reading) -> Reading:
    """``reading`` once it names exactly one thing to revoke.

    Raises:
        UsageError: it names none, or several.
    """
    _no_operands(reading)
    named = [flag for flag in ("-id", "-identity", "-token") if reading.given(flag)]
    if len(named) != 1:
        raise UsageError("give exactly one of -id, -identity or -token")
    return reading


def _no_operands(reading: Reading) -> Reading:
    if reading.operands:
        raise UsageError(f"unexpected argument {reading.operands[0]!r}")
    return reading


def _guarded(work, reading: Reading, env: Mapping[str, str]) -> int:
    """Run ``work`` with the configuration; a config or security failure is one line and 1."""
    try:
        config = Config.load(env=env)
        return work(reading, config, env)
    except (ConfigError, SecurityError, ValueError) as err:
        print(f"roost token: {err}", file=sys.stderr)
        return 1


def _create(args: Reading, config: Config, env: Mapping[str, str]) -> int:
    identity = args.last("-identity")
    scopes = [given.value for given in args.options if given.name == "-scope"]
    lifetime = _lifetime(args.last("-lifetime"))
    key = _minting_key(args.last("-key") or config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", ""), config)
    token = issue_token(key, identity, scopes, lifetime,
                        issuer=args.last("-issuer") or config.param("TRUST_DOMAIN"), now=time.time())
    name = args.last("-token")
    path = args.last("-out") or (os.path.join(config.param("SEC_TOKEN_DIRECTORY", ""), name) if name else None)
    if path is None:
        print(token)
        return 0
    write_token(path, token)
    print(f"wrote a token for {identity.strip()} to {path}", file=sys.stderr)
    return 0


def _lifetime(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return to_duration(text)
    except ValueError as err:
        raise ValueError(f"--lifetime {text!r}: {err}") from None


def _list(args: Reading, config: Config, env: Mapping[str, str]) -> int:
    directory = args.last("-dir") or config.param("SEC_TOKEN_DIRECTORY", "")
    given_key = args.last("-key")
    key = _optional_key(given_key or config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", ""), required=bool(given_key),
                        public=config.param(PUBLIC_KEY_KNOB, ""))
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


def _minting_key(path: str, config: Config):
    """The pool's signing key at ``path``; on a host that joined a pool (its public key
    but no signing key), an error saying tokens are made on the central manager."""
    public = config.param(PUBLIC_KEY_KNOB, "") or public_key_file(path)
    if path and not os.path.exists(path) and os.path.exists(public):
        raise SecurityError(f"this host joined a pool and holds only its public key ({public}), which checks "
                            f"tokens but cannot make them: run `roost token create` on the central manager")
    return load_signing_key(path)


def _optional_key(path: str, required: bool, public: str = ""):
    """The key to check tokens with: the signing key at ``path``, else the pool's public
    key (a host that joined), else None."""
    try:
        return load_signing_key(path)
    except SecurityError:
        if required:
            raise
    public = public or (public_key_file(path) if path else "")
    try:
        return load_public_key(public) if public and os.path.exists(public) else None
    except SecurityError:
        return None


def _row(source: str, text: str, key) -> tuple[str, ...]:
    try:
        claims = read_unverified(text)
    except TokenError as err:
        return (source, "-", "-", "-", "-", f"malformed: {err}")
    scopes = ",".join(level.name for level in AuthorizationLevel if level in claims.scopes)
    expires = _when(claims.expires) if claims.expires is not None else "never"
    return (source, claims.name, scopes, claims.issuer or "-", expires, _status(text, key))


def _status(text: str, key) -> str:
    if key is None:
        return "unverified (no signing or public key)"
    try:
        verify_token(key, text, now=time.time())
    except TokenError as err:
        return f"invalid: {err}"
    return "valid"


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def _revoke(args: Reading, config: Config, env: Mapping[str, str]) -> int:
    if args.given("-identity"):
        rule, what = rule_for_identity(args.last("-identity")), f"every token of {args.last('-identity').strip()}"
    else:
        token_id = args.last("-id")
        if args.given("-token"):
            found = read_token_file(args.last("-token"))
            token_id = read_unverified(found).token_id or ""
        rule, what = rule_for_token_id(token_id), f"token {token_id}"
    path = revocation_file(_pool_config(args.last("-pool"), config, env))
    added = add_revocation(path, rule, comment=f"revoked {_when(time.time())} by roost token revoke")
    print(f"{'revoked' if added else 'already revoked:'} {what} ({rule} in {path}); "
          f"every daemon refuses it within one UPDATE_INTERVAL")
    return 0


def _pool_config(directory: str | None, config: Config, env: Mapping[str, str]) -> Config:
    """The config of the pool in ``directory``, else of the pool last started, else ``config``."""
    if directory is None:
        facts = read_pool_file(config.param("POOL_ADDRESS_FILE", "")) or {}
        directory = facts.get("dir")
    if not directory:
        return config
    path = os.path.join(directory, "config")
    if not os.path.isfile(path):
        raise ConfigError(f"{directory} holds no pool config: give the pool directory `roost pool up` made")
    return Config.load(path, env={**env, "ROOST_CONFIG": path})
