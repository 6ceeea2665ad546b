"""Small input streams packed once for the many jobs that send the same files.

The jobs of a cluster mostly send the same executable and input files, and a small
input goes whole inside each job's ACTIVATE: reading, checksumming and tarring it
again for every job was a tenth of a schedd's work on short jobs. A packed stream is
a function of its members' names, contents, modes and modification times, so it is
kept under those: each file's device, inode, size, modification and change times
(a file's content cannot change without its change time moving), its mode and the
name it travels under, with the account that read it (another account may not be
allowed to) and the stream's size limit. The files are stat'ed again for every job;
only their bytes are not read again.
"""

from __future__ import annotations

import base64
import os
from collections import OrderedDict
from collections.abc import Callable, Hashable

import attrs

from transfer.resolve import PackItem

#: At most this many bytes of packed streams (with their base64) are kept; the least
#: recently used go first.
KEPT_BYTES = 32 * 1024 * 1024


def _kept_size(packed: "PackedInput") -> int:
    """What keeping ``packed`` costs: its tar and, once made, the base64 of it."""
    return len(packed.tar) * 7 // 3


@attrs.define
class PackedInput:
    """One input stream packed whole: its tar and the job's transfer counts for it."""

    tar: bytes
    counts: dict[str, int]
    _text: str | None = attrs.field(default=None, repr=False)

    def base64(self) -> str:
        """The tar in base64, as ACTIVATE carries it (made once)."""
        if self._text is None:
            self._text = base64.b64encode(self.tar).decode("ascii")
        return self._text


def content_key(items: list[PackItem], account: Hashable, max_bytes: int | None) -> tuple:
    """What a packed stream of ``items`` is a function of, read now (with the rights
    of the caller, who holds ``account``'s).

    Raises:
        OSError: a member cannot be stat'ed.
    """
    members = []
    for item in items:
        st = os.stat(item.source)
        members.append((item.source, item.name, item.is_dir, st.st_dev, st.st_ino, st.st_size,
                        st.st_mtime_ns, st.st_ctime_ns, st.st_mode))
    return account, max_bytes, tuple(members)


class PackedInputs:
    """Packed input streams by :func:`content_key`, at most :data:`KEPT_BYTES` of them."""

    def __init__(self, kept_bytes: int = KEPT_BYTES) -> None:
        self._kept_bytes = kept_bytes
        self._packed: OrderedDict[tuple, PackedInput] = OrderedDict()
        self._bytes = 0

    def packed(self, key: tuple, pack: Callable[[], PackedInput]) -> PackedInput:
        """The stream kept under ``key``, else ``pack()``'s, kept from now on (when it fits)."""
        found = self._packed.get(key)
        if found is not None:
            self._packed.move_to_end(key)
            return found
        made = pack()
        if _kept_size(made) <= self._kept_bytes:
            self._packed[key] = made
            self._bytes += _kept_size(made)
            while self._bytes > self._kept_bytes:
                _, dropped = self._packed.popitem(last=False)
                self._bytes -= _kept_size(dropped)
        return made

    def __len__(self) -> int:
        return len(self._packed)


__all__ = ["KEPT_BYTES", "PackedInput", "PackedInputs", "content_key"]
