"""The job queue: submitting clusters, querying and editing jobs, and applying state
transitions, each request in one SQLite transaction (a large submit or action in a
transaction per chunk or batch, see :meth:`JobQueue.submit_in_steps` and
:meth:`JobQueue.act_in_batches`). A job that leaves the queue moves to the history
table in the same transaction."""

from __future__ import annotations

import enum
import json
import os
import re
import socket
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import attrs

from classad import ClassAd, ExprTree, compile_constraint, is_everything
from classad.convert import python_to_node
from classad.nodes import Literal
from jobmodel import states
from jobmodel.errors import (
    BadConstraintError,
    BadJobAdError,
    InvalidTransitionError,
    JobNotFoundError,
    NotOwnerError,
    ProtectedAttributeError,
)
from jobmodel.states import ClockLike, JobId, JobStatus, Transition, now_from
from schedd.policy import NO_SYSTEM_POLICY, Decision, ExitStep, PolicyAction, SystemPolicy, periodic_decision
from schedd.queue import factory, incoming, text_removal
from schedd.queue.answers import WireText, answer_blocks, stored_pairs, wanted_order
from schedd.queue.db import JobRow, QueueDatabase
from schedd.queue.incoming import IncomingCluster
from schedd.queue.screen import cluster_literals, screened_ad, screened_names
from schedd.queue.selecting import JobSelecting
from schedd.queue.selection import JobSelection
from schedd.queue.stored import (
    ChangeTexts,
    Entries,
    decode_entries,
    decode_expression,
    derive,
    encode_ad,
    encode_cluster,
    encode_entries,
    encode_texts,
    merge,
    new_proc_encoder,
    stored_texts,
    submitter_in,
    value_in,
)
from schedd.queue.whole_ad_text import WholeAdText

#: Rows in the first page of a query by status (later pages double).
FIRST_STATUS_PAGE = 16

#: Jobs one transaction of :meth:`JobQueue.act_in_batches` examines: a removal from
#: stored text costs 20-40 us a job here, so a batch is a few ms of a reactor turn, and
#: a batch of jobs whose ads must be built (100-200 us each) stays well under 100 ms.
ACT_BATCH = 256

#: At most this many procs one factory makes in one :meth:`JobQueue.materialize` pass.
MATERIALIZE_PER_PASS = 200

#: The queue's file in the spool directory.
QUEUE_FILE = "job_queue.sqlite3"

#: Attributes no edit may change: the schedd alone sets them.
PROTECTED_ATTRIBUTES = frozenset(name.lower() for name in (
    "ClusterId", "ProcId", "Owner", "User", "JobStatus", "LastJobStatus", "EnteredCurrentStatus",
    "GlobalJobId", "MyType", "QDate", "NumHolds", "NumHoldsByReason", "UidDomain"))
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def is_attribute_name(name: object) -> bool:
    """True for a ClassAd identifier: a letter or ``_``, then letters, digits or ``_``
    (anything else could forge a line of ``roost q -l``)."""
    return isinstance(name, str) and _IDENTIFIER.fullmatch(name) is not None


class JobAction(enum.Enum):
    """Actions on jobs, named as HTCondor's ``JobAction``."""

    Hold = "Hold"
    Release = "Release"
    Remove = "Remove"
    Vacate = "Vacate"


@attrs.frozen
class ActResult:
    """What an action did: the transitions made (in order) and the jobs it skipped
    because they were in the wrong state, with why."""

    transitions: tuple[Transition, ...]
    skipped: tuple[tuple[JobId, str], ...] = ()
    left_queue: tuple[JobId, ...] = ()


def _decode_proc(row: JobRow, only: frozenset[str] | None = None) -> Entries:
    return decode_entries(row.attrs, only)


class JobQueue(JobSelecting):
    """The durable queue in ``spool/job_queue.sqlite3``. Time comes from ``clock``.

    :param spool: directory holding the queue file, or None for an in-memory queue
    :param clock: an object with ``seconds()`` or a callable returning seconds
    :param history_max_jobs: ``HISTORY_MAX_JOBS``; None keeps every job
    :param history_max_age: seconds a finished job stays in history; None forever
    """

    def __init__(self, spool: str | os.PathLike | None, clock: ClockLike, *,
                 history_max_jobs: int | None = None, history_max_age: float | None = None,
                 synchronous: str = "NORMAL", schedd_name: str | None = None) -> None:
        path = None if spool is None else os.path.join(os.fspath(spool), QUEUE_FILE)
        self.db = QueueDatabase(path, synchronous=synchronous)
        self.clock = clock
        #: The schedd's Name, the first part of every job's GlobalJobId.
        self.schedd_name = schedd_name or socket.gethostname()
        from schedd.history import History
        self.history = History(self.db, clock, max_jobs=history_max_jobs, max_age=history_max_age)
        self._cluster_cache: dict[int, tuple[Entries, ClassAd]] = {}
        self._cluster_pairs: dict[int, dict[str, tuple[str, str]]] = {}
        #: Wire JSON of stored texts, kept across submit replies (bounded, see WireText).
        self._wire = WireText()
        self._whole_ad = WholeAdText(self._wire)
        self.db.add_submitter_column(_stored_submitter)

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    # --- submit ---------------------------------------------------------------
    def submit_cluster(self, cluster_ad: ClassAd, proc_ads: Sequence[ClassAd]) -> int:
        """Store one cluster (common attributes plus each proc's differences) and return
        its ClusterId: :meth:`submit_in_steps` run to the end. Procs are numbered from 0
        in order.

        Raises:
            BadJobAdError: the ads are not ClassAds, there is no proc, or a proc's
                JobStatus is not one of 1-7 (nothing is stored).
        """
        submit = self.submit_in_steps(cluster_ad, proc_ads)
        while not submit.step():
            pass
        return submit.cluster_id

    def reserve_cluster_id(self) -> int:
        """A ClusterId for a cluster given to :meth:`submit_in_steps` later (after an
        expansion off the reactor, say), hidden until then and dropped at start-up if it
        never comes; the id is not reused."""
        return self.db.reserve_cluster_id()

    def submit_in_steps(self, cluster_ad: ClassAd, proc_ads: Sequence[ClassAd],
                        chunk: int | None = None, reserved: int | None = None) -> IncomingCluster:
        """A submit of one cluster stored ``chunk`` procs (default
        :data:`~schedd.queue.incoming.SUBMIT_CHUNK`) per transaction, each
        :meth:`~schedd.queue.incoming.IncomingCluster.step` one transaction: the first
        step allocates the ClusterId (take it in the same reactor turn as
        :meth:`~schedd.queue.db.QueueDatabase.peek_cluster_id`); until the last step
        the cluster is hidden from every read, and a schedd restarted before then drops it.
        ``reserved``: the ClusterId :meth:`reserve_cluster_id` gave this cluster.

        Raises:
            BadJobAdError: the ads are not ClassAds or there is no proc (at once);
                a step raises it for a proc whose JobStatus is not one of 1-7.
        """
        if not isinstance(cluster_ad, ClassAd):
            raise BadJobAdError(f"the cluster ad must be a ClassAd, not {type(cluster_ad).__name__}")
        procs = list(proc_ads)
        if not procs:
            raise BadJobAdError("a cluster needs at least one proc ad")
        for index, proc in enumerate(procs):
            if not isinstance(proc, ClassAd):
                raise BadJobAdError(f"proc ad {index} must be a ClassAd, not {type(proc).__name__}")
        kept: dict[str, dict] = {}

        def first() -> tuple[int, Iterator[tuple]]:
            now = now_from(self.clock)
            added = [(name, python_to_node(value)) for name, value in (
                ("JobStatus", int(JobStatus.IDLE)), ("QDate", now), ("EnteredCurrentStatus", now))
                if name not in cluster_ad and not all(name in proc for proc in procs)]
            cluster_id = self.db.allocate_cluster_id() if reserved is None else reserved
            # derived, not copied: the cluster ad's entries are shared, never changed
            common = cluster_ad.derive([*added, ("ClusterId", python_to_node(cluster_id))])
            common_text, kept["pairs"] = encode_cluster(common)
            self.db.insert_cluster(cluster_id, common_text)
            pairs = kept["pairs"]
            entries = {key: (pairs[key][0], decode_expression(pairs[key][1])) for key in _SUBMITTER_KEYS if key in pairs}
            return cluster_id, self._proc_rows(cluster_id, procs, common, cluster_entries=entries)

        def acknowledged(cluster_id: int) -> None:
            self._forget_cluster(cluster_id)
            self._keep_pairs(cluster_id, kept["pairs"])
        return IncomingCluster(self.db, len(procs), first, acknowledged, chunk or incoming.SUBMIT_CHUNK, reserved)

    def _proc_rows(self, cluster_id: int, procs: list[ClassAd], common: ClassAd, first_proc: int = 0,
                   cluster_entries: Entries | None = None):
        """The job rows of ``procs`` (numbered from ``first_proc``) in a cluster of common
        attributes ``common``, whose submitter entries (:data:`_SUBMITTER_KEYS`, as read
        back from its stored text) the caller may give."""
        status, owner, qdate = (common.evaluate(name) for name in ("JobStatus", "Owner", "QDate"))
        if cluster_entries is None:
            cluster_entries = decode_entries(encode_ad(common), _SUBMITTER_KEYS)
        cluster_submitter = submitter_in(cluster_entries, {})
        new_proc_text = new_proc_encoder(self.schedd_name, cluster_id, qdate)
        for proc_id, proc in enumerate(procs, first_proc):
            if not len(proc) and type(status) is int and 1 <= status <= 7:  # no differences of its own
                text = new_proc_text(proc_id)
                yield (cluster_id, proc_id, status, owner if type(owner) is str else None, text, cluster_submitter)
                continue
            diff = proc.copy()
            diff["ProcId"] = proc_id
            proc_qdate = diff.evaluate("QDate") if "QDate" in diff else qdate
            # HTCondor's form: schedd name, job id and submit time
            diff["GlobalJobId"] = f"{self.schedd_name}#{cluster_id}.{proc_id}#{proc_qdate}"
            proc_status = diff.evaluate("JobStatus") if "JobStatus" in diff else status
            proc_owner = diff.evaluate("Owner") if "Owner" in diff else owner
            if type(proc_status) is not int or not 1 <= proc_status <= 7:
                raise BadJobAdError(f"job {cluster_id}.{proc_id} has JobStatus {proc_status!r}, not one of 1-7")
            text = encode_ad(diff)
            yield (cluster_id, proc_id, proc_status, proc_owner if type(proc_owner) is str else None,
                   text, _proc_submitter(cluster_entries, diff, text))

    # --- job factories (late materialisation) -------------------------------------
    def submit_factory(self, cluster_ad: ClassAd, digest: str, total_procs: int,
                       limit: int | None, max_idle: int | None) -> int:
        """Store a cluster as a job factory: its common attributes with HTCondor's
        factory attributes, and the digest its procs are made from later (no proc
        yet: :meth:`materialize` makes them). Returns its ClusterId."""
        now = now_from(self.clock)
        common = cluster_ad.copy()
        for name, value in (("JobStatus", int(JobStatus.IDLE)), ("QDate", now), ("EnteredCurrentStatus", now)):
            if name not in common:
                common[name] = value
        common[factory.TOTAL_PROCS] = total_procs
        common[factory.NEXT_PROC_ID] = 0
        common[factory.PAUSED] = int(factory.MaterializeMode.RUNNING)
        for name, value in ((factory.LIMIT, limit), (factory.MAX_IDLE, max_idle)):
            if value is not None:
                common[name] = value
        with self.db.atomic():
            cluster_id = self.db.allocate_cluster_id()
            common["ClusterId"] = cluster_id
            self.db.insert_cluster(cluster_id, encode_ad(common))
            self.db.insert_factory(cluster_id, digest)
        return cluster_id

    def materialize(self, make_procs: Callable[[int, str, range], list[ClassAd]],
                    only: int | None = None, most: int = MATERIALIZE_PER_PASS) -> list[JobId]:
        """Let every running factory (or only cluster ``only``'s) make the procs its
        limits allow now, at most ``most`` each (so a pass stays short: call again
        while a factory made that many), each factory in one transaction;
        ``make_procs(cluster_id, digest, proc_ids)`` builds their ads. A factory whose
        procs cannot be made is paused (JobMaterializePaused = 1, with
        JobMaterializePauseReason). Returns the new jobs."""
        made: list[JobId] = []
        for cluster_id, digest in self.db.active_factories():
            if only is None or cluster_id == only:
                with self.db.atomic():
                    made.extend(self._materialize_one(cluster_id, digest, make_procs, most))
        return made

    def _materialize_one(self, cluster_id: int, digest: str, make_procs, most: int) -> list[JobId]:
        cluster = self._cluster_entries(cluster_id)
        state = _factory_state(cluster)
        counts = self.db.count_cluster_by_status(cluster_id)
        not_running = counts.get(int(JobStatus.IDLE), 0) + counts.get(int(JobStatus.HELD), 0)
        wanted = range(state.next_proc_id, state.next_proc_id + min(most, factory.procs_to_make(
            state, sum(counts.values()), not_running)))
        changes: dict[str, Any] = {}
        procs: list[ClassAd] = []
        for proc_id in wanted:
            try:
                procs.extend(make_procs(cluster_id, digest, range(proc_id, proc_id + 1)))
            except ValueError as exc:
                changes = {factory.PAUSED: int(factory.MaterializeMode.HOLD),
                           "JobMaterializePauseReason": f"failed to make job {cluster_id}.{proc_id}: {exc}"}
                wanted = range(wanted.start, proc_id)
                break
        self.db.insert_jobs(self._proc_rows(cluster_id, procs, merge(cluster, {}), wanted.start if wanted else 0))
        if wanted:
            changes[factory.NEXT_PROC_ID] = wanted.stop
        if wanted.stop >= state.total_procs and not changes.get(factory.PAUSED):
            changes[factory.PAUSED] = int(factory.MaterializeMode.NO_MORE_ITEMS)
        self._set_cluster(cluster_id, changes)
        return [JobId(cluster_id, proc_id) for proc_id in wanted]

    def _set_cluster(self, cluster_id: int, changes: dict[str, Any]) -> None:
        """Write ``changes`` into a factory's cluster ad, finishing the factory when its
        mode says it is complete, and dropping the cluster if that leaves it empty."""
        if not changes:
            return
        entries = dict(self._cluster_entries(cluster_id))
        for name, value in changes.items():
            entries[name.lower()] = (name, python_to_node(value))
        self.db.set_cluster_attrs(cluster_id, encode_entries(entries))
        self._forget_cluster(cluster_id)
        if factory.is_complete(changes.get(factory.PAUSED, factory.MaterializeMode.RUNNING)):
            self.db.finish_factory(cluster_id)
            self.db.delete_cluster_if_empty(cluster_id)

    def _stop_factories(self, selection: JobSelection, actor: str | None) -> None:
        """A removal of a factory's cluster (by id, or by a constraint its cluster ad
        matches) stops its factory: HTCondor's mmClusterRemoved, no more procs."""
        predicate = compile_constraint(selection.constraint) if selection.constraint is not None else None
        removed = int(factory.MaterializeMode.CLUSTER_REMOVED)
        for cluster_id, _digest in self.db.active_factories():
            named = cluster_id in selection.clusters
            cluster = self._cluster_entries(cluster_id)
            if named and actor is not None and value_in(cluster, "owner") != actor:
                raise NotOwnerError(f"{actor} may not remove cluster {cluster_id}, owned by "
                                    f"{value_in(cluster, 'owner')!r}; nothing was changed")
            if named or (predicate is not None and predicate(merge(cluster, {}))):
                self._set_cluster(cluster_id, {factory.PAUSED: removed})

    def _forget_cluster(self, cluster_id: int) -> None:
        """Drop what is kept of a cluster whose stored ad changed or went."""
        self._cluster_cache.pop(cluster_id, None)
        self._cluster_pairs.pop(cluster_id, None)

    def cluster_ad(self, cluster_id: int) -> ClassAd:
        """A cluster's common attributes as one ad.

        Raises:
            JobNotFoundError: no such cluster in the queue.
        """
        if self.db.get_cluster_attrs(cluster_id) is None:
            raise JobNotFoundError(f"cluster {cluster_id} is not in the queue")
        return merge(self._cluster_entries(cluster_id), {})

    def factory_clusters(self) -> Iterator[ClassAd]:
        """The cluster ad of every factory cluster still in the queue."""
        for cluster_id in self.db.factory_cluster_ids():
            yield merge(self._cluster_entries(cluster_id), {})

    # --- reading --------------------------------------------------------------
    def _cluster_entries(self, cluster_id: int) -> Entries:
        return self._cluster(cluster_id)[0]

    def _cluster(self, cluster_id: int) -> tuple[Entries, ClassAd]:
        """A cluster's decoded entries and its ad, read once and kept for its procs."""
        cached = self._cluster_cache.get(cluster_id)
        if cached is None:
            text = self.db.get_cluster_attrs(cluster_id)
            entries = decode_entries(text) if text is not None else {}
            if len(self._cluster_cache) > 256:
                self._cluster_cache.clear()
            cached = self._cluster_cache[cluster_id] = (entries, merge(entries, {}))
        return cached

    def _keep_pairs(self, cluster_id: int, pairs: dict[str, tuple[str, str]]) -> None:
        """Keep a cluster's stored pairs as :meth:`_stored_pairs` would read them back."""
        if len(self._cluster_pairs) > 256:
            self._cluster_pairs.clear()
        self._cluster_pairs[cluster_id] = pairs

    def _stored_pairs(self, cluster_id: int) -> dict[str, tuple[str, str]]:
        """A cluster's stored ``(name, text)`` pairs by lower-case name, kept for its procs."""
        pairs = self._cluster_pairs.get(cluster_id)
        if pairs is None:
            text = self.db.get_cluster_attrs(cluster_id) or "[]"
            if len(self._cluster_pairs) > 256:
                self._cluster_pairs.clear()
            pairs = self._cluster_pairs[cluster_id] = {name.lower(): (name, value)
                                                       for name, value in json.loads(text)}
        return pairs

    def _ad_of(self, row: JobRow) -> ClassAd:
        return derive(self._cluster(row.cluster_id)[1], _decode_proc(row))

    def _with_ad(self, row: JobRow) -> tuple[JobRow, ClassAd, Entries]:
        """The row, its whole ad and its proc's decoded entries (decoded once for both)."""
        proc = _decode_proc(row)
        return row, derive(self._cluster(row.cluster_id)[1], proc), proc

    def _text_ad(self, cluster_id: int, proc_text: str) -> ClassAd:
        return derive(self._cluster(cluster_id)[1], decode_entries(proc_text))

    def get_job(self, job_id: JobId) -> ClassAd:
        """The whole ad of one job.

        Raises:
            JobNotFoundError: no such job in the queue.
        """
        row = self.db.get_job(job_id.cluster, job_id.proc)
        if row is None:
            raise JobNotFoundError(f"job {job_id} is not in the queue")
        return self._ad_of(row)

    def job_wire(self, job_id: JobId) -> dict:
        """One job's whole ad in its wire form (as ``ad_to_json(get_job(...))``), read
        off the stored text without building the ad.

        Raises:
            JobNotFoundError: no such job in the queue.
        """
        return json.loads(self.job_wire_text(job_id))

    def job_wire_text(self, job_id: JobId) -> bytes:
        """:meth:`job_wire` as its JSON text (UTF-8, one line with its newline), undecoded.

        Raises:
            JobNotFoundError: no such job in the queue.
        """
        row = self.db.get_job(job_id.cluster, job_id.proc)
        if row is None:
            raise JobNotFoundError(f"job {job_id} is not in the queue")
        return self._whole_ad.line(self._stored_pairs(row.cluster_id), stored_pairs(row.attrs))

    def status_of(self, job_id: JobId) -> JobStatus:
        """One job's ``JobStatus``, read from its row without decoding its ad (the shadow
        asks on every report).

        Raises:
            JobNotFoundError: no such job in the queue.
        """
        row = self.db.get_job(job_id.cluster, job_id.proc)
        if row is None:
            raise JobNotFoundError(f"job {job_id} is not in the queue")
        return JobStatus(row.status)

    def query(self, constraint: "str | ExprTree | None" = None, projection: Iterable[str] = (),
              limit: int = -1, owner: str | None = None, status: JobStatus | None = None,
              misses: bool = False, submitter: str | None = None,
              skip: Callable[[JobId], bool] | None = None) -> Iterator[ClassAd | None]:
        """Stream the job ads matching ``constraint`` in id order, each cut down to
        ``projection`` when one is given, stopping after ``limit`` ads (-1: all).
        ``owner``, ``submitter`` (an AccountingGroup such as "group_a.alice", else an
        Owner: see :func:`~schedd.queue.stored.submitter_in`) and ``status`` narrow the
        rows read through the queue's indexes; with
        ``status`` the first rows come a few at a time (the claim-reuse path takes the
        first idle job after every exit). With ``misses`` a job that does not match
        yields ``None``, so a caller streaming on the reactor can pause between any
        two evaluations of the constraint. Jobs ``skip`` is true of are left out before
        their ads are made.

        Raises:
            ConstraintError: the constraint does not parse (raised at once).
        """
        predicate = compile_constraint(constraint)
        wanted = [name for name in projection]
        rows = self.db.find_jobs(owner=owner, submitter=submitter) if status is None else \
            self.db.find_jobs(owner=owner, submitter=submitter, status=int(status), first_page=FIRST_STATUS_PAGE)
        if skip is not None:
            rows = (row for row in rows if not skip(JobId(row.cluster_id, row.proc_id)))
        return self._stream(predicate, wanted, limit, rows, misses)

    def query_lines(self, constraint: "str | ExprTree | None" = None, projection: Iterable[str] = (),
                    limit: int = -1) -> Iterator[bytes | None]:
        """The matching jobs as :func:`~schedd.queue.answers.answer_blocks` of NDJSON
        lines (the wire form of :meth:`query`'s ads), projected on the stored text.

        Raises:
            ConstraintError: the constraint does not parse (raised at once).
        """
        predicate = compile_constraint(constraint)
        wanted = wanted_order(projection) if projection else None
        matches = None if is_everything(predicate) else self._matcher(predicate, constraint)
        return answer_blocks(self.db.scan_job_texts(), self._stored_pairs, matches, wanted, limit)

    def _matcher(self, predicate, constraint: "str | ExprTree") -> Callable[[tuple, list], bool]:
        """Whether a stored ``(cluster_id, proc_id, attrs)`` row (with its proc's stored
        pairs) matches: decided on the
        few literal attributes the constraint reads when it can be (see
        :mod:`schedd.queue.screen`), else on the whole job ad."""
        names = screened_names(constraint) if isinstance(constraint, str) else None
        last: list = [None, None]  # the cluster id and its literals, for the rows of one cluster

        def matches(row: tuple, proc: list) -> bool:
            ad = None
            if names is not None:
                if last[0] != row[0]:
                    last[:] = [row[0], cluster_literals(self._stored_pairs(row[0]), names)]
                ad = screened_ad(last[1], proc, names)
            return predicate(ad if ad is not None else self._text_ad(row[0], row[2]))
        return matches

    def _stream(self, predicate, wanted: list[str], limit: int, rows: Iterable[JobRow],
                misses: bool = False) -> Iterator[ClassAd | None]:
        only = frozenset(name.lower() for name in wanted) if wanted and is_everything(predicate) else None
        sent = 0
        for row in rows:
            if limit >= 0 and sent >= limit:
                return
            cluster = self._cluster_entries(row.cluster_id)
            if only is not None:
                ad = merge({k: v for k, v in cluster.items() if k in only}, _decode_proc(row, only))
            else:
                ad = self._ad_of(row)
                if not predicate(ad):
                    if misses:
                        yield None
                    continue
                if wanted:
                    ad = _project(ad, wanted)
            sent += 1
            yield ad

    @staticmethod
    def _check_owner(row: JobRow, actor: str | None, what: str) -> None:
        """Refuse (rolling the whole request back) when ``actor`` does not own the job."""
        if actor is not None and row.owner != actor:
            raise NotOwnerError(f"{actor} may not {what} job {row.cluster_id}.{row.proc_id}, owned by "
                                f"{row.owner!r}; nothing was changed")

    # --- writing --------------------------------------------------------------
    def _changed(self, row: JobRow, changes: dict[str, Any], decoded: Entries | None = None,
                 values: ChangeTexts | None = None) -> tuple[Entries, Entries, dict[str, list]]:
        """The cluster's entries, the proc's entries (from ``decoded`` when given, left
        unchanged) and the proc's stored ``[name, text]`` pairs after ``changes``
        (``None`` deletes); nothing is written. Only the changed values are printed
        (through ``values``, shared by a batch); the other pairs stay as stored."""
        cluster = self._cluster_entries(row.cluster_id)
        proc = _decode_proc(row) if decoded is None else dict(decoded)
        texts = stored_texts(row.attrs)
        values = values or ChangeTexts()
        for name, value in changes.items():
            key = name.lower()
            if value is states.DELETE:
                if key in cluster:
                    proc[key] = (cluster[key][0], None)
                else:
                    proc.pop(key, None)
            else:
                proc[key] = (name, values.of(value)[0])
        text_removal.changed_texts(texts, cluster, changes, values)
        return cluster, proc, texts

    def _remove_from_text(self, row: JobRow, reason: str, now: int, leaving: list,
                          values: ChangeTexts, plans: dict | None = None) -> Transition | None:
        """Remove an idle, held or completed job straight from its stored text, when that
        text says plainly (in literals) where the job runs and that nothing keeps it in
        the queue: :func:`jobmodel.states.removal`'s rules, without decoding its
        expressions or building its ad (a large removal spent most of its time there).
        The job is noted in ``leaving``. None, with nothing done, for any other job.
        ``plans``: the :class:`~schedd.queue.text_removal.RemovalPlan` of each cluster
        and status, for one reason and time (see :func:`schedd.queue.text_removal.removed`).

        Raises:
            InvalidTransitionError: the job is already Removed.
        """
        found = text_removal.removed(row, self._stored_pairs(row.cluster_id), reason, now, values, plans)
        if found is None:
            return None
        transition, history = found
        self._leave(row, history, now, leaving)
        return transition

    def _store(self, row: JobRow, cluster: Entries, proc: Entries, text: str | None = None,
               stored: list | None = None) -> str:
        """Write the proc's entries (as ``text`` when given, their stored text) with its
        status and owner columns, at once or (with ``stored``) noted there for one
        statement per batch; returns its text."""
        status = value_in(proc, "jobstatus")
        if status is None:
            status = value_in(cluster, "jobstatus")
        owner = value_in(proc, "owner")
        if owner is None:
            owner = value_in(cluster, "owner")
        if text is None:
            text = encode_entries(proc)
        if stored is None:
            self.db.set_job(row.cluster_id, row.proc_id, status, owner, text, submitter_in(cluster, proc))
        else:
            stored.append((status, owner, text, submitter_in(cluster, proc), row.cluster_id, row.proc_id))
        return text

    def _write(self, row: JobRow, changes: dict[str, Any]) -> None:
        """Store ``changes`` in the proc's differences."""
        cluster, proc, texts = self._changed(row, changes)
        self._store(row, cluster, proc, encode_texts(texts.values()))

    def _leave(self, row: JobRow, proc: "Entries | str | Iterable[list]", now: int,
               leaving: list | None = None) -> None:
        """Move the job, with its proc's entries, stored text or stored pairs, to history: at once,
        or (with ``leaving``) noted there for :meth:`_flush_leaving` to write with
        others before the transaction ends."""
        if isinstance(proc, dict):
            text = encode_entries(proc)
        elif isinstance(proc, str):
            text = proc
        else:
            text = encode_texts(list(proc))
        record = (row.cluster_id, row.proc_id, row.owner, now, text)
        if leaving is not None:
            leaving.append(record)
        else:
            self._flush_leaving([record])

    def _flush_leaving(self, leaving: list, bases: dict[int, int] | None = None) -> None:
        """Write the noted history rows, each beside its cluster's stored attributes as
        a history base, and drop their jobs (and emptied clusters). ``bases``: the base
        of clusters met before, filled in here; valid only while every base in it is
        stored (the caller drops it when a transaction rolls back or history is trimmed)."""
        if leaving:
            bases = {} if bases is None else bases
            for cluster_id in dict.fromkeys(record[0] for record in leaving):
                if cluster_id not in bases:
                    bases[cluster_id] = self.db.history_base(self.db.get_cluster_attrs(cluster_id) or "[]")
            rows = [(*record, bases[record[0]]) for record in leaving]
            for cluster_id in self.db.move_to_history(rows):
                self._forget_cluster(cluster_id)
            leaving.clear()

    def _apply(self, row: JobRow, transition: Transition, now: int, leaving: list | None = None,
               proc: Entries | None = None, values: ChangeTexts | None = None, stored: list | None = None) -> bool:
        """Write one transition; move the job to history when it may leave (noted in
        ``leaving`` when given, see :meth:`_leave`). ``proc``: the row's decoded
        entries when already decoded; ``values``: the batch's printed values;
        ``stored``: where to note the job's new row for one write per batch.
        Returns whether it left."""
        cluster, proc, texts = self._changed(row, transition.changes, proc, values)
        if not _stays(cluster, proc, self._cluster(row.cluster_id)[1]):
            self._leave(row, texts.values(), now, leaving)
            return True
        self._store(row, cluster, proc, encode_texts(texts.values()), stored)
        return False

    def act(self, action: JobAction, selection: JobSelection, reason: str | None = None,
            actor: str | None = None) -> ActResult:
        """Hold, release, remove or vacate the selected jobs in one transaction.

        Jobs named by id must be in a state the action applies to; jobs found by
        constraint that are not are skipped (and listed). With ``actor``, every job
        must be owned by that user.

        Raises:
            JobNotFoundError: a named job or cluster is not in the queue.
            InvalidTransitionError: a job named by id is in the wrong state.
            NotOwnerError: ``actor`` does not own every selected job.
            ConstraintError: the constraint does not parse.
        """
        make = _ACTIONS[action]
        named = {(j.cluster, j.proc) for j in selection.ids}
        reason = reason or _DEFAULT_REASONS[action].format(actor=actor or "the schedd")
        with self.db.atomic():
            if action is JobAction.Remove:
                self._stop_factories(selection, actor)
            selected = ((row, ad, None) for row, ad in self._selected(selection))
            result = self._act_on(make, action, selected, reason, actor, named)
            self.history.rotate()
        return result

    def act_in_batches(self, action: JobAction, selection: JobSelection, reason: str | None = None,
                       actor: str | None = None, batch: int | None = None) -> Iterator[ActResult]:
        """:meth:`act` for selections of any size, a transaction per ``batch`` (default ACT_BATCH) jobs
        examined: each step commits one batch and yields what it did, so a caller on
        the reactor can answer others between steps. Everything that makes
        :meth:`act` refuse the whole request (a named job missing, in the wrong state
        or another's; a named cluster missing or holding another's job; a bad
        constraint) is checked, changing nothing, before the first batch; a job that
        changes state between batches is skipped.

        Raises:
            JobNotFoundError, InvalidTransitionError, NotOwnerError, ConstraintError:
                as for :meth:`act`, from the first step, with nothing changed.
        """
        make = _ACTIONS[action]
        reason = reason or _DEFAULT_REASONS[action].format(actor=actor or "the schedd")
        batch = batch or ACT_BATCH
        predicate = compile_constraint(selection.constraint) if selection.constraint is not None else None
        self._check_named(make, action, selection, reason, actor)
        if action is JobAction.Remove:
            with self.db.atomic():
                self._stop_factories(selection, actor)
        pages = self._selected_pages(selection, predicate, batch)
        bases: dict[int, int] = {}  # the history base of each cluster, while no transaction rolls back
        while True:
            with self.db.atomic():
                page = next(pages, None)
                if page is None:
                    return
                result = self._act_on(make, action, page, reason, actor, frozenset(), bases)
                if self.history.rotate():
                    bases.clear()  # a base no history row uses any more went with them
            yield result

    def _act_on(self, make, action: JobAction, selected: Iterable[tuple[JobRow, ClassAd | None, Entries | None]],
                reason: str, actor: str | None, named: "set | frozenset", bases: dict[int, int] | None = None
                ) -> ActResult:
        """Apply ``make`` to the selected jobs (inside the caller's transaction); a job
        in ``named`` in the wrong state raises, any other is skipped. A job selected
        without its ad (None) is removed from its stored text when it can be (see
        :meth:`_remove_from_text`), else its ad is built. ``bases``: the history base
        id of clusters, kept by the caller across its transactions (see :meth:`_flush_leaving`)."""
        transitions, skipped, left, leaving, stored = [], [], [], [], []
        now = now_from(self.clock)
        values = ChangeTexts()
        plans: dict[tuple[int, int], text_removal.RemovalPlan | None] = {}
        for row, ad, proc in selected:
            self._check_owner(row, actor, action.value.lower())
            try:
                removed = None
                if ad is None and action is JobAction.Remove:
                    removed = self._remove_from_text(row, reason, now, leaving, values, plans)
                if removed is None:
                    if ad is None:
                        row, ad, proc = self._with_ad(row)
                    transition = make(ad, reason, self.clock)
            except InvalidTransitionError as exc:
                if (row.cluster_id, row.proc_id) in named:
                    raise
                skipped.append((JobId(row.cluster_id, row.proc_id), str(exc)))
                continue
            if removed is not None:
                transitions.append(removed)
                left.append(removed.job_id)
                continue
            transitions.append(transition)
            if self._apply(row, transition, now, leaving, proc, values, stored):
                left.append(transition.job_id)
        self.db.set_jobs(stored)
        self._flush_leaving(leaving, bases)
        return ActResult(tuple(transitions), tuple(skipped), tuple(left))

    def edit(self, selection: JobSelection, attr: str, value: Any, actor: str | None = None) -> int:
        """Set ``attr`` of the selected jobs to ``value`` (expression text, an
        ExprTree or a Python value) in one transaction; returns how many changed.

        Raises:
            ProtectedAttributeError: ``attr`` is one only the schedd may set.
            BadConstraintError: ``value`` text does not parse as an expression.
            JobNotFoundError, NotOwnerError: as for :meth:`act`.
        """
        if not is_attribute_name(attr):
            raise BadJobAdError(f"{attr!r} is not an attribute name (a letter or '_' followed by letters, "
                                f"digits or '_')")
        if attr.lower() in PROTECTED_ATTRIBUTES:
            raise ProtectedAttributeError(f"attribute {attr} is protected: only the schedd may change it")
        node = _value_node(attr, value)
        changed = 0
        with self.db.atomic():
            for row, _ad in self._selected(selection):
                self._check_owner(row, actor, "edit")
                self._write(row, {attr: node})
                changed += 1
        return changed

    def transition(self, job_id: JobId, make: Callable[..., Transition], *args: Any, **kwargs: Any) -> Transition:
        """Apply one state change computed by ``make(ad, *args, clock, **kwargs)`` (such as
        :func:`jobmodel.states.start` or :func:`~jobmodel.states.removal_done`).

        Raises:
            JobNotFoundError: no such job.
            InvalidTransitionError: the change does not apply to the job's state.
        """
        with self.db.atomic():
            row = self.db.get_job(job_id.cluster, job_id.proc)
            if row is None:
                raise JobNotFoundError(f"job {job_id} is not in the queue")
            ad = self._ad_of(row)
            result = make(ad, *args, self.clock, **kwargs)
            self._apply(row, result, now_from(self.clock))
            self.history.rotate()
        return result

    def transitions(self, job_id: JobId,
                    steps: Iterable[Callable[[ClassAd, ClockLike], Transition | None]]) -> list[Transition]:
        """Apply several state changes of one job as one: each ``step(ad, clock)`` sees
        the ad the steps before it made, and returns its Transition (None: no change).
        One read, one write and one commit for all (a short job's start, run end and
        exit arrive together); a step that raises writes nothing at all.

        Raises:
            JobNotFoundError: no such job.
            InvalidTransitionError: a step does not apply to the job's state.
        """
        results: list[Transition] = []
        with self.db.atomic():
            row = self.db.get_job(job_id.cluster, job_id.proc)
            if row is None:
                raise JobNotFoundError(f"job {job_id} is not in the queue")
            ad, changes, seen = self._ad_of(row), {}, None
            for step in steps:
                if seen is not None:  # the ad as the step before left it (made only for a next step)
                    ad, seen = states.apply_changes(ad, seen), None
                result = step(ad, self.clock)
                if result is None:
                    continue
                results.append(result)
                changes.update(result.changes)
                seen = result.changes
            if results:
                self._apply(row, Transition(job_id, changes), now_from(self.clock))
                self.history.rotate()
        return results

    @staticmethod
    def exit_step(exit: states.ExitRecord) -> ExitStep:
        """The step of :meth:`transitions` recording a running job's exit (see
        :class:`schedd.policy.ExitStep`), for the shadow, which imports nothing of the schedd."""
        return ExitStep(exit)

    def job_exited(self, job_id: JobId, exit: states.ExitRecord) -> tuple[Decision, Transition]:
        """Record a running job's exit, applying ``on_exit_hold``/``on_exit_remove``.

        Raises:
            JobNotFoundError, InvalidTransitionError: as for :meth:`transition`.
        """
        step = ExitStep(exit)
        result = self.transition(job_id, step)
        return step.decision, result

    def evaluate_periodic(self, system: SystemPolicy = NO_SYSTEM_POLICY) -> ActResult:
        """One ``PERIODIC_EXPR_INTERVAL`` pass over every job: apply what the periodic
        expressions decide, and let finished jobs whose ``LeaveJobInQueue`` has turned
        false leave; all in one transaction."""
        transitions, left = [], []
        with self.db.atomic():
            now = now_from(self.clock)
            for row in list(self.db.find_jobs()):
                ad = self._ad_of(row)
                if row.status in (JobStatus.COMPLETED, JobStatus.REMOVED):
                    if not states.leave_in_queue(ad):
                        self._leave(row, row.attrs, now)
                        left.append(JobId(row.cluster_id, row.proc_id))
                    continue
                decision = periodic_decision(ad, system)
                if decision is None:
                    continue
                transition = _decided(decision, ad, self.clock)
                transitions.append(transition)
                if self._apply(row, transition, now):
                    left.append(transition.job_id)
            self.history.rotate()
        return ActResult(tuple(transitions), (), tuple(left))

    # --- summaries ------------------------------------------------------------
    def totals_by_owner(self) -> dict[str | None, dict[JobStatus, int]]:
        """Per owner, how many jobs are in each status (for the Scheduler ad)."""
        return owner_totals(self.totals_by_submitter())

    def totals_by_submitter(self) -> dict[str | None, dict[str | None, dict[JobStatus, int]]]:
        """Per submitter (AccountingGroup, else Owner) and, within it, per owner, how many
        jobs are in each status (for Submitter ads), read from the queue's index."""
        return submitter_totals(self.db.count_jobs_by_submitter())

    def totals_counter(self) -> Callable[[], dict[str | None, dict[str | None, dict[JobStatus, int]]]] | None:
        """:meth:`totals_by_submitter` as a function a worker thread may call, on a
        connection of its own; None for a queue in memory (count on the queue's thread)."""
        counter = self.db.submitter_counter()
        return None if counter is None else lambda: submitter_totals(counter())

    def __len__(self) -> int:
        return self.db.count_jobs()


def submitter_totals(rows: Iterable[tuple[str | None, str | None, int, int]],
                     ) -> dict[str | None, dict[str | None, dict[JobStatus, int]]]:
    """Nested totals from ``(submitter, owner, status, count)`` rows."""
    found: dict[str | None, dict[str | None, dict[JobStatus, int]]] = {}
    for submitter, owner, status, count in rows:
        found.setdefault(submitter, {}).setdefault(owner, {})[JobStatus(status)] = count
    return found


def owner_totals(by_submitter: dict[str | None, dict[str | None, dict[JobStatus, int]]],
                 ) -> dict[str | None, dict[JobStatus, int]]:
    """Per owner, how many jobs are in each status, summed over the submitters (an owner
    submits as herself and as each accounting group she names)."""
    found: dict[str | None, dict[JobStatus, int]] = {}
    for by_owner in by_submitter.values():
        for owner, by_status in by_owner.items():
            mine = found.setdefault(owner, {})
            for status, count in by_status.items():
                mine[status] = mine.get(status, 0) + count
    return found


def _factory_state(cluster: Entries) -> factory.FactoryState:
    """A factory's state from its cluster ad's HTCondor attributes."""
    def number(name: str) -> int | None:
        value = value_in(cluster, name.lower())
        return value if type(value) is int else None
    return factory.FactoryState(total_procs=number(factory.TOTAL_PROCS) or 0,
                                next_proc_id=number(factory.NEXT_PROC_ID) or 0,
                                mode=number(factory.PAUSED) or 0, limit=number(factory.LIMIT),
                                max_idle=number(factory.MAX_IDLE))


#: The attributes a job's submitter is read from.
_SUBMITTER_KEYS = frozenset(("accountinggroup", "owner"))


def _proc_submitter(cluster: Entries, diff: ClassAd, text: str) -> str | None:
    """A new proc's submitter; its stored text is read again only when it overrides
    its cluster's AccountingGroup or Owner."""
    if "AccountingGroup" in diff or "Owner" in diff:
        return submitter_in(cluster, decode_entries(text, _SUBMITTER_KEYS))
    return submitter_in(cluster, {})


def _stored_submitter(cluster_text: str, proc_text: str) -> str | None:
    """The submitter of a proc stored by an older Roost, from its stored texts."""
    return submitter_in(decode_entries(cluster_text, _SUBMITTER_KEYS), decode_entries(proc_text, _SUBMITTER_KEYS))


def _stays(cluster: Entries, proc: Entries, cluster_ad: ClassAd) -> bool:
    """Whether a job stays in the queue (see :func:`jobmodel.states.leave_in_queue`),
    building the whole ad only when ``LeaveJobInQueue`` must be evaluated."""
    status = value_in(proc, "jobstatus")
    if status is None:
        status = value_in(cluster, "jobstatus")
    if status not in (JobStatus.COMPLETED, JobStatus.REMOVED):
        return True
    entry = proc.get("remotehost") or cluster.get("remotehost")
    if entry is not None and entry[1] is not None:
        return True
    entry = proc.get("leavejobinqueue") or cluster.get("leavejobinqueue")
    if entry is None or entry[1] is None:
        return False
    if type(entry[1]) is Literal:  # LeaveJobInQueue = false, as submit writes it: no ad to build
        return entry[1].value is True
    return states.leave_in_queue(derive(cluster_ad, proc))


def _decided(decision: Decision, ad: ClassAd, clock: ClockLike) -> Transition:
    if decision.action is PolicyAction.HOLD:
        return states.hold(ad, decision.reason, clock, decision.code, decision.subcode)
    if decision.action is PolicyAction.RELEASE:
        return states.release(ad, decision.reason, clock)
    return states.remove(ad, decision.reason, clock)


def _value_node(attr: str, value: Any):
    if isinstance(value, str):
        try:
            return ExprTree(value).node
        except ValueError as exc:
            raise BadConstraintError(f"new value of {attr} does not parse as an expression: {exc}") from None
    try:
        return python_to_node(value)
    except TypeError as exc:
        raise BadJobAdError(f"new value of {attr}: {exc}") from None


def _project(ad: ClassAd, wanted: list[str]) -> ClassAd:
    return ClassAd.from_entries([(name, ad.expression(name)) for name in wanted if name in ad])


def _hold(ad: ClassAd, reason: str, clock: ClockLike) -> Transition:
    return states.hold(ad, reason, clock)


_ACTIONS: dict[JobAction, Callable[[ClassAd, str, ClockLike], Transition]] = {
    JobAction.Hold: _hold,
    JobAction.Release: states.release,
    JobAction.Remove: states.remove,
    JobAction.Vacate: lambda ad, reason, clock: states.vacate(ad, clock),
}

_DEFAULT_REASONS = {
    JobAction.Hold: "via condor_hold (by user {actor})",
    JobAction.Release: "via condor_release (by user {actor})",
    JobAction.Remove: "via condor_rm (by user {actor})",
    JobAction.Vacate: "via condor_vacate_job (by user {actor})",
}

__all__ = ["JobQueue", "JobAction", "ActResult", "QUEUE_FILE", "PROTECTED_ATTRIBUTES", "Literal",
           "is_attribute_name"]
