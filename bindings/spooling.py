"""The client's side of ``-spool`` (HTCondor's ``Schedd.spool`` and ``Schedd.retrieve``):
each job's input files packed as the submitting user and sent to the schedd's spool, and
a completed job's spooled outputs fetched back into its submit directory, with its remaps
(condor_transfer_data)."""

from __future__ import annotations

import io
from collections.abc import Iterable

import classad
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.blocking_client import BlockingClient
from transfer.archive import PackStream, into_iwd, unpack
from transfer.plan import input_plan, job_name
from transfer.resolve import resolve_inputs
from transfer.spooled_job import fetch_plan

#: The most bytes one job's spooled input may carry (the schedd's request body limit).
MAX_SPOOL_BYTES = 16 * 1024 * 1024 - 64 * 1024


def job_id_text(ad: classad.ClassAd) -> str:
    """``cluster.proc`` of a job ad."""
    return f"{ad.evaluate('ClusterId')}.{ad.evaluate('ProcId')}"


def input_tar(ad: classad.ClassAd) -> bytes:
    """The job's input files (executable, stdin, transfer_input_files; URLs stay URLs) as one tar.

    Raises:
        TransferError: an input is missing, unreadable, or the whole is over MAX_SPOOL_BYTES.
    """
    items = resolve_inputs(input_plan(ad))
    return b"".join(PackStream(items, MAX_SPOOL_BYTES, job_name(ad)))


def spool_jobs(client: BlockingClient, ads: Iterable[classad.ClassAd]) -> int:
    """Send each job's inputs to the schedd's spool, which then lets the job run; how many jobs."""
    count = 0
    for ad in ads:
        client.call(api.SPOOL_INPUT, input_tar(ad), job_id=job_id_text(ad))
        count += 1
    return count


def retrieve_jobs(client: BlockingClient, ads: Iterable[classad.ClassAd]) -> int:
    """Fetch each completed spooled job's outputs into its submit directory; how many files.

    Raises:
        RemoteError: the schedd refused (the job has not completed, or was not spooled).
        TransferError: the answer was damaged or would write outside the job's places.
    """
    files = 0
    for ad in ads:
        tar = client.call(api.SPOOL_OUTPUT, job_id=job_id_text(ad))
        stats = unpack(io.BytesIO(tar), into_iwd(fetch_plan(ad)), job=job_name(ad))
        files += stats.files
    return files


def spec_constraint(job_spec: object) -> str:
    """A constraint for a job spec: ``"12.0"``, ``"12"``, a list of those, or an expression."""
    if isinstance(job_spec, (str, int)) or isinstance(job_spec, classad.ExprTree):
        specs = [str(job_spec).strip()]
    else:
        specs = [str(item).strip() for item in job_spec]
    clauses = []
    for spec in specs:
        cluster, dot, proc = spec.partition(".")
        if cluster.isdigit() and (not dot or proc.isdigit()):
            clauses.append(f"(ClusterId == {cluster} && ProcId == {proc})" if dot else f"ClusterId == {cluster}")
        else:
            clauses.append(f"({spec})")
    return " || ".join(clauses) or "false"


__all__ = ["spool_jobs", "retrieve_jobs", "input_tar", "spec_constraint", "MAX_SPOOL_BYTES"]
