"""Authorization levels: which level implies which, and the scope claim."""

from __future__ import annotations

import pytest

from daemoncore.security import AuthorizationLevel as L
from daemoncore.security import MalformedTokenError
from daemoncore.security.levels import parse_scope_claim, scope_claim


@pytest.mark.parametrize(("held", "granted"), [
    (L.READ, {L.READ}),
    (L.WRITE, {L.READ, L.WRITE}),
    (L.ADMINISTRATOR, {L.READ, L.WRITE, L.ADMINISTRATOR}),
    (L.DAEMON, {L.READ, L.WRITE, L.DAEMON}),
])
def test_each_level_implies_exactly_these(held, granted):
    """WRITE implies READ; ADMINISTRATOR and DAEMON imply WRITE but not each other."""
    assert {level for level in L if held.implies(level)} == granted
    assert held.implied() == granted


def test_parse_level_ignores_case_and_rejects_unknown_names():
    """Level names are read in any case; an unknown one lists the four names."""
    assert L.parse(" administrator ") is L.ADMINISTRATOR
    with pytest.raises(ValueError, match="expected one of READ, WRITE, ADMINISTRATOR, DAEMON"):
        L.parse("OWNER")


def test_scope_claim_round_trips_in_level_order():
    """Levels become ``roost:/LEVEL`` words, in READ..DAEMON order, and back."""
    claim = scope_claim([L.DAEMON, L.READ, L.READ])
    assert claim == "roost:/READ roost:/DAEMON"
    assert parse_scope_claim(claim) == {L.READ, L.DAEMON}


@pytest.mark.parametrize("claim", [["roost:/READ"], "condor:/READ", "roost:/ROOT"])
def test_bad_scope_claims_are_malformed(claim):
    """A scope claim that is not a string of known ``roost:/`` levels is rejected."""
    with pytest.raises(MalformedTokenError):
        parse_scope_claim(claim)
