"""The HTTP connection every daemon serves: Twisted's ``HTTPChannel`` with bounds on
the request line and the headers that answer with a JSON error (414, 431) instead of
dropping the connection, so a client learns what it did wrong."""

from __future__ import annotations

import json

from twisted.logger import Logger
from twisted.web import http

from daemoncore.wire.errors import ApiError, BadRequest, HeadersTooLarge, UriTooLong

_log = Logger()

#: Longest request line (method, path with query, version) a daemon reads.
MAX_REQUEST_LINE_BYTES = 16 * 1024
#: Most bytes of request line plus headers a daemon reads for one request.
MAX_HEADER_BYTES = 32 * 1024
#: Most header lines one request may carry.
MAX_HEADER_COUNT = 100

#: The first byte of every TLS connection: a handshake record.
TLS_HANDSHAKE_RECORD = 0x16

_REASONS = {413: b"Payload Too Large", 414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


def error_response(error: ApiError) -> bytes:
    """A whole HTTP/1.1 response carrying ``error`` as JSON, closing the connection."""
    body = json.dumps(error.body()).encode("utf-8")
    reason = _REASONS.get(error.status, b"Bad Request")
    return (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
            % (error.status, reason, len(body), body))


def refuse_and_close(channel: http.HTTPChannel, error: ApiError) -> None:
    """Answer ``error`` as JSON on ``channel`` before any request object can, then
    close the connection (the rest of what the client sends is not read)."""
    channel.transport.write(error_response(error))
    channel.loseConnection()


class BoundedChannel(http.HTTPChannel):
    """An ``HTTPChannel`` that answers 414 to an overlong request line and 431 to
    overlong or too many headers (Twisted itself closes the connection silently or
    answers a bare 400), and a plain 400 to a TLS handshake on a plain-HTTP port (which
    it would otherwise wait on for a line end until the idle timeout)."""

    MAX_LENGTH = MAX_REQUEST_LINE_BYTES
    totalHeadersSize = MAX_HEADER_BYTES
    maxHeaders = MAX_HEADER_COUNT
    _first_bytes_seen = False

    def dataReceived(self, data: bytes) -> None:  # noqa: N802 - Twisted's interface
        """Refuse a TLS client at once; else parse HTTP as usual."""
        if not self._first_bytes_seen and data:
            self._first_bytes_seen = True
            if data[0] == TLS_HANDSHAKE_RECORD:
                _log.info("refused a TLS handshake from {peer} on a plain-HTTP port",
                          peer=getattr(self.transport.getPeer(), "host", "?"))
                refuse_and_close(self, BadRequest("TLS sent to a plain-HTTP port: this daemon speaks plain HTTP"))
                return
        super().dataReceived(data)

    def _awaiting_request_line(self) -> bool:
        # HTTPChannel keeps this flag private (name-mangled); it is set while the
        # next line is a request line.
        return bool(getattr(self, "_HTTPChannel__first_line", 0))

    def lineLengthExceeded(self, line: bytes) -> None:
        """Answer 414 for a request line, 431 for a header line, over ``MAX_LENGTH``."""
        self._refuse_oversize(len(line))

    def lineReceived(self, line: bytes) -> None:
        """Refuse the request once its head passes ``totalHeadersSize``; else parse on."""
        if self._receivedHeaderSize + len(line) > self.totalHeadersSize:
            self._refuse_oversize(self._receivedHeaderSize + len(line))
            return
        super().lineReceived(line)

    def headerReceived(self, line: bytes) -> bool:
        """Refuse a request with more than ``maxHeaders`` header lines with a 431."""
        if self._receivedHeaderCount >= self.maxHeaders:
            refuse_and_close(self, HeadersTooLarge(
                f"request has more than {self.maxHeaders} header lines; send fewer headers"))
            return False
        return super().headerReceived(line)

    def _refuse_oversize(self, size: int) -> None:
        if self._awaiting_request_line():
            error = UriTooLong(
                f"request line of {size} bytes or more is longer than the limit of {self.MAX_LENGTH} bytes; "
                "send long arguments in a POST body instead of the URL"
            )
        else:
            error = HeadersTooLarge(
                f"request headers of {size} bytes or more exceed the limit of {self.totalHeadersSize} bytes "
                f"(at most {self.MAX_LENGTH} bytes a line)"
            )
        refuse_and_close(self, error)
