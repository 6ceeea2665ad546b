"""A toy API for wire tests: a few routes, their handlers and tokens signed with a toy key."""

from __future__ import annotations

from daemoncore.security import issue_token
from daemoncore.wire.errors import BadRequest
from daemoncore.wire.route import Route
from daemoncore.wire.server import JsonReply, StreamReply

ECHO = Route("echo", "POST", "/v1/echo/{word}", level="READ")
COUNT = Route("count", "GET", "/v1/count", level="READ", streams=True)
ADMIN = Route("admin", "POST", "/v1/admin", level="ADMINISTRATOR")
BROKEN = Route("broken", "GET", "/v1/broken", level=None)
REFUSE = Route("refuse", "GET", "/v1/refuse", level=None)


KEY = b"toy-pool-signing-key-0123456789abcdef"


def token(identity: str, level: str) -> str:
    """A real token for ``identity`` with one level, signed with the toy key."""
    return issue_token(KEY, identity, [level], now=0)


def echo(request):
    return JsonReply({"word": request.params["word"], "body": request.json(), "who": request.identity.name})


def count(request):
    upto = int(request.query.get("upto", ["3"])[0])
    return StreamReply({"n": n} for n in range(upto))


def admin(request):
    return JsonReply({"ok": True})


def broken(request):
    raise ZeroDivisionError("deep inside")


def refuse(request):
    raise BadRequest("no, because")


TOY_HANDLERS = {ECHO: echo, COUNT: count, ADMIN: admin, BROKEN: broken, REFUSE: refuse}
