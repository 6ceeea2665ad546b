"""The collector's HTTP handlers: advertise, invalidate and query ads, over the
store; every bad input is a 400 that changes nothing. Every stored ad carries
``AuthenticatedIdentity``, the identity that advertised it (as in HTCondor)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator

from twisted.internet.defer import Deferred

from classad import ConstraintError, compile_constraint
from collector.adtypes import ANY, canonical_ad_type
from collector.answer_cache import AnswerCache
from collector.answers import answer_blocks, segment_answer_blocks
from collector.errors import AdNotOwned, AdRejected
from collector.metrics import CollectorMetrics
from collector.ownership import NO_FLOCKING, FlockPolicy, check_ads_owned, check_constraint_allowed, check_withdrawal
from collector.screening import Screen, screen_for
from collector.store import AdStore, ad_lifetime, ad_name, wire_attribute
from daemoncore.reactor_turns import in_slices
from daemoncore.wire import collector_routes as api
from daemoncore.wire.adcodec import MAX_ATTRIBUTES, WireAdError, json_to_node
from daemoncore.wire.errors import BadRequest, Forbidden
from daemoncore.wire.request_body import PIECE_BYTES, parse_json_object_in_pieces, reject_unknown, take, take_list_of
from daemoncore.wire.server import ApiRequest, JsonReply, StreamReply

#: Types of JSON values that are ClassAd literals whatever they hold (a string is one
#: unless it is written ``/Expr(...)/``).
_ALWAYS_VALID = frozenset({str, int, float, bool, type(None)})
#: An index narrowing a query to fewer than one ad in this many answers it directly.
NARROW_ENOUGH = 8
#: Ads of one update checked, or stored, per reactor turn at most.
ADS_PER_TURN = 500
#: Seconds of checking and storing one update's ads per reactor turn at most (a slot ad
#: takes 0.1-0.3 ms on these machines, so 500 of them held the reactor 50-260 ms).
SLICE_SECONDS = 0.02


class CollectorRoutes:
    """Binds the collector's routes to one store; ``flock`` says which other pools'
    schedds may advertise here; ``timer`` measures how long an update's slice has run."""

    def __init__(self, store: AdStore, metrics: CollectorMetrics, flock: FlockPolicy = NO_FLOCKING,
                 timer: Callable[[], float] = time.perf_counter) -> None:
        self._store = store
        self._timer = timer
        self._metrics = metrics
        self._flock = flock
        self._answers = AnswerCache()

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        return {
            api.ADVERTISE: self.advertise,
            api.INVALIDATE: self.invalidate,
            api.QUERY: self.query,
        }

    def advertise(self, request: ApiRequest) -> JsonReply | Deferred:
        """Store every ad of the body, or none if any is bad. A large body is decoded a
        piece at a time (:func:`parse_json_object_in_pieces`), and its ads are checked,
        then stored, one by one: :func:`in_slices` spreads that work over reactor turns
        (:data:`SLICE_SECONDS` or :data:`ADS_PER_TURN` steps per turn at most), so a
        startd of many slots or a bulk load does not hold queries back."""
        ad_type = _ad_type(request)
        if ad_type == ANY:
            raise BadRequest("ads cannot be advertised as type Any; name their type (e.g. Machine)")
        began = self._timer()
        work = self._update(request, ad_type)
        try:
            next(work)  # to its first pause: a small body is decoded and checked by then
        except StopIteration as finished:
            return finished.value
        # the first slice's budget counts the first step (a large body's read and UTF-8 decode)
        return in_slices(self._store.clock, work, SLICE_SECONDS, self._timer, ADS_PER_TURN, started=began)

    def _update(self, request: ApiRequest, ad_type: str) -> Generator[None, None, JsonReply]:
        """:meth:`advertise`'s work, pausing (``yield``) between its steps."""
        if len(request.body) <= PIECE_BYTES:
            body = request.json()
        else:
            body = yield from parse_json_object_in_pieces(request.body)
        reject_unknown(body, {"ads", "private"})
        ads = take(body, "ads", list)
        private = take(body, "private", bool, False)
        if len(ads) > api.MAX_ADS_PER_UPDATE:
            raise BadRequest(f"$.ads: {len(ads)} ads is more than the {api.MAX_ADS_PER_UPDATE} one update may carry")
        return (yield from self._advertising(request, ad_type, ads, private))

    def _advertising(self, request: ApiRequest, ad_type: str, ads: list,
                     private: bool) -> Generator[None, None, JsonReply]:
        """Check every ad, then store them all, pausing (``yield``) before each ad: the
        update's work, for :func:`daemoncore.reactor_turns.in_slices` to spread over reactor turns."""
        now = int(self._store.clock.seconds())
        identity = getattr(request.identity, "name", None)
        prepared: list[tuple[object, dict]] = []
        for index, wire in enumerate(ads):
            yield
            prepared.append(self._prepare(ad_type, wire, f"$.ads[{index}]", now, identity))
        _owned(check_ads_owned, request.identity, ad_type,
               [(f"$.ads[{index}]", wire) for index, (_, wire) in enumerate(prepared)], self._flock)
        for parsed, wire in prepared:
            yield
            self._store.update(ad_type, parsed, wire, private=private)
        self._metrics.updates.labels(ad_type).inc(len(prepared))
        return JsonReply({"updated": len(prepared)})

    def invalidate(self, request: ApiRequest) -> JsonReply:
        """Delete ads by Name or by constraint."""
        ad_type = _ad_type(request)
        body = request.json()
        reject_unknown(body, {"names", "constraint"})
        if ("names" in body) == ("constraint" in body):
            raise BadRequest("give exactly one of $.names (a list of Names) or $.constraint (an expression)")
        if "names" in body:
            names = take_list_of(body, "names", str)
            removed = self._store.remove(self._withdrawable(request.identity, ad_type, names))
        else:
            _owned(check_constraint_allowed, request.identity)
            removed = self._store.invalidate_matching(ad_type, _compile(take(body, "constraint", str)))
        self._metrics.invalidations.labels(ad_type).inc(removed)
        return JsonReply({"invalidated": removed})

    def _withdrawable(self, identity, ad_type: str, names: list[str]) -> list:
        """The stored ads ``identity`` withdraws by these Names: of the ads holding a Name
        (several schedds' Submitter ads may), those it may withdraw; a Name held only by
        ads it may not withdraw refuses the whole request (nothing is removed).

        Raises:
            Forbidden: naming the identity and the ad.
        """
        by_name: dict[str, list] = {}
        for stored in self._store.named(ad_type, names):
            by_name.setdefault(stored.name, []).append(stored)
        allowed = []
        for held in by_name.values():
            refusals, mine = [], []
            for stored in held:
                try:
                    _owned(check_withdrawal, identity, stored.ad_type, repr(stored.name), stored.wire, self._flock)
                    mine.append(stored)
                except Forbidden as refused:
                    refusals.append(refused)
            if not mine:
                raise refusals[0]
            allowed += mine
        return allowed

    def query(self, request: ApiRequest) -> StreamReply:
        """Stream the matching ads, projected, as NDJSON."""
        ad_type = _ad_type(request)
        body = request.json()
        reject_unknown(body, {"constraint", "projection", "limit", "private"})
        constraint = take(body, "constraint", str, "true")
        projection = take_list_of(body, "projection", str, [])
        limit = take(body, "limit", int, None)
        if limit is not None and limit < 0:
            raise BadRequest(f"$.limit: must be 0 or more, got {limit}")
        private = take(body, "private", bool, False)
        if private:
            request.require("DAEMON", "reading private ads")
        screen = _screen(constraint)
        self._metrics.queries.labels(ad_type).inc()
        now = self._store.clock.seconds()
        segmented = _segmented(ad_type, screen, limit)
        held = self._store.counts(private).get(ad_type, 0)
        narrowed = self._store.narrowed(ad_type, screen.tests, private, held // NARROW_ENOUGH if segmented else None)
        if segmented and narrowed is None:
            query = (private, ad_type, screen.text, tuple(name.lower() for name in projection))
            segments = self._store.segments(ad_type, private)
            return StreamReply(segment_answer_blocks(segments, now, screen, projection, self._answers, query))
        snapshot = self._store.snapshot(ad_type, private) if narrowed is None else narrowed
        return StreamReply(answer_blocks(snapshot, now, screen, projection, limit))

    def _prepare(self, ad_type: str, wire: object, where: str, now: int,
                 identity: str | None) -> tuple[object, dict]:
        if not isinstance(wire, dict):
            raise BadRequest(f"{where}: a ClassAd must be a JSON object, got {type(wire).__name__}")
        kept, lowered = {}, set()  # the ad less any AuthenticatedIdentity, its names in lower case
        for name, value in wire.items():
            folded = name.lower()
            if folded != "authenticatedidentity":
                kept[name] = value
                lowered.add(folded)
        wire = kept
        if identity is not None:
            wire["AuthenticatedIdentity"] = identity
        if wire_attribute(wire, "MyType", lowered) is None:
            wire["MyType"] = ad_type
        wire["LastHeardFrom"] = now
        lowered.update(("authenticatedidentity", "mytype", "lastheardfrom"))  # may be held now
        try:
            ad_name(wire, lowered)
            ad_lifetime(wire, self._store.default_lifetime, lowered)
        except AdRejected as exc:
            raise BadRequest(f"{where}: {exc}") from None
        try:
            _check_values(wire, where)
        except WireAdError as exc:  # a 500 as raised (it keeps ApiError's default status)
            raise BadRequest(str(exc)) from None
        return None, wire


def _segmented(ad_type: str, screen: Screen, limit: int | None) -> bool:
    """Whether a query may be answered by segments with kept parts: one ad type, no
    limit, a screen that decides ads on its own (unless an index narrows it to a few
    ads: a handful of ads is answered faster directly)."""
    return ad_type != ANY and limit is None and (screen.everything or screen.complete)


def _check_values(wire: dict, where: str) -> None:
    """Refuse ``wire`` exactly when :func:`ad_from_json` would, without building the
    ad: the store parses it only when a constraint needs it. Plain literals (most of a
    slot ad) are always valid; expressions, lists and nested ads are read to check them.

    Raises:
        WireAdError: too many attributes, a name that is not a non-empty string, or a
            value that is not a ClassAd value.
    """
    if len(wire) > MAX_ATTRIBUTES:
        raise WireAdError(f"{where}: {len(wire)} attributes is more than the {MAX_ATTRIBUTES} allowed")
    for name, value in wire.items():
        if not isinstance(name, str) or not name:
            raise WireAdError(f"{where}: attribute names must be non-empty strings, got {name!r}")
        kind = type(value)
        if kind not in _ALWAYS_VALID or (kind is str and value.startswith("/Expr(")):
            if (kind is list or kind is dict) and not value:
                continue  # an empty list or nested ad (AvailableGPUs of a slot without cards) is one
            json_to_node(value, f"{where}.{name}")


def _ad_type(request: ApiRequest) -> str:
    try:
        return canonical_ad_type(request.params["ad_type"])
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def _owned(check, *args) -> None:
    """Run an ownership check; a refusal is a 403 naming the identity and the ad."""
    try:
        check(*args)
    except AdNotOwned as exc:
        raise Forbidden(str(exc)) from None


def _compile(constraint: str):
    try:
        return compile_constraint(constraint)
    except ConstraintError as exc:
        raise BadRequest(f"$.constraint: {exc}") from None


def _screen(constraint: str) -> Screen:
    try:
        return screen_for(constraint)
    except ConstraintError as exc:
        raise BadRequest(f"$.constraint: {exc}") from None
