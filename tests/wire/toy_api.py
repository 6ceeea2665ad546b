"""A toy API for wire tests: a few routes, their handlers and a stand-in token verifier."""

from __future__ import annotations

from attrs import frozen
from twisted.internet.task import Clock

from daemoncore.wire.errors import BadRequest
from daemoncore.wire.route import AUTHORIZATION_LEVELS, Route
from daemoncore.wire.server import JsonReply, StreamReply

ECHO = Route("echo", "POST", "/v1/echo/{word}", level="READ")
COUNT = Route("count", "GET", "/v1/count", level="READ", streams=True)
ADMIN = Route("admin", "POST", "/v1/admin", level="ADMINISTRATOR")
BROKEN = Route("broken", "GET", "/v1/broken", level=None)
REFUSE = Route("refuse", "GET", "/v1/refuse", level=None)


@frozen
class StandInIdentity:
    """An identity with one level; stands in until daemoncore.security lands."""

    subject: str
    level: str

    def allows(self, level) -> bool:
        name = getattr(level, "name", level)
        return AUTHORIZATION_LEVELS.index(self.level) >= AUTHORIZATION_LEVELS.index(name)


def stand_in_verify(token: str) -> StandInIdentity:
    """Tokens look like ``subject:LEVEL``; anything else is rejected."""
    subject, _, level = token.partition(":")
    if level not in AUTHORIZATION_LEVELS:
        raise ValueError("signature does not match")
    return StandInIdentity(subject, level)


def echo(request):
    return JsonReply({"word": request.params["word"], "body": request.json(), "who": request.identity.subject})


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
