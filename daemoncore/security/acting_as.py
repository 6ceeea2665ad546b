"""Touch files as another account, from one thread, without changing the process.

A daemon running as root must open a job's files with the job owner's rights, never
its own. Linux keeps a file-system uid and gid and a group list per thread: the raw
``setfsuid``/``setfsgid``/``setgroups`` system calls change only the calling thread
(glibc's ``setgroups`` would change every thread, so it is not used), and while the
file-system uid is not 0 the kernel drops the capabilities that bypass file
permissions. So inside :func:`acting_as` every ``open``, ``mkdir``, ``rename`` or
``stat`` of this thread is checked, and creates files, as that account would; other
threads (the reactor, other workers) are unaffected.

When the process is not root there is nobody else to be: :func:`acting_as` checks that
the account is this process's own (or does nothing when given None).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
from collections.abc import Iterator

from daemoncore.security.accounts import Account, can_switch_user

#: System call numbers by machine: (setgroups, setfsuid, setfsgid).
_SYSCALLS = {"x86_64": (116, 122, 123), "aarch64": (159, 151, 152)}


class ActingAsError(OSError):
    """This thread cannot take on the account asked for."""


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library's handle, made once: a startd enters :func:`acting_as` about ten
    times per job, and a ``CDLL`` costs a ``dlopen`` and its lookups each time."""
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def _numbers() -> tuple[int, int, int]:
    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise ActingAsError(f"acting as another account is not supported on {machine}")
    return _SYSCALLS[machine]


def _set_groups(libc: ctypes.CDLL, number: int, groups: tuple[int, ...]) -> None:
    array = (ctypes.c_uint * max(len(groups), 1))(*groups)
    if libc.syscall(number, len(groups), array) != 0:
        error = ctypes.get_errno()
        raise ActingAsError(error, f"cannot set this thread's groups: {os.strerror(error)}")


def _set_fs_id(libc: ctypes.CDLL, number: int, value: int) -> None:
    # setfsuid/setfsgid answer the previous id and never fail loudly; read back to check
    libc.syscall(number, value)
    if libc.syscall(number, -1) != value:
        raise ActingAsError(f"cannot take file-system id {value} in this thread")


def _switch(libc: ctypes.CDLL, account: Account) -> None:
    set_groups, set_fsuid, set_fsgid = _numbers()
    _set_groups(libc, set_groups, account.groups)
    _set_fs_id(libc, set_fsgid, account.gid)
    _set_fs_id(libc, set_fsuid, account.uid)


def _restore(libc: ctypes.CDLL, groups: tuple[int, ...]) -> None:
    set_groups, set_fsuid, set_fsgid = _numbers()
    _set_fs_id(libc, set_fsuid, os.geteuid())
    _set_fs_id(libc, set_fsgid, os.getegid())
    _set_groups(libc, set_groups, groups)


@contextlib.contextmanager
def acting_as(account: Account | None) -> Iterator[None]:
    """Within the block, this thread's file operations are checked as ``account``'s,
    and new files belong to it. ``None``, or the account this process already is,
    changes nothing.

    Raises:
        ActingAsError: not root and asked to be someone else, or the switch failed.
    """
    if account is None or (account.uid == os.geteuid() and not can_switch_user()):
        yield
        return
    if not can_switch_user():
        raise ActingAsError(f"cannot act as {account.name}: this daemon does not run as root")
    libc = _libc()
    saved_groups = tuple(os.getgroups())
    _switch(libc, account)
    try:
        yield
    finally:
        _restore(libc, saved_groups)
