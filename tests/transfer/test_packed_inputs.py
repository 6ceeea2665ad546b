"""Packed input streams kept by what their bytes depend on, within a byte budget."""

import base64

from transfer.packed_inputs import PackedInput, PackedInputs, content_key
from transfer.resolve import PackItem


def test_the_least_recently_used_streams_go_when_the_budget_is_spent():
    """A budget for two streams of 300 bytes (each kept with its base64: 700): a third
    pushes out the one used longest ago; one bigger than the budget is given, not kept."""
    kept = PackedInputs(kept_bytes=1400)
    made = []

    def pack(size):
        def make():
            made.append(size)
            return PackedInput(b"x" * size, {"BytesSent": size})
        return make

    first = kept.packed(("a",), pack(300))
    kept.packed(("b",), pack(300))
    assert kept.packed(("a",), pack(300)) is first  # used again: now the newest
    kept.packed(("c",), pack(300))
    assert len(kept) == 2 and kept.packed(("a",), pack(300)) is first
    kept.packed(("b",), pack(300))  # b went: packed again
    kept.packed(("huge",), pack(5000))
    assert made == [300, 300, 300, 300, 5000] and len(kept) == 2


def test_the_key_moves_with_a_files_content_and_the_base64_is_made_once(tmp_path):
    """Rewriting a file changes its key; the base64 is the tar's, the same object each time."""
    path = tmp_path / "in.dat"
    path.write_bytes(b"one")
    items = [PackItem(str(path), "in.dat")]
    before = content_key(items, 1000, None)
    path.write_bytes(b"two")
    assert content_key(items, 1000, None) != before
    assert content_key(items, 1001, None) != content_key(items, 1000, None)
    packed = PackedInput(b"tar bytes", {})
    assert packed.base64() is packed.base64() and base64.b64decode(packed.base64()) == b"tar bytes"
