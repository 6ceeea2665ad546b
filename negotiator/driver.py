"""The cycle driver: when to negotiate, and one cycle's I/O around the pure
:func:`negotiator.cycle.negotiate`.

A cycle starts every ``NEGOTIATOR_INTERVAL`` and, after a RESCHEDULE or when the
Submitter ads (looked at every ``NEGOTIATOR_MIN_INTERVAL``) show more idle jobs than
the last cycle or look saw, as soon as ``NEGOTIATOR_MIN_INTERVAL`` has passed since the last
one started. A cycle reads
slots (public and private ads) and submitters from the collector, charges the
accountant for the claimed slots, asks each submitter's schedd for its resource
requests, negotiates, and posts each schedd its matches. Any failure is logged and
the next cycle comes anyway; time comes from the injected clock. A pair of request
and slot whose match the startd seems to have refused is held back for a while
(:mod:`negotiator.refusals`).

Submitters flocked in from another pool go through the same cycle: only the token
their schedd is called with differs (:mod:`negotiator.flocked`), and the accountant
learns their domains are remote.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Mapping

import attrs
import treq
from attrs import frozen
from twisted.internet import task
from twisted.internet.defer import Deferred, gatherResults, maybeDeferred, succeed
from twisted.logger import Logger
from twisted.web.client import ResponseFailed

from daemoncore.wire import collector_routes, schedd_routes
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.errors import Unreachable
from daemoncore.wire.ndjson import LineDecoder
from negotiator.accountant import Accountant
from negotiator.concurrency import usage_from_slots
from negotiator.cycle import CycleResult, Submitter, negotiate
from negotiator.errors import NegotiatorError
from negotiator.flocked import TrustedPoolEntry, flocked_customers, schedd_token
from negotiator.pool_view import (
    PoolSlots,
    SubmitterTarget,
    demand_grew,
    idle_by_submitter,
    matches_by_schedd,
    pool_slots,
    resource_requests,
    resources_in_use,
    submitter_targets,
)
from negotiator.refusals import RefusalMemory, RequestKey, request_identity
from negotiator.settings import NegotiatorSettings

_log = Logger()

Connect = Callable[..., AsyncClient]
"""Gives a client for the daemon at an address: ``connect(address)`` carries the
negotiator's DAEMON token, ``connect(address, token)`` the token given (another pool's)."""

TrustedPools = Callable[[], Mapping[str, TrustedPoolEntry]]
"""The pools trusted now, by name (their entries hold the token to call their schedds with)."""


def no_trusted_pools() -> Mapping[str, TrustedPoolEntry]:
    """No other pool is trusted: submitters flocked in from anywhere are skipped."""
    return {}

Compute = Callable[..., Deferred]
"""Runs ``f(*args)`` and fires with its result (in a worker thread in production)."""


@frozen
class CycleReport:
    """What one cycle did, for the log, the negotiator's ad and tests."""

    started: float
    ended: float
    slots: int = 0
    submitters: int = 0
    requests: int = 0
    matches: int = 0
    matches_accepted: int = 0
    problems: tuple[str, ...] = ()

    @property
    def duration(self) -> float:
        return self.ended - self.started


def compute_here(function: Callable, *args) -> Deferred:
    """Run ``function`` now in this thread (tests, and small pools)."""
    return maybeDeferred(function, *args)


class CycleDriver:
    """Runs negotiation cycles on a clock. Mutable: it keeps the schedule and the last report."""

    def __init__(self, settings: NegotiatorSettings, accountant: Accountant, clock, connect: Connect,
                 collector_address: Callable[[], str | None], compute: Compute = compute_here,
                 trusted_pools: TrustedPools = no_trusted_pools) -> None:
        self.settings = settings
        self.accountant = accountant
        self.clock = clock
        self._connect = connect
        self._collector_address = collector_address
        self._compute = compute
        self._trusted_pools = trusted_pools
        self._schedd_tokens: dict[str, str | None] = {}
        self.reports: list[CycleReport] = []
        #: Called with each cycle's report as it is recorded (the negotiator's metrics).
        self.observers: list[Callable[[CycleReport], None]] = []
        #: Each concurrency limit's use by the claimed slots the last cycle saw.
        self.concurrency_in_use: dict[str, float] = {}
        self._next = None
        self._running: Deferred | None = None
        self._rerun_soon = False
        self._last_start: float | None = None
        self._stopped = True
        self._demand_seen: dict[str, int] = {}
        self.refusals = RefusalMemory()
        self._watcher = task.LoopingCall(self._watch_demand)
        self._watcher.clock = clock

    # --- schedule -------------------------------------------------------------
    def start(self) -> None:
        """Start negotiating: a first cycle at once, then every interval."""
        self._stopped = False
        self._schedule(0.0)
        if self.settings.min_interval > 0:
            self._watcher.start(self.settings.min_interval, now=False)

    def stop(self) -> Deferred:
        """Stop scheduling cycles; fires once a running cycle has ended."""
        self._stopped = True
        self._cancel_next()
        if self._watcher.running:
            self._watcher.stop()
        if self._running is None:
            return succeed(None)
        ended: Deferred = Deferred()
        self._running.addBoth(lambda result: (ended.callback(None), result)[1])
        return ended

    def reschedule(self) -> float:
        """Ask for a cycle soon (after a submit); the delay until it starts."""
        if self._running is not None:
            self._rerun_soon = True
            return self._soonest_delay()
        delay = self._soonest_delay()
        if self._next is None or self._next.getTime() - self.clock.seconds() > delay:
            self._schedule(delay)
        return delay

    def _soonest_delay(self) -> float:
        if self._last_start is None:
            return 0.0
        return max(self._last_start + self.settings.min_interval - self.clock.seconds(), 0.0)

    def _schedule(self, delay: float) -> None:
        if self._stopped:
            return
        self._cancel_next()
        self._next = self.clock.callLater(delay, self._begin)

    def _cancel_next(self) -> None:
        if self._next is not None and self._next.active():
            self._next.cancel()
        self._next = None

    def _begin(self) -> None:
        self._next = None
        self._rerun_soon = False
        self._last_start = self.clock.seconds()
        self._running = self.run_cycle()
        self._running.addBoth(self._ended)

    def _ended(self, _result) -> None:
        self._running = None
        if self._rerun_soon:
            self._schedule(self._soonest_delay())
        else:
            self._schedule(max(self._last_start + self.settings.interval - self.clock.seconds(), 0.0))

    def _watch_demand(self) -> Deferred | None:
        """Every NEGOTIATOR_MIN_INTERVAL, look at the Submitter ads alone and ask for a
        cycle when a submitter has more idle jobs than the last cycle saw."""
        address = self._collector_address()
        if not address or self._running is not None:
            return None
        asked = Deferred.fromCoroutine(query_collector(
            self._connect(address), {"constraint": self.settings.submitter_constraint,
                                     "projection": ["Name", "IdleJobs"]}, "Submitter"))
        asked.addCallback(self._demand_answered)
        asked.addErrback(lambda failure: _log.warn("negotiator: watching submitters failed: {why}",
                                                   why=failure.getErrorMessage()))
        return None

    def _demand_answered(self, wires: list) -> None:
        """Compare with the last look, not only the last cycle: idle counts fall as jobs
        start, so new submits smaller than what the last cycle saw are growth too."""
        if self._running is not None:
            return
        seen = idle_by_submitter(wires)
        if demand_grew(self._demand_seen, seen):
            self.reschedule()
        self._demand_seen = seen

    # --- one cycle ------------------------------------------------------------
    def run_cycle(self) -> Deferred:
        """Run one cycle now; fires with its :class:`CycleReport` (never fails)."""
        started = self.clock.seconds()
        cycle = Deferred.fromCoroutine(self._cycle(started))

        def failed(failure):
            _log.failure("negotiator: cycle failed", failure)
            return CycleReport(started, self.clock.seconds(), problems=(failure.getErrorMessage(),))

        cycle.addErrback(failed)
        cycle.addCallback(self._record)
        return cycle

    def _record(self, report: CycleReport) -> CycleReport:
        self.reports = [*self.reports[-9:], report]
        for observe in self.observers:
            observe(report)
        for problem in report.problems:
            _log.warn("negotiator: {problem}", problem=problem)
        _log.info("negotiator: cycle of {duration:.3f}s: {slots} slots, {submitters} submitters, "
                  "{requests} requests, {matches} matches ({accepted} accepted)",
                  duration=report.duration, slots=report.slots, submitters=report.submitters,
                  requests=report.requests, matches=report.matches, accepted=report.matches_accepted)
        return report

    async def _cycle(self, started: float) -> CycleReport:
        address = self._collector_address()
        if not address:
            return CycleReport(started, self.clock.seconds(), problems=("no COLLECTOR_HOST: nothing to negotiate",))
        problems: list[str] = []
        collector = self._connect(address)
        public = await collector_chunks(collector, {"constraint": self.settings.slot_constraint}, "Machine")
        private = await collector_chunks(collector, {"private": True}, "Machine")
        submitter_ads = await query_collector(
            collector, {"constraint": self.settings.submitter_constraint}, "Submitter")
        read: PoolReading = await self._compute(read_pool_answers, public, private,
                                                self.settings.cycle.match.slot_weight)
        slots, unreadable = read.slots, read.unreadable
        self.concurrency_in_use = read.concurrency_in_use
        trusted = self._trusted_pools()
        targets, skipped = submitter_targets(submitter_ads, trusted)
        self._schedd_tokens = {t.schedd_address: schedd_token(t.pool, trusted) for t in targets}
        self.accountant.note_remote_users(t.name for t in targets if t.pool is not None)
        self._demand_seen = idle_by_submitter(submitter_ads)
        problems += unreadable + skipped
        self.accountant.update_priorities(read.in_use)
        submitters = await self._fetch_requests(targets, problems)
        flocked = {(t.name, t.schedd_address) for t in targets if t.pool is not None}
        self.accountant.note_remote_users(flocked_customers(submitters, flocked))
        report = CycleReport(started, started, slots=len(slots.ads), submitters=len(submitters),
                             requests=sum(len(s.requests) for s in submitters))
        if not submitters or not slots.ads:
            return attrs.evolve(report, ended=self.clock.seconds(), problems=tuple(problems))
        keys = [RequestKey(r.request_id, r.count, request_identity(s.name, r.ad))
                for s in submitters for r in s.requests]
        held, refused = self.refusals.review(slots.wires, keys, self.clock.seconds())
        problems += refused
        result: CycleResult = await self._compute(negotiate, list(slots.ads), submitters, self.accountant,
                                                  self.settings.cycle, held)
        problems += [f"resource request {rid} matches nothing: {why}" for rid, why in result.bad_requests.items()]
        for (submitter, rid), why in result.unmatched_reasons.items():
            _log.info("negotiator: request {rid} of {submitter} waits: {why}", rid=rid, submitter=submitter, why=why)
        delivered: list[tuple[str, str]] = []
        accepted = await self._send_matches(result, slots, problems, delivered)
        self.refusals.note_sent(delivered, slots.wires, keys)
        return attrs.evolve(report, ended=self.clock.seconds(), matches=len(result.matches),
                            matches_accepted=accepted, problems=tuple(problems))

    async def _fetch_requests(self, targets: list[SubmitterTarget], problems: list[str]) -> list[Submitter]:
        """Every target's resource requests, asked of the schedds at once; a schedd that
        fails is logged and its submitter sits this cycle out."""

        def one(target: SubmitterTarget) -> Deferred:
            client = self._schedd_client(target.schedd_address)
            asked = client.call(schedd_routes.RESOURCE_REQUESTS, {"submitter": target.name})
            asked.addCallback(lambda lines: Submitter(target.name, target.schedd_address,
                                                      tuple(resource_requests(lines, target))))
            asked.addErrback(lambda failure: problems.append(
                f"no resource requests for {target.name} from {target.schedd_address}: {failure.getErrorMessage()}"))
            return asked

        answers = await gatherResults([one(t) for t in targets]) if targets else []
        return [s for s in answers if isinstance(s, Submitter) and s.requests]

    async def _send_matches(self, result: CycleResult, slots: PoolSlots, problems: list[str],
                            delivered: list[tuple[str, str]]) -> int:
        """Post each schedd its matches (ClaimIds filled in); the number accepted. The
        ``(request id, slot name)`` of each match a schedd took go into ``delivered``."""
        bodies, left_out = await self._compute(match_bodies, result.matches, slots)
        problems += left_out

        def one(schedd: str, body: dict) -> Deferred:
            sent = self._schedd_client(schedd).call(schedd_routes.MATCHES, body)
            sent.addCallback(_accepted_count)
            sent.addCallback(lambda count: (delivered.extend((m["request_id"], m["slot_name"])
                                                             for m in body["matches"]), count)[1])

            def failed(failure):
                problems.append(f"{len(body['matches'])} matches not delivered to {schedd}: "
                                f"{failure.getErrorMessage()}")
                return 0

            sent.addErrback(failed)
            return sent

        counts = await gatherResults([one(s, b) for s, b in bodies.items()]) if bodies else []
        return sum(counts)

    def _schedd_client(self, address: str) -> AsyncClient:
        """A client for a schedd of this cycle: the negotiator's own token for this
        pool's schedds, the trusted pool's token for a schedd flocking in."""
        token = self._schedd_tokens.get(address)
        return self._connect(address) if token is None else self._connect(address, token)


@frozen
class PoolReading:
    """The collector's slot ads as a cycle reads them, worked out off the reactor."""

    slots: PoolSlots
    unreadable: list[str]
    concurrency_in_use: dict[str, float]
    in_use: dict[str, float]


async def query_collector(collector: AsyncClient, body: dict, ad_type: str) -> list:
    """The collector's ads of ``ad_type`` answering ``body``, decoded ad by ad as the
    stream arrives: a 100,000-ad answer decoded in one piece would hold the reactor
    for seconds, a network read's worth of ads holds it for a few milliseconds."""
    ads: list = []
    await collector.stream(collector_routes.QUERY, ads.append, body, ad_type=ad_type)
    return ads


async def collector_chunks(collector: AsyncClient, body: dict, ad_type: str) -> list[bytes]:
    """The collector's NDJSON answer of ads of ``ad_type`` to ``body``, as the byte
    chunks it arrived in: a pool's slot ads are kept as bytes on the reactor and
    decoded by :func:`decode_chunks` where the cycle runs. Decoding 100,000 ads on the
    reactor, even ad by ad, makes millions of objects Python's garbage collector must
    then walk (stalls of 90-200 ms measured); bytes are not walked.

    Raises:
        Unreachable: the answer broke off.
    """
    response = await collector.send(collector_routes.QUERY, json.dumps(body).encode("utf-8"), b"application/json",
                                    ad_type=ad_type)
    chunks: list[bytes] = []
    try:
        await treq.collect(response, chunks.append)
    except ResponseFailed as exc:
        raise Unreachable(f"the answer of {collector.address} to a {ad_type} query broke off: "
                          f"{exc.reasons[0].getErrorMessage() if exc.reasons else exc}") from None
    return chunks


def decode_chunks(chunks: list[bytes]) -> list:
    """The objects of an NDJSON answer received as ``chunks``.

    Raises:
        ValueError: a line is not valid JSON.
    """
    decoder = LineDecoder()
    out: list = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.finish()


def read_pool_answers(public: list[bytes], private: list[bytes], slot_weight) -> PoolReading:
    """:func:`read_pool` of the collector's public and private slot answers as they
    arrived (see :func:`collector_chunks`), decoding them first."""
    return read_pool(decode_chunks(public), decode_chunks(private), slot_weight)


def with_heap_frozen(function: Callable, *args):
    """``function(*args)`` with the objects that exist now (the pool's slot ads, the
    requests, the daemon's own) left out of garbage collection while it runs.

    A full collection scans every tracked object with the interpreter held: over the
    ads of 100,000 slots that is hundreds of milliseconds in which the reactor thread
    cannot run, however the cycle itself is split. ``gc.freeze`` moves what exists into
    the permanent generation in constant time, so the cycle's collections scan only
    what the cycle allocates; ``gc.unfreeze`` gives it back to the oldest generation.
    Reference counting still frees everything as usual meanwhile.
    """
    gc.freeze()
    try:
        return function(*args)
    finally:
        gc.unfreeze()


def read_pool(public: list, private: list, slot_weight) -> PoolReading:
    """Parse the public and private slot ads and count what the claimed ones use: the
    per-slot work of a cycle's start, a few seconds at 100,000 slots, so the driver runs
    it where it runs the cycle (a worker thread in the daemon), not on the reactor."""
    slots, unreadable = pool_slots(public, private)
    return PoolReading(slots, unreadable, usage_from_slots(slots.ads), resources_in_use(slots.ads, slot_weight))


def match_bodies(matches, slots: PoolSlots) -> tuple[dict[str, dict], list[str]]:
    """Each schedd's MATCHES body (ClaimIds filled in) and the matches left out; one
    entry per match, so it too runs off the reactor."""
    filled = [attrs.evolve(m, claim_id=slots.claim_ids.get(m.slot_name, "")) for m in matches]
    return matches_by_schedd(filled, slots)


def _accepted_count(answer: object) -> int:
    if isinstance(answer, dict) and isinstance(answer.get("accepted"), int):
        return answer["accepted"]
    raise NegotiatorError(f"the schedd answered MATCHES with {answer!r}, not {{\"accepted\": n}}")
