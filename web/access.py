"""Who may see the site, as pure rules: a request carries the user's token (``Authorization:
Bearer`` or the ``roost_token`` cookie the login form sets), or, on a loopback-only pool
with ``WEB_ALLOW_LOOPBACK_WITHOUT_TOKEN``, comes from this machine and is let in as the
pool's owner. Everything else gets the login page and no pool data.

The token is not judged here: it is sent on to the daemons, which check it as they
check any client's, so the site can never show more than the token may read."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie

from attrs import frozen

COOKIE = "roost_token"
#: A token longer than this is refused before it goes anywhere.
MAX_TOKEN_CHARS = 8192
#: What a token is made of (a JWT: base64url parts joined by dots), so it is safe in a cookie.
TOKEN_TEXT = re.compile(r"[A-Za-z0-9_.=-]+")


@frozen
class Caller:
    """What the site acts with for one request: the caller's ``token``, or ``owner`` (the
    loopback rule let them in as the pool's owner); neither means the login page."""

    token: str | None = None
    owner: bool = False

    @property
    def allowed(self) -> bool:
        """Whether the request may see pool data."""
        return self.owner or self.token is not None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1)."""
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return host == "localhost"


def token_from_headers(authorization: str | None, cookie: str | None) -> str | None:
    """The token a request carries: a Bearer header first, else the ``roost_token`` cookie;
    None when it has none, or one too long or with characters no token has."""
    token = None
    if authorization and authorization[:7].lower() == "bearer ":
        token = authorization[7:].strip()
    elif cookie:
        try:
            jar = SimpleCookie(cookie)
        except CookieError:
            return None
        if COOKIE in jar:
            token = jar[COOKIE].value.strip()
    if not token or len(token) > MAX_TOKEN_CHARS or not TOKEN_TEXT.fullmatch(token):
        return None
    return token


def caller(headers: Mapping[str, str], peer_host: str, loopback_allowed: bool) -> Caller:
    """Who the request in ``headers`` (names in lower case) from ``peer_host`` acts as."""
    token = token_from_headers(headers.get("authorization"), headers.get("cookie"))
    if token is not None:
        return Caller(token=token)
    if loopback_allowed and is_loopback(peer_host):
        return Caller(owner=True)
    return Caller()


def loopback_default(interface: str, bind_all: bool) -> bool:
    """``WEB_ALLOW_LOOPBACK_WITHOUT_TOKEN``'s default: true on a pool that listens on loopback only."""
    return not bind_all and is_loopback(interface)


def token_cookie(token: str, secure: bool) -> str:
    """The ``Set-Cookie`` value that stores ``token``: HttpOnly, SameSite=Strict, Secure under TLS."""
    return f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")


def safe_next(target: str | None) -> str:
    """Where the login form sends the user back: a path on this site, never another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/pool"
    return target[:512]
