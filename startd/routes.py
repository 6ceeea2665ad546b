"""The startd's HTTP handlers (daemoncore/wire/startd_routes.py): claim a slot with the
ClaimId the negotiator handed out, activate the claim with a job, vacate it, release it;
drain the machine and cancel the drain (an administrator's).

The handlers keep the slot table and the runs in step: a claim's run ends in the
slot going back to Claimed/Idle (the schedd may activate it again), or, after a
vacate or a release, in the claim ending and its resources going back.
"""

from __future__ import annotations

import base64
import binascii
import collections
from collections.abc import Callable, Iterator

import attrs
from twisted.internet.defer import Deferred
from twisted.logger import Logger

import classad
from daemoncore.reactor_turns import in_slices
from daemoncore.security.host_identity import slot_refusal
from daemoncore.wire import startd_routes as api
from daemoncore.wire.adcodec import ad_from_json, ad_to_json
from daemoncore.wire.errors import ApiError, BadRequest, Conflict, Forbidden, NotFound
from daemoncore.wire.request_body import reject_unknown, take, take_list_of
from daemoncore.wire.server import ApiRequest, JsonReply
from gpushare.errors import GpuRequestError
from startd.claim_leases import LeaseBook, LeaseKind
from startd.draining import DrainRequest, DrainSchedule, retirement_over
from startd.errors import ClaimError, SlotStateError
from startd.gpu_claims import GpuClaimRefused
from startd.job_run import Ending, JobRun
from startd.launches import LaunchQueue
from startd.preemption import (
    Eviction,
    PendingClaim,
    PreemptPolicy,
    Step,
    next_step,
    ready_within,
    retirement_limit,
    victims_of,
)
from startd.slots import UNKNOWN_CLAIM, Slot, SlotKind, SlotTable
from startd.states import Activity, State

_log = Logger()
#: The longest ``DrainReason`` the slot ads carry.
MAX_DRAIN_REASON = 1024
#: The largest input tar an ACTIVATE may carry inside it (bigger ones go through JOB_INPUT).
MAX_INLINE_INPUT = 1 << 20
#: How many of a claim's last activations (job and transfer key) are remembered, so one that
#: comes twice (inside an exit answer, then as a late request) starts once.
ACTIVATIONS_REMEMBERED = 4
#: How long the kills of a stopping startd may hold the reactor per turn.
STOP_SLICE_SECONDS = 0.02
#: How long an ACTIVATE of a claim still waiting for its victims to end waits before answering 409 pending.
PENDING_ACTIVATE_WAIT = 30.0


class StillPending(ApiError, status=409, code="pending"):
    """The claim waits for the claims it preempts to end: activate it again later (409)."""

    def body(self) -> dict:
        return {**super().body(), "pending": True}


@attrs.frozen
class Activation:
    """What ACTIVATE asks for: run ``job`` (``job_id``) on the claim, reporting to the schedd."""

    claim_id: str = attrs.field(repr=False)
    job_id: str
    job: classad.ClassAd = attrs.field(eq=False)
    transfer_key: str = attrs.field(repr=False)
    schedd_address: str
    slot_name: str
    slot_ad: classad.ClassAd = attrs.field(eq=False)
    #: The job's input tar when the schedd sent it inside ACTIVATE (None: fetch it with JOB_INPUT).
    input: bytes | None = attrs.field(default=None, eq=False, repr=False)


RunFactory = Callable[[Activation], JobRun]


def _refusal(exc: Exception) -> Exception:
    """The wire error for a claim or slot-state error: 404 for an unknown ClaimId, else 409."""
    if isinstance(exc, ClaimError) and str(exc) == UNKNOWN_CLAIM:
        return NotFound(f"claim refused: {exc}")
    return Conflict(f"claim refused: {exc}")


def _inline_input(body: dict) -> bytes | None:
    """The input tar sent inside ACTIVATE (base64 in ``input``), or None when absent.

    Raises:
        BadRequest: not base64, or larger than :data:`MAX_INLINE_INPUT` bytes.
    """
    text = take(body, "input", str, None)
    if text is None:
        return None
    too_big = BadRequest(f"$.input: inline input is limited to {MAX_INLINE_INPUT} bytes; send it with JOB_INPUT")
    if len(text) > (MAX_INLINE_INPUT + 2) // 3 * 4:
        raise too_big
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("$.input: not base64") from None
    if len(data) > MAX_INLINE_INPUT:
        raise too_big
    return data


def _job_ad(body: dict) -> classad.ClassAd:
    ad = ad_from_json(take(body, "job_ad", dict), "$.job_ad")
    if not isinstance(ad, classad.ClassAd):
        ad = classad.ClassAd(ad)
    return ad


def remote_user_of(job: classad.ClassAd) -> str | None:
    """The job's ``User`` (``owner@domain``), else its ``Owner``."""
    for attr in ("User", "Owner"):
        value = job.eval(attr) if attr in job else None
        if isinstance(value, str) and value:
            return value
    return None


class StartdRoutes:
    """Binds the startd's routes to one slot table.

    ``make_run`` builds the run of an activation; ``slot_ad`` gives a slot's ad as
    the startd publishes it (with its address); ``changed`` is told after every
    change of the table, so the ads go out again soon, and ``activity_changed`` (``changed``
    when not given) when only a claimed slot's activity changed (a job started or ended on
    its claim), which may wait longer.
    """

    def __init__(self, table: SlotTable, make_run: RunFactory,
                 slot_ad: Callable[[Slot], classad.ClassAd], changed: Callable[[], None],
                 leases: LeaseBook | None = None, policy: PreemptPolicy | None = None,
                 activity_changed: Callable[[], None] | None = None) -> None:
        self.table = table
        self.leases = leases if leases is not None else LeaseBook()
        self.policy = policy if policy is not None else PreemptPolicy()
        #: Claims being preempted (by ClaimId), and claims granted by preempting them.
        self.evictions: dict[str, Eviction] = {}
        self.pending: dict[str, PendingClaim] = {}
        self._waiting: dict[str, list[Deferred]] = {}
        self._make_run = make_run
        self._slot_ad = slot_ad
        self._changed = changed
        self._activity_changed = activity_changed or changed
        self.runs: dict[str, JobRun] = {}
        #: Starts the runs of a burst of activations one per reactor turn.
        self.launches = LaunchQueue(table.clock)
        self.run_endings: dict[str, Deferred] = {}
        self._releasing: set[str] = set()
        self._run_started: dict[str, float] = {}
        #: Each claim's last activations (job, transfer key): each is started once, however often it comes.
        self._activated: dict[str, collections.deque] = {}
        self._drains = 0

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        routes = {api.CLAIM: self.claim, api.ACTIVATE: self.activate, api.VACATE: self.vacate,
                  api.RELEASE: self.release, api.ALIVE: self.alive, api.RECONNECT: self.reconnect,
                  api.DRAIN: self.drain, api.CANCEL_DRAIN: self.cancel_drain}
        return {route: self._own_slots_only(handler) for route, handler in routes.items()}

    def _own_slots_only(self, handler: Callable[[ApiRequest], object]) -> Callable[[ApiRequest], object]:
        """``handler``, refusing (403) a startd identity of another host: claims are this host's.
        A flocking pool's schedds (``flock@poolA``) are bound to no host and pass, as this pool's own do."""
        def guarded(request: ApiRequest):
            refusal = slot_refusal(request.identity, self.table.machine.hostname)
            if refusal is not None:
                raise Forbidden(refusal)
            return handler(request)
        return guarded

    def _now(self) -> float:
        return self.table.clock.seconds()  # type: ignore[attr-defined]

    # --- routes ---

    def claim(self, request: ApiRequest) -> JsonReply:
        """CLAIM: carve a dynamic slot (or take a static one) for the job; answer its ClaimId."""
        body = request.json()
        reject_unknown(body, {"claim_id", "job_ad", "schedd_address", "victims"})
        claim_id = take(body, "claim_id", str)
        take(body, "schedd_address", str)
        job = _job_ad(body)
        victims = take_list_of(body, "victims", str, [])
        if victims:
            return self._claim_by_preempting(claim_id, job, victims)
        try:
            grant = self.table.request_claim(claim_id, job, remote_user_of(job))
        except GpuRequestError as exc:
            raise BadRequest(f"claim refused: the job's GPU request: {exc}") from None
        except GpuClaimRefused as exc:
            _log.warn("claim refused for GPUs, though matched by the negotiator: {why}\n"
                      "  the job asks: {request}\n  the cards:\n    {cards}", why=exc,
                      request=exc.request_view, cards="\n    ".join(exc.card_views))
            raise _refusal(exc) from None
        except (ClaimError, SlotStateError) as exc:
            raise _refusal(exc) from None
        self.leases.claimed(grant.claim_id, self._now())
        self._changed()
        slot = self.table.slots[grant.slot_name]
        _log.info("claimed {slot} for {user}", slot=slot.name, user=slot.remote_user)
        return JsonReply({"claim_id": grant.claim_id, "slot_name": grant.slot_name,
                          "slot_ad": ad_to_json(self._slot_ad(slot))})

    def activate(self, request: ApiRequest) -> JsonReply | Deferred:
        """ACTIVATE: start the job on the claim; the run reports to the schedd on its own.

        The schedd activates the next job as soon as it has taken the last one's final
        report, so the activation may come before that report's answer has ended the run
        here: it then waits for the run's end instead of being refused."""
        return self._activate(request.json())

    def _activate(self, body: dict) -> JsonReply | Deferred:
        """ACTIVATE's ``body``, from the route or from the answer to an exit report."""
        reject_unknown(body, {"claim_id", "job_id", "job_ad", "transfer_key", "schedd_address", "input"})
        claim_id = take(body, "claim_id", str)
        job_id = take(body, "job_id", str)
        transfer_key = take(body, "transfer_key", str)
        schedd_address = take(body, "schedd_address", str)
        job = _job_ad(body)
        inline = _inline_input(body)
        if claim_id in self.pending:
            waited = self._await_pending(claim_id)
            return waited.addCallback(lambda _: self._start(claim_id, job_id, job, transfer_key, schedd_address,
                                                            inline))
        finishing = self.runs.get(claim_id)
        if finishing is not None and getattr(finishing, "final_report_sent", False):
            waited: Deferred = Deferred()
            self.run_endings[claim_id].addBoth(lambda ending: (waited.callback(None), ending)[1])
            return waited.addCallback(lambda _: self._start(claim_id, job_id, job, transfer_key, schedd_address,
                                                            inline))
        return self._start(claim_id, job_id, job, transfer_key, schedd_address, inline)

    def _start(self, claim_id: str, job_id: str, job: classad.ClassAd, transfer_key: str,
               schedd_address: str, inline: bytes | None = None) -> JsonReply:
        if (job_id, transfer_key) in self._activated.get(claim_id, ()):  # came in an exit answer, then again
            return JsonReply({"started": True})
        try:
            slot = self.table.activate(claim_id, job)
        except (ClaimError, SlotStateError) as exc:
            raise _refusal(exc) from None
        try:
            run = self._make_run(Activation(claim_id, job_id, job, transfer_key, schedd_address,
                                            slot.name, self._slot_ad(slot), inline))
        except Exception:
            self.table.job_exited(claim_id)
            raise
        self.runs[claim_id] = run
        remembered = self._activated.setdefault(claim_id, collections.deque(maxlen=ACTIVATIONS_REMEMBERED))
        remembered.append((job_id, transfer_key))
        self._run_started[claim_id] = self._now()
        self.leases.activated(claim_id, job, self._now())
        _log.info("job {job} starting on {slot}", job=job_id, slot=slot.name)
        ending = self.launches.launch(run.run)
        ending.addCallback(self._run_ended, claim_id, run)
        self.run_endings[claim_id] = ending
        self._activity_changed()
        return JsonReply({"started": True})

    def vacate(self, request: ApiRequest) -> JsonReply:
        """VACATE: stop the claim's job (gracefully: SIGTERM, then SIGKILL after the vacate
        time); once it is gone the claim ends. With ``reported`` false the run does not
        report its end (the schedd's shadow of it has ended already)."""
        body = request.json()
        reject_unknown(body, {"claim_id", "reason", "graceful", "reported"})
        claim_id = take(body, "claim_id", str)
        reason = take(body, "reason", str, "the schedd vacated the claim")
        graceful = take(body, "graceful", bool, True)
        reported = take(body, "reported", bool, True)
        slot = self._slot(claim_id)
        run = self.runs.get(claim_id)
        if run is not None:
            self._stop(slot, run, reason, graceful, reported)
        return JsonReply({"vacating": True})

    def release(self, request: ApiRequest) -> JsonReply:
        """RELEASE: end the claim; a running job is killed first, and a dynamic slot's
        resources go back to its partitionable slot."""
        body = request.json()
        reject_unknown(body, {"claim_id"})
        claim_id = take(body, "claim_id", str)
        if claim_id in self.pending:
            self._give_up_pending(claim_id, "its schedd released it")
            return JsonReply({"released": True})
        slot = self._slot(claim_id)
        run = self.runs.get(claim_id)
        if run is not None:  # its holder gave the claim up: the run's end is not reported to it
            self._releasing.add(claim_id)
            self._stop(slot, run, "the claim was released", graceful=False, reported=False)
            return JsonReply({"released": True})
        try:
            self.table.release(claim_id)
        except (ClaimError, SlotStateError) as exc:
            raise _refusal(exc) from None
        self._forget_claim(claim_id)
        _log.info("released {slot}", slot=slot.name)
        self._changed()
        return JsonReply({"released": True})

    def alive(self, request: ApiRequest) -> JsonReply:
        """ALIVE: the schedd still holds these claims; their leases start over."""
        body = request.json()
        reject_unknown(body, {"claim_ids"})
        claim_ids = take_list_of(body, "claim_ids", str)
        now = self._now()
        unknown = [index for index, claim_id in enumerate(claim_ids)
                   if not self.leases.renew(claim_id, now) and claim_id not in self.pending]
        return JsonReply({"alive": len(claim_ids) - len(unknown), "unknown": unknown})

    def reconnect(self, request: ApiRequest) -> JsonReply:
        """RECONNECT: a restarted schedd takes the claim's running job back; the run
        reports to its new address with the new transfer key, and the lease starts over."""
        body = request.json()
        reject_unknown(body, {"claim_id", "job_id", "transfer_key", "schedd_address"})
        claim_id = take(body, "claim_id", str)
        job_id = take(body, "job_id", str)
        transfer_key = take(body, "transfer_key", str)
        schedd_address = take(body, "schedd_address", str)
        slot = self._slot(claim_id)
        run = self.runs.get(claim_id)
        if run is None or run.job_id != job_id or run.stopping:
            raise NotFound(f"job {job_id} is not running on {slot.name} (it ended, or was stopped, "
                           f"while the schedd was away)")
        try:
            run.link.retarget(schedd_address, transfer_key)
        except ValueError as exc:
            raise BadRequest(f"$.schedd_address: {exc}") from None
        self.leases.renew(claim_id, self._now())
        _log.info("job {job} on {slot} reconnected to the schedd at {schedd}", job=job_id, slot=slot.name,
                  schedd=schedd_address)
        return JsonReply({"reconnected": True, "slot_name": slot.name})

    def drain(self, request: ApiRequest) -> JsonReply:
        """DRAIN: no new claims on any slot; running jobs finish, or are vacated (quick) or
        killed (fast) at once; idle claims end. A drain of a draining machine replaces
        the schedule and reason (a graceful drain can be made quick or fast)."""
        body = request.json()
        reject_unknown(body, {"how", "reason"})
        how = take(body, "how", str, DrainSchedule.GRACEFUL.value)
        try:
            schedule = DrainSchedule(how)
        except ValueError:
            raise BadRequest(f"$.how: {how!r} is not a drain schedule; expected graceful, quick or fast") from None
        reason = take(body, "reason", str, "by command")
        if len(reason) > MAX_DRAIN_REASON:
            raise BadRequest(f"$.reason: {len(reason)} characters; at most {MAX_DRAIN_REASON} are kept in the slot ads")
        self._drains += 1
        drain = DrainRequest(str(self._drains), schedule, reason, self._now())
        for claim_id in self.table.drain(drain):
            self._forget_claim(claim_id)
            self._run_started.pop(claim_id, None)
        if schedule is not DrainSchedule.GRACEFUL:
            for claim_id, run in list(self.runs.items()):
                if not (run.stopping and schedule is DrainSchedule.QUICK):
                    self._stop(self.table.by_claim_id(claim_id), run, f"the machine is draining: {reason}",
                               graceful=schedule is DrainSchedule.QUICK)
        self._changed()
        _log.info("draining ({how}, request {id}) for {who}: {reason}", how=schedule.value, id=drain.request_id,
                  who=getattr(request.identity, "name", "anyone"), reason=reason)
        retiring = sum(1 for s in self.table.slots.values() if s.status.state is State.DRAINED
                       and s.status.activity is Activity.RETIRING)
        return JsonReply({"request_id": drain.request_id, "slots": len(self.table.slots), "retiring": retiring})

    def cancel_drain(self, request: ApiRequest) -> JsonReply:
        """CANCEL_DRAIN: the slots take claims again; jobs still running carry on."""
        body = request.json()
        reject_unknown(body, {"request_id"})
        wanted = take(body, "request_id", str, None)
        current = self.table.draining
        if current is None:
            raise Conflict(f"{self.table.machine.hostname} is not draining")
        if wanted is not None and wanted != current.request_id:
            raise Conflict(f"{self.table.machine.hostname} drains under request {current.request_id}, "
                           f"not {wanted}")
        self.table.cancel_drain()
        self._changed()
        _log.info("drain {id} cancelled", id=current.request_id)
        return JsonReply({"cancelled": True})

    def retire_overdue(self) -> list[str]:
        """Vacate the jobs of a graceful drain whose ``MaxJobRetirementTime`` is over; their slots' names."""
        if self.table.draining is None or self.table.draining.schedule is not DrainSchedule.GRACEFUL:
            return []
        now = self._now()
        vacated = []
        for claim_id, run in list(self.runs.items()):
            slot = self.table.by_claim_id(claim_id)
            started = self._run_started.get(claim_id, now)
            if run.stopping or not retirement_over(run.job, self._slot_ad(slot), started, now):
                continue
            self._stop(slot, run, "the machine is draining and the job's MaxJobRetirementTime is over",
                       graceful=True)
            vacated.append(slot.name)
        return vacated

    # --- preemption ---

    def _claim_by_preempting(self, claim_id: str, job: classad.ClassAd, victims: list[str]) -> JsonReply:
        """CLAIM with ``victims``: check each is a claim of the target slot (or of its dynamic
        slots), preempt them, and grant a claim that waits for them to end."""
        target = self._slot(claim_id)
        if target.kind is SlotKind.DYNAMIC:
            raise Conflict(f"claim refused: {target.name} is a dynamic slot; claims go to its partitionable slot")
        claims = {s.claim_id: (s.name, s.parent, s.claimed_at is not None) for s in self.table.slots.values()}
        taken = {victim for pending in self.pending.values() for victim in pending.victims}
        try:
            victims_of(target.name, target.kind is SlotKind.STATIC, victims, claims, taken)
        except ClaimError as exc:
            raise Conflict(f"claim refused: {exc}") from None
        started = self._slot_ad(target).evaluate("Start", job)
        if started is not True:
            raise Conflict(f"claim refused: {target.name}: START ({self.table.start}) is {started!r} for this job")
        user = remote_user_of(job)
        for victim in victims:
            self._evict(victim, f"preempted by a job of {user or 'another user'}")
        now = self._now()
        within = ready_within((self.evictions[v] for v in victims if v in self.evictions), now,
                              self.policy.vacate_time)
        new_id = self.table.make_claim_id()
        self.pending[new_id] = PendingClaim(target.name, job, user, tuple(victims),
                                            now + within + self.leases.terms.match_timeout)
        _log.info("claim on {slot} for {user} waits for {n} preempted claim(s), ready within {within:g} s",
                  slot=target.name, user=user, n=len(victims), within=within)
        self.advance_preemptions()
        return self._pending_reply(new_id, target.name, within)

    def _pending_reply(self, new_id: str, target: str, within: float) -> JsonReply:
        """The answer to a preempting CLAIM: pending, or granted already when no victim ran a job."""
        if new_id in self.pending:
            return JsonReply({"claim_id": new_id, "slot_name": target, "pending": True, "ready_within": within,
                              "slot_ad": ad_to_json(self._slot_ad(self.table.slots[target]))})
        slot = self._slot(new_id)
        return JsonReply({"claim_id": new_id, "slot_name": slot.name, "slot_ad": ad_to_json(self._slot_ad(slot))})

    def _evict(self, claim_id: str, reason: str) -> None:
        """Start preempting ``claim_id``: its job retires, then is vacated (``advance_preemptions``)."""
        if claim_id in self.evictions:
            return
        slot = self.table.by_claim_id(claim_id)
        run = self.runs.get(claim_id)
        if run is None:
            self.evictions[claim_id] = Eviction(reason, None, 0.0)
            return
        retirement = retirement_limit(run.job, self._slot_ad(slot), self.policy)
        self.evictions[claim_id] = Eviction(reason, self._run_started.get(claim_id, self._now()), retirement)
        _log.info("job {job} on {slot} is preempted ({why}); it retires for {retire:g} s", job=run.job_id,
                  slot=slot.name, why=reason, retire=retirement)

    def advance_preemptions(self) -> None:
        """Move every preempted claim on (retire, vacate, kill or release as its time says),
        preempt jobs ``PREEMPT`` is true for, and grant the pending claims whose victims are gone."""
        now = self._now()
        self._preempt_by_policy()
        for claim_id, eviction in list(self.evictions.items()):
            try:
                slot = self.table.by_claim_id(claim_id)
            except ClaimError:
                del self.evictions[claim_id]
                continue
            run = self.runs.get(claim_id)
            ad, job = self._slot_ad(slot), run.job if run is not None else None
            step = next_step(slot.status.state, slot.status.activity, eviction, now,
                             self.policy.holds("want_vacate", ad, job), self.policy.holds("kill", ad, job))
            self._take_step(step, slot, run, eviction.reason)
        self._settle_pending(now)

    def _preempt_by_policy(self) -> None:
        if self.policy.preempt == "false":
            return
        for claim_id, run in list(self.runs.items()):
            if claim_id in self.evictions or run.stopping:
                continue
            slot = self.table.by_claim_id(claim_id)
            if self.policy.holds("preempt", self._slot_ad(slot), run.job):
                self._evict(claim_id, f"PREEMPT ({self.policy.preempt}) is true for the job")

    def _take_step(self, step: Step, slot: Slot, run: JobRun | None, reason: str) -> None:
        if step is Step.RETIRE:
            self.table.retire(slot.claim_id)
            self._changed()
        elif step in (Step.VACATE, Step.KILL) and run is not None:
            self._stop(slot, run, reason, graceful=step is Step.VACATE)
        elif step is not Step.WAIT:
            self._end_claim(slot.claim_id)
            _log.info("{slot} released: {why}", slot=slot.name, why=reason)

    def _end_claim(self, claim_id: str) -> None:
        """The claim is over here: its slot is released and its lease and preemption forgotten."""
        if self._holds(claim_id):  # a draining machine ends a claim with its job
            self.table.release(claim_id)
        self._forget_claim(claim_id)
        self.evictions.pop(claim_id, None)
        self._changed()

    def _forget_claim(self, claim_id: str) -> None:
        """Drop what is kept for a claim that ended: its lease and its last activations."""
        self.leases.forget(claim_id)
        self._activated.pop(claim_id, None)

    def _settle_pending(self, now: float) -> None:
        """Grant each pending claim whose victims are all gone; give up those past their deadline."""
        for new_id, pending in list(self.pending.items()):
            if any(self._holds(victim) for victim in pending.victims):
                if now >= pending.deadline:
                    self._give_up_pending(new_id, "its preempted claims did not end in time")
                continue
            del self.pending[new_id]
            try:
                grant = self.table.claim_pending(pending.slot_name, pending.job, pending.remote_user, new_id)
            except (ClaimError, SlotStateError, GpuRequestError) as exc:
                _log.warn("pending claim on {slot} released: its victims are gone but {why}",
                          slot=pending.slot_name, why=exc)
                self._answer_waiting(new_id, Conflict(f"claim refused: the resources of its victims were not "
                                                      f"there to take: {exc}"))
                continue
            self.leases.claimed(new_id, now)
            self._changed()
            _log.info("claimed {slot} for {user} once its victims ended", slot=grant.slot_name,
                      user=pending.remote_user)
            self._answer_waiting(new_id, None)

    def _holds(self, claim_id: str) -> bool:
        try:
            self.table.by_claim_id(claim_id)
        except ClaimError:
            return False
        return True

    def _give_up_pending(self, new_id: str, why: str) -> None:
        pending = self.pending.pop(new_id, None)
        if pending is not None:
            _log.warn("pending claim on {slot} given up: {why}", slot=pending.slot_name, why=why)
        self._answer_waiting(new_id, Conflict(f"claim refused: the pending claim was given up: {why}"))

    def _await_pending(self, claim_id: str) -> Deferred:
        """A Deferred that fires once the pending claim is granted, or fails with 409 pending
        after ``PENDING_ACTIVATE_WAIT`` (or 409 when it is given up)."""
        waited: Deferred = Deferred()
        self._waiting.setdefault(claim_id, []).append(waited)
        timer = self.table.clock.callLater(PENDING_ACTIVATE_WAIT, self._stop_waiting,  # type: ignore[attr-defined]
                                           claim_id, waited)
        return waited.addBoth(lambda outcome: (timer.cancel() if timer.active() else None, outcome)[1])

    def _stop_waiting(self, claim_id: str, waited: Deferred) -> None:
        waiting = self._waiting.get(claim_id, [])
        if waited in waiting:
            waiting.remove(waited)
            waited.errback(StillPending(f"the claim waits for the claims it preempts to end; "
                                        f"activate it again in a few seconds"))

    def _answer_waiting(self, claim_id: str, error: Exception | None) -> None:
        for waited in self._waiting.pop(claim_id, []):
            if error is None:
                waited.callback(None)
            else:
                waited.errback(error)

    # --- leases ---

    def heard_from_schedd(self, claim_id: str) -> None:
        """A report of the claim's job reached its schedd: the link is alive, renew the lease."""
        self.leases.renew(claim_id, self._now())

    def expire_leases(self) -> list[str]:
        """End the claims whose lease ran out: a running job is killed (the slot is freed
        once it is gone), an idle claim is released at once. Returns the slots' names."""
        ended = []
        for claim_id, lease in self.leases.expired(self._now()):
            self._forget_claim(claim_id)
            try:
                slot = self.table.by_claim_id(claim_id)
            except ClaimError:
                continue
            ended.append(slot.name)
            why = {LeaseKind.MATCH: "it was never activated within MATCH_TIMEOUT",
                   LeaseKind.CLAIM: "its schedd stopped renewing it",
                   LeaseKind.JOB: "its schedd stopped renewing it within the job lease"}[lease.kind]
            _log.warn("claim on {slot} ends: {why} ({duration:g} s)", slot=slot.name, why=why,
                      duration=lease.duration)
            run = self.runs.get(claim_id)
            if run is not None:
                self._releasing.add(claim_id)
                self._stop(slot, run, f"the claim lease of {lease.duration:g} s expired", graceful=False)
                continue
            try:
                self.table.release(claim_id)
            except SlotStateError as exc:
                _log.warn("claim on {slot} not released: {why}", slot=slot.name, why=exc)
                continue
            self._changed()
        return ended

    # --- shutting down ---

    def stop_all(self, reason: str) -> Deferred:
        """Kill every running job (the startd is stopping), :data:`STOP_SLICE_SECONDS` of
        kills per reactor turn (500 in one turn held it 211 ms); fires with the endings of
        their runs. A run that starts meanwhile is killed too."""
        def kills() -> Iterator[None]:
            while True:
                left = [(claim_id, run) for claim_id, run in self.runs.items() if claim_id not in self._releasing]
                if not left:
                    return
                for claim_id, run in left:
                    if self.runs.get(claim_id) is run:
                        self._releasing.add(claim_id)
                        self._stop(self.table.by_claim_id(claim_id), run, reason, graceful=False)
                    yield
        stopping = in_slices(self.table.clock, kills(), STOP_SLICE_SECONDS)
        return stopping.addCallback(lambda _: list(self.run_endings.values()))

    # --- inside ---

    def _slot(self, claim_id: str) -> Slot:
        try:
            return self.table.by_claim_id(claim_id)
        except ClaimError as exc:
            raise _refusal(exc) from None

    def _stop(self, slot: Slot, run: JobRun, reason: str, graceful: bool, reported: bool = True) -> None:
        """Vacate (``graceful``) or kill the run of ``slot``'s claim, once; not ``reported``:
        its end is not reported (even when it was being stopped already)."""
        pair = (slot.status.state, slot.status.activity)
        if graceful and pair != (State.PREEMPTING, Activity.VACATING) and pair != (State.PREEMPTING, Activity.KILLING):
            self.table.vacate(slot.claim_id)
            run.vacate(reason, reported)
        elif pair != (State.PREEMPTING, Activity.KILLING):
            self.table.kill(slot.claim_id)
            run.kill(reason, reported)
        elif not reported:
            run.kill(reason, reported)
        self._changed()

    def _run_ended(self, ending: Ending, claim_id: str, run: JobRun) -> Ending:
        if self.runs.get(claim_id) is run:
            del self.runs[claim_id]
            self.run_endings.pop(claim_id, None)
            self._run_started.pop(claim_id, None)
        try:
            slot = self.table.by_claim_id(claim_id)
        except ClaimError:
            return ending
        if claim_id in self._releasing or claim_id in self.evictions or slot.status.state is State.PREEMPTING:
            self._releasing.discard(claim_id)
            if slot.status.state is not State.PREEMPTING:  # a preempted job that ended while it retired
                self.table.job_exited(claim_id)
            self._end_claim(claim_id)
            _log.info("job {job} {ending}; {slot} released", job=run.job_id, ending=ending.value, slot=slot.name)
            self._settle_pending(self._now())
        elif self.table.job_exited(claim_id).status.state is State.DRAINED:
            self._forget_claim(claim_id)
            _log.info("job {job} {ending}; {slot} is drained", job=run.job_id, ending=ending.value, slot=slot.name)
        else:
            self.leases.job_done(claim_id, self._now())
            _log.info("job {job} {ending}; {slot} stays claimed", job=run.job_id, ending=ending.value,
                      slot=slot.name)
            self._activity_changed()
            self._start_riding(claim_id, run.next_activation)
            return ending
        self._changed()
        return ending

    def _start_riding(self, claim_id: str, body: dict | None) -> None:
        """Start the activation the schedd sent back inside its answer to the exit report
        of ``claim_id``'s run (None: it sent none). One that cannot start is logged: the
        schedd sends it again as ACTIVATE when it hears nothing of its run."""
        if body is None:
            return
        if body.get("claim_id") != claim_id:
            _log.warn("the schedd's answer to an exit report on {slot} named another claim; not started",
                      slot=self.table.by_claim_id(claim_id).name)
            return
        try:
            started = self._activate(body)
        except ApiError as exc:
            _log.info("the next job sent inside an exit answer was not started: {why}", why=exc)
            return
        if isinstance(started, Deferred):
            started.addErrback(lambda failure: _log.info("the next job sent inside an exit answer was not "
                                                         "started: {why}", why=failure.getErrorMessage()))
