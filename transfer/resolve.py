"""Turning a plan into the concrete files to send: directories walked, symlinks
checked, missing inputs and outputs reported with the job, the file and errno.

This is the file-system side of ``plan``: inputs are resolved on the submit side,
outputs inside the sandbox on the execute side.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Iterator

from attrs import frozen

from transfer.errors import BadTransferPathError, InputMissingError, OutputMissingError
from transfer.plan import STARTER_NAMES, STDERR_NAME, STDOUT_NAME, InputPlan, OutputPlan

#: Top-level sandbox files and their (size, mtime_ns) when the job started.
Snapshot = dict[str, tuple[int, int]]


@frozen
class PackItem:
    """One member of a transfer stream: the file or directory to read and the name it
    travels under."""

    source: str
    name: str
    is_dir: bool = False


def resolve_inputs(plan: InputPlan) -> list[PackItem]:
    """Every file and directory the plan sends, in stream order.

    Raises:
        InputMissingError: an input or the executable cannot be read (subcode errno).
        BadTransferPathError: a directory input is a symlink, a listed directory
            holds a symlink to a directory, or ``name/`` is not a directory.
    """
    items: list[PackItem] = []
    for entry in plan.files:
        role = "executable" if entry.name and entry.name == plan.executable else "input file"
        info = _stat_input(plan.job, entry.source, role)
        if not stat.S_ISDIR(info.st_mode):
            if entry.contents_only:
                raise BadTransferPathError(
                    f"job {plan.job}: TransferInput entry {entry.source + '/'!r} ends in '/' "
                    "but is not a directory")
            items.append(PackItem(entry.source, entry.name))
            continue
        if os.path.islink(entry.source.rstrip("/")):
            raise BadTransferPathError(
                f"job {plan.job}: input directory {entry.source!r} is a symbolic link; "
                "symlinks to directories are not transferred, name the real directory")
        if not entry.contents_only:
            items.append(PackItem(entry.source, entry.name, is_dir=True))
        items.extend(_walk(plan.job, entry.source, entry.name, root=None))
    return items


def snapshot_sandbox(sandbox: str) -> Snapshot:
    """The sandbox's top-level regular files with size and mtime, taken after input
    transfer so that output transfer can tell what the job made or changed."""
    snap: Snapshot = {}
    with os.scandir(sandbox) as entries:
        for entry in entries:
            if entry.is_file(follow_symlinks=False):
                info = entry.stat(follow_symlinks=False)
                snap[entry.name] = (info.st_size, info.st_mtime_ns)
    return snap


def resolve_outputs(plan: OutputPlan, sandbox: str, snapshot: Snapshot | None = None) -> list[PackItem]:
    """Every sandbox file and directory the plan sends back, in stream order; stdout
    and stderr travel as ``_condor_stdout``/``_condor_stderr`` when the job named them.

    Raises:
        OutputMissingError: a listed output does not exist in the sandbox.
        BadTransferPathError: a listed output is a symlink pointing out of the sandbox.
    """
    root = os.path.realpath(sandbox)
    items = [PackItem(os.path.join(root, name), name)
             for name, wanted in ((STDOUT_NAME, plan.stdout), (STDERR_NAME, plan.stderr))
             if wanted is not None and os.path.isfile(os.path.join(root, name))]
    if plan.files is None:
        return items + _new_files(root, snapshot or {})
    for entry in plan.files:
        path = os.path.join(root, entry.name)
        _check_inside(plan.job, root, path, entry.name)
        if not os.path.lexists(path):
            raise OutputMissingError(
                f"job {plan.job}: output file {entry.name!r} listed in TransferOutput "
                f"was not created in the sandbox")
        travel = plan.transfer_name(entry.name)
        if not os.path.isdir(path):
            regular_file_size(plan.job, path)
            items.append(PackItem(path, travel))
            continue
        prefix = "" if entry.contents_only else travel
        if prefix:
            items.append(PackItem(path, prefix, is_dir=True))
        items.extend(_walk(plan.job, path, prefix, root=root))
    return items


def walk_directory(job: str, top: str) -> list[PackItem]:
    """Every file and directory under ``top``, named relative to it, in stream order;
    links that lead out of ``top`` are refused (a kept checkpoint sent back)."""
    return list(_walk(job, top, "", root=os.path.realpath(top)))


def _new_files(root: str, snapshot: Snapshot) -> list[PackItem]:
    items = []
    for name, now in sorted(snapshot_sandbox(root).items()):
        if name in STARTER_NAMES or snapshot.get(name) == now:
            continue
        items.append(PackItem(os.path.join(root, name), name))
    return items


def regular_file_size(job: str, path: str) -> int:
    """The size of ``path``, which must be a regular file: a FIFO, device or socket
    would block or never end, so it is refused before anything opens it.

    Raises:
        BadTransferPathError: ``path`` is not a regular file.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise BadTransferPathError(
            f"job {job}: {path!r} is not a regular file (a FIFO, device or socket); "
            "only regular files and directories are transferred")
    return info.st_size


def _stat_input(job: str, path: str, role: str) -> os.stat_result:
    try:
        info = os.stat(path)
        if not stat.S_ISDIR(info.st_mode):
            regular_file_size(job, path)
            # O_NONBLOCK: the type was checked, but it may be swapped for a FIFO since
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        return info
    except OSError as exc:
        code = exc.errno or errno.EIO
        raise InputMissingError(
            f"job {job}: cannot read {role} {path!r}: {os.strerror(code)}",
            hold_subcode=code) from None


def _walk(job: str, top: str, prefix: str, *, root: str | None) -> Iterator[PackItem]:
    """Members under directory ``top``, sorted, named ``prefix/relative``. File
    symlinks are followed (inside ``root`` when given); directory symlinks refused.
    Every file is checked readable (by whoever is reading: a root daemon acts as the
    job's owner) and every directory listable, so nothing unreadable is skipped or sent."""
    role = "input file" if root is None else "output file"
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False, onerror=_unlistable(job)):
        dirnames.sort()
        relative_dir = os.path.relpath(dirpath, top)
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            relative = name if relative_dir == "." else f"{relative_dir}/{name}"
            member = f"{prefix}/{relative}" if prefix else relative
            if os.path.islink(path):
                if root is not None:
                    _check_inside(job, root, path, member)
                if os.path.isdir(path):
                    raise BadTransferPathError(
                        f"job {job}: {path!r} is a symbolic link to a directory; "
                        "such links are not transferred")
            if name in dirnames and not os.path.islink(path):
                yield PackItem(path, member, is_dir=True)
            else:
                _stat_input(job, path, role)
                yield PackItem(path, member)


def _unlistable(job: str):
    """The ``os.walk`` error handler: a directory that cannot be listed stops the walk."""
    def refuse(exc: OSError) -> None:
        code = exc.errno or errno.EIO
        raise InputMissingError(f"job {job}: cannot list directory {exc.filename!r}: {os.strerror(code)}",
                                hold_subcode=code)
    return refuse


def _check_inside(job: str, root: str, path: str, name: str) -> None:
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        raise BadTransferPathError(
            f"job {job}: output {name!r} resolves to {real!r}, outside the sandbox")
