"""Tests for daemoncore.wire.channel: an overlong request line or header section is
answered with a JSON 414 or 431 instead of a dropped connection."""

import pytest

from daemoncore.wire.channel import MAX_HEADER_BYTES, MAX_HEADER_COUNT, MAX_REQUEST_LINE_BYTES
from daemoncore.wire.in_memory import encode_request, exchange
from tests.wire.toy_api import token


@pytest.mark.parametrize("chunk_size", [4096, 65536])
def test_request_line_over_16_kib_is_414_with_json_body(toy_site, clock, chunk_size):
    """A URL past 16 KiB gets 414 with a JSON error naming the limit, then the connection closes."""
    raw = encode_request("GET", "/v1/refuse?q=" + "a" * (MAX_REQUEST_LINE_BYTES + 10))
    response, transport = exchange(toy_site, raw, clock, chunk_size)
    assert response.status == 414
    assert response.json()["error"] == "uri_too_long"
    assert str(MAX_REQUEST_LINE_BYTES) in response.json()["message"]
    assert transport.disconnecting


def test_request_line_that_never_ends_is_414(toy_site, clock):
    """A request line still without its end after 16 KiB is answered without waiting for more."""
    response, _ = exchange(toy_site, b"GET /" + b"a" * (MAX_REQUEST_LINE_BYTES + 100), clock)
    assert response.status == 414


def test_one_header_line_over_the_limit_is_431(toy_site, clock):
    """A single header line longer than a request line may be is answered 431."""
    raw = encode_request("GET", "/v1/refuse", headers={"X-Big": "b" * (MAX_REQUEST_LINE_BYTES + 1)})
    response, _ = exchange(toy_site, raw, clock)
    assert response.status == 431
    assert response.json()["error"] == "headers_too_large"


def test_headers_adding_up_past_the_limit_are_431(toy_site, clock):
    """Many medium headers that together pass the header budget are answered 431."""
    headers = {f"X-Part-{n}": "c" * 8000 for n in range(MAX_HEADER_BYTES // 8000 + 1)}
    response, _ = exchange(toy_site, encode_request("GET", "/v1/refuse", headers=headers), clock)
    assert response.status == 431


def test_too_many_header_lines_are_431(toy_site, clock):
    """More header lines than allowed are answered 431 naming the count."""
    headers = {f"X-N{n}": "1" for n in range(MAX_HEADER_COUNT + 1)}
    response, _ = exchange(toy_site, encode_request("GET", "/v1/refuse", headers=headers), clock)
    assert response.status == 431
    assert str(MAX_HEADER_COUNT) in response.json()["message"]


def test_long_but_allowed_request_line_is_served(toy_site, clock):
    """A 15 KiB URL is under the limit and reaches its handler."""
    raw = encode_request("POST", "/v1/echo/" + "w" * 15_000, b"{}", token=token("a@p", "READ"))
    response, _ = exchange(toy_site, raw, clock)
    assert response.status == 200
    assert response.json()["word"] == "w" * 15_000


def test_site_keeps_serving_after_a_414(toy_site, clock):
    """A refused request line does not stop the site answering the next connection."""
    exchange(toy_site, encode_request("GET", "/" + "a" * 20_000), clock)
    response, _ = exchange(toy_site, encode_request("GET", "/v1/refuse"), clock)
    assert response.status == 400 and response.json()["error"] == "bad_request"
