"""A job's sandbox under the execute directory: made, filled with inputs, scanned for
outputs, and removed; plus start-up removal of sandboxes a previous run left behind.

Sandboxes are ``dir_<job>_<token>`` directories (mode 0700) owned by the account the
job runs as; when the startd runs as root, the execute directory itself is root's and
mode 0711, so no job can list it or enter another job's sandbox. Output is what the job
names in ``TransferOutput``, else every new or changed top-level file, renamed by
``TransferOutputRemaps`` (``name = new/name; other = x``). No path may leave the sandbox.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterable

import attrs
import classad

from daemoncore.security.accounts import Account, can_switch_user
from daemoncore.security.acting_as import acting_as
from startd.errors import StarterError

SANDBOX_PREFIX = "dir_"
JOB_AD_FILE = ".job.ad"
MACHINE_AD_FILE = ".machine.ad"
STDOUT_FILE = "_condor_stdout"
STDERR_FILE = "_condor_stderr"
STARTER_FILES = frozenset({JOB_AD_FILE, MACHINE_AD_FILE, STDOUT_FILE, STDERR_FILE})

Snapshot = dict[str, tuple[int, int]]


@attrs.frozen
class OutputFile:
    """A file or directory of the sandbox to send back, and the name it gets on the submit side."""

    source: str
    destination: str
    is_dir: bool = False


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
    execute_dir = os.path.abspath(execute_dir)
    os.makedirs(execute_dir, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in job_label) or "job"
    path = os.path.join(execute_dir, f"{SANDBOX_PREFIX}{safe}_{secrets.token_hex(4)}")
    os.mkdir(path, 0o700)
    if account is not None and can_switch_user() and account.uid != os.geteuid():
        os.chown(path, account.uid, account.gid, follow_symlinks=False)
    return path


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


def place_inputs(sandbox: str, paths: Iterable[str]) -> None:
    """Copy input files and directories in: ``dir/`` copies its contents, ``dir`` the directory.

    Raises:
        StarterError: an input does not exist.
    """
    for path in paths:
        if not os.path.exists(path):
            raise StarterError(f"input file {path!r} does not exist")
        if os.path.isdir(path):
            if path.endswith(os.sep):
                shutil.copytree(path, sandbox, dirs_exist_ok=True, symlinks=True)
            else:
                shutil.copytree(path, os.path.join(sandbox, os.path.basename(path)), symlinks=True)
        else:
            shutil.copy2(path, os.path.join(sandbox, os.path.basename(path)))
    os.chmod(sandbox, 0o700)  # copying a directory's contents in copies its mode too


def write_ad_file(sandbox: str, name: str, ad: classad.ClassAd) -> str:
    """Write ``ad`` in the old syntax (what ``_CONDOR_JOB_AD`` readers expect) to
    ``name``, readable only by its owner (never through a symlink the inputs put there)."""
    path = os.path.join(sandbox, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(ad.printOld())
    return path


def snapshot(sandbox: str) -> Snapshot:
    """Modification time and size of each top-level entry, to tell what the job changed."""
    entries: Snapshot = {}
    with os.scandir(sandbox) as found:
        for entry in found:
            info = entry.stat(follow_symlinks=False)
            entries[entry.name] = (info.st_mtime_ns, info.st_size)
    return entries


def parse_remaps(text: str) -> dict[str, str]:
    """``a = b; c = d/e`` as {source: destination}.

    Raises:
        StarterError: an entry has no ``=``.
    """
    remaps = {}
    for entry in (e.strip() for e in text.split(";")):
        if not entry:
            continue
        source, sep, destination = entry.partition("=")
        if not sep or not source.strip() or not destination.strip():
            raise StarterError(f"TransferOutputRemaps: {entry!r} is not 'name = new name'")
        remaps[source.strip()] = destination.strip()
    return remaps


def _string_attr(ad: classad.ClassAd, attr: str) -> str | None:
    if attr not in ad:
        return None
    value = ad.eval(attr)
    return value if isinstance(value, str) else None


def output_files(sandbox: str, job: classad.ClassAd, before: Snapshot,
                 skip: Iterable[str] = ()) -> tuple[list[OutputFile], list[str]]:
    """What to send back (remapped), and the names the job listed that it never made.

    Raises:
        StarterError: a listed name or a remap leaves the sandbox.
    """
    listed = _string_attr(job, "TransferOutput")
    remaps = parse_remaps(_string_attr(job, "TransferOutputRemaps") or "")
    if listed is not None:
        names = [n.strip().rstrip("/") for n in listed.split(",") if n.strip()]
    else:
        after = snapshot(sandbox)
        ignored = STARTER_FILES | set(skip)
        names = sorted(n for n, seen in after.items()
                       if n not in ignored and before.get(n) != seen
                       and os.path.isfile(os.path.join(sandbox, n)))
    found, missing = [], []
    for name in names:
        path = inside(sandbox, name, "output file")
        if not os.path.exists(path):
            missing.append(name)
            continue
        destination = remaps.get(name, name)
        if ".." in destination.split("/"):
            raise StarterError(f"TransferOutputRemaps: {destination!r} may not contain '..'")
        found.append(OutputFile(path, destination, os.path.isdir(path)))
    return found, missing


def copy_outputs(outputs: Iterable[OutputFile], destination_dir: str) -> None:
    """Copy outputs to a local directory under their remapped names (a local stand-in for transfer)."""
    for output in outputs:
        target = os.path.join(destination_dir, output.destination)
        os.makedirs(os.path.dirname(target) or destination_dir, exist_ok=True)
        if output.is_dir:
            shutil.copytree(output.source, target, dirs_exist_ok=True, symlinks=True)
        else:
            shutil.copy2(output.source, target)


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
