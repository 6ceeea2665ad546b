"""The one rule for whose rights the schedd touches a job's files with on the submit
side: reading its inputs, writing its outputs and its event log.

A schedd running as root never uses its own rights for a job's files: it acts as the
job's ``Owner`` (root's own jobs as root, whose files they are). When the owner has
no account on this host, nothing of the job's is touched: transfers hold the job and
event-log writes are reported. A schedd running as an ordinary user (a personal
pool) is that user for every job, as before.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from attrs import frozen

import classad
from daemoncore.security.accounts import Account, can_switch_user, local_account
from daemoncore.security.acting_as import acting_as
from transfer.errors import TRANSFER_INPUT_FAILED, TRANSFER_OUTPUT_FAILED, TransferError
from transfer.plan import InputPlan, job_name, string_attr

_T = TypeVar("_T")


@frozen
class FileWork:
    """One kind of file work the schedd does for a job, as its messages name it, and
    the hold code a refusal puts on the job."""

    verb: str
    what: str
    hold_code: int


INPUT = FileWork("reads", "input", TRANSFER_INPUT_FAILED)
OUTPUT = FileWork("writes", "output", TRANSFER_OUTPUT_FAILED)
EVENT_LOG = FileWork("writes", "event log", TRANSFER_OUTPUT_FAILED)


class NoOwnerAccountError(TransferError):
    """The job's owner has no account on the submit host, so a root schedd touches
    none of the job's files."""


def owner_account(owner: str | None, job: str, work: FileWork) -> Account | None:
    """The account job ``job``'s files are touched as for ``work``: None (this
    process's own rights) when the schedd does not run as root, else ``owner``'s
    local account.

    Raises:
        NoOwnerAccountError: the schedd runs as root and ``owner`` has no local account.
    """
    if not can_switch_user():
        return None
    account = local_account(owner) if owner else None
    if account is None:
        raise NoOwnerAccountError(
            f"the schedd {work.verb} job {job}'s {work.what} as its owner, {owner or '(no Owner)'}, "
            "who has no account on this host", hold_code=work.hold_code)
    return account


def job_account(ad: classad.ClassAd, work: FileWork) -> Account | None:
    """:func:`owner_account` for the job ad ``ad`` (its ``Owner``).

    Raises:
        NoOwnerAccountError: as :func:`owner_account`.
    """
    return owner_account(string_attr(ad, "Owner"), job_name(ad), work)


def input_touches_files(plan: InputPlan) -> bool:
    """Whether sending ``plan`` reads any file on the submit side: a file or directory
    to send, or the S3 credential files that presigning ``s3://`` inputs needs."""
    return bool(plan.files) or "s3" in plan.schemes


@contextlib.contextmanager
def staging_directory(root: str | None, prefix: str, account: Account | None) -> Iterator[str]:
    """A fresh directory for one job's outputs on their way to URLs, owned by
    ``account`` and private to it, so everything written there is written as the
    owner; removed afterwards. It goes under ``root`` (the spool, which stays the
    schedd's) when the owner can reach it there, else under the system's temporary
    directory: a root pool's spool is closed to everyone but root."""
    path = _owned_directory(root, prefix, account)
    if path is None:
        path = _owned_directory(None, prefix, account)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _owned_directory(root: str | None, prefix: str, account: Account | None) -> str | None:
    """A new directory under ``root`` handed to ``account``; None when the account
    cannot reach it there."""
    if root:
        os.makedirs(root, exist_ok=True)
    path = tempfile.mkdtemp(prefix=prefix, dir=root or None)
    if account is None:
        return path
    os.chown(path, account.uid, account.gid)
    try:
        as_owner(account, os.stat, os.path.join(path, "."))
    except PermissionError:
        os.rmdir(path)
        return None
    return path


def as_owner(account: Account | None, function: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``function(*args, **kwargs)`` in this thread with ``account``'s file rights."""
    with acting_as(account):
        return function(*args, **kwargs)


def chunks_as_owner(account: Account | None, chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The chunks of a stream whose files are opened and read with ``account``'s rights.
    The rights are taken for each chunk and dropped before it is handed on, so a
    consumer that yields to the reactor between chunks never leaves them in place."""
    iterator = iter(chunks)
    while True:
        with acting_as(account):
            chunk = next(iterator, None)
        if chunk is None:
            return
        yield chunk


__all__ = ["FileWork", "INPUT", "OUTPUT", "EVENT_LOG", "NoOwnerAccountError", "owner_account",
           "job_account", "input_touches_files", "staging_directory", "as_owner", "chunks_as_owner"]
