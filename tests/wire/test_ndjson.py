"""Tests for daemoncore.wire.ndjson."""

import pytest

from daemoncore.wire.ndjson import LineDecoder, encode_line


@pytest.mark.parametrize("chunk_size", range(1, 10))
def test_decoder_rebuilds_objects_from_any_chunking(chunk_size):
    """Objects split across chunks of any size come back whole and in order."""
    data = b"".join(encode_line({"n": n, "s": "é"}) for n in range(5))
    decoder = LineDecoder()
    out = []
    for start in range(0, len(data), chunk_size):
        out.extend(decoder.feed(data[start:start + chunk_size]))
    out.extend(decoder.finish())
    assert out == [{"n": n, "s": "é"} for n in range(5)]


def test_bad_line_names_the_line():
    """A line that is not JSON raises ValueError quoting it."""
    with pytest.raises(ValueError, match="nope"):
        LineDecoder().feed(b"nope\n")
