"""A verifier remembers tokens it has checked, but never past their expiry."""

import pytest
from twisted.internet.task import Clock

from daemoncore.security import issue_token
from daemoncore.security.errors import TokenError
from daemoncore.wire.auth import token_verifier

KEY = b"k" * 32


def test_a_remembered_token_still_expires_on_time():
    clock = Clock()
    clock.advance(1_000_000)
    verify = token_verifier(KEY, clock)
    token = issue_token(KEY, "alice@pool", ["READ"], lifetime=60, now=clock.seconds())
    assert verify(token).user == "alice"
    assert verify(token) is verify(token)  # the second check comes from memory
    clock.advance(61)
    with pytest.raises(TokenError):
        verify(token)


def test_a_token_signed_with_another_key_is_refused_even_after_a_good_one():
    clock = Clock()
    verify = token_verifier(KEY, clock)
    verify(issue_token(KEY, "alice@pool", ["READ"], now=clock.seconds()))
    with pytest.raises(TokenError):
        verify(issue_token(b"x" * 32, "alice@pool", ["READ"], now=clock.seconds()))
