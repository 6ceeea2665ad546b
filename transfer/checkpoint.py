"""Self-checkpointing jobs' files: what the starter sends to the submit side when the
job exits with its checkpoint code, where the schedd keeps the latest checkpoint
(the job's spool directory), and the stream that brings it back to the next sandbox.

HTCondor's rule (the manual's "Self-Checkpointing Applications"; condor_submit's
``transfer_checkpoint_files``): the checkpoint is the files ``TransferCheckpoint``
lists, or the job's output files when that is unset; it is kept in
``SPOOL/<cluster>/<proc>/cluster<c>.proc<p>.subproc0`` and the standard streams travel
with it, so a restarted job's output continues where it stopped. Everything here
blocks: daemons run it in a thread.
"""

from __future__ import annotations

import os
import shutil
from typing import BinaryIO

import attrs

import classad
from transfer.archive import PackStream, TransferStats, into_directory, unpack
from transfer.errors import TRANSFER_OUTPUT_FAILED, TransferError
from transfer.plan import OutputPlan, _output_entry, job_name, output_plan, split_list, string_attr
from transfer.resolve import Snapshot, resolve_outputs, walk_directory

#: A checkpoint holds at most this many files and directories.
MAX_CHECKPOINT_FILES = 100_000
_MIB = 1 << 20


def checkpoint_plan(ad: classad.ClassAd) -> OutputPlan:
    """What a checkpoint of job ``ad`` holds: ``TransferCheckpoint``'s files, else its
    output files (``TransferOutput``, or every new file when that is unset), and its
    standard streams; never remapped.

    Raises:
        BadTransferPathError: a listed name is absolute or climbs out of the sandbox.
    """
    plan = output_plan(ad)
    listed = string_attr(ad, "TransferCheckpoint")
    files = plan.files if listed is None else tuple(_output_entry(plan.job, e) for e in split_list(listed))
    return attrs.evolve(plan, files=files, remaps=(), destination=None)


def send_checkpoint(ad: classad.ClassAd, sandbox: str, snapshot: Snapshot | None) -> PackStream:
    """The stream of job ``ad``'s checkpoint files in ``sandbox``, limited to
    ``MaxTransferOutputMB``.

    Raises:
        TransferError: a listed checkpoint file is missing or escapes the sandbox.
    """
    plan = checkpoint_plan(ad)
    return PackStream(resolve_outputs(plan, sandbox, snapshot), _output_limit(ad), plan.job)


def spool_directory(spool: str, cluster: int, proc: int) -> str:
    """Where the schedd keeps job ``cluster.proc``'s latest checkpoint."""
    return os.path.join(spool, str(cluster), str(proc), f"cluster{cluster}.proc{proc}.subproc0")


def receive_checkpoint(stream: BinaryIO, directory: str, ad: classad.ClassAd) -> TransferStats:
    """Unpack a checkpoint stream as the job's new checkpoint in ``directory``. The
    previous checkpoint stays whole until the new one is complete, then is replaced,
    so a transfer cut short never leaves a half checkpoint behind.

    Raises:
        TransferError: an unsafe or damaged stream, or more than the size limit
            (code 12; the previous checkpoint is kept).
    """
    job = job_name(ad)
    parent = os.path.dirname(directory)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    incoming = directory + ".incoming"
    shutil.rmtree(incoming, ignore_errors=True)
    os.mkdir(incoming, 0o700)
    try:
        stats = unpack(stream, into_directory(incoming), max_bytes=_output_limit(ad),
                       max_files=MAX_CHECKPOINT_FILES, job=job)
    except TransferError as exc:
        shutil.rmtree(incoming, ignore_errors=True)
        raise TransferError(f"checkpoint not kept: {exc}", hold_code=TRANSFER_OUTPUT_FAILED,
                            hold_subcode=exc.hold_subcode) from None
    _replace(incoming, directory)
    return stats


def checkpoint_stream(directory: str | None, ad: classad.ClassAd) -> PackStream | None:
    """The stream bringing job ``ad``'s kept checkpoint back into a new sandbox (after
    its inputs, so a checkpoint file wins over an input of the same name); None when
    it has none."""
    if not directory or not os.path.isdir(directory):
        return None
    items = walk_directory(job_name(ad), directory)
    return PackStream(items, None, job_name(ad)) if items else None


def kept_checkpoints(spool: str) -> list[tuple[int, int, str]]:
    """Every checkpoint kept under ``spool``, as (cluster, proc, directory); names that
    are not a job's checkpoint directory are left alone."""
    found = []
    for cluster in _numbered(spool):
        for proc in _numbered(os.path.join(spool, str(cluster))):
            directory = spool_directory(spool, cluster, proc)
            if os.path.isdir(directory):
                found.append((cluster, proc, directory))
    return found


def _numbered(directory: str) -> list[int]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(int(name) for name in names if name.isdigit() and str(int(name)) == name)


def remove_checkpoint(directory: str) -> None:
    """Forget a job's checkpoint (the job left the queue)."""
    shutil.rmtree(directory, ignore_errors=True)
    shutil.rmtree(directory + ".incoming", ignore_errors=True)
    for level in (os.path.dirname(directory), os.path.dirname(os.path.dirname(directory))):
        try:
            os.rmdir(level)  # only when empty: other procs of the cluster keep theirs
        except OSError:
            break


def _replace(incoming: str, directory: str) -> None:
    previous = directory + ".previous"
    shutil.rmtree(previous, ignore_errors=True)
    if os.path.isdir(directory):
        os.rename(directory, previous)
    os.rename(incoming, directory)
    shutil.rmtree(previous, ignore_errors=True)


def _output_limit(ad: classad.ClassAd) -> int | None:
    value = ad.eval("MaxTransferOutputMB") if "MaxTransferOutputMB" in ad else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return int(value * _MIB)
    return None


__all__ = ["checkpoint_plan", "send_checkpoint", "spool_directory", "receive_checkpoint",
           "checkpoint_stream", "kept_checkpoints", "remove_checkpoint", "MAX_CHECKPOINT_FILES"]
