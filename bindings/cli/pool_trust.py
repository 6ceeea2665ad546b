"""``roost pool trust``: two pools' central managers agree to flock, with two pasted strings.

On pool A, ``roost pool trust`` prints an OFFER: A's name, collector and CA, and a token A
signed for B's negotiator (``negotiator@peer-<offer id>``). On pool B, ``roost pool trust
OFFER`` checks that A's collector presents that CA, stores A, and prints an ANSWER with
B's name, collector and CA and a token B signed for A's schedds (``flock@A``). On A,
``roost pool trust ANSWER`` checks B's CA the same way and stores B. ``-list`` shows the
trusted pools; ``-remove NAME`` forgets one and revokes the token this pool gave it.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Mapping

from cryptography.hazmat.primitives import serialization

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from bindings.cli.pool_join import own_collector, pool_config, presented_authority
from daemoncore.config import Config, ConfigError
from daemoncore.security import SecurityError, read_unverified
from daemoncore.security.host_identity import flock_identity
from daemoncore.security.levels import AuthorizationLevel
from daemoncore.security.pool_trust import (
    PoolTrustError,
    TrustedPool,
    read_trusted_pools,
    remove_trusted_pool,
    save_pending_offer,
    save_trusted_pool,
    take_pending_offer,
    trust_dir,
)
from daemoncore.security.revocation import add_revocation, revocation_file, rule_for_token_id
from daemoncore.security.signing_key import load_signing_key
from daemoncore.security.tls import fingerprint, load_certificate_file
from daemoncore.security.tokens import issue_token
from daemoncore.security.trust_exchange import (
    ANSWER,
    EXCHANGE_LIFETIME,
    OFFER,
    TrustMessage,
    decode_trust_message,
    encode_trust_message,
    peer_negotiator,
)
from daemoncore.wire.address import parse_address
from daemoncore.wire.errors import RemoteError, Unreachable

TRUST = CommandLine("roost pool trust", """usage: roost pool trust [OFFER | ANSWER] [-list] [-remove NAME] [-dir DIR]

Run on the central managers of two pools, A (whose jobs flock) and B (which runs them):
  roost pool trust            on A: print an OFFER for B's administrator
  roost pool trust OFFER      on B: check A's CA, trust A, print an ANSWER for A's administrator
  roost pool trust ANSWER     on A: check B's CA and trust B; A's schedds may then flock to B
  -list                       show the pools this pool trusts and the tokens each way
  -remove NAME                forget pool NAME and revoke the token this pool gave it
  -dir DIR                    the central manager's pool directory (default: the configuration's)
""", [Option("-list"), Option("-remove", 1), Option("-dir", 1)])


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost pool trust`` with ``argv``; 0, 1 on an error it explains, 2 for a bad command line."""
    env = dict(os.environ if env is None else env)
    return run_command(TRUST, argv, lambda reading: _guarded(reading, env))


def _guarded(reading: Reading, env: dict) -> int:
    work = _chosen(reading)
    try:
        return work(reading, pool_config(reading.last("-dir"), env))
    except (SecurityError, ConfigError, RemoteError, Unreachable, OSError, ValueError) as err:
        print(f"roost pool trust: {err}", file=sys.stderr)
        return 1


def _chosen(reading: Reading):
    """The action the command line asks for.

    Raises:
        UsageError: more than one, or more than one string.
    """
    asked = [name for name in ("-list", "-remove") if reading.given(name)]
    if len(reading.operands) > 1 or len(asked) + len(reading.operands) > 1:
        raise UsageError("give one of: nothing (make an offer), an OFFER or ANSWER string, -list, -remove NAME")
    if asked == ["-list"]:
        return list_pools
    if asked == ["-remove"]:
        return remove_pool
    return take_string if reading.operands else make_offer


# --- the three steps ---

def make_offer(_reading: Reading, config: Config) -> int:
    """On A: print an offer and remember it until its answer comes."""
    own = _own_side(config)
    offer_id = secrets.token_hex(8)
    token = issue_token(own["key"], peer_negotiator(offer_id), [AuthorizationLevel.DAEMON], issuer=own["pool"])
    save_pending_offer(trust_dir(config), offer_id, read_unverified(token).token_id or "")
    print(encode_trust_message(_message(OFFER, own, offer_id, token)))
    print(f"give this offer to the administrator of the other pool, who runs `roost pool trust OFFER` "
          f"on its central manager and gives back an answer (valid {EXCHANGE_LIFETIME / 3600:g}h)", file=sys.stderr)
    return 0


def take_string(reading: Reading, config: Config) -> int:
    """An offer (on B) or an answer (on A)."""
    own = _own_side(config)
    message = decode_trust_message(reading.operands[0], own["pool"], time.time())
    check_presented_ca(message)
    return answer_offer(message, own, config) if message.kind == OFFER else finish(message, config)


def answer_offer(offer: TrustMessage, own: dict, config: Config) -> int:
    """On B: trust A (its token lets B's negotiator reach A's schedds) and print the answer."""
    token = issue_token(own["key"], flock_identity(offer.name), [AuthorizationLevel.DAEMON], issuer=own["pool"])
    save_trusted_pool(trust_dir(config), TrustedPool(offer.name, offer.collector, offer.ca_pem, offer.token,
                                                     issued_jti=read_unverified(token).token_id or ""))
    print(encode_trust_message(_message(ANSWER, own, offer.offer, token)))
    print(f"pool {own['pool']} now trusts pool {offer.name}: its schedds may flock here (as {flock_identity(offer.name)}) "
          f"once FLOCK_FROM lists them; give this answer to pool {offer.name}'s administrator, who runs "
          f"`roost pool trust ANSWER`", file=sys.stderr)
    return 0


def finish(answer: TrustMessage, config: Config) -> int:
    """On A: trust B (its token lets A's schedds flock there) and map B's negotiator identity to it."""
    directory = trust_dir(config)
    issued = take_pending_offer(directory, answer.offer)
    save_trusted_pool(directory, TrustedPool(answer.name, answer.collector, answer.ca_pem, answer.token,
                                             peer_negotiator=peer_negotiator(answer.offer), issued_jti=issued))
    print(f"pool {config.param('TRUST_DOMAIN') or 'pool'} now trusts pool {answer.name} "
          f"(collector {answer.collector}): add it to FLOCK_TO to flock there")
    return 0


def check_presented_ca(message: TrustMessage) -> None:
    """Refuse ``message`` unless its collector presents the CA it carries.

    Raises:
        PoolTrustError: another CA, or none, naming both fingerprints.
        Unreachable: the collector cannot be reached.
    """
    collector = parse_address(message.collector)
    presented = presented_authority(collector)
    carried = fingerprint(message.ca_pem.encode())
    if presented is None or fingerprint(presented.encode()) != carried:
        shown = fingerprint(presented.encode()) if presented else "none"
        raise PoolTrustError(f"refused: the {message.kind} of pool {message.name} carries a CA with fingerprint "
                             f"{carried}, but its collector at {collector} presents {shown}; nothing was stored")


# --- -list and -remove ---

def list_pools(_reading: Reading, config: Config) -> int:
    """Print each trusted pool: its collector, CA, and the tokens each way."""
    pools = read_trusted_pools(trust_dir(config))
    if not pools:
        print("this pool trusts no other pool (make an offer with `roost pool trust`)")
        return 0
    print(f"{'POOL':<20} {'COLLECTOR':<28} {'WE ARE THERE':<24} {'THEY ARE HERE':<28} CA FINGERPRINT")
    for name in sorted(pools):
        pool = pools[name]
        there = _token_identity(pool.token)
        here = pool.peer_negotiator or (flock_identity(name) if pool.issued_jti else "-")
        print(f"{name:<20} {pool.collector:<28} {there:<24} {here:<28} {fingerprint(pool.ca_pem.encode())[:16]}")
    return 0


def remove_pool(reading: Reading, config: Config) -> int:
    """Forget pool NAME and revoke the token this pool issued to it."""
    name = reading.last("-remove")
    removed = remove_trusted_pool(trust_dir(config), name)
    if removed is None:
        raise PoolTrustError(f"this pool does not trust a pool named {name!r} (see `roost pool trust -list`)")
    if removed.issued_jti:
        add_revocation(revocation_file(config), rule_for_token_id(removed.issued_jti),
                       f"roost pool trust -remove {name}")
        print(f"pool {name} is no longer trusted; the token this pool gave it ({removed.issued_jti}) is revoked")
    else:
        print(f"pool {name} is no longer trusted")
    return 0


# --- this central manager ---

def _own_side(config: Config) -> dict:
    """This pool's name, signing key, collector and CA.

    Raises:
        PoolTrustError: no CA (pools trust each other only over TLS).
        SigningKeyError: the signing key cannot be loaded (not a central manager).
    """
    ca_file = config.param("AUTH_SSL_SERVER_CAFILE")
    if not ca_file:
        raise PoolTrustError("this pool has no CA (AUTH_SSL_SERVER_CAFILE is not set): pools trust each other only "
                             "over TLS; run this on a central manager started with `roost pool up -role central-manager`")
    return {"pool": config.param("TRUST_DOMAIN") or "pool",
            "key": load_signing_key(config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", "")),
            "collector": own_collector(config),
            "ca_pem": load_certificate_file(ca_file).public_bytes(serialization.Encoding.PEM).decode()}


def _message(kind: str, own: dict, offer_id: str, token: str) -> TrustMessage:
    return TrustMessage(kind, own["pool"], own["collector"], own["ca_pem"], offer_id, token,
                        time.time() + EXCHANGE_LIFETIME)


def _token_identity(token: str) -> str:
    try:
        return read_unverified(token).name
    except SecurityError:
        return "(unreadable token)"

