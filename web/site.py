"""The web site as a ``twisted.web`` resource: routes a request to its page, decides who
the caller is (:mod:`web.access`), builds the page in a bounded pool of worker threads
(never on the reactor), and answers HTML or its JSON twin with a Content-Security-Policy
that allows no inline script. Read-only: the one POST is the login form."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from urllib.parse import parse_qs

from attrs import frozen
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from twisted.internet.defer import DeferredSemaphore
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool
from twisted.web import server
from twisted.web.resource import Resource

from web import access
from web.metrics import WebMetrics
from web.reader import READ_ERRORS, Limits, PoolReader
from web.render import render_page
from web.snapshot import SnapshotKeeper
from web.store import HistoryStore
from web.views import PAGES, NoSuchJob, View, job_view

_log = Logger()

STATIC = os.path.join(os.path.dirname(__file__), "static")
STATIC_FILES = {"refresh.js": b"text/javascript; charset=utf-8", "style.css": b"text/css; charset=utf-8",
                "roost.svg": b"image/svg+xml"}
HTML = b"text/html; charset=utf-8"
METRICS_TYPE = CONTENT_TYPE_LATEST.encode("ascii")
JSON = b"application/json"
#: Every answer carries these: no inline script, no framing, nothing cached.
SECURITY_HEADERS = {
    b"content-security-policy": b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                b"frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    b"x-content-type-options": b"nosniff",
    b"referrer-policy": b"same-origin",  # no-referrer would make browsers post the login form with Origin: null
    b"x-frame-options": b"DENY",
    b"cache-control": b"no-store",
}
JOB_PATH = re.compile(r"/job/(\d{1,10})\.(\d{1,10})")
#: Requests waiting for a worker at most; more are answered 503 at once.
MAX_WAITING = 64


@frozen
class SiteSettings:
    """What the site needs to know of its pool and itself."""

    collector: str
    loopback_allowed: bool
    tls: bool
    limits: Limits = Limits()
    timeout: float = 30.0
    threads: int = 4
    #: METRICS_REQUIRE_AUTHENTICATION, as every daemon reads it for ``/metrics``.
    metrics_require_authentication: bool = True


class WebSite(Resource):
    """Every page of the site; ``owner_token`` gives the token the loopback rule acts with."""

    isLeaf = True

    def __init__(self, settings: SiteSettings, reactor, threadpool: ThreadPool, store: HistoryStore | None,
                 owner_token: Callable[[], str | None], clock: Callable[[], float], snapshots: SnapshotKeeper,
                 check_token: Callable[[str], str | None], metrics: WebMetrics | None = None) -> None:
        super().__init__()
        self._metrics = metrics
        self._snapshots = snapshots
        self._check_token = check_token
        self._settings = settings
        self._reactor = reactor
        self._threads = threadpool
        self._store = store
        self._owner_token = owner_token
        self._clock = clock
        self._workers = DeferredSemaphore(settings.threads)

    # --- dispatch -------------------------------------------------------------
    def render(self, request: server.Request):
        for name, value in SECURITY_HEADERS.items():
            request.setHeader(name, value)
        path = request.path.decode("utf-8", "replace")
        method = request.method.decode("ascii", "replace").upper()
        if path == "/v1/ping" and method == "GET":
            return self._bytes(request, 200, JSON, json.dumps({"daemon": "WEB", "pid": os.getpid()}).encode())
        if path.startswith("/static/"):
            return self._static(request, path[len("/static/"):], method)
        if path == "/favicon.ico":  # asked for by browsers whatever the page's <link rel="icon"> says
            return self._static(request, "roost.svg", method)
        if path == "/login":
            return self._login(request, method)
        if path == "/metrics" and method == "GET" and self._metrics is not None:
            return self._serve_metrics(request)
        if method not in ("GET", "HEAD"):
            return self._error(request, 405, "method not allowed", f"{path} answers GET only: the site is read-only")
        if path == "/":
            return self._redirect(request, b"/pool")
        job = JOB_PATH.fullmatch(path)
        if path not in PAGES and job is None:
            return self._error(request, 404, "not found", f"there is no page {path}; the pages are "
                                                          f"{', '.join(sorted(PAGES))} and /job/<cluster>.<proc>")
        who = access.caller(_headers(request), _peer(request), self._settings.loopback_allowed)
        refused = self._check_token(who.token) if who.token is not None else None
        if not who.allowed or refused is not None:
            self._count(path, 401)
            return self._login_page(request, 401, path, "" if refused is None else
                                    f"the pool refuses this token: {refused}")
        token = who.token if who.token is not None else self._owner_token()
        return self._page(request, path, token, job)

    def _serve_metrics(self, request: server.Request):
        """``/metrics`` as every daemon serves it: a READ token (never the loopback rule,
        which is for people at a browser) unless METRICS_REQUIRE_AUTHENTICATION is false."""
        if self._settings.metrics_require_authentication:
            token = access.caller(_headers(request), _peer(request), loopback_allowed=False).token
            refused = "no token: send Authorization: Bearer <token>" if token is None else self._check_token(token)
            if refused is not None:
                body = json.dumps({"error": "unauthenticated", "message": f"/metrics needs a READ token: {refused}"})
                return self._bytes(request, 401, JSON, body.encode())
        return self._bytes(request, 200, METRICS_TYPE, self._metrics.text())

    # --- pages ----------------------------------------------------------------
    def _page(self, request: server.Request, path: str, token: str | None, job) -> int:
        if len(self._workers.waiting) >= MAX_WAITING:
            return self._error(request, 503, "busy", "the site is answering too many requests; try again shortly")
        now = self._clock()
        if job is not None:
            reader = PoolReader(self._settings.collector, token, self._settings.limits, self._settings.timeout)
            made = self._workers.run(deferToThreadPool, self._reactor, self._threads, job_view, reader,
                                     int(job.group(1)), int(job.group(2)))
        else:
            made = self._snapshots.current()
            made.addCallback(lambda snapshot: self._workers.run(deferToThreadPool, self._reactor, self._threads,
                                                                PAGES[path], snapshot, self._store, now))
        made.addCallback(self._answer_view, request, path)
        made.addErrback(self._answer_failure, request, path)
        return server.NOT_DONE_YET

    def _count(self, path: str, status: int) -> None:
        if self._metrics is not None:
            self._metrics.answered(path.lstrip("/") if path in PAGES else "job", status)

    def _answer_view(self, view: View, request: server.Request, path: str) -> None:
        self._count(path, 200)
        if wants_json(request):
            _finish(request, 200, JSON, json.dumps(view.data, default=str).encode("utf-8"))
            return
        fragment = _arg(request, "fragment") == "1"
        html = render_page(view.template, here=path if path in PAGES else "", collector=self._settings.collector,
                           fragment=fragment, data=view.data, refresh=f"{path}?fragment=1",
                           **({"title": f"Job {view.data['job_id']}"} if view.template == "job" else {}),
                           **view.extra)
        _finish(request, 200, HTML, html.encode("utf-8"))

    def _answer_failure(self, failure, request: server.Request, path: str) -> None:
        from daemoncore.wire.errors import RemoteError

        error = failure.value
        self._count(path, 500 if not isinstance(error, (RemoteError, NoSuchJob, *READ_ERRORS)) else 502)
        if isinstance(error, RemoteError) and error.status in (401, 403):
            self._login_page(request, 401, path, f"the pool refused this token: {error.message}", finish=True)
            return
        if isinstance(error, NoSuchJob):
            self._error(request, 404, "no such job", str(error), finish=True)
            return
        if isinstance(error, READ_ERRORS):
            self._error(request, 502, "pool unreachable", f"the pool did not answer: {error}", finish=True)
            return
        _log.failure("web: building {path} failed", failure, path=path)
        self._error(request, 500, "internal error", f"building {path} failed; see the web daemon's log", finish=True)

    # --- login ----------------------------------------------------------------
    def _login(self, request: server.Request, method: str):
        if method in ("GET", "HEAD"):
            return self._login_page(request, 200, access.safe_next(_arg(request, "next")), "")
        if method != "POST":
            return self._error(request, 405, "method not allowed", "/login answers GET and POST")
        if not _same_origin(request):
            return self._error(request, 403, "cross-site form", "the login form must be sent from this site")
        body = request.content.read(access.MAX_TOKEN_CHARS * 2 + 1024) if request.content is not None else b""
        form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
        token = access.token_from_headers("Bearer " + (form.get("token") or [""])[0].strip(), None)
        target = access.safe_next((form.get("next") or [""])[0])
        if token is None:
            return self._login_page(request, 400, target, "that is not a token: paste the whole token text")
        request.setHeader(b"set-cookie", access.token_cookie(token, self._settings.tls).encode("ascii"))
        return self._redirect(request, target.encode("utf-8"), status=303)

    def _login_page(self, request: server.Request, status: int, target: str, message: str,
                    finish: bool = False):
        if wants_json(request):
            body = {"error": "unauthenticated", "message": message or "this site needs a pool token: send "
                    "Authorization: Bearer <token>, or sign in at /login"}
            return self._bytes(request, status, JSON, json.dumps(body).encode(), finish)
        html = render_page("login", here="/login", collector=self._settings.collector, title="Sign in",
                           next=access.safe_next(target), message=message)
        return self._bytes(request, status, HTML, html.encode("utf-8"), finish)

    # --- plain answers ----------------------------------------------------------
    def _static(self, request: server.Request, name: str, method: str):
        if method not in ("GET", "HEAD") or name not in STATIC_FILES:
            return self._error(request, 404, "not found", f"no static file {name}")
        with open(os.path.join(STATIC, name), "rb") as handle:
            return self._bytes(request, 200, STATIC_FILES[name], handle.read())

    def _redirect(self, request: server.Request, target: bytes, status: int = 302):
        request.setResponseCode(status)
        request.setHeader(b"location", target)
        return b""

    def _error(self, request: server.Request, status: int, code: str, message: str, finish: bool = False):
        if wants_json(request):
            return self._bytes(request, status, JSON, json.dumps({"error": code, "message": message}).encode(), finish)
        html = render_page("error", here="", collector=self._settings.collector, title=code.capitalize(),
                           message=message)
        return self._bytes(request, status, HTML, html.encode("utf-8"), finish)

    @staticmethod
    def _bytes(request: server.Request, status: int, content_type: bytes, body: bytes, finish: bool = False):
        if finish:
            _finish(request, status, content_type, body)
            return None
        request.setResponseCode(status)
        request.setHeader(b"content-type", content_type)
        return body


def _finish(request: server.Request, status: int, content_type: bytes, body: bytes) -> None:
    if request.finished or request._disconnected:
        return
    request.setResponseCode(status)
    request.setHeader(b"content-type", content_type)
    request.setHeader(b"content-length", b"%d" % len(body))
    if request.method != b"HEAD":
        request.write(body)
    request.finish()


def _headers(request: server.Request) -> dict[str, str]:
    return {name.decode("latin-1").lower(): values[0].decode("latin-1")
            for name, values in request.requestHeaders.getAllRawHeaders() if values}


def _peer(request: server.Request) -> str:
    return getattr(request.getClientAddress(), "host", "") or ""


def _arg(request: server.Request, name: str) -> str | None:
    values = (request.args or {}).get(name.encode("ascii"))
    return values[0].decode("utf-8", "replace") if values else None


def wants_json(request: server.Request) -> bool:
    """Whether the request asks for the JSON twin: ``?format=json`` or an Accept that prefers JSON to HTML."""
    if _arg(request, "format") == "json":
        return True
    accept = (request.getHeader(b"accept") or b"").decode("latin-1").lower()
    return "application/json" in accept and "text/html" not in accept


def _same_origin(request: server.Request) -> bool:
    """A form post from this site: its Origin (when sent) names this host."""
    origin = request.getHeader(b"origin")
    if not origin or origin == b"null":
        return origin is None
    host = request.getHeader(b"host") or b""
    return origin.split(b"://", 1)[-1] == host

