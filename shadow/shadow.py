"""The shadow: the submit-side agent of one running job, living in the schedd.

It holds the job's transfer key (the secret only the schedd and the claimed startd
know), serves the job's input stream, turns the starter's reports (execute, usage,
exit, evicted) into queue transitions and events, receives the job's output into
its ``Iwd``, and keeps a lease: when the starter stays silent for the lease, the job
goes back to Idle to run elsewhere.

The first half of this module is pure: starter reports to job attributes. The
``Shadow`` class below does the I/O through the host it is given (the schedd's
execution side), so it runs on ``task.Clock`` with a synchronous thread stand-in.
"""

from __future__ import annotations

import enum
import hmac
import io
import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import attrs
from twisted.internet.defer import Deferred, fail, maybeDeferred
from twisted.logger import Logger

from classad import ClassAd
from daemoncore.security.accounts import Account
from daemoncore.wire.errors import BadRequest, Conflict, Forbidden
from daemoncore.wire.server import StreamReply
from jobmodel import checkpoints, states
from jobmodel.errors import InvalidTransitionError, JobNotFoundError
from jobmodel.eventlog import Event, EventType, format_usage
from jobmodel.states import ExitRecord, JobId, JobStatus, Transition, now_from
from shadow.owner_rights import (
    INPUT,
    OUTPUT,
    as_owner,
    chunks_as_owner,
    input_touches_files,
    job_account,
    staging_directory,
)
from transfer import (
    TransferError,
    input_attributes,
    input_plan,
    output_attributes,
    output_plan,
    receive_output,
    send_input,
)
from transfer.checkpoint import checkpoint_stream, receive_checkpoint, remove_checkpoint, spool_directory
from transfer.inline import INLINE_BYTES, input_send_is_light, outputs_go_to_urls, stream_is_small
from transfer.packed_inputs import PackedInput, PackedInputs, content_key

#: HTCondor's default ``JobLeaseDuration`` (40 minutes).
DEFAULT_LEASE_SECONDS = 2400.0
#: The usage attributes a starter reports, with the type each must have.
USAGE_ATTRIBUTES = {"RemoteUserCpu": float, "RemoteSysCpu": float, "ImageSize": int,
                    "ResidentSetSize": int, "MemoryUsage": int,
                    "GPUsMemoryUsage": int, "GPUsAverageUsage": float}
UPDATE_EVENTS = ("execute", "usage", "exit", "evicted", "hold", "checkpoint")
#: Input files up to this many bytes in all travel inside ACTIVATE (the starter then skips JOB_INPUT).
INLINE_INPUT_BYTES = INLINE_BYTES

_log = Logger()


# --- pure: starter reports to job attributes ---------------------------------------

def _number(attrs_: Mapping[str, Any], name: str, kind: type) -> int | float | None:
    value = attrs_.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest(f"attrs.{name} must be a number, got {value!r}")
    return int(value) if kind is int else float(value)


def usage_of(attrs_: Mapping[str, Any]) -> dict[str, int | float]:
    """The usage attributes in a report, checked and typed (absent ones left out).

    Raises:
        BadRequest: one of them is not a number.
    """
    found = {}
    for name, kind in USAGE_ATTRIBUTES.items():
        value = _number(attrs_, name, kind)
        if value is not None:
            found[name] = value
    return found


def exit_record_of(attrs_: Mapping[str, Any]) -> ExitRecord:
    """The exit a starter reported: ``ExitBySignal`` with ``ExitSignal``, else ``ExitCode``.

    Raises:
        BadRequest: the attributes do not describe an exit.
    """
    by_signal = attrs_.get("ExitBySignal", False)
    if not isinstance(by_signal, bool):
        raise BadRequest(f"attrs.ExitBySignal must be true or false, got {by_signal!r}")
    if by_signal:
        signal = _number(attrs_, "ExitSignal", int)
        if signal is None:
            raise BadRequest("attrs.ExitSignal is required when ExitBySignal is true")
        return ExitRecord(exit_by_signal=True, exit_signal=signal)
    code = _number(attrs_, "ExitCode", int)
    if code is None:
        raise BadRequest("attrs.ExitCode is required when ExitBySignal is false")
    return ExitRecord(exit_code=code)


def hold_of(attrs_: Mapping[str, Any]) -> dict[str, Any]:
    """The hold a starter asked for: ``HoldReason`` with ``HoldReasonCode`` and
    ``HoldReasonSubCode`` (0 when absent).

    Raises:
        BadRequest: no reason text, or a code that is not a whole number.
    """
    reason = attrs_.get("HoldReason")
    if not isinstance(reason, str) or not reason.strip():
        raise BadRequest("attrs.HoldReason must be a non-empty string for a hold")
    code = _number(attrs_, "HoldReasonCode", int)
    subcode = _number(attrs_, "HoldReasonSubCode", int)
    return {"HoldReason": reason, "HoldReasonCode": 0 if code is None else code,
            "HoldReasonSubCode": 0 if subcode is None else subcode}


def _int_attr(ad: ClassAd, name: str) -> int:
    value = ad.evaluate(name) if name in ad else None
    return value if type(value) is int else 0


def _real_attr(ad: ClassAd, name: str) -> float:
    value = ad.evaluate(name) if name in ad else None
    return float(value) if type(value) in (int, float) else 0.0


def record_usage(ad: ClassAd, usage: Mapping[str, int | float], clock) -> Transition:
    """A queue change writing ``usage`` on a running job, with a 006 Image size event
    when ``ImageSize`` grew."""
    job_id = states.job_id_of(ad)
    event = None
    size = usage.get("ImageSize")
    if size is not None and size > _int_attr(ad, "ImageSize"):
        details = {"Size": int(size)}
        details.update({k: usage[k] for k in ("MemoryUsage", "ResidentSetSize") if k in usage})
        event = Event(EventType.IMAGE_SIZE, job_id.cluster, job_id.proc, now_from(clock), details)
    return Transition(job_id, dict(usage), event)


def record_run(ad: ClassAd, usage: Mapping[str, int | float], wall_seconds: float | None, clock) -> Transition:
    """A queue change writing a finished run's usage and adding its wall-clock time
    (reported, or since ``JobCurrentStartDate``) to ``RemoteWallClockTime``."""
    if wall_seconds is None:
        started = _int_attr(ad, "JobCurrentStartDate")
        wall_seconds = max(0, now_from(clock) - started) if started else 0.0
    changes: dict[str, Any] = dict(usage)
    changes["RemoteWallClockTime"] = _real_attr(ad, "RemoteWallClockTime") + float(wall_seconds)
    changes["LastRemoteWallClockTime"] = float(wall_seconds)
    changes["CumulativeRemoteUserCpu"] = _real_attr(ad, "CumulativeRemoteUserCpu") + usage.get("RemoteUserCpu", 0)
    changes["CumulativeRemoteSysCpu"] = _real_attr(ad, "CumulativeRemoteSysCpu") + usage.get("RemoteSysCpu", 0)
    return Transition(states.job_id_of(ad), changes)


def record_run_end(ad: ClassAd, usage: Mapping[str, int | float], wall_seconds: float | None,
                   committed_seconds: float | None, clock) -> Transition:
    """:func:`record_run` and, when the starter reported the run's wall time,
    :func:`jobmodel.checkpoints.commit_run` of the ``committed_seconds`` no checkpoint
    committed, as one queue change (one write instead of two; they touch different attributes)."""
    run = record_run(ad, usage, wall_seconds, clock)
    if committed_seconds is None:
        return run
    committed = checkpoints.commit_run(ad, committed_seconds, clock)
    return attrs.evolve(run, changes={**run.changes, **committed.changes})


def started_on(ad: ClassAd, execute_host: str, clock, slot_name: str | None = None,
               remote_pool: str | None = None) -> Transition:
    """:func:`jobmodel.states.start`, also counting the shadow's start
    (``NumShadowStarts``, ``JobRunCount``)."""
    result = states.start(ad, execute_host, clock, slot_name=slot_name, remote_pool=remote_pool)
    changes = dict(result.changes)
    changes["NumShadowStarts"] = _int_attr(ad, "NumShadowStarts") + 1
    changes["JobRunCount"] = _int_attr(ad, "JobRunCount") + 1
    return attrs.evolve(result, changes=changes)


def added_counts(ad: ClassAd, counts: Mapping[str, int], clock) -> Transition:
    """A queue change adding ``counts`` (``BytesSent``, ``BytesRecvd``) to the job's
    totals; other numbers (``TransferInputSizeMB``) are set as given."""
    changes = {name: (_int_attr(ad, name) + value if name.startswith("Bytes") else value)
               for name, value in counts.items()}
    return Transition(states.job_id_of(ad), changes)


def terminated_event(event: Event, ad: ClassAd, usage: Mapping[str, int | float]) -> Event:
    """The 005 event with the run's usage, bytes and resource table filled in."""
    details = dict(event.attributes)
    user, system = usage.get("RemoteUserCpu", 0.0), usage.get("RemoteSysCpu", 0.0)
    details["RunRemoteUsage"] = format_usage(user, system)
    details["TotalRemoteUsage"] = format_usage(_real_attr(ad, "CumulativeRemoteUserCpu"),
                                               _real_attr(ad, "CumulativeRemoteSysCpu"))
    details["SentBytes"] = _int_attr(ad, "BytesRecvd")
    details["ReceivedBytes"] = _int_attr(ad, "BytesSent")
    details["TotalSentBytes"] = _int_attr(ad, "BytesRecvd")
    details["TotalReceivedBytes"] = _int_attr(ad, "BytesSent")
    for stem in ("Cpus", "Disk", "Memory", "GPUs"):
        if "Request" + stem in ad:
            value = ad.evaluate("Request" + stem)
            if type(value) in (int, float):
                details["Request" + stem] = value
    if "MemoryUsage" in usage:
        details["MemoryUsage"] = usage["MemoryUsage"]
    return attrs.evolve(event, attributes=details)


# --- the shadow of one job ---------------------------------------------------------

class Ending(enum.Enum):
    """How a shadow ended, which says what becomes of its claim."""

    REUSE = "reuse"  # the job ended normally: the claim may run the next job
    RELEASE = "release"  # give the claim back to the startd
    VACATE = "vacate"  # stop the job at the startd, then give the claim back


class ShadowHost(Protocol):
    """What a shadow needs from the schedd: the queue, the clock, recording
    transitions, running blocking work, and being told when the shadow ends."""

    queue: Any
    clock: Any

    def record_all(self, transitions: list[Transition]) -> None: ...

    def run_blocking(self, function: Callable, *args: Any, **kwargs: Any) -> Deferred: ...

    def shadow_ended(self, shadow: "Shadow", ending: Ending, reason: str) -> None: ...


# Mutable: one running job's agent, from activation until its exit, eviction or stop.
class Shadow:
    """The agent of job ``job_id`` running on ``slot_name`` at ``startd_address``."""

    def __init__(self, host: ShadowHost, job_id: JobId, claim_id: str, startd_address: str, slot_name: str,
                 transfer_key: str, lease_seconds: float = DEFAULT_LEASE_SECONDS, *,
                 s3_endpoint_url: str | None = None, staging_root: str | None = None,
                 remote_pool: str | None = None, spool_root: str | None = None) -> None:
        self.host = host
        #: Where the job's checkpoint is kept (None: this schedd keeps none).
        self.checkpoint_dir = spool_directory(spool_root, job_id.cluster, job_id.proc) if spool_root else None
        #: Seconds of this run its checkpoints committed already.
        self._committed_this_run = 0
        #: The other pool the job runs in when it flocked there (its ``RemotePool``), else None.
        self.remote_pool = remote_pool
        self.job_id = job_id
        self._claim_id = claim_id
        self.startd_address = startd_address
        self.slot_name = slot_name
        self._transfer_key = transfer_key
        self.lease_seconds = lease_seconds
        self.s3_endpoint_url = s3_endpoint_url
        self.staging_root = staging_root
        self.ended = False
        #: Why the link to the starter is down, while it is (022 written, 023 or 024 to come).
        self.disconnected: str | None = None
        self._usage: dict[str, int | float] = {}
        #: Transfer counts (``BytesSent``...) not yet stored: they go with the job's next queue change.
        self._counts: dict[str, int] = {}
        self._lease_call = host.clock.callLater(lease_seconds, self._lease_expired)

    def __repr__(self) -> str:
        return f"Shadow(job={self.job_id}, slot={self.slot_name!r}, startd={self.startd_address!r})"

    @property
    def claim_id(self) -> str:
        return self._claim_id

    # --- checks ---
    def check_key(self, presented: str | None) -> None:
        """Refuse a request that does not carry this job's transfer key.

        Raises:
            Forbidden: the key is missing or wrong.
        """
        if not presented or not hmac.compare_digest(presented.encode(), self._transfer_key.encode()):
            raise Forbidden(f"the transfer key for job {self.job_id} is missing or wrong")

    def heard_from_starter(self) -> None:
        """Renew the lease: the starter is alive (and a broken link is back)."""
        if not self.ended and self._lease_call.active():
            self._lease_call.reset(self.lease_seconds)
        self.link_back()

    # --- the link to the execute side ---
    def link_lost(self, why: str) -> None:
        """The startd cannot be reached: the job runs on under its lease while the schedd
        keeps trying; 022 (disconnected) goes to the event log once per outage."""
        if self.ended or self.disconnected is not None:
            return
        self.disconnected = why
        _log.warn("job {job}: disconnected from {slot} at {startd}: {why}; reconnecting for up to {lease:g} s",
                  job=self.job_id, slot=self.slot_name, startd=self.startd_address, why=why,
                  lease=self.lease_seconds)
        self._log_event(EventType.JOB_DISCONNECTED, DisconnectReason=why)

    def link_back(self) -> None:
        """The startd (or the starter) answered again within the lease: 023 (reconnected)."""
        if self.ended or self.disconnected is None:
            return
        self.disconnected = None
        _log.info("job {job}: reconnected to {slot} at {startd}", job=self.job_id, slot=self.slot_name,
                  startd=self.startd_address)
        self._log_event(EventType.JOB_RECONNECTED, StarterAddr=_sinful(self.startd_address))

    def claim_lost(self, why: str) -> None:
        """The startd no longer holds the job's claim (its lease there ran out, or it
        restarted): the run is gone, so the job goes back to Idle at once."""
        if not self.ended:
            self._requeue(f"the startd at {self.startd_address} no longer holds the claim: {why}")

    def _log_event(self, kind: EventType, **details: Any) -> None:
        event = Event(kind, self.job_id.cluster, self.job_id.proc, now_from(self.host.clock),
                      {"StartdName": self.slot_name, "StartdAddr": _sinful(self.startd_address), **details})
        self.host.record_all([Transition(self.job_id, {}, event)])

    # --- input ---
    def input_reply(self) -> Deferred:
        """Fire with a stream of the job's input tar, read with its owner's rights; a
        missing or unreadable input holds the job (code 13) and fails with Conflict so
        the starter gives up."""
        self.heard_from_starter()
        ad = self._job_ad()
        try:
            plan = input_plan(ad)
            account = job_account(ad, INPUT) if input_touches_files(plan) else None
            light = as_owner(account, input_send_is_light, plan)
        except TransferError as exc:
            return self._refused(exc, "input")
        kept = checkpoint_stream(self.checkpoint_dir, ad)
        light = light and kept is None
        sending = self._blocking(light, as_owner, account, send_input, ad, s3_endpoint_url=self.s3_endpoint_url)
        sending.addCallbacks(lambda sent: StreamReply(self._input_chunks(account, sent.stream, kept)),
                             self._transfer_failed, errbackArgs=("input",))
        return sending

    def inline_input(self, ad: ClassAd, packed: PackedInputs) -> PackedInput | None:
        """The job's whole input tar, to go inside ACTIVATE and save the starter a JOB_INPUT
        round trip, with the counts to add once the startd took it (:meth:`input_taken`).
        Only for inputs read inline anyway (no URL, no directory, no kept checkpoint) and
        of at most :data:`INLINE_INPUT_BYTES`, read with the owner's rights; None otherwise,
        and for inputs that cannot be read: the starter then fetches them, and that refusal
        holds the job as before. A tar ``packed`` holds for the same files is sent again."""
        try:
            plan = input_plan(ad)
            if plan.urls or checkpoint_stream(self.checkpoint_dir, ad) is not None:
                return None
            account = job_account(ad, INPUT) if input_touches_files(plan) else None
            return as_owner(account, self._small_input, ad, plan, packed, account)
        except (TransferError, OSError):
            return None

    def _small_input(self, ad: ClassAd, plan, packed: PackedInputs, account: Account | None) -> PackedInput | None:
        """:meth:`inline_input`'s tar, read in one go (run with the owner's rights)."""
        if not input_send_is_light(plan):
            return None
        sent = send_input(ad, s3_endpoint_url=self.s3_endpoint_url)
        if _files_size(sent.stream.items) > INLINE_INPUT_BYTES:
            return None
        key = content_key(sent.stream.items, account.uid if account is not None else None, sent.stream.max_bytes)
        return packed.packed(key, lambda: PackedInput(b"".join(sent.stream), input_attributes(sent.stream.stats)))

    def input_taken(self, counts: dict[str, int]) -> None:
        """The startd took the inputs sent inside ACTIVATE: count them (``BytesSent``)."""
        self._count(counts)

    def _count(self, counts: Mapping[str, int]) -> None:
        """Note transfer counts (``Bytes*`` add up, the rest replace) to store with the job's
        next queue change, its execute or exit report usually: one write instead of two."""
        if self.ended:
            return
        for name, value in counts.items():
            self._counts[name] = self._counts.get(name, 0) + value if name.startswith("Bytes") else value

    def _counts_steps(self) -> list[Callable]:
        """The noted transfer counts as the first step of a queue change (none when there are none)."""
        if not self._counts:
            return []
        counts = dict(self._counts)
        return [lambda ad, clock: added_counts(ad, counts, clock)]

    def _input_chunks(self, account, stream, kept=None):
        """The inputs read with the owner's rights, then the kept checkpoint (the
        schedd's own spool files) in the same tar stream."""
        if kept is not None:
            stream.end = False
        yield from chunks_as_owner(account, stream)
        if kept is not None:
            yield from kept
        if not self.ended:
            counts = input_attributes(stream.stats)
            if kept is not None:
                counts = {**counts, "BytesSent": counts["BytesSent"] + kept.stats.bytes}
            self._count(counts)

    # --- output ---
    def receive_output(self, body: bytes) -> Deferred:
        """Unpack the output tar ``body`` into the job's ``Iwd`` (with remaps) with its
        owner's rights and fire with ``{"files", "bytes"}``; a failure or a target the
        owner cannot write holds the job (code 12) and fails with Conflict."""
        self.heard_from_starter()
        ad = self._job_ad()
        try:
            account = job_account(ad, OUTPUT)
            light = stream_is_small(len(body), output_plan(ad))
        except TransferError as exc:
            return self._refused(exc, "output")
        receiving = self._blocking(light, self._unpack_output, body, ad, account)
        receiving.addCallbacks(self._output_received, self._transfer_failed, errbackArgs=("output",))
        return receiving

    # --- checkpoints ---
    def receive_checkpoint(self, body: bytes) -> Deferred:
        """Keep the checkpoint tar ``body`` as the job's checkpoint in the spool (040
        events before and after) and fire with ``{"files", "bytes"}``. A failed one
        leaves the previous checkpoint in place and fails with Conflict; the job runs
        on (HTCondor retries at the next checkpoint).

        Raises:
            Conflict: (synchronously) this schedd keeps no checkpoints.
        """
        self.heard_from_starter()
        ad = self._job_ad()
        if self.checkpoint_dir is None:
            raise Conflict(f"job {self.job_id}: this schedd has no spool to keep checkpoints in")
        self._apply(checkpoints.output_transfer_event, checkpoints.OUT_STARTED, quiet=True)
        light = stream_is_small(len(body), output_plan(ad))
        receiving = self._blocking(light, receive_checkpoint, io.BytesIO(body), self.checkpoint_dir, ad)
        receiving.addCallbacks(self._checkpoint_received, self._checkpoint_failed)
        return receiving

    def _checkpoint_received(self, stats) -> dict:
        if not self.ended:
            self._count(output_attributes(stats))
            self._apply(checkpoints.output_transfer_event, checkpoints.OUT_FINISHED, quiet=True)
        return {"files": stats.files, "bytes": stats.bytes}

    def _checkpoint_failed(self, failure):
        failure.trap(TransferError, OSError)
        _log.warn("job {job}: checkpoint not kept: {why}", job=self.job_id, why=failure.value)
        raise Conflict(f"job {self.job_id}: checkpoint not kept: {failure.value}")

    def _checkpointed(self, attrs_: Mapping[str, Any]) -> None:
        try:
            report = checkpoints.CheckpointReport.from_attributes(attrs_)
        except InvalidTransitionError as exc:
            raise BadRequest(str(exc)) from None
        self._record_usage(usage_of(attrs_))
        self._apply(checkpoints.record_checkpoint, report)
        self._committed_this_run += report.newly_committed

    def _unpack_output(self, body: bytes, ad: ClassAd, account: Account | None):
        if not outputs_go_to_urls(output_plan(ad)):  # staging only holds outputs bound for URLs
            return as_owner(account, receive_output, io.BytesIO(body), ad, None,
                            s3_endpoint_url=self.s3_endpoint_url)
        with staging_directory(self.staging_root, f"output-{self.job_id}-", account) as staging:
            return as_owner(account, receive_output, io.BytesIO(body), ad, staging,
                            s3_endpoint_url=self.s3_endpoint_url)

    def _refused(self, error: TransferError, direction: str) -> Deferred:
        """A transfer refused before it began: hold the job as a failed one would."""
        return fail(error).addErrback(self._transfer_failed, direction)

    def _blocking(self, light: bool, function: Callable, *args: Any, **kwargs: Any) -> Deferred:
        """Run a transfer step inline when ``light``, else through the host's thread pool."""
        if light:
            return maybeDeferred(function, *args, **kwargs)
        return self.host.run_blocking(function, *args, **kwargs)

    def _output_received(self, stats) -> dict:
        if not self.ended:
            self._count(output_attributes(stats))
        return {"files": stats.files, "bytes": stats.bytes}

    def _transfer_failed(self, failure, direction: str):
        failure.trap(TransferError)
        error = failure.value
        _log.warn("job {job}: {direction} transfer failed: {why}", job=self.job_id, direction=direction, why=error)
        if not self.ended:
            hold = error.hold_attributes()
            self._apply(states.hold, hold["HoldReason"], code=hold["HoldReasonCode"],
                        subcode=hold["HoldReasonSubCode"])
            self._end(Ending.VACATE if direction == "input" else Ending.REUSE, f"{direction} transfer failed")
        raise Conflict(f"job {self.job_id} is held: {error.hold_reason}")

    # --- updates ---
    def update(self, event: str, attrs_: Mapping[str, Any]) -> dict:
        """Apply one report from the starter; answers what the job became.

        Raises:
            BadRequest: an unknown event or malformed attributes.
            Conflict: the job is no longer in a state the report applies to; the shadow ends.
        """
        if event not in UPDATE_EVENTS:
            raise BadRequest(f"event must be one of {', '.join(UPDATE_EVENTS)}, got {event!r}")
        if not isinstance(attrs_, Mapping):
            raise BadRequest(f"attrs must be an object, got {type(attrs_).__name__}")
        self.heard_from_starter()
        if event == "execute":
            self._execute()
        elif event == "usage":
            self._record_usage(usage_of(attrs_))
        elif event == "exit":
            return self._exited(attrs_)
        elif event == "checkpoint":
            self._checkpointed(attrs_)
        elif event == "hold":
            hold = hold_of(attrs_)
            self._record_usage(usage_of(attrs_))
            self._held(hold)
        else:
            self._evicted(str(attrs_.get("Reason") or "the startd evicted the job"))
        return {"job_status": int(self._status())}

    def _execute(self) -> None:
        if self._status() is JobStatus.RUNNING:
            return
        self._apply(started_on, self.startd_address, slot_name=self.slot_name, remote_pool=self.remote_pool)

    def _start_step(self, ad: ClassAd, clock) -> Transition | None:
        """The start, as a step of the exit's one queue change, when the execute report
        came inside the exit report (the job ended before it went): the job is still Idle.
        None (no change) for a job the execute report started already."""
        if states.status_of(ad) is not JobStatus.IDLE:
            return None
        return started_on(ad, self.startd_address, clock, slot_name=self.slot_name, remote_pool=self.remote_pool)

    def _record_usage(self, usage: dict) -> None:
        self._usage.update(usage)
        if usage:
            self._apply(record_usage, usage)

    def _exited(self, attrs_: Mapping[str, Any]) -> dict:
        exit = exit_record_of(attrs_)
        self._usage.update(usage_of(attrs_))
        wall = _number(attrs_, "RemoteWallClockTime", float)
        committed = wall - self._committed_this_run if wall is not None else None
        exited = self.host.queue.exit_step(exit)
        try:
            *earlier, result = self.host.queue.transitions(self.job_id, [
                *self._counts_steps(), self._start_step,
                _quiet_step(record_run_end, dict(self._usage), wall, committed), exited])
        except (InvalidTransitionError, JobNotFoundError) as exc:
            self._quietly(self.host.queue.transition, self.job_id, record_run_end, dict(self._usage), wall,
                          committed)
            self._end(Ending.REUSE, "the job exited")
            raise Conflict(f"job {self.job_id} exit not recorded: {exc}") from None
        self._counts.clear()
        if result.event is not None and result.event.type == EventType.JOB_TERMINATED:
            result = attrs.evolve(result, event=terminated_event(result.event, exited.ad, self._usage))
        self._record([*earlier, result])
        if self.checkpoint_dir is not None and result.changes.get("JobStatus") == JobStatus.COMPLETED:
            self.host.run_blocking(remove_checkpoint, self.checkpoint_dir)  # nothing restarts from it now
        self._end(Ending.REUSE, "the job exited")
        return {"job_status": int(result.changes.get("JobStatus", 0)), "decision": exited.decision.action.value}

    def _held(self, hold: dict) -> None:
        self._apply(states.hold, hold["HoldReason"], code=hold["HoldReasonCode"], subcode=hold["HoldReasonSubCode"])
        self._end(Ending.REUSE, "the starter held the job")

    def _evicted(self, reason: str) -> None:
        if self._status() in states.ACTIVE:
            self._apply(lambda ad, clock: states.vacate(ad, clock))
        self._end(Ending.RELEASE, reason)

    # --- lease and stopping ---
    def _lease_expired(self) -> None:
        if self.ended:
            return
        _log.warn("job {job}: no word from the starter at {startd} for {lease} s; requeueing it",
                  job=self.job_id, startd=self.startd_address, lease=self.lease_seconds)
        self._requeue(f"job lease of {self.lease_seconds:g} s expired")

    def _requeue(self, reason: str) -> None:
        """The run is lost: 024 (reconnection failed) if the link was down, then back to
        Idle (the restart counted) to run elsewhere."""
        if self.disconnected is not None:
            self._log_event(EventType.JOB_RECONNECT_FAILED,
                            Reason=f"Job disconnected too long: JobLeaseDuration ({self.lease_seconds:g} seconds) "
                                   f"expired" if "lease" in reason else reason)
        try:
            if self._status() in states.ACTIVE:
                self._apply(lambda ad, clock: states.vacate(ad, clock))
        except Exception:  # the lease must end the shadow whatever the queue says
            _log.failure("job {job}: requeueing after the lease expired failed", job=self.job_id)
        self._end(Ending.RELEASE, reason)

    def stop(self, reason: str) -> None:
        """The schedd stopped the job (removed, held or vacated by a user): finish the
        removal in the queue and end, asking for the job to be vacated at the startd."""
        if self.ended:
            return
        try:
            status = self._status()
            if status is JobStatus.REMOVED:
                self._apply(lambda ad, clock: states.removal_done(ad, clock))
            else:
                self._apply(_off_machine)
        except Exception:
            _log.failure("job {job}: finishing the stop failed", job=self.job_id)
        self._end(Ending.VACATE, reason)

    def abandon(self) -> None:
        """End without touching the queue (activation failed; the job never started)."""
        if not self.ended:
            self._end(Ending.RELEASE, "activation failed")

    def shut_down(self) -> None:
        """The schedd is stopping: drop the lease timer and leave the job as it is."""
        self.ended = True
        if self._lease_call.active():
            self._lease_call.cancel()

    def _end(self, ending: Ending, reason: str) -> None:
        if self.ended:
            return
        if self._counts:  # no queue change came after them: store them on their own
            self._quietly(self.host.queue.transitions, self.job_id, self._counts_steps())
            self._counts.clear()
        self.shut_down()
        self.host.shadow_ended(self, ending, reason)

    # --- queue access ---
    def _job_ad(self) -> ClassAd:
        ad = self._job_ad_or_none()
        if ad is None:
            raise self._left_queue()
        return ad

    def _left_queue(self) -> Conflict:
        """End (the job is gone from the queue) and give the refusal to raise."""
        self._end(Ending.VACATE, "the job left the queue")
        return Conflict(f"job {self.job_id} is no longer in the queue")

    def _job_ad_or_none(self) -> ClassAd | None:
        try:
            return self.host.queue.get_job(self.job_id)
        except JobNotFoundError:
            return None

    def _status(self) -> JobStatus:
        try:
            return self.host.queue.status_of(self.job_id)
        except JobNotFoundError:
            raise self._left_queue() from None

    def _apply(self, make: Callable, *args: Any, quiet: bool = False, **kwargs: Any) -> None:
        """Apply one queue change and record its event; a change that no longer fits
        the job's state ends the shadow with Conflict (unless ``quiet``)."""
        steps = [*self._counts_steps(), lambda ad, clock: make(ad, *args, clock, **kwargs)]
        try:
            results = self.host.queue.transitions(self.job_id, steps)
        except (InvalidTransitionError, JobNotFoundError) as exc:
            if quiet:
                return
            self._end(Ending.VACATE, str(exc))
            raise Conflict(f"job {self.job_id}: {exc}") from None
        self._counts.clear()
        self._record(results)

    def _record(self, results: list[Transition]) -> None:
        """Log the events of committed changes (each event log written once for all);
        the shadow is the one stopping, so none of them stops it."""
        self.host.record_all([attrs.evolve(result, stop_shadow=False) for result in results])

    def _quietly(self, function: Callable, *args: Any) -> None:
        try:
            function(*args)
        except (InvalidTransitionError, JobNotFoundError):
            pass


def _files_size(items) -> int:
    """How many bytes the regular files among pack ``items`` hold now."""
    return sum(os.stat(item.source).st_size for item in items if not item.is_dir)


def _quiet_step(make: Callable, *args: Any) -> Callable[[ClassAd, Any], Transition | None]:
    """``make(ad, *args, clock)`` as a step of a queue change that changes nothing
    (rather than failing the whole change) where it does not apply."""
    def step(ad: ClassAd, clock) -> Transition | None:
        try:
            return make(ad, *args, clock)
        except InvalidTransitionError:
            return None
    return step


def _off_machine(ad: ClassAd, clock) -> Transition:
    """The job's shadow is gone: ``RemoteHost`` becomes ``LastRemoteHost`` (``RemotePool``, ``LastRemotePool``)."""
    return Transition(states.job_id_of(ad), states.left_machine(ad))


def _sinful(address: str) -> str:
    return address if address.startswith("<") else f"<{address}>"


def transfer_key_of(request) -> str | None:
    """The transfer key a starter presented in the ``X-Roost-Transfer-Key`` header.
    Only the header counts: a key in the URL would land in access logs."""
    from daemoncore.wire.schedd_routes import TRANSFER_KEY_HEADER

    return request.header(TRANSFER_KEY_HEADER)


def maybe_call(function: Callable, *args: Any, **kwargs: Any) -> Deferred:
    """Run ``function`` now and wrap its result in a Deferred: the synchronous stand-in
    for ``deferToThread`` that unit tests on ``task.Clock`` use."""
    return maybeDeferred(function, *args, **kwargs)


__all__ = ["Shadow", "ShadowHost", "Ending", "DEFAULT_LEASE_SECONDS", "usage_of", "exit_record_of",
           "record_usage", "record_run", "record_run_end", "started_on", "added_counts", "terminated_event",
           "transfer_key_of", "maybe_call"]
