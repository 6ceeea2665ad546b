"""The schedd's user routes: submit, query, act, edit and history. Each checks its
input (a 400 saying what to fix), applies the caller's rights (a WRITE identity
touches only its own jobs, an ADMINISTRATOR any; a refusal is a 403 that changed
nothing), and runs one queue transaction."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable, Iterable, Iterator

from twisted.internet.defer import Deferred

from classad import ConstraintError, compile_constraint
from classad import quote as quote_string
from daemoncore.reactor_turns import in_slices
from daemoncore.security import AuthorizationLevel
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.adcodec import ad_from_json, ad_to_json
from daemoncore.wire.errors import BadRequest, Conflict, Forbidden, NotFound
from daemoncore.wire.request_body import reject_unknown, take, take_list_of
from daemoncore.wire.server import JSON_TYPE, ApiRequest, BytesReply, JsonReply, StreamReply
from daemoncore.worker_threads import in_worker_thread
from jobmodel.errors import (
    BadJobAdError,
    InvalidTransitionError,
    JobNotFoundError,
    NotOwnerError,
    ProtectedAttributeError,
)
from jobmodel.states import JobId, now_from
from schedd.intake import (
    ClusterToStore,
    IntakeError,
    checked_file_sizes,
    checked_iwd,
    checked_names,
    description_procs,
    expand_description,
    items_queue_args,
    owned_by,
    with_queue_args,
)
from schedd.intake_cache import MAX_KEPT_PROCS, ExpansionCache, description_key
from schedd.queue import JobAction, JobSelection
from schedd.queue.factory import LIMIT_COMMAND, MAX_IDLE_COMMANDS, FactoryDigest
from schedd.queue.factory_jobs import ProcMaker, factory_limits
from schedd.spooling import held_for_input
from schedd.submit import SubmitError
from schedd.submit.gangs import gang_procs

#: A description naming none of these commands is no job factory (command names are
#: written out in the text, never made by a macro), so it is not read for limits.
_FACTORY_COMMANDS = re.compile("|".join(re.escape(name) for name in (LIMIT_COMMAND, *MAX_IDLE_COMMANDS)), re.I)

#: Longest one turn of the reactor spends on a batched action.
ACT_SLICE_SECONDS = 0.01

#: A description making more procs than this is expanded in a worker thread (with
#: per-proc macros, 100,000 procs took 2-4 s to expand).
EXPAND_INLINE_PROCS = 1000
#: A description longer than this is expanded in a worker thread whatever it makes
#: (reading 100,000 inline items took 0.33 s; 20,000 characters read in a few ms).
EXPAND_INLINE_CHARS = 20_000

#: HTCondor's action names, as the bindings send them, and what each does here.
ACTIONS = {
    "Hold": JobAction.Hold, "Release": JobAction.Release, "Remove": JobAction.Remove,
    "RemoveX": JobAction.Remove, "Vacate": JobAction.Vacate, "VacateFast": JobAction.Vacate,
}
MAX_REASON_CHARS = 4096
#: The reason an action records when the user gives none, after HTCondor's tools.
DEFAULT_REASONS = {JobAction.Hold: "via condor_hold (by user {user})",
                   JobAction.Release: "via condor_release (by user {user})",
                   JobAction.Remove: "via condor_rm (by user {user})",
                   JobAction.Vacate: "via condor_vacate_job (by user {user})"}


class ScheddRoutes:
    """Binds the user routes to one schedd service (its queue, clock and event log)."""

    def __init__(self, service) -> None:
        self._service = service
        self._expansions = ExpansionCache()
        #: the last reused expansion and what it became for its owner (see _owned)
        self._owned: tuple[ClusterToStore, str, str, ClusterToStore] | None = None

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        return {api.SUBMIT: self.submit, api.QUERY: self.query, api.ACT: self.act,
                api.EDIT: self.edit, api.HISTORY: self.history}

    # --- submit -------------------------------------------------------------
    def submit(self, request: ApiRequest) -> JsonReply | BytesReply:
        """Store one cluster from a self-contained description or from expanded ads;
        answer its id, proc count and first job's ad (as JSON text already written).

        The schedd expands a description without reading any file, running any
        command or looking at its own environment: ``include``, ``$ENV(...)``,
        ``queue ... from FILE``, ``queue ... from CMD |`` and ``queue ... matching``
        are refused with a 400 naming the line (the bindings and ``roost submit``
        expand them on the client and send inline items). Counts are checked
        against MAX_PROCS_PER_SUBMIT before any proc is made. Owner, User,
        ClusterId, ProcId, QDate, GlobalJobId and UidDomain are the schedd's to set, whatever
        the request says, and every attribute name must be a ClassAd identifier.
        """
        started = time.perf_counter()
        owner = request.identity.user
        body = request.json()
        queue = self._service.queue
        spool = take(body, "spool", bool, False)
        if "description" in body:
            reject_unknown(body, {"description", "itemdata", "count", "iwd", "environ", "queue", "file_sizes", "spool"})
            submitted = self._description(body, owner)
            limits = None
            if _FACTORY_COMMANDS.search(submitted.description):
                limits = _submit_error(factory_limits, submitted.description, submitted.iwd, submitted.environ)
            if limits is not None and spool:
                raise BadRequest("-spool cannot be used with max_materialize or max_idle: a job factory makes "
                                 "its procs later, and each spooled proc needs its input files at submit")
            if limits is not None:
                return self._factory(submitted, *limits)
            if self._large(submitted):
                return self._submit_large(submitted, spool)
            cluster_id = queue.db.peek_cluster_id()
            cluster = self._expanded(submitted, cluster_id)
        elif "cluster_ad" in body:
            reject_unknown(body, {"cluster_ad", "proc_ads", "spool"})
            cluster_id = None
            cluster = _from_ads(body)
        else:
            raise BadRequest("give $.description (submit description text) or $.cluster_ad and $.proc_ads")
        cluster = self._owned_by(cluster, owner)
        cluster = _queued_as_gang(cluster, queue.db.peek_cluster_id() if cluster_id is None else cluster_id)
        if spool:  # held (code 16) until roost submit -spool sends each proc's input files
            cluster = held_for_input(cluster)
        # the first step allocates the ClusterId in this turn, as the expansion above expects
        return self._store(cluster, cluster_id, started)

    def _store(self, cluster: ClusterToStore, cluster_id: int | None, started: float,
               reserved: int | None = None) -> "BytesReply | Deferred":
        """Store ``cluster`` a chunk per reactor turn (see :func:`_in_slices`) and answer
        once it is whole; ``cluster_id`` is the id it was expanded for (None: any),
        ``reserved`` the id taken for it beforehand."""
        queue = self._service.queue
        incoming = _bad_job_ad(queue.submit_in_steps, cluster.cluster_ad, cluster.proc_ads, None, reserved)

        def answer() -> BytesReply:
            stored = incoming.cluster_id
            if cluster_id is not None and stored != cluster_id:
                raise RuntimeError(f"cluster {stored} stored where {cluster_id} was expanded")
            self._service.submitted(stored, len(cluster.proc_ads),
                                    stored_ads=(cluster.cluster_ad, _distinct(cluster.proc_ads)))
            return _submit_answer(stored, len(cluster.proc_ads), queue.job_wire_text(JobId(stored, 0)))
        return _in_slices(self._service.reactor, lambda: _bad_job_ad(incoming.step), answer, incoming.abort, started)

    def _large(self, submitted: FactoryDigest) -> bool:
        """Whether the description is longer than :data:`EXPAND_INLINE_CHARS` (even
        reading its items takes long) or makes more than :data:`EXPAND_INLINE_PROCS`
        procs, counted from its queue statements (an expansion the cache keeps is small)."""
        key = description_key(submitted.description, submitted.owner, submitted.iwd, submitted.environ,
                              submitted.file_sizes)
        if self._expansions.holds(key):
            return False
        if len(submitted.description) > EXPAND_INLINE_CHARS:
            return True
        procs = _submit_error(lambda: description_procs(
            submitted.description, owner=submitted.owner, iwd=submitted.iwd, now=submitted.qdate,
            environ=submitted.environ, file_sizes=submitted.file_sizes))
        return procs > EXPAND_INLINE_PROCS

    def _submit_large(self, submitted: FactoryDigest, spool: bool) -> Deferred:
        """Submit a large description: its ClusterId taken now (hidden until the cluster
        is stored, dropped at start-up if it never is), its expansion, name check and
        ownership made in a worker thread (seconds of work for 100,000 procs with
        per-proc macros, which the reactor must not wait for), then stored a chunk per
        turn. A wrong description still answers 400, and its id is not reused."""
        queue = self._service.queue
        domain = self._service.schedd_settings.domain
        cluster_id = queue.reserve_cluster_id()

        def prepare() -> ClusterToStore:  # in a worker thread: works on its own arguments only
            cluster = _submit_error(lambda: expand_description(
                submitted.description, cluster_id=cluster_id, owner=submitted.owner, iwd=submitted.iwd,
                now=submitted.qdate, environ=dict(submitted.environ), file_sizes=dict(submitted.file_sizes)))
            cluster = _queued_as_gang(owned_by(_bad_request(checked_names, cluster), submitted.owner, domain),
                                      cluster_id)
            return held_for_input(cluster) if spool else cluster

        def drop(failure):
            queue.db.drop_incoming(only=cluster_id)  # nothing once the cluster was acknowledged
            return failure
        stored = in_worker_thread(prepare)
        stored.addCallback(lambda cluster: self._store(cluster, cluster_id, time.perf_counter(), cluster_id))
        return stored.addErrback(drop)

    def _owned_by(self, cluster: ClusterToStore, owner: str) -> ClusterToStore:
        """``cluster`` with its names checked, as ``owner`` submits it (:func:`owned_by`);
        for an expansion reused from the cache (the same object as the submit before, by
        the same owner) the result of the submit before, which nothing changes.

        Raises:
            BadRequest: an attribute name is not a ClassAd identifier.
        """
        domain = self._service.schedd_settings.domain
        last = self._owned
        if last is not None and last[0] is cluster and last[1] == owner and last[2] == domain:
            return last[3]
        owned = owned_by(_bad_request(checked_names, cluster), owner, domain)
        # kept only for a cluster the expansion cache may hand out again (a large one is never reused)
        self._owned = (cluster, owner, domain, owned) if len(cluster.proc_ads) <= MAX_KEPT_PROCS else None
        return owned

    def _factory(self, digest: FactoryDigest, limit: int | None, max_idle: int | None) -> JsonReply:
        """Store a description with max_materialize or max_idle as a job factory (its
        digest, no job rows) and let it make its first procs; answer as for any cluster,
        num_procs being every proc it will make (HTCondor's TotalSubmitProcs)."""
        queue = self._service.queue
        maker = _submit_error(ProcMaker, digest, queue.db.peek_cluster_id(), self._service.schedd_settings.domain)
        cluster_ad = _submit_error(maker.cluster_ad)
        if str(cluster_ad.evaluate("JobUniverse")) == "11" or "GangSize" in cluster_ad:
            raise BadRequest("submit description: max_materialize and max_idle cannot make a parallel job or a gang")
        stored = queue.submit_factory(cluster_ad, digest.to_text(), maker.total, limit, max_idle)
        if stored != maker.cluster_id:
            raise RuntimeError(f"cluster {stored} stored where {maker.cluster_id} was expanded")
        self._service.factory_submitted(stored, maker)
        return JsonReply({"cluster": stored, "first_proc": 0, "num_procs": maker.total,
                          "cluster_ad": ad_to_json(queue.cluster_ad(stored))})

    def _description(self, body: dict, owner: str) -> FactoryDigest:
        """The submit request's description (with its item data, count or queue
        arguments written into it) and what it is expanded with."""
        text = take(body, "description", str)
        iwd = _bad_request(checked_iwd, body.get("iwd"))
        file_sizes = _bad_request(checked_file_sizes, body.get("file_sizes"))
        count = take(body, "count", int, 0)
        if count < 0:
            raise BadRequest(f"$.count: must be 0 or more, got {count}")
        itemdata = take(body, "itemdata", list, None)
        queue_args = take(body, "queue", str, None)
        environ = take(body, "environ", dict, None) or {}
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in environ.items()):
            raise BadRequest("$.environ: must map variable names to string values")
        if itemdata is not None:
            text = with_queue_args(text, _bad_request(items_queue_args, itemdata, count))
        elif queue_args is not None:
            text = with_queue_args(text, queue_args)
        elif count > 0:
            text = with_queue_args(text, str(count))
        return FactoryDigest(text, owner, iwd, now_from(self._service.clock), environ, file_sizes or {})

    def _expanded(self, submitted: FactoryDigest, cluster_id: int) -> ClusterToStore:
        """The description's cluster, reused from an earlier submit of the same
        description when its expansion cannot differ (:mod:`schedd.intake_cache`)."""
        def expand(cluster: int, now: int) -> ClusterToStore:
            return expand_description(
                submitted.description, cluster_id=cluster, owner=submitted.owner, iwd=submitted.iwd,
                now=now, environ=dict(submitted.environ), file_sizes=dict(submitted.file_sizes))

        key = description_key(submitted.description, submitted.owner, submitted.iwd, submitted.environ,
                              submitted.file_sizes)
        return _submit_error(self._expansions.expansion, key, cluster_id, submitted.qdate, expand)

    # --- query --------------------------------------------------------------
    def query(self, request: ApiRequest) -> StreamReply:
        """Stream the matching job ads, projected, as NDJSON."""
        body = request.json()
        reject_unknown(body, {"constraint", "projection", "limit"})
        constraint = take(body, "constraint", str, "true")
        projection = take_list_of(body, "projection", str, [])
        limit = _limit(take(body, "limit", int, -1), "limit")
        try:
            found = self._service.queue.query_lines(constraint, projection, limit)
        except ConstraintError as exc:
            raise BadRequest(f"$.constraint: {exc}") from None
        return StreamReply(found)

    def history(self, request: ApiRequest) -> StreamReply:
        """Stream finished jobs, newest first, as NDJSON."""
        body = request.json()
        reject_unknown(body, {"constraint", "projection", "match", "since"})
        constraint = take(body, "constraint", str, "true")
        projection = take_list_of(body, "projection", str, [])
        match = _limit(take(body, "match", int, -1), "match")
        since = take(body, "since", str, None)
        try:
            found = self._service.queue.history.query(constraint, projection, match, since, misses=True)
        except (ConstraintError, ValueError) as exc:
            raise BadRequest(f"$.constraint or $.since: {exc}") from None
        return StreamReply(_wire_ads(found))

    # --- act and edit ---------------------------------------------------------
    def act(self, request: ApiRequest) -> JsonReply:
        """Hold, release, remove or vacate jobs by id or constraint, with a reason."""
        body = request.json()
        reject_unknown(body, {"action", "ids", "constraint", "reason"})
        name = take(body, "action", str)
        if name not in ACTIONS:
            raise BadRequest(f"$.action: {name!r} is not one of {', '.join(ACTIONS)}")
        reason = take(body, "reason", str, None)
        if reason is not None and len(reason) > MAX_REASON_CHARS:
            raise BadRequest(f"$.reason: {len(reason)} characters is more than the {MAX_REASON_CHARS} allowed")
        actor = _actor(request)
        selection = _selection(body, actor)
        self._service.remember_logs()
        action = ACTIONS[name]
        reason = reason or DEFAULT_REASONS[action].format(user=request.identity.user)
        steps = self._service.queue.act_in_batches(action, selection, reason, actor=actor)
        return _ActionRun(self._service, steps).start()

    def edit(self, request: ApiRequest) -> JsonReply:
        """Set one attribute of jobs by id or constraint; a name that is not a ClassAd
        identifier is a 400, a protected attribute (Owner, User, ClusterId ...) a 403."""
        body = request.json()
        reject_unknown(body, {"ids", "constraint", "attr", "value"})
        attr = take(body, "attr", str)
        value = take(body, "value", str)
        actor = _actor(request)
        selection = _selection(body, actor)
        try:
            changed = self._service.queue.edit(selection, attr, value, actor=actor)
        except (ProtectedAttributeError, NotOwnerError) as exc:
            raise Forbidden(f"{exc}; nothing was changed") from None
        except JobNotFoundError as exc:
            raise NotFound(f"{exc}; nothing was changed") from None
        except (ConstraintError, BadJobAdError) as exc:
            raise BadRequest(str(exc)) from None
        self._service.queue_changed()
        return JsonReply({"changed": changed})


class _ActionRun:
    """Runs a batched action (:meth:`schedd.queue.JobQueue.act_in_batches`) on the
    reactor: batches for at most :data:`ACT_SLICE_SECONDS` at a time, the events of
    each committed batch written before the next, other requests answered in
    between; the reply (or the error) comes after the last batch."""

    def __init__(self, service, steps) -> None:
        self._service = service
        self._steps = steps
        self._changed = 0
        self._refused: list[dict] = []

    def start(self) -> "JsonReply | Deferred":
        """The reply at once when the action fits in one slice, else a Deferred of it."""
        return _in_slices(self._service.reactor, self._step, self._reply, lambda: None)

    def _step(self) -> bool:
        """Run one batch and write its events; whether the action is done."""
        try:
            result = next(self._steps)
        except StopIteration:
            return True
        except NotOwnerError as exc:
            raise Forbidden(str(exc)) from None
        except JobNotFoundError as exc:
            raise NotFound(f"{exc}; nothing was changed") from None
        except InvalidTransitionError as exc:
            raise Conflict(f"{exc}; nothing was changed") from None
        except ConstraintError as exc:
            raise BadRequest(f"$.constraint: {exc}") from None
        self._changed += len(result.transitions)
        self._refused.extend({"id": str(job_id), "reason": why} for job_id, why in result.skipped)
        self._service.record_all(result.transitions)
        return False

    def _reply(self) -> JsonReply:
        self._service.queue_changed()
        return JsonReply({"changed": self._changed, "refused": self._refused})


def _in_slices(reactor, step: Callable[[], bool], answer: Callable[[], object], give_up: Callable[[], None],
               started: float | None = None) -> Deferred:
    """Run ``step()`` until it returns True, for at most :data:`ACT_SLICE_SECONDS` per
    reactor turn (the first counted from ``started``, when the request's own work began,
    but always one step), then ``answer()``: a Deferred of the answer, fired at once when
    one slice was enough, other requests answered between slices. A step's error runs
    ``give_up()`` first."""
    def until_done():
        while not step():
            yield

    def given_up(failure):
        give_up()
        return failure
    slices = in_slices(reactor, until_done(), ACT_SLICE_SECONDS, started=started)
    return slices.addErrback(given_up).addCallback(lambda _: answer())


def _distinct(ads: Iterable) -> tuple:
    """``ads`` with each run of one ad object given once (the procs of a plain ``queue
    100000`` share one empty ad), for what looks at every proc's attributes."""
    found, last = [], None
    for ad in ads:
        if ad is not last:
            found.append(ad)
            last = ad
    return tuple(found)


def _bad_job_ad(make, *args):
    """``make(*args)``, a job ad the queue refuses answering 400."""
    try:
        return make(*args)
    except BadJobAdError as exc:
        raise BadRequest(str(exc)) from None


def _submit_answer(cluster_id: int, num_procs: int, cluster_ad: bytes) -> BytesReply:
    """The JSON answer of a submit, ``{"cluster", "first_proc", "num_procs", "cluster_ad"}``,
    written around the cluster ad's JSON text as the queue makes it (not decoded and
    encoded again: the ad is most of the answer)."""
    head = f'{{"cluster":{int(cluster_id)},"first_proc":0,"num_procs":{int(num_procs)},"cluster_ad":'
    return BytesReply(head.encode("ascii") + cluster_ad.rstrip(b"\n") + b"}", JSON_TYPE)


def _submit_error(make, *args):
    """``make(*args)``, a wrong description or request answering 400."""
    try:
        return make(*args)
    except SubmitError as exc:
        raise BadRequest(f"submit description: {exc}") from None
    except IntakeError as exc:
        raise BadRequest(str(exc)) from None


def _bad_request(check, *args):
    try:
        return check(*args)
    except IntakeError as exc:
        raise BadRequest(str(exc)) from None


def _queued_as_gang(cluster: ClusterToStore, cluster_id: int) -> ClusterToStore:
    """A parallel job as one proc per node, a gang's procs with GangId/GangSize."""
    try:
        return ClusterToStore(*gang_procs(cluster.cluster_ad, cluster.proc_ads, socket.gethostname(), cluster_id))
    except SubmitError as exc:
        raise BadRequest(f"submit description: {exc}") from None


def _from_ads(body: dict) -> ClusterToStore:
    cluster_ad = ad_from_json(body["cluster_ad"], "$.cluster_ad")
    procs = take(body, "proc_ads", list)
    proc_ads = tuple(ad_from_json(proc, f"$.proc_ads[{index}]") for index, proc in enumerate(procs))
    if not proc_ads:
        raise BadRequest("$.proc_ads: a cluster needs at least one proc ad (give [{}] for one job)")
    return ClusterToStore(cluster_ad, proc_ads)


def _limit(value: int, name: str) -> int:
    if value < -1:
        raise BadRequest(f"$.{name}: must be -1 (no limit) or more, got {value}")
    return value


def _actor(request: ApiRequest) -> str | None:
    """Whose jobs the caller may touch: None for an ADMINISTRATOR (anyone's)."""
    if request.identity.allows(AuthorizationLevel.ADMINISTRATOR):
        return None
    return request.identity.user


def _selection(body: dict, actor: str | None) -> JobSelection:
    """The jobs a request names; a non-administrator's constraint only reaches
    their own jobs, while naming another's job by id is refused."""
    ids = take_list_of(body, "ids", str) if body.get("ids") is not None else None
    constraint = take(body, "constraint", str, None)
    if ids is None and constraint is None:
        raise BadRequest("name the jobs: give $.ids (such as [\"12.0\", \"13\"]) or $.constraint")
    if ids is not None and not ids and constraint is None:
        raise BadRequest("$.ids: the list is empty; name at least one job")
    selection = JobSelection()
    if ids:
        try:
            selection = JobSelection.from_spec(list(ids))
        except ValueError as exc:
            raise BadRequest(f"$.ids: {exc}") from None
    if constraint is not None:
        if not constraint.strip():
            raise BadRequest("$.constraint: empty; give an expression such as Owner == \"alice\"")
        try:
            compile_constraint(constraint)
        except ConstraintError as exc:
            raise BadRequest(f"$.constraint: {exc}") from None
        if actor is not None:
            constraint = f"({constraint}) && Owner == {quote_string(actor)}"
        selection = JobSelection(selection.ids, selection.clusters, constraint)
    return selection


def _wire_ads(found: Iterable) -> Iterator[dict | None]:
    """Job ads in their wire form; a ``None`` (a job that did not match) passes
    through, for the stream to yield the reactor on."""
    for ad in found:
        yield None if ad is None else ad_to_json(ad)


__all__ = ["ScheddRoutes", "ACTIONS"]
