"""Newline-delimited JSON: one compact JSON object per line, as queries stream them."""

from __future__ import annotations

import json
from collections.abc import Iterator

_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def encode_line(obj: object) -> bytes:
    """One object as a compact JSON line ending in a newline."""
    return _ENCODE(obj).encode("utf-8") + b"\n"


class LineDecoder:
    """Splits a byte stream arriving in arbitrary chunks into decoded JSON objects."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[object]:
        """The objects completed by ``chunk``.

        Raises:
            ValueError: a complete line is not valid JSON.
        """
        data = self._pending + chunk
        *lines, self._pending = data.split(b"\n")
        return [_decode(line) for line in lines if line.strip()]

    def finish(self) -> list[object]:
        """The last object if the stream did not end with a newline.

        Raises:
            ValueError: the trailing bytes are not valid JSON.
        """
        rest, self._pending = self._pending, b""
        return [_decode(rest)] if rest.strip() else []


def decode_lines(chunks: Iterator[bytes]) -> Iterator[object]:
    """Every object in a stream of byte chunks, lazily.

    Raises:
        ValueError: a line is not valid JSON.
    """
    decoder = LineDecoder()
    for chunk in chunks:
        yield from decoder.feed(chunk)
    yield from decoder.finish()


def _decode(line: bytes) -> object:
    try:
        return json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"invalid NDJSON line {line[:80]!r}: {exc}") from None
