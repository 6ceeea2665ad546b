"""The four steps of one job's file transfer, as the shadow (submit side) and the
starter (execute side) call them, plus the job-ad attributes each step reports.

1. shadow ``send_input(ad)`` -> a ``PackStream`` of the executable, stdin and inputs;
2. starter ``receive_input(stream, sandbox, plan)`` -> files in the sandbox, URL inputs
   fetched, and the snapshot that tells new outputs apart;
3. starter ``send_output(ad, sandbox, snapshot)`` -> a ``PackStream`` of the outputs;
4. shadow ``receive_output(stream, ad, staging)`` -> files in ``Iwd`` (remaps applied)
   and URL destinations uploaded.

Every step raises a ``TransferError`` whose ``hold_attributes()`` the schedd puts on
the job (13 for input, 12 for output, 32/33 for size limits). All of it blocks:
daemons run it in a thread.
"""

from __future__ import annotations

import errno
import os
from typing import BinaryIO

from attrs import frozen

import classad
from transfer.archive import PART_SUFFIX, PackStream, TransferStats, into_directory, into_iwd, unpack
from transfer.errors import MAX_OUTPUT_SIZE_EXCEEDED, TRANSFER_OUTPUT_FAILED, TransferError, TransferLimitError
from transfer.plan import InputPlan, input_plan, output_plan
from transfer.resolve import Snapshot, resolve_inputs, resolve_outputs, snapshot_sandbox
from transfer.urls import S3Settings, fetch_inputs, presign_inputs, s3_settings_from_job, upload_all

_MIB = 1 << 20


@frozen
class InputSend:
    """What the shadow hands over for one job: the stream to send and the plan the
    starter needs (URL inputs already presigned when the job uses S3)."""

    plan: InputPlan
    stream: PackStream


@frozen
class InputReceived:
    """What the starter got: stream and URL totals and the sandbox snapshot."""

    stats: TransferStats
    url_bytes: int
    snapshot: Snapshot


def send_input(ad: classad.ClassAd, *, s3_endpoint_url: str | None = None) -> InputSend:
    """Plan and resolve a job's inputs on the submit side. The size limit is the job's
    ``MaxTransferInputMB``; ``s3://`` inputs are presigned here so keys stay put.

    Raises:
        TransferError: a bad path, a missing input (code 13, subcode errno), or
            unreadable S3 credential files.
    """
    plan = input_plan(ad)
    items = resolve_inputs(plan)
    if "s3" in plan.schemes:
        plan = presign_inputs(plan, s3_settings_from_job(ad, endpoint_url=s3_endpoint_url))
    return InputSend(plan, PackStream(items, _limit(ad, "MaxTransferInputMB"), plan.job))


def receive_input(stream: BinaryIO, sandbox: str, plan: InputPlan, *,
                  s3: S3Settings | None = None, max_bytes: int | None = None) -> InputReceived:
    """Unpack the shadow's stream into ``sandbox``, fetch the URL inputs, then take the
    snapshot that ``send_output`` compares against.

    Raises:
        TransferError: an unsafe or damaged stream, a URL that cannot be fetched, or
            more than ``max_bytes``.
    """
    stats = unpack(stream, into_directory(sandbox), max_bytes=max_bytes, job=plan.job)
    url_bytes = fetch_inputs(plan, sandbox, s3=s3)
    return InputReceived(stats, url_bytes, snapshot_sandbox(sandbox))


def send_output(ad: classad.ClassAd, sandbox: str, snapshot: Snapshot | None) -> PackStream:
    """The stream of a finished job's outputs, resolved in its sandbox; the size limit
    is ``MaxTransferOutputMB``.

    Raises:
        TransferError: a listed output is missing (code 12) or escapes the sandbox.
    """
    plan = output_plan(ad)
    try:
        items = resolve_outputs(plan, sandbox, snapshot)
    except TransferError as exc:
        raise _as_output_error(exc) from None
    return PackStream(items, _limit(ad, "MaxTransferOutputMB"), plan.job)


def receive_output(stream: BinaryIO, ad: classad.ClassAd, staging: str, *,
                   s3_endpoint_url: str | None = None) -> TransferStats:
    """Unpack outputs into ``Iwd`` by the job's remaps, then upload those bound for URLs
    (``OutputDestination`` or URL remaps) from ``staging``.

    Raises:
        TransferError: unsafe or damaged stream, size limit, or a failed upload (code 12).
    """
    plan = output_plan(ad)
    try:
        stats = unpack(stream, into_iwd(plan, staging), job=plan.job,
                       max_bytes=_limit(ad, "MaxTransferOutputMB"))
        if stats.uploads:
            upload_all(stats.uploads, s3=_settings_if_needed(ad, stats, s3_endpoint_url), job=plan.job)
    except TransferError as exc:
        raise _as_output_error(exc) from None
    except OSError as exc:
        raise _unwritable(plan.job, exc) from None
    return stats


def input_attributes(stats: TransferStats, url_bytes: int = 0) -> dict[str, int]:
    """Job-ad numbers for one input transfer: ``BytesSent`` (add to the job's total)
    and ``TransferInputSizeMB``."""
    total = stats.bytes + url_bytes
    return {"BytesSent": total, "TransferInputSizeMB": -(-total // _MIB)}


def output_attributes(stats: TransferStats) -> dict[str, int]:
    """Job-ad numbers for one output transfer: ``BytesRecvd`` (add to the job's total)."""
    return {"BytesRecvd": stats.bytes}


def _settings_if_needed(ad: classad.ClassAd, stats: TransferStats,
                        endpoint: str | None) -> S3Settings | None:
    if any(url.lower().startswith("s3://") for _, url in stats.uploads):
        return s3_settings_from_job(ad, endpoint_url=endpoint)
    return None


def _limit(ad: classad.ClassAd, attr: str) -> int | None:
    if attr not in ad:
        return None
    value = ad.eval(attr)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return int(value * _MIB)
    return None


def _unwritable(job: str, exc: OSError) -> TransferError:
    """An output the receiving side could not write, named by the path it was going to
    (not the temporary name it is written under first), with the system's reason."""
    code = exc.errno or errno.EIO
    path = str(exc.filename) if exc.filename is not None else "?"
    directory, leaf = os.path.split(path)
    if leaf.startswith(".") and leaf.endswith(PART_SUFFIX):
        path = os.path.join(directory, leaf[1:-len(PART_SUFFIX)])
    return TransferError(f"job {job}: cannot write output {path!r}: {os.strerror(code)}",
                         hold_code=TRANSFER_OUTPUT_FAILED, hold_subcode=code)


def _as_output_error(exc: TransferError) -> TransferError:
    code = MAX_OUTPUT_SIZE_EXCEEDED if isinstance(exc, TransferLimitError) else TRANSFER_OUTPUT_FAILED
    if exc.hold_code == code:
        return exc
    return type(exc)(str(exc), hold_code=code, hold_subcode=exc.hold_subcode)


__all__ = ["InputSend", "InputReceived", "send_input", "receive_input", "send_output",
           "receive_output", "input_attributes", "output_attributes"]
