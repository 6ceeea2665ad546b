"""A job's sandbox under the execute directory: made, given the job's and machine's
ads, and removed; plus start-up removal of sandboxes a previous run left behind.

Sandboxes are ``dir_<job>_<token>`` directories (mode 0700) owned by the account the
job runs as; when the startd runs as root, the execute directory itself is root's and
mode 0711, so no job can list it or enter another job's sandbox. What goes in and comes
out is file transfer's business (the ``transfer`` package); no path may leave the sandbox.
"""

from __future__ import annotations

import os
import secrets
import shutil

import classad
from daemoncore.security.accounts import Account, can_switch_user
from daemoncore.security.acting_as import acting_as
from startd.errors import StarterError

SANDBOX_PREFIX = "dir_"


def prepare_execute_dir(execute_dir: str) -> None:
    """Make the execute directory; when this process is root, make it root's with mode
    0711 (jobs may enter their own sandbox by name but not list the others).

    Raises:
        OSError: it cannot be made, or is not a directory.
    """
    os.makedirs(execute_dir, mode=0o755, exist_ok=True)
    if can_switch_user():
        info = os.lstat(execute_dir)
        if not os.path.isdir(execute_dir) or os.path.islink(execute_dir):
            raise NotADirectoryError(f"{execute_dir} is not a directory")
        if info.st_uid != 0 or info.st_gid != 0:
            os.chown(execute_dir, 0, 0, follow_symlinks=False)
        os.chmod(execute_dir, 0o711)


def make_sandbox(execute_dir: str, job_label: str, account: Account | None = None) -> str:
    """A new, empty, private sandbox (0700) for the job labelled ``job_label`` (``12.0``),
    owned by ``account`` when this process may give it away."""
    path = sandbox_path(execute_dir, job_label)
    create_sandbox(path, account)
    return path


def sandbox_path(execute_dir: str, job_label: str) -> str:
    """Where a new sandbox for the job labelled ``job_label`` goes: a fresh name under
    ``execute_dir`` (nothing is made: see :func:`create_sandbox`)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in job_label) or "job"
    return os.path.join(os.path.abspath(execute_dir), f"{SANDBOX_PREFIX}{safe}_{secrets.token_hex(4)}")


def create_sandbox(path: str, account: Account | None = None) -> None:
    """Make the sandbox ``path`` (0700, its execute directory too if it went), owned by
    ``account`` when this process may give it away. Only system calls: a worker thread
    may run it (a directory made on a full file system took a millisecond of kernel time).

    Raises:
        OSError: it cannot be made (or exists already).
    """
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkdir(path, 0o700)
    if account is not None and can_switch_user() and account.uid != os.geteuid():
        os.chown(path, account.uid, account.gid, follow_symlinks=False)


def create_reachable_sandbox(path: str, account: Account | None = None) -> None:
    """:func:`create_sandbox`, then :func:`check_reachable`: a run's sandbox in one blocking call.

    Raises:
        OSError: it cannot be made. StarterError: ``account`` cannot reach it.
    """
    create_sandbox(path, account)
    check_reachable(path, account)


def check_reachable(sandbox: str, account: Account | None) -> None:
    """Make sure ``account`` can reach ``sandbox`` through every parent directory.

    Raises:
        StarterError: a parent of the execute directory is not searchable by it.
    """
    try:
        with acting_as(account):
            os.stat(sandbox)
    except PermissionError:
        name = account.name if account is not None else "the job's account"
        raise StarterError(f"account {name} cannot reach its sandbox {sandbox}: a parent directory of "
                           f"EXECUTE is not searchable by it; set EXECUTE to a directory every job "
                           f"account can reach (each parent mode o+x)") from None


def inside(sandbox: str, name: str, what: str) -> str:
    """``name`` as a path within ``sandbox``.

    Raises:
        StarterError: ``name`` is absolute or climbs out with ``..``.
    """
    root = os.path.realpath(sandbox)
    path = os.path.realpath(os.path.join(root, name))
    if os.path.isabs(name) or (path != root and not path.startswith(root + os.sep)):
        raise StarterError(f"{what} {name!r} is outside the job's sandbox")
    return path


def write_ad_file(sandbox: str, name: str, ad: classad.ClassAd) -> str:
    """Write ``ad`` in the old syntax (what ``_CONDOR_JOB_AD`` readers expect) to
    ``name``, readable only by its owner (never through a symlink the inputs put there)."""
    path = os.path.join(sandbox, name)
    write_private_file(path, ad.printOld().encode("utf-8"))
    return path


def write_private_file(path: str, data: bytes) -> None:
    """Write ``data`` to ``path``, readable only by its owner, never through a symlink
    put in its place: a few system calls, no Python work (a worker thread may run it).

    Raises:
        OSError: it cannot be written (a directory or a symlink of that name is there).
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def remove_sandbox(path: str) -> None:
    """Delete a sandbox and everything in it, making read-only directories writable on the way."""
    def make_writable_and_retry(function, failed, _info):  # type: ignore[no-untyped-def]
        try:
            os.chmod(os.path.dirname(failed), 0o700)
            function(failed)
        except OSError:
            pass
    if os.path.isdir(path):
        shutil.rmtree(path, onerror=make_writable_and_retry)


def kill_processes_in(directory: str) -> list[int]:
    """SIGKILL every process of this user (of any user, when root: jobs run as their
    owners) whose working directory is ``directory`` or below it: the jobs a startd
    killed with SIGKILL left running; the pids killed."""
    import psutil

    root = os.path.realpath(directory) + os.sep
    anyone = can_switch_user()
    killed = []
    for proc in psutil.process_iter(["pid", "uids"]):
        try:
            if proc.info["uids"] is None or (not anyone and proc.info["uids"].real != os.getuid()):
                continue
            if (os.path.realpath(proc.cwd()) + os.sep).startswith(root):
                proc.kill()
                killed.append(proc.pid)
        except (psutil.Error, OSError):
            continue  # gone meanwhile, or not ours to inspect
    return killed


def clean_leftover_sandboxes(execute_dir: str) -> list[str]:
    """Remove every sandbox in ``execute_dir`` (run at start-up, before any job), first
    killing job processes still running in one; the names removed."""
    if not os.path.isdir(execute_dir):
        return []
    removed = []
    for name in sorted(os.listdir(execute_dir)):
        path = os.path.join(execute_dir, name)
        if name.startswith(SANDBOX_PREFIX) and os.path.isdir(path) and not os.path.islink(path):
            kill_processes_in(path)
            remove_sandbox(path)
            removed.append(name)
    return removed
