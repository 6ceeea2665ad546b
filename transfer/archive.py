"""Transfer streams: a plan's files packed into a tar stream and unpacked into a
sandbox or into ``Iwd`` with remaps.

The stream is plain POSIX (pax) tar produced chunk by chunk, so memory stays
bounded whatever the file sizes, and it is deterministic: the same files give the
same bytes (owner 0, sorted walk, the file's own mtime). Each file carries its
SHA-256 in a pax header; the receiver writes to a temporary name and only renames
it into place once size and checksum match. Members that would escape their
destination, links, devices and unexpected names are refused.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tarfile
from typing import BinaryIO, Callable, Iterable, Iterator

from attrs import define, field, frozen

from transfer.errors import TransferError, TransferLimitError, UnsafeArchiveError
from transfer.plan import OutputPlan, is_url
from transfer.resolve import PackItem, regular_file_size

#: The pax header holding a member's SHA-256 hex digest.
CHECKSUM_HEADER = "ROOST.sha256"
CHUNK_SIZE = 1 << 16
#: Ending of the temporary name a received file is written under until it is complete.
PART_SUFFIX = ".roost-part"
_BLOCK = tarfile.BLOCKSIZE
_EXECUTABLE_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


@frozen
class TransferStats:
    """What one stream carried: counts, payload bytes, and the outputs written to a
    staging directory because their target is a URL (path, url)."""

    files: int = 0
    directories: int = 0
    bytes: int = 0
    uploads: tuple[tuple[str, str], ...] = ()


@frozen
class Placement:
    """Where an unpacked member goes: ``relative`` under the existing directory
    ``base``, which no symlink below ``base`` may redirect; ``url`` when the file is
    only staged there to be uploaded."""

    base: str
    relative: str
    url: str | None = None


Place = Callable[[str], "Placement | None"]


# One stream's running totals, filled in while its chunks are consumed.
@define
class PackStream:
    """An iterable of tar chunks for ``items``; ``stats`` is complete once it is exhausted."""

    items: list[PackItem]
    max_bytes: int | None = None
    job: str = "?"
    stats: TransferStats = field(factory=TransferStats)
    #: False leaves out the end blocks, for a stream another one continues.
    end: bool = True

    def __iter__(self) -> Iterator[bytes]:
        files = dirs = total = 0
        for item in self.items:
            if item.is_dir:
                yield _header(item, size=0, digest=None)
                dirs += 1
            else:
                # the limit is checked on the size the file claims before a byte is read,
                # then again on what was really read (a file can grow meanwhile)
                self._check_limit(item, total + regular_file_size(self.job, item.source))
                size, digest = _digest(item.source)
                self._check_limit(item, total + size)
                yield _header(item, size=size, digest=digest)
                yield from _body(self.job, item, size, digest)
                files, total = files + 1, total + size
            # kept current member by member: a reader may stop before the end blocks
            self.stats = TransferStats(files, dirs, total)
        if self.end:
            yield b"\0" * (2 * _BLOCK)

    def _check_limit(self, item: PackItem, total: int) -> None:
        if self.max_bytes is not None and total > self.max_bytes:
            raise TransferLimitError(
                f"job {self.job}: transfer is larger than the limit of {self.max_bytes} "
                f"bytes (reached at {item.name!r})")


def pack(items: list[PackItem], out: BinaryIO, *, max_bytes: int | None = None,
         job: str = "?") -> TransferStats:
    """Write ``items`` as one tar stream to ``out``.

    Raises:
        TransferLimitError: the files add up to more than ``max_bytes``.
        TransferError: a file changed or vanished while being sent.
    """
    stream = PackStream(items, max_bytes, job)
    for chunk in stream:
        out.write(chunk)
    return stream.stats


def unpack(stream: BinaryIO, place: Place, *, max_bytes: int | None = None,
           max_files: int | None = None, job: str = "?") -> TransferStats:
    """Read a tar stream to its end and write each member where ``place`` says
    (skipping those it maps to None), checking names, types, sizes and checksums.

    Raises:
        UnsafeArchiveError: a member escapes, is a link or device, or fails its checksum.
        TransferLimitError: more than ``max_bytes`` payload or ``max_files`` members.
    """
    files = dirs = total = 0
    uploads = []
    try:
        archive = tarfile.open(fileobj=stream, mode="r|", encoding="utf-8")
        for member in archive:
            name = _member_name(job, member)
            if max_files is not None and files + dirs >= max_files:
                raise TransferLimitError(f"job {job}: transfer holds more than {max_files} files")
            where = place(name)
            if where is None:
                continue
            if member.isdir():
                _safe_directory(job, where.base, where.relative)
                dirs += 1
                continue
            total += member.size
            if max_bytes is not None and total > max_bytes:
                raise TransferLimitError(
                    f"job {job}: transfer is larger than the limit of {max_bytes} bytes "
                    f"(reached at {name!r})")
            _write_member(job, archive, member, where)
            files += 1
            if where.url is not None:
                uploads.append((os.path.join(where.base, where.relative), where.url))
        while stream.read(CHUNK_SIZE):  # the end blocks, so a writer never blocks on them
            pass
    except tarfile.TarError as exc:
        raise UnsafeArchiveError(f"job {job}: transfer stream is not a valid tar stream: {exc}") from None
    return TransferStats(files, dirs, total, tuple(uploads))


def into_directory(root: str) -> Place:
    """Placement of every member under ``root`` by its own name (a sandbox)."""
    return lambda name: Placement(root, name)


def into_iwd(plan: OutputPlan, staging: str | None = None) -> Place:
    """Placement of output members by the plan: ``Iwd``, remaps, stdout/stderr paths;
    members whose target is a URL are staged under ``staging`` (or skipped without one)."""

    def place(name: str) -> Placement | None:
        target = plan.target(name)
        if target is None:
            return None
        if is_url(target):
            return None if staging is None else Placement(staging, name, url=target)
        iwd = plan.iwd.rstrip("/")
        if iwd and target.startswith(iwd + "/"):
            return Placement(iwd, target[len(iwd) + 1:])
        parent = os.path.dirname(target)
        try:
            os.makedirs(parent, exist_ok=True)
        except OSError as exc:
            raise TransferError(f"job {plan.job}: cannot write output {target!r}: "
                                f"{os.strerror(exc.errno or errno.EIO)}", hold_subcode=exc.errno) from None
        return Placement(parent, os.path.basename(target))

    return place


def _header(item: PackItem, *, size: int, digest: str | None) -> bytes:
    info = tarfile.TarInfo(item.name)
    st = os.stat(item.source)
    info.type = tarfile.DIRTYPE if item.is_dir else tarfile.REGTYPE
    executable = item.is_dir or bool(st.st_mode & _EXECUTABLE_BITS)
    info.mode = 0o755 if executable else 0o644
    info.size = size
    info.mtime = int(st.st_mtime)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if digest is not None:
        info.pax_headers = {CHECKSUM_HEADER: digest}
    return info.tobuf(format=tarfile.PAX_FORMAT, encoding="utf-8", errors="strict")


def _digest(path: str) -> tuple[int, str]:
    hasher, size = hashlib.sha256(), 0
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK_SIZE):
            hasher.update(chunk)
            size += len(chunk)
    return size, hasher.hexdigest()


def _body(job: str, item: PackItem, size: int, digest: str) -> Iterator[bytes]:
    hasher, sent = hashlib.sha256(), 0
    with open(item.source, "rb") as handle:
        while sent < size and (chunk := handle.read(min(CHUNK_SIZE, size - sent))):
            hasher.update(chunk)
            sent += len(chunk)
            yield chunk
    if sent != size or hasher.hexdigest() != digest:
        raise TransferError(f"job {job}: {item.source!r} changed while it was being sent")
    if size % _BLOCK:
        yield b"\0" * (_BLOCK - size % _BLOCK)


def _member_name(job: str, member: tarfile.TarInfo) -> str:
    name = member.name.rstrip("/")
    parts = name.split("/")
    if (not name or name.startswith("/") or "\0" in name
            or any(part in ("", ".", "..") for part in parts)):
        raise UnsafeArchiveError(f"job {job}: transfer member {member.name!r} escapes its destination")
    if not (member.isreg() or member.isdir()):
        kind = "link" if (member.issym() or member.islnk()) else "special file"
        raise UnsafeArchiveError(f"job {job}: transfer member {name!r} is a {kind}; only files "
                                 "and directories are accepted")
    return name


def _safe_directory(job: str, base: str, relative: str) -> str:
    """Create ``base/relative`` one component at a time, refusing any existing
    component that is not a real directory (a symlink could point anywhere)."""
    current = base
    for part in [p for p in relative.split("/") if p]:
        current = os.path.join(current, part)
        try:
            os.mkdir(current, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                raise UnsafeArchiveError(
                    f"job {job}: {current!r} already exists and is not a directory "
                    "(a symlink or file); refusing to write through it") from None
    return current


def _write_member(job: str, archive: tarfile.TarFile, member: tarfile.TarInfo,
                  where: Placement) -> None:
    parent, leaf = os.path.split(where.relative)
    directory = _safe_directory(job, where.base, parent) if parent else where.base
    target = os.path.join(directory, leaf)
    if os.path.isdir(target) and not os.path.islink(target):
        raise UnsafeArchiveError(f"job {job}: cannot write file {target!r}: a directory is in the way")
    temporary = os.path.join(directory, f".{leaf}{PART_SUFFIX}")
    expected = member.pax_headers.get(CHECKSUM_HEADER)
    hasher, received = hashlib.sha256(), 0
    source = archive.extractfile(member)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK_SIZE):
                hasher.update(chunk)
                received += len(chunk)
                out.write(chunk)
        if received != member.size or (expected is not None and hasher.hexdigest() != expected):
            raise UnsafeArchiveError(
                f"job {job}: {member.name!r} arrived damaged ({received} of {member.size} bytes, "
                "checksum mismatch)")
        os.chmod(temporary, 0o755 if member.mode & _EXECUTABLE_BITS else 0o644)
        os.utime(temporary, (member.mtime, member.mtime))
        os.replace(temporary, target)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise


def stream_of(chunks: Iterable[bytes]) -> BinaryIO:
    """A readable binary file over an iterable of chunks, to unpack a ``PackStream``
    without writing it anywhere first."""
    return _ChunkReader(iter(chunks))


# Holds the unread rest of the current chunk between reads.
@define
class _ChunkReader:
    chunks: Iterator[bytes]
    pending: bytes = b""

    def read(self, size: int = -1) -> bytes:
        parts, wanted = [], size
        while wanted != 0:
            if not self.pending:
                self.pending = next(self.chunks, b"")
                if not self.pending:
                    break
            take = self.pending if wanted < 0 else self.pending[:wanted]
            self.pending = self.pending[len(take):]
            parts.append(take)
            if wanted > 0:
                wanted -= len(take)
        return b"".join(parts)
