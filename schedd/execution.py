"""The schedd's execution side: answering the negotiator (resource requests and
matches), claiming matched slots at their startds, starting a shadow per job,
serving the starters' input, output and update routes, reusing a claim for the
owner's next matching job (``CLAIM_WORKLIFE``) and releasing it when none is left.

Built as ``Execution(service)`` from the schedd service, which gives ``queue``,
``clock``, ``config``, ``record(transition)``, ``daemon_client(address, timeout, token)``,
``address``, ``trusted_pools`` (the pools flocked with) and ``flock_levels``; any object
with those will do (the tests use a small stand-in).

A match may come from another pool's negotiator (``negotiator@peer-<id>``, the identity
this pool gave it): the job then flocks there, its slot is claimed with the token that
pool gave this one, and the job carries ``RemotePool`` while it runs.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import attrs
from twisted.application import service as app_service
from twisted.internet import task
from twisted.internet.defer import Deferred, DeferredSemaphore, succeed
from twisted.logger import Logger

from classad import ClassAd
from daemoncore.security.pool_trust import TrustedPool
from daemoncore.wire import schedd_routes, startd_routes
from daemoncore.wire.adcodec import ad_from_json, ad_to_json
from daemoncore.wire.address import DEFAULT_COLLECTOR_PORT, parse_address
from daemoncore.wire.errors import BadRequest, NotFound, RemoteError
from daemoncore.wire.resource_request import request_to_json
from daemoncore.wire.server import ApiRequest, JsonReply, StreamReply
from daemoncore.worker_threads import in_worker_thread
from jobmodel.errors import InvalidTransitionError
from jobmodel.states import (
    JobId,
    JobStatus,
    Transition,
    apply_changes,
    hold,
    job_id_of,
    removal_done,
    status_of,
    vacate,
)
from schedd.checkpoint_sweep import CheckpointSweep
from schedd.claims import (
    DEFAULT_ALIVE_INTERVAL,
    DEFAULT_CLAIM_WORKLIFE,
    Claim,
    ClaimTable,
    accepts_more_jobs,
    alive_period_for,
    alives_due,
    claim_terms,
    next_job_for,
)
from schedd.flocking import HOME_LEVEL
from schedd.gangs import Gangs, GangStep, gang_of, host_and_slot
from schedd.match_substitution import HOLD_CODE as MATCH_HOLD_CODE
from schedd.match_substitution import expand_match_macros, recorded_changes
from schedd.negotiation import Match, parse_matches, pick_job, requests_for, submitter_key
from schedd.queue.db import RunningClaim
from schedd.riding_activations import RidingActivations
from schedd.start_pacing import StartPacing
from shadow.owner_rights import INPUT, as_owner, job_account
from shadow.shadow import DEFAULT_LEASE_SECONDS, Ending, Shadow, transfer_key_of
from transfer import TransferError
from transfer.packed_inputs import PackedInputs
from transfer.urls import with_presigned_inputs

IDLE_CONSTRAINT = f"JobStatus == {int(JobStatus.IDLE)}"
#: How often the claims are looked at for a due keep-alive.
ALIVE_CHECK_INTERVAL = 1.0
#: A keep-alive unanswered this long (or its claims' alive period, if shorter) counts as a broken link.
ALIVE_TIMEOUT = 60.0
#: Why a shadow made at start-up is disconnected until its startd answers RECONNECT.
RESTARTED = "the schedd restarted"
#: How often ACTIVATE of a claim still pending at the startd (waiting for the claims it preempts) is sent again.
PENDING_RETRY = 5.0
#: How long the startd holds an ACTIVATE of a pending claim before answering 409 pending, plus a margin.
PENDING_ACTIVATE_TIMEOUT = 45.0

_log = Logger()



def lease_seconds_for(job: ClassAd, override: float | None) -> float:
    """The job's lease: its ``JobLeaseDuration`` (HTCondor's 2400 s when unset or
    not positive), shortened to ``override`` (``SHADOW_LEASE_DURATION``) when given."""
    value = job.evaluate("JobLeaseDuration") if "JobLeaseDuration" in job else None
    lease = float(value) if type(value) in (int, float) and value > 0 else DEFAULT_LEASE_SECONDS
    if override is not None and override > 0:
        lease = min(lease, override)
    return lease


def _sinful(address: str) -> str:
    return address if address.startswith("<") else f"<{address}>"


def pending_until(answer: dict, now: float, match_timeout: float) -> float | None:
    """For a CLAIM answered pending (the slot is free once the claims it preempts end), when
    to stop waiting: ``ready_within`` + ``MATCH_TIMEOUT`` from ``now``; None for a claim ready now."""
    if answer.get("pending") is not True:
        return None
    within = answer.get("ready_within")
    within = float(within) if type(within) in (int, float) and within >= 0 else 0.0
    return now + within + match_timeout


def _still_pending(failure) -> bool:
    """Whether ACTIVATE failed only because the claim still waits for its victims (409 pending)."""
    return bool(failure.check(RemoteError)) and failure.value.status == 409 and failure.value.code == "pending"


def _job_id_param(request: ApiRequest) -> JobId:
    try:
        return JobId.parse(request.params["job_id"])
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


#: How many calls the startd answers at once (CLAIM, VACATE, RELEASE, and ACTIVATE of a claim
#: not waiting for the claims it preempts) may wait for one startd's answers at a time (the
#: others wait their turn here), in the spirit of HTCondor's MAX_PENDING_STARTD_CONTACTS.
#: ``roost rm`` of 500 running jobs sent 500 RELEASEs together: the startd's reactor
#: had 450 sockets ready at once and answered anyone else (a ping) 0.4-1.2 s late.
CONTACTS_PER_STARTD = 16


# Mutable: the calls waiting for each startd.
class StartdContacts:
    """Sends calls to startds, at most ``limit`` waiting for one startd's answer at a time;
    the rest go, in the order they came, as answers come back. A call under the limit
    goes at once."""

    def __init__(self, limit: int = CONTACTS_PER_STARTD) -> None:
        self.limit = limit
        self._lanes: dict[str, DeferredSemaphore] = {}

    def call(self, address: str, send: Callable[[], Deferred]) -> Deferred:
        """``send()`` when fewer than ``limit`` calls to ``address`` wait for their answer;
        fires as its Deferred does."""
        lane = self._lanes.get(address)
        if lane is None:
            lane = self._lanes[address] = DeferredSemaphore(self.limit)
        sent = lane.run(send)
        sent.addBoth(self._forget_if_idle, address, lane)
        return sent

    def waiting(self, address: str) -> int:
        """How many calls to ``address`` wait for their turn (not counting those sent)."""
        lane = self._lanes.get(address)
        return len(lane.waiting) if lane is not None else 0

    def _forget_if_idle(self, result, address: str, lane: DeferredSemaphore):
        if lane.tokens == lane.limit and not lane.waiting and self._lanes.get(address) is lane:
            del self._lanes[address]
        return result


# Mutable: the schedd's live claims, shadows and pending requests.
class Execution(app_service.Service):
    """Runs the schedd's idle jobs on the slots the negotiator matches them to."""

    name = "execution"

    def __init__(self, schedd, run_blocking: Callable[..., Deferred] | None = None) -> None:
        self.schedd = schedd
        self.queue = schedd.queue
        self.clock = schedd.clock
        config = schedd.config
        self.claim_worklife = config.param_float("CLAIM_WORKLIFE", DEFAULT_CLAIM_WORKLIFE)
        self.lease_override = config.param_duration("SHADOW_LEASE_DURATION")
        self.s3_endpoint_url = config.param("S3_ENDPOINT_URL")
        self.staging_root = config.param("SPOOL")
        #: The schedd's spool, where self-checkpointing jobs' checkpoints are kept (None: not kept).
        settings = getattr(schedd, "schedd_settings", None)
        self.spool_root: str | None = settings.spool if settings is not None else None
        self.extra_significant = config.param_list("ADD_SIGNIFICANT_ATTRIBUTES", [])
        self.match_timeout = config.param_duration("MATCH_TIMEOUT", 120.0) or 120.0
        self._run_blocking = run_blocking or in_worker_thread
        self.claims = ClaimTable()
        self.shadows: dict[JobId, Shadow] = {}
        self._starting: set[JobId] = set()  # matched, being claimed or activated
        self._cancelled: set[JobId] = set()  # stopped by the schedd before their shadow began
        self._requests: dict[str, tuple[str, ...]] = {}
        self.alive_interval = config.param_duration("ALIVE_INTERVAL", DEFAULT_ALIVE_INTERVAL) or DEFAULT_ALIVE_INTERVAL
        self._alive_calls: set[str] = set()  # startds with a keep-alive on its way (one at a time each)
        self._alive_loop = task.LoopingCall(self._send_alives)
        self._alive_loop.clock = self.clock
        self.gangs = Gangs(self)
        #: Claims and activations of a burst of matches, one per reactor turn.
        self.pacing = StartPacing(self.clock)
        #: CLAIMs, ACTIVATEs (of claims not waiting for preempted ones), VACATEs and RELEASEs,
        #: a few at a time to each startd.
        self.contacts = StartdContacts()
        #: Small input streams packed once for the jobs that send the same files.
        self.packed_inputs = PackedInputs()
        #: Activations sent back inside the answer to the last job's exit report.
        self.rides = RidingActivations(self.clock, self._send_activate)
        self.checkpoint_sweep = (CheckpointSweep(self.queue, self.spool_root, lambda job_id: job_id in self.shadows,
                                                 self._run_blocking, self.clock) if self.spool_root else None)

    # --- what the schedd service calls ---
    def handlers(self) -> dict:
        """The negotiator's and starters' routes, for the schedd's route table."""
        return {
            schedd_routes.RESOURCE_REQUESTS: self.resource_requests,
            schedd_routes.MATCHES: self.matches,
            schedd_routes.JOB_INPUT: self.job_input,
            schedd_routes.JOB_OUTPUT: self.job_output,
            schedd_routes.JOB_CHECKPOINT: self.job_checkpoint,
            schedd_routes.JOB_UPDATE: self.job_update,
        }

    def stop_job(self, job_id: JobId, reason: str) -> None:
        """Stop a running job the user removed, held or vacated: its shadow finishes
        the change in the queue and the startd is told to vacate it."""
        shadow = self.shadows.get(job_id)
        if shadow is not None:  # paced: `roost rm -all` of 500 running jobs stops them over several turns
            self.pacing.run(shadow.stop, reason)
        elif job_id in self._starting:
            self._cancelled.add(job_id)

    def startService(self) -> None:
        """Jobs the queue shows running but no shadow of ours watches (the schedd was
        restarted) go back to Idle, or finish their removal, so they run again."""
        super().startService()
        self._settle_orphans()
        self._alive_loop.start(ALIVE_CHECK_INTERVAL, now=False)
        self.gangs.start()
        if self.checkpoint_sweep is not None:
            self.checkpoint_sweep.start()

    def _settle_orphans(self) -> None:
        orphans = f"JobStatus == {int(JobStatus.RUNNING)} || JobStatus == {int(JobStatus.SUSPENDED)} || " \
                  f"JobStatus == {int(JobStatus.TRANSFERRING_OUTPUT)} || " \
                  f"(JobStatus == {int(JobStatus.REMOVED)} && RemoteHost =!= undefined)"
        stored = {JobId(c.cluster_id, c.proc_id): c for c in self.queue.db.running_claims()}
        for ad in list(self.queue.query(orphans, projection=("ClusterId", "ProcId", "JobStatus"))):
            job_id = job_id_of(ad)
            if job_id in self.shadows:
                continue
            running_claim = stored.pop(job_id, None)
            if running_claim is not None and status_of(ad) is not JobStatus.REMOVED:
                self._reconnect(running_claim)
                continue
            if running_claim is not None:  # removed while the schedd was away: end its run there too
                self.queue.db.delete_running_claim(job_id.cluster, job_id.proc)
                releasing = self._contact(running_claim.startd_address, None, startd_routes.RELEASE,
                                          {"claim_id": running_claim.claim_id})
                releasing.addErrback(lambda failure: None)  # its lease there ends it anyway
            make = removal_done if status_of(ad) is JobStatus.REMOVED else vacate
            try:
                result = self.queue.transition(job_id, make)
            except (InvalidTransitionError, KeyError) as exc:
                _log.warn("job {job}: left as it is after restart: {why}", job=job_id, why=exc)
                continue
            _log.info("job {job} had no shadow after restart: {what}", job=job_id,
                      what="removal finished" if make is removal_done else "back to Idle")
            self.record(attrs.evolve(result, stop_shadow=False))
        for job_id in stored:  # claims of jobs that no longer run: nothing to reconnect to
            self.queue.db.delete_running_claim(job_id.cluster, job_id.proc)

    # --- reconnecting after a restart ---
    def _reconnect(self, stored: RunningClaim) -> None:
        """Take a job that ran when the schedd stopped back from its startd: a shadow with a
        fresh transfer key, in the disconnected state, until the startd answers RECONNECT
        (023) or the lease runs out (024, back to Idle)."""
        job_id = JobId(stored.cluster_id, stored.proc_id)
        terms = {**claim_terms(self.queue.get_job(job_id)), "owner": stored.owner}  # as the fresh claim had them
        claim = self.claims.add(Claim(
            claim_id=stored.claim_id, slot_name=stored.slot_name, startd_address=stored.startd_address,
            slot_ad=ClassAd(), claimed_at=stored.claimed_at, **terms,
            alive_period=alive_period_for(stored.lease, self.alive_interval), alive_at=self.clock.seconds(),
            pool=stored.pool))
        claim = self.claims.assign(claim.claim_id, job_id)
        key = secrets.token_urlsafe(32)
        shadow = Shadow(self, job_id, claim.claim_id, claim.startd_address, claim.slot_name, key, stored.lease,
                        s3_endpoint_url=self.s3_endpoint_url, staging_root=self.staging_root, remote_pool=claim.pool,
                        spool_root=self.spool_root)
        shadow.disconnected = RESTARTED
        self.shadows[job_id] = shadow
        _log.info("job {job}: reconnecting to {slot} at {startd} after a restart", job=job_id, slot=claim.slot_name,
                  startd=claim.startd_address)
        self._ask_reconnect(shadow, key)

    def _ask_reconnect(self, shadow: Shadow, key: str) -> None:
        if shadow.ended or self.shadows.get(shadow.job_id) is not shadow:
            return
        body = {"claim_id": shadow.claim_id, "job_id": str(shadow.job_id), "transfer_key": key,
                "schedd_address": _sinful(self.schedd.address)}
        asking = self._client(shadow.startd_address, shadow.remote_pool).call(startd_routes.RECONNECT, body)
        asking.addCallbacks(lambda _: shadow.link_back(), self._reconnect_failed, errbackArgs=(shadow, key))

    def _reconnect_failed(self, failure, shadow: Shadow, key: str) -> None:
        if failure.check(RemoteError) and failure.value.status in (404, 409):
            shadow.claim_lost(failure.value.message)
            return
        _log.info("job {job}: reconnecting failed ({why}); trying again", job=shadow.job_id,
                  why=failure.getErrorMessage())
        self.clock.callLater(min(5.0, shadow.lease_seconds / 10), self._ask_reconnect, shadow, key)

    def stopService(self):
        """Leave running jobs as they are (their leases carry them) and stop the timers."""
        if self._alive_loop.running:
            self._alive_loop.stop()
        self.pacing.stop()
        self.rides.stop()
        self.gangs.stop()
        if self.checkpoint_sweep is not None:
            self.checkpoint_sweep.stop()
        for shadow in list(self.shadows.values()):
            shadow.shut_down()
        return super().stopService()

    # --- ShadowHost ---
    def record(self, transition: Transition) -> None:
        self.schedd.record(transition)

    def record_all(self, transitions: list[Transition]) -> None:
        self.schedd.record_all(transitions)

    def run_blocking(self, function: Callable, *args: Any, **kwargs: Any) -> Deferred:
        return self._run_blocking(function, *args, **kwargs)

    def shadow_ended(self, shadow: Shadow, ending: Ending, reason: str) -> None:
        """A job's shadow ended: reuse its claim for the owner's next job, or give it back."""
        self.shadows.pop(shadow.job_id, None)
        claim = self.claims.job_done(shadow.claim_id)
        if claim is not None and ending is Ending.REUSE:
            self._reuse_or_release(claim, ended=shadow.job_id)
            return
        self._forget_running(shadow.job_id)
        if claim is None:
            return
        if ending is Ending.VACATE:
            self._vacate_then_release(claim, reason)
        else:
            self._release(claim, reason)

    def _forget_running(self, job_id: JobId | None) -> None:
        """Forget the stored claim of a job that no longer runs (None: no job)."""
        if job_id is not None:
            self.queue.db.delete_running_claim(job_id.cluster, job_id.proc)

    # --- negotiator routes ---
    def resource_requests(self, request: ApiRequest) -> StreamReply:
        """RESOURCE_REQUESTS: one request per autocluster of the submitter's idle jobs."""
        body = request.json()
        submitter = body.get("submitter")
        found = requests_for(self._free_idle_jobs(submitter=submitter_key(submitter)), submitter, _sinful(self.schedd.address),
                             self.extra_significant)
        raised = self.schedd.flock_levels.negotiating(submitter, self._level_of(self._pool_of(request)),
                                                      sum(len(each.job_ids) for each in found))
        if raised:  # jobs were left idle at this level: advertise to the next pool soon
            self.schedd.queue_changed()
        prefix = f"{submitter}#"
        for request_id in [key for key in self._requests if key.startswith(prefix)]:
            del self._requests[request_id]
        for each in found:
            self._requests[each.request_id] = each.job_ids
        return StreamReply(request_to_json(each) for each in found)

    def matches(self, request: ApiRequest) -> JsonReply | Deferred:
        """MATCHES: pick a job for each match and start claiming its slot. The picks (a
        job read and matched against the slot each) go through the start pacing, so hundreds
        of matches do not hold the reactor; the answer comes once all are picked."""
        pool = self._pool_of(request)
        found = parse_matches(request.json())
        picked: list = []
        seen: dict[JobId, ClassAd | None] = {}
        answer: list[JsonReply] = []
        waiting: Deferred = Deferred()

        def free_ad(job_id: JobId) -> ClassAd | None:
            seen[job_id] = ad = self._free_ad(job_id)
            return ad

        def pick(match: Match) -> None:
            candidates = (JobId.parse(text) for text in self._requests.get(match.request_id, ()))
            job_id = pick_job(match, candidates, free_ad)
            if job_id is None:
                _log.info("match {request} for {slot}: no idle job left to run", request=match.request_id,
                          slot=match.slot_name)
                return
            self._starting.add(job_id)
            picked.append((match, job_id, seen[job_id]))  # the ad pick_job just read

        def claim_picked() -> None:
            try:
                to_claim, dropped = self.gangs.claims.admit(picked)
                self._starting.difference_update(dropped)
                for match, job_id in to_claim:
                    self.pacing.run(self._claim, match, job_id, pool)
                answer.append(JsonReply({"accepted": len(to_claim)}))
            finally:
                if not answer:
                    answer.append(JsonReply({"accepted": 0}))
                if not waiting.called:
                    waiting.callback(answer[0])
        for match in found:
            self.pacing.run(pick, match)
        self.pacing.run(claim_picked)
        return answer[0] if answer else waiting

    # --- starter routes ---
    def job_input(self, request: ApiRequest) -> Deferred:
        """JOB_INPUT: the job's input tar stream."""
        return self._shadow_for(request).input_reply()

    def job_output(self, request: ApiRequest) -> Deferred:
        """JOB_OUTPUT: the job's output tar stream, unpacked into its Iwd."""
        shadow = self._shadow_for(request)
        return shadow.receive_output(request.body).addCallback(JsonReply)

    def job_checkpoint(self, request: ApiRequest) -> Deferred:
        """JOB_CHECKPOINT: a self-checkpointing job's checkpoint tar, kept in the spool."""
        return self._shadow_for(request).receive_checkpoint(request.body).addCallback(JsonReply)

    def job_update(self, request: ApiRequest) -> JsonReply:
        """JOB_UPDATE: execute, usage, exit or evicted. The answer to an exit report that
        says ``takes_activation`` carries the claim's next job's activation, if any."""
        shadow = self._shadow_for(request)
        body = request.json()
        event, attrs_ = body.get("event"), body.get("attrs", {})
        if event != "exit" or body.get("takes_activation") is not True:
            return JsonReply(shadow.update(event, attrs_))
        with self.rides.answering_exit(shadow.claim_id) as boarded:
            answer = shadow.update(event, attrs_)
            riding = boarded()
        return JsonReply(answer if riding is None else {**answer, "activate": riding})

    def _shadow_for(self, request: ApiRequest) -> Shadow:
        job_id = _job_id_param(request)
        shadow = self.shadows.get(job_id)
        if shadow is None:
            raise NotFound(f"job {job_id} has no shadow here: it is not running from this schedd")
        shadow.check_key(transfer_key_of(request))
        self.rides.heard_from(shadow)
        return shadow

    # --- claiming and activating ---
    def _pool_of(self, request: ApiRequest) -> TrustedPool | None:
        """The other pool whose negotiator made ``request``, or None for this pool's."""
        name = getattr(request.identity, "name", None)
        return self.schedd.trusted_pools.by_negotiator(name) if name else None

    def _level_of(self, pool: TrustedPool | None) -> int | None:
        """The flock level of ``pool``'s negotiator: 0 at home, None for a pool not flocked to."""
        if pool is None:
            return HOME_LEVEL
        try:
            address = parse_address(pool.collector, default_port=DEFAULT_COLLECTOR_PORT)
        except ValueError:
            return None
        return self.schedd.flock_levels.settings.level_of(address)

    def _claim(self, match: Match, job_id: JobId, pool: TrustedPool | None = None) -> None:
        ad = self._free_ad(job_id, starting_ok=True)
        if ad is None:
            self._starting.discard(job_id)
            return
        body = {"claim_id": match.claim_id, "job_ad": ad_to_json(ad), "schedd_address": _sinful(self.schedd.address)}
        if match.victims:
            body["victims"] = [victim.claim_id for victim in match.victims]
        pool_name = pool.name if pool is not None else None
        claiming = self._contact(match.startd_address, pool_name, startd_routes.CLAIM, body)
        claiming.addCallback(self._claimed, match, job_id, claim_terms(ad), pool_name)
        claiming.addErrback(self._claim_failed, match, job_id)

    def _claimed(self, answer: dict, match: Match, job_id: JobId, terms: dict, pool: str | None = None) -> None:
        slot_ad = ad_from_json(answer.get("slot_ad") or ad_to_json(match.slot_ad), "CLAIM answer slot_ad")
        now = self.clock.seconds()
        claim = self.claims.add(Claim(
            claim_id=str(answer.get("claim_id") or match.claim_id), slot_name=str(answer.get("slot_name") or match.slot_name),
            startd_address=match.startd_address, slot_ad=slot_ad, claimed_at=now, **terms,
            pool=pool, ready_by=pending_until(answer, now, self.match_timeout)))
        _log.info("claimed {slot} at {startd} for job {job}{where}{pending}", slot=claim.slot_name,
                  startd=claim.startd_address, job=job_id, where=f" in pool {pool}" if pool else "",
                  pending=f", once the {len(match.victims)} claim(s) it preempts end" if claim.ready_by else "")
        self._gang_step(self.gangs.claims.claimed(claim, job_id, host_and_slot(claim.slot_name, slot_ad)))

    def _claim_failed(self, failure, match: Match, job_id: JobId) -> None:
        self._starting.discard(job_id)
        self._cancelled.discard(job_id)
        _log.warn("claiming {slot} at {startd} for job {job} failed: {why}", slot=match.slot_name,
                  startd=match.startd_address, job=job_id, why=failure.getErrorMessage())
        self._gang_step(self.gangs.claims.claim_failed(job_id))

    def _gang_step(self, step: GangStep) -> None:
        """Do what :class:`schedd.gangs.GangClaims` says: a gang starts whole or not at all."""
        self._starting.difference_update(step.stopped)
        for claim in step.release:
            self._release(claim, "another piece of its gang could not be claimed")
        for claim, job_id in step.activate:
            self.pacing.run(self._activate, claim, job_id)

    def _activate(self, claim: Claim, job_id: JobId, ended: JobId | None = None, ad: ClassAd | None = None) -> None:
        """Start ``job_id`` on ``claim``: a shadow with a fresh transfer key, then ACTIVATE.
        ``ended``: the job that ran on the claim until now, whose stored claim this one replaces;
        ``ad``: the job's idle ad when the caller read it just now (else it is read here)."""
        ad = ad if ad is not None else self._free_ad(job_id, starting_ok=True)
        if ad is None or job_id in self._cancelled:
            self._starting.discard(job_id)
            self._cancelled.discard(job_id)
            self._reuse_or_release(claim, ended)
            return
        ad = self._match_expanded(ad, claim.slot_ad, job_id)
        if ad is None:  # held: a $$() macro could not be resolved from this slot
            self._starting.discard(job_id)
            self._reuse_or_release(claim, ended)
            return
        self._starting.add(job_id)
        lease = lease_seconds_for(ad, self.lease_override)
        key = secrets.token_urlsafe(32)
        claim = self.claims.assign(claim.claim_id, job_id)
        claim = self.claims.update(claim.claim_id, alive_period=alive_period_for(lease, self.alive_interval)) or claim
        shadow = Shadow(self, job_id, claim.claim_id, claim.startd_address, claim.slot_name, key, lease,
                        s3_endpoint_url=self.s3_endpoint_url, staging_root=self.staging_root,
                        remote_pool=claim.pool, spool_root=self.spool_root)
        self.shadows[job_id] = shadow
        self._starting.discard(job_id)
        with self.queue.db.atomic():  # the claim moves from the job that ended to this one: one commit
            self._forget_running(ended)
            self.queue.db.save_running_claim(RunningClaim(job_id.cluster, job_id.proc, claim.claim_id,
                                                          claim.slot_name, claim.startd_address, claim.owner, lease,
                                                          claim.claimed_at, claim.pool))
        job_ad = apply_changes(self._presigned(ad), {"JobLeaseDuration": int(lease) if lease == int(lease) else lease})
        job_ad = self.gangs.with_hosts(job_ad, job_id)
        body = {"claim_id": claim.claim_id, "job_id": str(job_id), "job_ad": ad_to_json(job_ad),
                "transfer_key": key, "schedd_address": _sinful(self.schedd.address)}
        inline = shadow.inline_input(ad, self.packed_inputs)
        counts = None
        if inline is not None:  # small inputs ride along: the starter need not ask for them
            body["input"] = inline.base64()
            counts = inline.counts
        self._send_activate(claim, shadow, body, counts)

    def _match_expanded(self, ad: ClassAd, slot_ad: ClassAd, job_id: JobId) -> ClassAd | None:
        """The job ad with its ``$$()`` macros resolved from the slot, storing the ``MATCH_*``
        attributes HTCondor keeps; None when one cannot be resolved and the job is now held."""
        expansion = expand_match_macros(ad, slot_ad)
        if not expansion.recorded and expansion.hold_reason is None:
            return expansion.ad
        changes = recorded_changes(expansion.recorded)

        def stored(job: ClassAd, clock) -> Transition:
            if expansion.hold_reason is None:
                return Transition(job_id, changes)
            held = hold(job, expansion.hold_reason, clock, code=MATCH_HOLD_CODE)
            return attrs.evolve(held, changes={**held.changes, **changes})
        try:
            self.record(attrs.evolve(self.queue.transition(job_id, stored), stop_shadow=False))
        except (InvalidTransitionError, KeyError) as exc:
            _log.warn("job {job}: its $$() expansion was not stored: {why}", job=job_id, why=exc)
            return None
        return expansion.ad

    def _send_activate(self, claim: Claim, shadow: Shadow, body: dict, counts: dict | None = None) -> None:
        if self.shadows.get(shadow.job_id) is not shadow:  # stopped or requeued while it waited
            return
        if self.rides.board(claim, shadow, body, counts):
            return
        if claim.ready_by is not None:  # it may wait there for the claims it preempts: not one of the contacts
            activating = self._client(claim.startd_address, claim.pool, PENDING_ACTIVATE_TIMEOUT).call(
                startd_routes.ACTIVATE, body)
        else:
            activating = self.contacts.call(claim.startd_address, lambda: self._activate_now(claim, shadow, body))
        if counts is not None:
            activating.addCallback(lambda _: shadow.input_taken(counts))
        activating.addErrback(self._activate_failed, shadow, claim, body, counts)

    def _activate_now(self, claim: Claim, shadow: Shadow, body: dict) -> Deferred:
        """Send the ACTIVATE whose turn among the startd's contacts came, unless its shadow
        was stopped or requeued while it waited (then nothing is sent)."""
        if self.shadows.get(shadow.job_id) is not shadow:
            return succeed(None)
        return self._client(claim.startd_address, claim.pool).call(startd_routes.ACTIVATE, body)

    def _presigned(self, ad: ClassAd) -> ClassAd:
        """The job ad with its ``s3://`` inputs presigned, the credential files read
        with the owner's rights; left as it is when they cannot be (the shadow then
        holds the job with the reason when it sends the input)."""
        try:
            return as_owner(job_account(ad, INPUT), with_presigned_inputs, ad, endpoint_url=self.s3_endpoint_url)
        except (TransferError, OSError):
            return ad

    def _activate_failed(self, failure, shadow: Shadow, claim: Claim, body: dict, counts: dict | None = None) -> None:
        if _still_pending(failure) and claim.ready_by is not None and self.clock.seconds() < claim.ready_by:
            self.clock.callLater(PENDING_RETRY, self._send_activate, claim, shadow, body, counts)
            return
        _log.warn("activating job {job} on {slot} failed: {why}", job=shadow.job_id, slot=shadow.slot_name,
                  why=failure.getErrorMessage())
        if self.shadows.get(shadow.job_id) is shadow:
            shadow.abandon()

    def _reuse_or_release(self, claim: Claim, ended: JobId | None = None) -> None:
        """Start the owner's next fitting job on ``claim``, else give it back; ``ended`` is
        the job that ran on it until now (its stored claim goes either way)."""
        if accepts_more_jobs(claim, self.clock.seconds(), self.claim_worklife):
            singles = ((job, ad) for job, ad in self._free_idle_jobs(claim.owner) if gang_of(ad) is None)
            picked = next_job_for(claim, singles)  # a gang's piece starts only with the rest
            if picked is not None:
                self._activate(claim, picked[0], ended, picked[1])
                return
        self._forget_running(ended)
        self._release(claim, "no more idle jobs for this claim")

    def _release(self, claim: Claim, reason: str) -> None:
        released = self.claims.remove(claim.claim_id)
        if released is None:
            return
        _log.info("releasing {slot} at {startd}: {why}", slot=claim.slot_name, startd=claim.startd_address, why=reason)
        calling = self._contact(claim.startd_address, claim.pool, startd_routes.RELEASE, {"claim_id": claim.claim_id})
        calling.addErrback(lambda failure: _log.info("releasing {slot} failed: {why}", slot=claim.slot_name,
                                                     why=failure.getErrorMessage()))

    def _vacate_then_release(self, claim: Claim, reason: str) -> None:
        """Vacate the claim's job, then release the claim. Its shadow has ended: the run is
        asked not to report its end (500 removed jobs each sent one the schedd refused)."""
        body = {"claim_id": claim.claim_id, "reason": reason, "graceful": True, "reported": False}
        calling = self._contact(claim.startd_address, claim.pool, startd_routes.VACATE, body)
        calling.addBoth(lambda _: self._release(claim, reason))

    # --- keep-alives ---
    def _send_alives(self) -> None:
        """Renew the claims whose keep-alive is due, one call per startd (and never a second
        while one is on its way). A startd that does not answer puts its jobs' shadows in
        the disconnected state; one that answers again reconnects them."""
        try:
            due = alives_due(self.claims, self.clock.seconds())
        except Exception:
            _log.failure("schedd: looking for due keep-alives failed")
            return
        for address, claims in due.items():
            if address in self._alive_calls:
                continue
            self._alive_calls.add(address)
            timeout = max(1.0, min(ALIVE_TIMEOUT, min(c.alive_period for c in claims)))
            calling = self._client(address, claims[0].pool, timeout).call(
                startd_routes.ALIVE, {"claim_ids": [c.claim_id for c in claims]})
            calling.addCallbacks(self._alive_answered, self._alive_failed, callbackArgs=(claims,),
                                 errbackArgs=(claims,))
            calling.addBoth(lambda _, where=address: self._alive_calls.discard(where))

    def _alive_answered(self, answer: dict, claims: list[Claim]) -> None:
        unknown = set(answer.get("unknown") or []) if isinstance(answer, dict) else set()
        now = self.clock.seconds()
        for index, claim in enumerate(claims):
            shadow = self.shadows.get(claim.job_id) if claim.job_id is not None else None
            if index in unknown:
                self._claim_gone(claim, shadow)
                continue
            self.claims.update(claim.claim_id, alive_at=now)
            if shadow is not None and shadow.disconnected != RESTARTED:  # that one waits for RECONNECT
                shadow.link_back()

    def _claim_gone(self, claim: Claim, shadow: Shadow | None) -> None:
        _log.warn("the startd at {startd} no longer holds the claim on {slot}", startd=claim.startd_address,
                  slot=claim.slot_name)
        if shadow is not None and shadow.claim_id == claim.claim_id:
            shadow.claim_lost("its lease there ran out or the startd restarted")
        self.claims.remove(claim.claim_id)

    def _alive_failed(self, failure, claims: list[Claim]) -> None:
        why = failure.getErrorMessage()
        for claim in claims:
            shadow = self.shadows.get(claim.job_id) if claim.job_id is not None else None
            if shadow is not None and shadow.claim_id == claim.claim_id:
                shadow.link_lost(f"no answer from the startd at {claim.startd_address}: {why}")

    # --- the queue, seen from here ---
    def _free_idle_jobs(self, owner: str | None = None, submitter: str | None = None) -> Iterator[tuple[JobId, ClassAd]]:
        """The idle jobs of an owner or of a submitter (AccountingGroup, else Owner) in
        queue order, leaving out those being started."""
        def taken(job_id: JobId) -> bool:
            return job_id in self._starting or job_id in self.shadows

        for ad in self.queue.query(IDLE_CONSTRAINT, owner=owner, status=JobStatus.IDLE, submitter=submitter,
                                   skip=taken):
            yield job_id_of(ad), ad

    def _free_ad(self, job_id: JobId, starting_ok: bool = False) -> ClassAd | None:
        """The job's ad if it is idle and not already being started, else None."""
        if job_id in self.shadows or (job_id in self._starting and not starting_ok):
            return None
        try:
            ad = self.queue.get_job(job_id)
        except KeyError:
            return None
        return ad if status_of(ad) is JobStatus.IDLE else None

    def flocked_by_submitter(self) -> dict[str, int]:
        """How many of each submitter's jobs run in other pools now (``FlockedJobs``), keyed
        as the queue keys its Submitter ads (AccountingGroup, else Owner), as HTCondor's
        schedd counts them per submitter: group_a.alice's apart from alice's own."""
        counts: dict[str, int] = {}
        for claim in self.claims:
            if claim.pool is not None and claim.job_id is not None:
                row = self.queue.db.get_job(claim.job_id.cluster, claim.job_id.proc)
                submitter = row.submitter if row is not None and row.submitter else claim.owner
                counts[submitter] = counts.get(submitter, 0) + 1
        return counts

    def _contact(self, address: str, pool: str | None, route, body: dict) -> Deferred:
        """Call ``route`` of the startd at ``address`` with ``body`` through :attr:`contacts`."""
        return self.contacts.call(address, lambda: self._client(address, pool).call(route, body))

    def _client(self, address: str, pool: str | None = None, timeout: float | None = None):
        """A client to the startd at ``address``: with this pool's DAEMON token, or with the
        token ``pool`` gave this pool when the slot is that pool's (a flocked job)."""
        trusted = self.schedd.trusted_pools.get(pool) if pool is not None else None
        if pool is not None and trusted is None:
            _log.warn("pool {pool} is no longer trusted (roost pool trust -remove?): its startd at {startd} "
                      "is called with this pool's own token and will refuse it", pool=pool, startd=address)
        if trusted is None:
            return self.schedd.daemon_client(address, timeout=timeout)
        return self.schedd.daemon_client(address, timeout=timeout, token=trusted.token)


__all__ = ["Execution", "StartdContacts", "lease_seconds_for", "IDLE_CONSTRAINT"]
