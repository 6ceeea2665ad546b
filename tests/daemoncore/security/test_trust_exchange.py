"""Tests for daemoncore.security.trust_exchange: the offer and answer strings of roost pool trust."""

import base64
import json

import attrs
import pytest

from daemoncore.security import issue_token
from daemoncore.security.pool_trust import PoolTrustError
from daemoncore.security.trust_exchange import (
    ANSWER,
    OFFER,
    TRUST_PREFIX,
    TrustMessage,
    decode_trust_message,
    encode_trust_message,
    peer_negotiator,
)
from tests.daemoncore.security.test_pool_trust import CA_PEM

KEY_A = b"pool-a-signing-key-0123456789abcdef0123"
KEY_B = b"pool-b-signing-key-0123456789abcdef0123"
OFFER_ID = "3f9a0b1c5d6e7f80"
OFFER_MSG = TrustMessage(OFFER, "poolA", "198.18.0.2:9618?tls=1", CA_PEM, OFFER_ID,
                         issue_token(KEY_A, peer_negotiator(OFFER_ID), ["DAEMON"], issuer="poolA", now=0), 1000.0)
ANSWER_MSG = TrustMessage(ANSWER, "poolB", "198.18.1.2:9618?tls=1", CA_PEM, OFFER_ID,
                          issue_token(KEY_B, "flock@poolA", ["DAEMON"], issuer="poolB", now=0), 1000.0)


@pytest.mark.parametrize(("message", "receiver"), [(OFFER_MSG, "poolB"), (ANSWER_MSG, "poolA")])
def test_a_string_reads_back_as_written(message, receiver):
    text = encode_trust_message(message)
    assert text.startswith(TRUST_PREFIX)
    assert decode_trust_message(text, receiver, now=999) == message


def test_an_expired_offer_is_refused():
    with pytest.raises(PoolTrustError, match="offer from pool poolA expired"):
        decode_trust_message(encode_trust_message(OFFER_MSG), "poolB", now=1000)


def test_an_offer_from_this_pool_itself_is_refused():
    with pytest.raises(PoolTrustError, match="this pool itself"):
        decode_trust_message(encode_trust_message(OFFER_MSG), "poolA", now=0)


@pytest.mark.parametrize(("changes", "receiver"), [
    ({"name": "poolX"}, "poolB"),                     # the sender renamed: the token is still poolA's
    ({"offer": "00000000aaaaaaaa"}, "poolB"),         # another offer id than the token's identity
])
def test_a_string_whose_token_says_otherwise_is_refused(changes, receiver):
    altered = encode_trust_message(attrs.evolve(OFFER_MSG, **changes))
    with pytest.raises(PoolTrustError, match="token does not match it"):
        decode_trust_message(altered, receiver, now=0)


def test_an_answer_for_another_pool_is_refused():
    """B's flock token names flock@poolA: pool C cannot take it as its own."""
    with pytest.raises(PoolTrustError, match="expected flock@poolC"):
        decode_trust_message(encode_trust_message(ANSWER_MSG), "poolC", now=0)


@pytest.mark.parametrize(("text", "words"), [
    ("roostjoin1.abc", "not a trust offer or answer"),
    (TRUST_PREFIX + "!!!", "damaged"),
    (TRUST_PREFIX + base64.urlsafe_b64encode(json.dumps({"kind": "offer"}).encode()).decode(), "lacks a part"),
    (TRUST_PREFIX + "A" * 70000, "more than"),
])
def test_a_damaged_string_is_refused_saying_why(text, words):
    with pytest.raises(PoolTrustError, match=words):
        decode_trust_message(text, "poolB", now=0)
