"""The errors of the wire protocol: what a handler raises to answer with a JSON error,
and what a client raises when a daemon answered with one or could not be reached."""

from __future__ import annotations

import json


class ApiError(Exception):
    """A failure a handler reports to the client as ``{"error": code, "message": ...}``."""

    status = 500
    code = "internal"

    def __init_subclass__(cls, status: int = 500, code: str = "internal", **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.status = status
        cls.code = code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict:
        """The JSON error body sent to the client."""
        return {"error": self.code, "message": self.message}


class BadRequest(ApiError, status=400, code="bad_request"):
    """The request is malformed or asks for something invalid (400)."""


class Unauthenticated(ApiError, status=401, code="unauthenticated"):
    """The request carries no valid token (401)."""


class Forbidden(ApiError, status=403, code="forbidden"):
    """The caller's identity lacks the authorization level the route needs (403)."""


class NotFound(ApiError, status=404, code="not_found"):
    """No route or no object by that name (404)."""


class MethodNotAllowed(ApiError, status=405, code="method_not_allowed"):
    """The path exists but not with that HTTP method (405)."""


class Conflict(ApiError, status=409, code="conflict"):
    """The request conflicts with the current state (409)."""


class TooLarge(ApiError, status=413, code="too_large"):
    """The request body is larger than the daemon accepts (413)."""


class UriTooLong(ApiError, status=414, code="uri_too_long"):
    """The request line (the URL) is longer than the daemon reads (414)."""


class HeadersTooLarge(ApiError, status=431, code="headers_too_large"):
    """The request's headers are longer or more numerous than the daemon reads (431)."""


class RemoteError(Exception):
    """A daemon answered with a JSON error; carries its status, code and message."""

    def __init__(self, status: int, code: str, message: str, url: str = "") -> None:
        super().__init__(f"{url}: {code}: {message}" if url else f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.url = url


class Unreachable(Exception):
    """No daemon answered at the address (refused, timed out or cut off)."""


def remote_error_from(status: int, data: bytes, url: str, reason: str = "") -> RemoteError:
    """The ``RemoteError`` for an error answer, whether or not its body is our JSON."""
    try:
        body = json.loads(data)
        return RemoteError(status, str(body["error"]), str(body["message"]), url)
    except (ValueError, KeyError, TypeError):
        text = data.decode("utf-8", "replace").strip()[:200] or reason
        return RemoteError(status, "http_error", text, url)
