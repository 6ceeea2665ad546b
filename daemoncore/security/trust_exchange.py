"""The two strings ``roost pool trust`` passes between central managers: pool A's offer
(its name, collector, CA and a token A signed for ``negotiator@peer-<offer id>``) and
pool B's answer (the same of B, the offer id, and a token B signed for ``flock@A``).

Each is ``roosttrust1.`` and base64url JSON with a ``kind`` and an expiry. Neither side
can check the other's token signature (only the pool that signed it can); what is
checked here is that the string is whole, unexpired and that its token says what the
string says (issuer, identity, scope). The CA is checked by the command against what the
other collector presents. Pure logic, no I/O.
"""

from __future__ import annotations

import base64
import binascii
import json

import attrs

from daemoncore.security.errors import TokenError
from daemoncore.security.host_identity import flock_identity
from daemoncore.security.levels import AuthorizationLevel
from daemoncore.security.pool_trust import PoolTrustError, check_offer_id, check_pool_name
from daemoncore.security.tokens import read_unverified

TRUST_PREFIX = "roosttrust1."
#: How long an offer or an answer may wait to be pasted on the other side.
EXCHANGE_LIFETIME = 24 * 3600.0
#: A string longer than this is refused before decoding (a CA and a token fit well within).
MAX_EXCHANGE_CHARS = 64 * 1024
OFFER, ANSWER = "offer", "answer"
_TEXT_FIELDS = ("kind", "name", "collector", "ca_pem", "token", "offer")


def peer_negotiator(offer_id: str) -> str:
    """The identity the other pool's negotiator uses here after offer ``offer_id``: ``negotiator@peer-<id>``."""
    return f"negotiator@peer-{check_offer_id(offer_id)}"


@attrs.frozen
class TrustMessage:
    """An offer or an answer: who sends it, where its collector is, its CA, the offer it
    belongs to, and the token it gives the other pool."""

    kind: str
    name: str
    collector: str
    ca_pem: str = attrs.field(repr=False)
    offer: str
    token: str = attrs.field(repr=False)
    expires: float

    def expected_identity(self, receiver: str) -> str:
        """The identity the token must name: the peer negotiator (an offer) or ``flock@<receiver>`` (an answer)."""
        return peer_negotiator(self.offer) if self.kind == OFFER else flock_identity(receiver)


def encode_trust_message(message: TrustMessage) -> str:
    """The string printed for the other pool's administrator to paste."""
    body = json.dumps(attrs.asdict(message), separators=(",", ":"))
    return TRUST_PREFIX + base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def decode_trust_message(text: str, receiver: str, now: float) -> TrustMessage:
    """The offer or answer in ``text``, checked for pool ``receiver`` at time ``now``.

    Raises:
        PoolTrustError: not such a string, damaged, expired, sent by ``receiver`` itself,
            or its token does not say what the string says.
    """
    text = text.strip()
    if not text.startswith(TRUST_PREFIX):
        raise PoolTrustError(f"this is not a trust offer or answer (it should start with {TRUST_PREFIX!r}); "
                             f"make an offer on the other central manager with `roost pool trust`")
    if len(text) > MAX_EXCHANGE_CHARS:
        raise PoolTrustError(f"the string is {len(text)} characters, more than {MAX_EXCHANGE_CHARS}: not a trust string")
    encoded = text[len(TRUST_PREFIX):]
    try:
        body = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (binascii.Error, ValueError):
        raise PoolTrustError("the string is damaged (not base64url JSON after the prefix); copy it again") from None
    message = _message_of(body)
    if message.expires <= now:
        raise PoolTrustError(f"this {message.kind} from pool {message.name} expired; "
                             f"ask its administrator for a new one (`roost pool trust`)")
    if message.name == receiver:
        raise PoolTrustError(f"this {message.kind} comes from pool {receiver}, this pool itself")
    _check_token(message, receiver)
    return message


def _message_of(body: object) -> TrustMessage:
    if not isinstance(body, dict) or not all(isinstance(body.get(name), str) for name in _TEXT_FIELDS) \
            or not isinstance(body.get("expires"), (int, float)) or body["kind"] not in (OFFER, ANSWER):
        raise PoolTrustError("the string lacks a part (kind, name, collector, CA, offer, token or expiry); "
                             "copy it again")
    check_pool_name(body["name"])
    check_offer_id(body["offer"])
    return TrustMessage(**{name: body[name] for name in (*_TEXT_FIELDS, "expires")})


def _check_token(message: TrustMessage, receiver: str) -> None:
    try:
        claims = read_unverified(message.token)
    except TokenError as exc:
        raise PoolTrustError(f"the {message.kind}'s token is damaged: {exc}") from None
    expected = message.expected_identity(receiver)
    if claims.issuer != message.name or claims.name != expected or AuthorizationLevel.DAEMON not in claims.scopes:
        raise PoolTrustError(f"the {message.kind}'s token does not match it (it is for {claims.name} from "
                             f"{claims.issuer}, expected {expected} from {message.name} with DAEMON): "
                             f"the string was altered or mixed up; copy it again")
