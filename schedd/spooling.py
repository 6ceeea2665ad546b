"""The schedd's side of ``-spool``: receiving a held job's input files into its spool
directory (then rewriting the job to run from there and letting it go idle), and sending
a finished job's outputs back to ``roost transfer_data`` (condor_transfer_data), which
records ``StageOutStart``/``StageOutFinish`` as HTCondor does.

Built as ``Spooling(service)``; the service gives ``queue``, ``clock``, ``schedd_settings.spool``
and ``record``. File work runs in bounded worker threads, never on the reactor.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
from collections.abc import Callable

from twisted.internet.defer import Deferred

from classad import ClassAd
from daemoncore.security import AuthorizationLevel
from daemoncore.security.accounts import Account
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.errors import BadRequest, Conflict, Forbidden, NotFound
from daemoncore.wire.server import ApiRequest, BytesReply, JsonReply
from daemoncore.worker_threads import in_worker_thread
from jobmodel.states import DELETE, JobId, JobStatus, Transition, job_id_of, now_from, status_of
from schedd.intake import ClusterToStore
from shadow.owner_rights import OUTPUT, job_account
from transfer import TransferError
from transfer.archive import PackStream, into_directory, unpack
from transfer.plan import job_name
from transfer.resolve import PackItem
from transfer.spooled_job import (
    held_for_spooling,
    spool_directory,
    spooled_inputs,
    spooled_rewrite,
    waits_for_spooling,
)

#: The most files one job may spool.
MAX_SPOOLED_FILES = 10_000
#: The most bytes one fetch of a job's outputs carries (the answer is built in memory).
MAX_FETCH_BYTES = 256 * 1024 * 1024
TAR_TYPE = b"application/x-tar"



def held_for_input(cluster: ClusterToStore) -> ClusterToStore:
    """The cluster queued as condor_submit -spool queues it: held with code 16 until each
    proc's input files arrive, and kept in the queue after it completes (LeaveJobInQueue)."""
    cluster_ad = cluster.cluster_ad.copy()
    for name, value in held_for_spooling(cluster_ad).items():
        cluster_ad[name] = value
    return ClusterToStore(cluster_ad, cluster.proc_ads)


def _unpack_into(directory: str, body: bytes, job: str, account: Account | None) -> int:
    """Write the input tar ``body`` into a fresh ``directory``, handed to the job's owner
    (``account``, when the schedd acts for owners) since the job's outputs come back there;
    the number of files."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory, mode=0o755)
    try:
        stats = unpack(io.BytesIO(body), into_directory(directory), max_files=MAX_SPOOLED_FILES, job=job)
        if account is not None:
            for path in (directory, *(os.path.join(top, name) for top, dirs, files in os.walk(directory)
                                      for name in dirs + files)):
                os.lchown(path, account.uid, account.gid)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return stats.files


def _spooled_outputs(directory: str, inputs: set[str]) -> list[PackItem]:
    """Every directory and regular file under ``directory``, parents first, leaving out the
    top-level ``inputs`` and anything that is not a plain file or directory (links, FIFOs)."""
    items: list[PackItem] = []
    for top, dirs, files in os.walk(directory):
        relative = os.path.relpath(top, directory)
        prefix = "" if relative == "." else relative + "/"
        dirs[:] = sorted(name for name in dirs if not os.path.islink(os.path.join(top, name))
                         and not (prefix == "" and name in inputs))
        items.extend(PackItem(os.path.join(top, name), prefix + name, is_dir=True) for name in dirs)
        for name in sorted(files):
            path = os.path.join(top, name)
            if (prefix or name not in inputs) and stat.S_ISREG(os.lstat(path).st_mode):
                items.append(PackItem(path, prefix + name))
    return items


def _outputs_tar(ad: ClassAd, directory: str) -> bytes:
    """The job's spooled outputs (everything in its spool directory but its spooled inputs) as one tar."""
    items = _spooled_outputs(directory, spooled_inputs(ad)) if os.path.isdir(directory) else []
    return b"".join(PackStream(items, MAX_FETCH_BYTES, job_name(ad)))


class Spooling:
    """The SPOOL_INPUT and SPOOL_OUTPUT routes of one schedd service."""

    def __init__(self, service, run_blocking: Callable[..., Deferred] | None = None) -> None:
        self._service = service
        self._run_blocking = run_blocking or in_worker_thread

    def handlers(self) -> dict:
        """The spool routes, for the schedd's route table."""
        return {api.SPOOL_INPUT: self.spool_input, api.SPOOL_OUTPUT: self.spool_output}

    def _directory(self, job_id: JobId) -> str:
        return spool_directory(self._service.schedd_settings.spool, job_id.cluster, job_id.proc)

    def _owned_job(self, request: ApiRequest) -> tuple[JobId, ClassAd]:
        try:
            job_id = JobId.parse(request.params["job_id"])
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        try:
            ad = self._service.queue.get_job(job_id)
        except KeyError:
            raise NotFound(f"job {job_id} is not in the queue") from None
        owner = ad.evaluate("Owner")
        if not request.identity.allows(AuthorizationLevel.ADMINISTRATOR) and owner != request.identity.user:
            raise Forbidden(f"job {job_id} belongs to {owner}, not to {request.identity.user}")
        return job_id, ad

    # --- inputs ---
    def spool_input(self, request: ApiRequest) -> Deferred:
        """SPOOL_INPUT: the job's input tar, written to its spool directory; the job is then
        rewritten to run from there and goes from held (code 16) to idle."""
        job_id, ad = self._owned_job(request)
        if not waits_for_spooling(ad):
            raise Conflict(f"job {job_id} is not waiting for spooled input (it was not submitted with -spool, "
                           "or its input already arrived)")
        try:
            account = job_account(ad, OUTPUT)
        except TransferError as exc:
            raise Conflict(str(exc)) from None
        started = now_from(self._service.clock)
        directory = self._directory(job_id)
        writing = self._run_blocking(_unpack_into, directory, request.body, str(job_id), account)
        writing.addCallbacks(self._spooled, self._spool_failed, callbackArgs=(job_id, directory, started),
                             errbackArgs=(job_id,))
        return writing

    def _spooled(self, files: int, job_id: JobId, directory: str, started: int) -> JsonReply:
        def release(ad: ClassAd, clock) -> Transition:
            if not waits_for_spooling(ad):
                raise Conflict(f"job {job_id} stopped waiting for its input while it arrived")
            now = now_from(clock)
            changes = {**spooled_rewrite(ad, directory), "JobStatus": int(JobStatus.IDLE),
                       "LastJobStatus": int(status_of(ad)), "EnteredCurrentStatus": now,
                       "HoldReason": DELETE, "HoldReasonCode": DELETE, "HoldReasonSubCode": DELETE,
                       "StageInStart": started, "StageInFinish": now}
            return Transition(job_id_of(ad), changes)
        self._service.record(self._service.queue.transition(job_id, release))
        return JsonReply({"job": str(job_id), "files": files})

    @staticmethod
    def _spool_failed(failure, job_id: JobId):
        if failure.check(TransferError):
            raise BadRequest(f"job {job_id}: the spooled input was refused: {failure.value}")
        return failure

    # --- outputs ---
    def spool_output(self, request: ApiRequest) -> Deferred:
        """SPOOL_OUTPUT: a completed spooled job's outputs as a tar (condor_transfer_data)."""
        job_id, ad = self._owned_job(request)
        if "SUBMIT_Iwd" not in ad:
            raise Conflict(f"job {job_id} has no spooled files: it was not submitted with -spool")
        if status_of(ad) is not JobStatus.COMPLETED:
            raise Conflict(f"job {job_id} has not completed; its output is fetched once it has")
        started = now_from(self._service.clock)
        packing = self._run_blocking(_outputs_tar, ad, self._directory(job_id))
        packing.addCallbacks(self._fetched, self._spool_failed, callbackArgs=(job_id, started),
                             errbackArgs=(job_id,))
        return packing

    def _fetched(self, tar: bytes, job_id: JobId, started: int) -> BytesReply:
        def staged_out(ad: ClassAd, clock) -> Transition:
            return Transition(job_id_of(ad), {"StageOutStart": started, "StageOutFinish": now_from(clock)})
        self._service.queue.transition(job_id, staged_out)
        return BytesReply(tar, TAR_TYPE)


__all__ = ["Spooling", "held_for_input", "MAX_SPOOLED_FILES", "MAX_FETCH_BYTES"]
