"""Who may see the site: the rules of web.access, and the site answering the login page
and no data to a caller they refuse."""

from __future__ import annotations

import json

from prometheus_client import CollectorRegistry
from twisted.internet.address import IPv4Address
from twisted.python.threadpool import ThreadPool
from twisted.web.test.requesthelper import DummyRequest

from web import access
from web.metrics import WebMetrics
from web.site import SiteSettings, WebSite
from web.snapshot import SnapshotKeeper


def test_a_bearer_header_or_the_cookie_carries_the_token():
    assert access.caller({"authorization": "Bearer abc.def"}, "198.18.0.1", False) == access.Caller(token="abc.def")
    assert access.caller({"cookie": "x=1; roost_token=abc.def"}, "198.18.0.1", False).token == "abc.def"
    assert access.caller({}, "198.18.0.1", False).allowed is False


def test_the_loopback_rule_lets_in_only_loopback_callers_when_allowed():
    assert access.caller({}, "127.0.0.1", True) == access.Caller(owner=True)
    assert access.caller({}, "::1", True).owner
    assert not access.caller({}, "198.18.0.1", True).allowed
    assert not access.caller({}, "127.0.0.1", False).allowed
    assert access.loopback_default("127.0.0.1", bind_all=False) is True
    assert access.loopback_default("198.18.0.1", bind_all=False) is False
    assert access.loopback_default("127.0.0.1", bind_all=True) is False


def test_odd_tokens_are_no_tokens():
    assert access.token_from_headers("Bearer " + "a" * (access.MAX_TOKEN_CHARS + 1), None) is None
    assert access.token_from_headers("Bearer a\x00b", None) is None
    assert access.token_from_headers(None, 'roost_token="a b"') is None
    assert access.token_from_headers("Basic dXNlcg==", None) is None
    assert access.token_from_headers("Bearer abc;Domain=evil.example", None) is None


def test_the_login_page_sends_back_only_to_this_site():
    assert access.safe_next("/job/1.0") == "/job/1.0"
    for bad in ("https://evil.example/", "//evil.example/", "/\\evil", "", None):
        assert access.safe_next(bad) == "/pool"
    assert access.token_cookie("t", secure=True) == "roost_token=t; Path=/; HttpOnly; SameSite=Strict; Secure"


def site(loopback_allowed=False, tls=True):
    return WebSite(SiteSettings("127.0.0.1:1", loopback_allowed=loopback_allowed, tls=tls), None,
                   ThreadPool(), None, lambda: None, lambda: 0.0, SnapshotKeeper(None, None, None, 1.0),
                   lambda token: None if token == "good.token" else "token rejected: bad signature")


def request(path, method=b"GET", peer="198.18.0.7", headers=None, body=b""):
    req = DummyRequest(path.split("?")[0].lstrip("/").split("/"))
    req.path = path.split("?")[0].encode()
    req.uri = path.encode()
    req.method = method
    req.client = IPv4Address("TCP", peer, 50000)
    if "?" in path:
        key, _, value = path.split("?", 1)[1].partition("=")
        req.args = {key.encode(): [value.encode()]}
    for name, value in (headers or {}).items():
        req.requestHeaders.setRawHeaders(name.encode(), [value.encode()])
    from io import BytesIO
    req.content = BytesIO(body)
    return req


def answer(resource, req):
    body = resource.render(req)
    return req.responseCode or 200, body if isinstance(body, bytes) else b"".join(req.written)


def test_without_a_token_every_page_answers_the_login_page_and_no_data():
    for path in ("/pool", "/gpus", "/queue", "/fairshare", "/flocking", "/job/1.0"):
        req = request(path)
        status, body = answer(site(), req)
        assert status == 401 and b'<form id="login"' in body and b'id="slots-by-state"' not in body
        assert b"script-src 'self'" in req.responseHeaders.getRawHeaders(b"content-security-policy")[0]
    req = request("/pool?format=json")
    status, body = answer(site(), req)
    assert status == 401 and json.loads(body)["error"] == "unauthenticated"


def test_a_token_the_pool_refuses_gets_the_login_page_with_the_reason():
    status, body = answer(site(), request("/pool", headers={"authorization": "Bearer bad.token"}))
    assert status == 401 and b'<form id="login"' in body and b"bad signature" in body


def test_login_sets_a_strict_http_only_cookie_and_goes_back():
    req = request("/login", b"POST", headers={"origin": "http://web.example", "host": "web.example"},
                  body=b"token=abc.def&next=%2Fjob%2F1.0")
    status, _ = answer(site(tls=True), req)
    assert status == 303 and req.responseHeaders.getRawHeaders(b"location") == [b"/job/1.0"]
    assert req.responseHeaders.getRawHeaders(b"set-cookie") == [
        b"roost_token=abc.def; Path=/; HttpOnly; SameSite=Strict; Secure"]


def test_login_from_another_site_or_without_a_token_changes_nothing():
    req = request("/login", b"POST", headers={"origin": "http://evil.example", "host": "web.example"},
                  body=b"token=abc.def")
    assert answer(site(), req)[0] == 403 and not req.responseHeaders.hasHeader(b"set-cookie")
    req = request("/login", b"POST", body=b"token=")
    assert answer(site(), req)[0] == 400 and not req.responseHeaders.hasHeader(b"set-cookie")
    req = request("/login", b"POST", body=b"token=a%3B+Domain%3Devil.example")
    assert answer(site(), req)[0] == 400 and not req.responseHeaders.hasHeader(b"set-cookie")


def test_the_site_is_read_only_and_names_its_pages():
    assert answer(site(), request("/pool", b"POST"))[0] == 405
    status, body = answer(site(), request("/etc/passwd"))
    assert status == 404 and b"/pool" in body
    assert answer(site(), request("/job/1.0<script>"))[0] == 404
    assert answer(site(), request("/static/../site.py"))[0] == 404


def test_the_sites_icon_is_served_without_a_token_where_browsers_ask_for_it():
    """Browsers fetch /favicon.ico whatever a page links; a 404 there is a console error on every page."""
    for path in ("/favicon.ico", "/static/roost.svg"):
        req = request(path)
        status, body = answer(site(), req)
        assert status == 200 and body.startswith(b"<svg")
        assert req.responseHeaders.getRawHeaders(b"content-type") == [b"image/svg+xml"]


def metrics_site(require_authentication=True):
    return WebSite(SiteSettings("127.0.0.1:1", loopback_allowed=True, tls=False,
                                metrics_require_authentication=require_authentication), None,
                   ThreadPool(), None, lambda: None, lambda: 0.0, SnapshotKeeper(None, None, None, 1.0),
                   lambda token: None if token == "good.token" else "token rejected: bad signature",
                   metrics=WebMetrics(CollectorRegistry(), lambda: 0.25))


def test_metrics_want_a_read_token_even_from_loopback_as_every_daemons_do():
    """The loopback rule lets the owner's browser in, not a scraper: /metrics answers 401
    without a token or with a refused one, and the registry's text with a good one."""
    assert answer(metrics_site(), request("/metrics", peer="127.0.0.1"))[0] == 401
    status, body = answer(metrics_site(), request("/metrics", headers={"authorization": "Bearer bad.token"}))
    assert status == 401 and b"bad signature" in body
    status, body = answer(metrics_site(), request("/metrics", headers={"authorization": "Bearer good.token"}))
    assert status == 200 and b"roost_web_last_pool_read_duration_seconds 0.25" in body


def test_metrics_are_open_when_metrics_require_authentication_is_false():
    status, body = answer(metrics_site(require_authentication=False), request("/metrics"))
    assert status == 200 and b"roost_web_last_pool_read_duration_seconds 0.25" in body


def test_metrics_count_pages_by_status():
    """A refused page is counted under its name with 401: operators see refused scrapes of the site."""
    site = metrics_site()
    answer(site, request("/gpus"))
    status, body = answer(site, request("/metrics", headers={"authorization": "Bearer good.token"}))
    assert 'roost_web_pages_total{page="gpus",status="401"} 1.0' in body.decode()
