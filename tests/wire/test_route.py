"""Tests for daemoncore.wire.route."""

import pytest

from daemoncore.wire.route import Route


def test_path_fills_and_quotes_placeholders():
    """A placeholder value with a slash or space is quoted into one segment."""
    route = Route("q", "POST", "/v1/ads/{ad_type}/query")
    assert route.path(ad_type="My Type/x") == "/v1/ads/My%20Type%2Fx/query"


def test_match_returns_unquoted_values():
    """Matching a concrete path gives back the placeholder values unquoted."""
    route = Route("q", "POST", "/v1/ads/{ad_type}/query")
    assert route.match("/v1/ads/Machine/query") == {"ad_type": "Machine"}
    assert route.match("/v1/ads/Machine") is None


def test_unknown_level_is_refused():
    """A route cannot declare a level that does not exist."""
    with pytest.raises(ValueError, match="SUPERUSER"):
        Route("x", "GET", "/v1/x", level="SUPERUSER")
