"""What a daemon proves itself with and checks others with.

On a host holding the pool's signing key (the central manager, a personal pool) a
daemon mints its own DAEMON token (``schedd@pool``) and verifies with the key. On a
host that joined the pool there is no signing key: the daemon verifies with the pool's
public key (``SEC_TOKEN_POOL_PUBLIC_KEY_FILE``, default the signing key file's name
with ``.pub``) and sends the token it was given at join, read from the file
``SEC_DAEMON_TOKEN_FILE`` (``startd@hostB``).
"""

from __future__ import annotations

import os

import attrs

from daemoncore.security.errors import SigningKeyError, TokenError
from daemoncore.security.signing_key import (
    SigningKey,
    VerifyKey,
    load_public_key,
    load_signing_key,
    public_key_file,
    verifying_key,
)
from daemoncore.security.token_files import read_token_file
from daemoncore.security.tokens import issue_token

#: The knobs naming a joined host's files.
PUBLIC_KEY_KNOB = "SEC_TOKEN_POOL_PUBLIC_KEY_FILE"
DAEMON_TOKEN_KNOB = "SEC_DAEMON_TOKEN_FILE"


@attrs.define
class DaemonCredentials:
    """A daemon's key for checking tokens, and either a key to mint its own or the token
    it was given. Mutable: minted tokens are kept and reused until half their lifetime
    is gone (each new token would cost a signature here and a verification at the peer)."""

    verify_key: VerifyKey = attrs.field(repr=False)
    signing_key: SigningKey | None = attrs.field(default=None, repr=False)
    given_token: str | None = attrs.field(default=None, repr=False)
    _minted: dict[tuple[str, float], tuple[str, float]] = attrs.field(factory=dict, repr=False)

    @classmethod
    def signing(cls, key: SigningKey) -> DaemonCredentials:
        """Credentials of a host holding the signing key ``key``."""
        return cls(verifying_key(key), key)

    def daemon_token(self, identity: str, lifetime: float, now: float) -> str:
        """A DAEMON token for ``identity`` valid ``lifetime`` seconds from ``now``, or the
        token this host was given when it holds no signing key."""
        if self.signing_key is None:
            return self.given_token
        known = self._minted.get((identity, lifetime))
        if known is None or now >= known[1]:
            token = issue_token(self.signing_key, identity, ["DAEMON"], lifetime=lifetime, now=now)
            known = self._minted[(identity, lifetime)] = (token, now + lifetime / 2)
        return known[0]


def load_daemon_credentials(signing_key_file: str, public_key_path: str, token_file: str) -> DaemonCredentials:
    """The credentials of a daemon: the signing key when ``signing_key_file`` exists,
    else the public key at ``public_key_path`` (default beside the signing key) and the
    token in ``token_file``.

    Raises:
        SigningKeyError: no signing key, and the public key or the token file is missing
            or unusable; the message names the file and the knob.
    """
    if signing_key_file and os.path.lexists(signing_key_file):
        return DaemonCredentials.signing(load_signing_key(signing_key_file))
    public_path = public_key_path or (public_key_file(signing_key_file) if signing_key_file else "")
    if not public_path:
        raise SigningKeyError("this host has neither a pool signing key (SEC_TOKEN_POOL_SIGNING_KEY_FILE) "
                              f"nor the pool's public key ({PUBLIC_KEY_KNOB}): join the pool with "
                              f"`roost pool join`, or start a personal pool with `roost pool up`")
    if not os.path.exists(public_path):
        raise SigningKeyError(f"this host has neither the pool signing key {signing_key_file or '(unset)'} nor the "
                              f"pool's public key {public_path} ({PUBLIC_KEY_KNOB}): join the pool with "
                              f"`roost pool join`, or start a personal pool with `roost pool up`")
    verify_key = load_public_key(public_path)
    if not token_file:
        raise SigningKeyError(f"this host holds no pool signing key, so its daemons need the token they were "
                              f"given at join, and {DAEMON_TOKEN_KNOB} is not set: join with `roost pool join`")
    try:
        token = read_token_file(token_file)
    except TokenError as exc:
        raise SigningKeyError(f"{exc} ({DAEMON_TOKEN_KNOB}): this host holds no pool signing key, so its "
                              f"daemons send the token given at join; join again with `roost pool join`") from None
    return DaemonCredentials(verify_key, None, token)
