"""The schedd daemon: the durable job queue behind the user routes, the periodic
policy pass, the user job event logs, and the Submitter and Scheduler ads it sends
the collector every ``SCHEDD_INTERVAL`` and soon after each change (and the Submitter
ads to the flock collectors of ``FLOCK_TO`` that each submitter's flock level reaches). The execution
side (``schedd.execution``), when present, runs as its child service."""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence

import attrs
from twisted.internet import task
from twisted.internet.defer import Deferred, DeferredList, maybeDeferred
from twisted.logger import Logger

from classad import ClassAd
from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonService, DaemonSettings
from daemoncore.security.acting_as import ActingAsError, acting_as
from daemoncore.security.pool_trust import PROCESS_TRUSTED_POOLS, TrustedPools
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.collector_routes import ADVERTISE, INVALIDATE, QUERY
from daemoncore.wire.negotiator_routes import RESCHEDULE
from daemoncore.worker_threads import in_worker_thread
from jobmodel.errors import BadConstraintError, EventLogError
from jobmodel.eventlog import Event, EventLogWriter, EventType
from jobmodel.states import JobId, Transition, now_from
from schedd.ads import SubmitterTotals, scheduler_totals, submitter_ads
from schedd.execution import Execution
from schedd.factory_events import FactoryEvents
from schedd.flock_advertiser import FlockAdvertiser, flocked_ads
from schedd.flocking import FlockLevels, FlockSettings
from schedd.fresh_counts import FreshCounts
from schedd.job_events import JobEvents
from schedd.metrics import ScheddMetrics
from schedd.policy import SystemPolicy
from schedd.queue import JobQueue
from schedd.queue.factory_jobs import FactoryMakers, ProcMaker
from schedd.queue.jobqueue import MATERIALIZE_PER_PASS, owner_totals
from schedd.queue.stored import decode_entries, value_in
from schedd.routes import ScheddRoutes
from schedd.spool_cleanup import SpoolCleanup, may_leave
from schedd.spooling import Spooling
from schedd.submit import SubmitError
from schedd.wal_checkpoints import WalCheckpoints
from shadow.owner_rights import EVENT_LOG, NoOwnerAccountError, owner_account

DEFAULT_SCHEDD_INTERVAL = 300.0
DEFAULT_PERIODIC_INTERVAL = 60.0
#: After a change, the ads go out this many seconds later (changes in between share one update).
ADVERTISE_DELAY = 1.0
#: Marks a cluster whose procs each name their own event log.
PER_PROC = object()
_LOG_KEYS = frozenset({"userlog", "iwd", "userlogformat", "owner"})

_log = Logger()


@attrs.frozen
class ScheddSettings:
    """What the schedd reads from config besides the daemon basics."""

    spool: str
    periodic_interval: float = DEFAULT_PERIODIC_INTERVAL
    domain: str = "pool"
    system_policy: SystemPolicy = SystemPolicy()
    history_max_jobs: int | None = None
    history_max_age: float | None = None
    flock: FlockSettings = FlockSettings()

    @classmethod
    def from_config(cls, config: Config, trust_domain: str) -> "ScheddSettings":
        """The schedd's knobs.

        Raises:
            ConfigError: a knob has the wrong type or a policy expression does not parse.
        """
        try:
            policy = SystemPolicy.from_config(
                hold=config.param("SYSTEM_PERIODIC_HOLD"), release=config.param("SYSTEM_PERIODIC_RELEASE"),
                remove=config.param("SYSTEM_PERIODIC_REMOVE"),
                hold_reason=config.param("SYSTEM_PERIODIC_HOLD_REASON"),
                hold_subcode=config.param("SYSTEM_PERIODIC_HOLD_SUBCODE"))
        except BadConstraintError as exc:
            raise ConfigError(str(exc)) from None
        max_jobs = config.param_int("HISTORY_MAX_JOBS", 0)
        max_age = config.param_duration("HISTORY_MAX_AGE", 0)
        return cls(
            spool=config.param("SPOOL") or os.path.join(config.param("LOCAL_DIR", "."), "spool"),
            periodic_interval=config.param_duration("PERIODIC_EXPR_INTERVAL", DEFAULT_PERIODIC_INTERVAL),
            domain=config.param("UID_DOMAIN") or trust_domain,
            system_policy=policy,
            history_max_jobs=max_jobs or None,
            history_max_age=max_age or None,
            flock=FlockSettings.from_config(config),
        )


@attrs.frozen
class LogTarget:
    """Where one job's events go: its event log file, that file's form, and the job's
    ``Owner``, whose rights the file is written with."""

    path: str
    log_format: str = "text"
    owner: str | None = None


def log_target(entries: dict) -> LogTarget | None:
    """The event log named by a job's (or cluster's) ``UserLog``, relative to ``Iwd``."""
    path = value_in(entries, "userlog")
    if type(path) is not str or not path:
        return None
    iwd = value_in(entries, "iwd")
    if not os.path.isabs(path) and type(iwd) is str:
        path = os.path.join(iwd, path)
    form = value_in(entries, "userlogformat")
    owner = value_in(entries, "owner")
    return LogTarget(path, "json" if type(form) is str and form.lower() == "json" else "text",
                     owner if type(owner) is str else None)


class ScheddService(DaemonService):
    """A schedd: one job queue, its routes, its policy loop and its ads."""

    def __init__(self, settings: DaemonSettings, reactor, schedd: ScheddSettings, config: Config | None = None,
                 key: bytes | None = None, http=None, with_execution: bool = True,
                 trusted_pools: TrustedPools = PROCESS_TRUSTED_POOLS) -> None:
        super().__init__(settings, reactor, key, http)
        self.schedd_settings = schedd
        self.config = config if config is not None else Config.load()
        self.clock = reactor
        self.trusted_pools = trusted_pools
        self.flock_levels = FlockLevels(schedd.flock, reactor, settings.update_interval)
        self.flock_advertiser = FlockAdvertiser(self.flock_levels, trusted_pools,
                                                lambda address, token: self.daemon_client(address, token=token))
        os.makedirs(schedd.spool, exist_ok=True)
        self.queue = JobQueue(schedd.spool, reactor, history_max_jobs=schedd.history_max_jobs,
                              history_max_age=schedd.history_max_age)
        counter = self.queue.totals_counter()
        self.fresh_totals = (FreshCounts(counter, in_worker_thread) if counter is not None
                             else FreshCounts(self.queue.totals_by_submitter, maybeDeferred))
        self.metrics = ScheddMetrics(self._latest_owner_totals, self.metrics_registry)
        self._routes = ScheddRoutes(self)
        self._cluster_logs: dict[int, LogTarget | None] = {}
        self._advertised_submitters: set[str] = set()
        self._pending_advertise = None
        self._pending_reschedule = None
        self._last_reschedule: float | None = None
        self._periodic = task.LoopingCall(self._periodic_pass)
        self.factories = FactoryMakers(schedd.domain)
        self.factory_events = FactoryEvents(self.queue.db, _cluster_log_target, self._write_events, reactor)
        self._pending_materialize = None
        #: set once stopping begins: nothing new is scheduled on the queue, closed when the stop ends
        self._stopping = False
        self._periodic.clock = reactor
        self.spool_cleanup = SpoolCleanup(self.queue, schedd.spool, in_worker_thread, reactor)
        checkpoint = self.queue.db.checkpoint_apart()
        if checkpoint is not None:
            WalCheckpoints(checkpoint, in_worker_thread, reactor).setServiceParent(self)
        self.execution = _execution_for(self) if with_execution else None
        if self.execution is not None:
            self.execution.setName("execution")
            self.execution.setServiceParent(self)

    # --- routes -----------------------------------------------------------
    def handlers(self) -> dict:
        table = dict(self._routes.handlers())
        table.update(Spooling(self).handlers())
        table.update(JobEvents(self._job_log).handlers())
        if self.execution is not None:
            table.update(self.execution.handlers())
        return table

    # --- what routes and the execution side call ---------------------------
    def submitted(self, cluster_id: int, num_procs: int, first_proc: int = 0,
                  stored_ads: tuple[ClassAd, Sequence[ClassAd]] | None = None) -> None:
        """Log the Submit event of each new proc, count the submit and advertise soon.
        ``stored_ads``, the cluster ad and proc ads a new cluster was just stored from,
        say where its events go without reading the cluster back from the queue."""
        if stored_ads is not None and cluster_id not in self._cluster_logs:
            self._cluster_logs[cluster_id] = _stored_log_target(*stored_ads)
        self.metrics.submitted(num_procs)
        now = now_from(self.clock)
        host = f"<{self.address}>"
        target = self._cluster_log(cluster_id)
        events: dict[LogTarget, list[Event]] = {}
        for proc in range(first_proc, first_proc + num_procs) if target is not None else ():
            where = self._job_log(JobId(cluster_id, proc)) if target is PER_PROC else target
            if where is not None:
                events.setdefault(where, []).append(
                    Event(EventType.SUBMIT, cluster_id, proc, now, {"SubmitHost": host}))
        for where, batch in events.items():
            self._write_events(where, batch)
        self._advertise_and_reschedule()

    def factory_submitted(self, cluster_id: int, maker: ProcMaker) -> None:
        """A factory cluster was stored: log its Cluster submitted event (035), then let it
        make its first procs now."""
        self.factories.add(maker)
        self.factory_events.submitted(cluster_id, f"<{self.address}>", maker.per_row)
        self.materialize(cluster_id)

    def materialize(self, only: int | None = None) -> None:
        """Let the job factories make the procs their limits allow (HTCondor materialises
        as procs leave or start), logging a Submit event for each."""
        try:
            made = self.queue.materialize(self.factories, only)
        except Exception:
            _log.failure("schedd: materialising factory jobs failed")
            return
        for cluster_id in sorted({job.cluster for job in made}):
            procs = [job.proc for job in made if job.cluster == cluster_id]
            self.submitted(cluster_id, len(procs), procs[0])
            if len(procs) >= MATERIALIZE_PER_PASS:
                self.queue_changed()  # that factory has more to make: another pass soon
        try:
            self.factory_events.check()  # paused (037), resumed (038), cluster gone (036)
        except Exception:
            _log.failure("schedd: writing factory events failed")

    def _factory_per_row(self, cluster_id: int) -> int:
        """How many procs each item row of a running factory makes (1 when not known)."""
        digest = dict(self.queue.db.active_factories()).get(cluster_id)
        try:
            return self.factories.maker(cluster_id, digest).per_row if digest is not None else 1
        except SubmitError:
            return 1

    def _materialize_soon(self) -> None:
        self._pending_materialize = None
        self.materialize()

    def _advertise_and_reschedule(self) -> None:
        """After a submit: send the Submitter ads at once, then ask the pool's
        negotiators for a cycle (what condor_reschedule does), so new jobs need not
        wait for NEGOTIATOR_INTERVAL. At most one such round starts per
        ADVERTISE_DELAY; submits in between share the next one (each round counts
        the whole queue, which a stream of one-proc submits would repeat per submit)."""
        if not self.running or not self.settings.collector_host:
            return
        if self._pending_reschedule is not None and self._pending_reschedule.active():
            return
        now = self.reactor.seconds()
        wait = 0.0 if self._last_reschedule is None else max(0.0, self._last_reschedule + ADVERTISE_DELAY - now)
        self._pending_reschedule = self.reactor.callLater(wait, self._reschedule_now)

    def _reschedule_now(self) -> None:
        """Send the Submitter ads, then ask the negotiators for a cycle; failures are
        logged, the periodic paths still run."""
        self._pending_reschedule = None
        self._last_reschedule = self.reactor.seconds()
        if not self.running or not self.settings.collector_host:
            return
        try:
            sent = self.advertise()
        except Exception:
            _log.failure("schedd: advertising after a submit failed")
            return
        if sent is None:
            return
        negotiators: list = []

        def ask_negotiators(_):
            collector = self.daemon_client(self.settings.collector_host)
            return collector.stream(QUERY, negotiators.append, {"projection": ["MyAddress"]},
                                    ad_type="Negotiator")

        def reschedule(_):
            calls = [self.daemon_client(ad["MyAddress"]).call(RESCHEDULE)
                     for ad in negotiators if isinstance(ad.get("MyAddress"), str)]
            return DeferredList(calls, consumeErrors=True)

        sent.addCallback(ask_negotiators)
        sent.addCallback(reschedule)
        sent.addErrback(lambda failure: _log.warn("schedd: asking for a negotiation cycle failed: {why}",
                                                  why=failure.getErrorMessage()))

    def record(self, transition: Transition) -> None:
        """After its commit: log a transition's event, and stop the job's shadow when
        the transition says so."""
        self.record_all((transition,))

    def record_all(self, transitions) -> None:
        """:meth:`record` for many committed transitions: each event log gets its events
        in one write (in order), then the shadows of jobs that must stop are stopped.
        The event log kept for a cluster that has now left the queue is forgotten."""
        events: dict[LogTarget, list[Event]] = {}
        for transition in transitions:
            if transition.event is not None:
                where = self._log_for(transition.job_id)
                if where is not None:
                    events.setdefault(where, []).append(transition.event)
        for where, batch in events.items():
            self._write_events(where, batch)
        for transition in transitions:
            if transition.stop_shadow and self.execution is not None:
                self._stop_shadow(transition)
        self.spool_cleanup.note(transitions)
        self._forget_gone_logs({transition.job_id.cluster for transition in transitions if may_leave(transition)})
        if transitions:
            self.queue_changed()

    def _forget_gone_logs(self, clusters: set[int]) -> None:
        """Drop the event logs kept for those of ``clusters`` no longer in the queue: no
        job of theirs has an event left to log (kept, the map grew by every cluster ever)."""
        for cluster_id in clusters:
            if cluster_id in self._cluster_logs and self.queue.db.get_cluster_attrs(cluster_id) is None:
                del self._cluster_logs[cluster_id]

    def _stop_shadow(self, transition: Transition) -> None:
        reason = next((str(value) for name, value in transition.changes.items()
                       if name in ("RemoveReason", "HoldReason") and value is not None), "")
        try:
            self.execution.stop_job(transition.job_id, reason)
        except Exception:
            _log.failure("schedd: could not stop the shadow of {job}", job=str(transition.job_id))

    def remember_logs(self) -> None:
        """Note each queued cluster's event log before an action may empty it."""
        for cluster_id in self.queue.db.cluster_ids():
            self._cluster_log(cluster_id)

    def queue_changed(self) -> None:
        """Send the ads again soon (many changes in a moment share one update), and let
        the factories replace procs that left or started."""
        if self._stopping or not self.running:
            return
        if self._pending_materialize is None:
            self._pending_materialize = self.reactor.callLater(0, self._materialize_soon)
        if self._pending_advertise is None or not self._pending_advertise.active():
            self._pending_advertise = self.reactor.callLater(ADVERTISE_DELAY, self._advertise_quietly)

    def daemon_client(self, address: str, timeout: float | None = None, token: str | None = None) -> AsyncClient:
        """An asynchronous client to another daemon at ``address`` with a DAEMON token,
        or with ``token`` (the one another pool gave this pool, to call that pool's daemons)."""
        return AsyncClient(address, token=token or self.daemon_token(),
                           timeout=timeout or self.settings.request_timeout,
                           **({"http": self._http} if self._http is not None else {}))

    # --- event logs ---------------------------------------------------------
    def _cluster_log(self, cluster_id: int) -> LogTarget | None:
        """The cluster's common event log; ``PER_PROC`` when a proc's own ad changes where
        its log goes (``log``, ``initialdir``: HTCondor writes each proc's events to the
        log its own ad names, so ``initialdir = run$(Process)`` makes one log per directory)."""
        if cluster_id not in self._cluster_logs:
            text = self.queue.db.get_cluster_attrs(cluster_id)
            target = log_target(decode_entries(text, _LOG_KEYS)) if text else None
            if text and self._procs_name_own_log(cluster_id):
                target = PER_PROC
            self._cluster_logs[cluster_id] = target
        return self._cluster_logs[cluster_id]

    def _procs_name_own_log(self, cluster_id: int) -> bool:
        """Whether any proc of the cluster sets its own UserLog, Iwd, log format or Owner."""
        return any(decode_entries(text, _LOG_KEYS)
                   for text in self.queue.db.proc_texts_naming(cluster_id, sorted(_LOG_KEYS)))

    def _job_log(self, job_id: JobId) -> LogTarget | None:
        row = self.queue.db.get_job(job_id.cluster, job_id.proc)
        if row is not None:
            cluster_text = self.queue.db.get_cluster_attrs(job_id.cluster) or "[]"
            entries = decode_entries(cluster_text, _LOG_KEYS)
            entries.update(decode_entries(row.attrs, _LOG_KEYS))
            return log_target(entries)
        found = self.queue.db.history_attrs(job_id.cluster, job_id.proc)
        return log_target(decode_entries(found, _LOG_KEYS)) if found else None

    def _log_for(self, job_id: JobId) -> LogTarget | None:
        target = self._cluster_log(job_id.cluster)
        return self._job_log(job_id) if target is PER_PROC else target

    def _write_events(self, where: LogTarget, events: list[Event]) -> None:
        """Append ``events`` to the job's event log with its owner's rights; a log the
        owner cannot write (or an owner with no account here) is reported, never waited on."""
        try:
            _write_as_owner(EventLogWriter(where.path, where.log_format), where.owner, events)
        except EventLogError as exc:
            _log.warn("schedd: {why}", why=str(exc))

    # --- periodic policy ------------------------------------------------------
    def _periodic_pass(self) -> None:
        try:
            self.remember_logs()
            result = self.queue.evaluate_periodic(self.schedd_settings.system_policy)
        except Exception:
            _log.failure("schedd: periodic policy pass failed")
            return
        for transition in result.transitions:
            self.record(transition)
        if result.left_queue:
            self.spool_cleanup.left(result.left_queue)
            self.queue_changed()

    # --- ads ----------------------------------------------------------------
    def own_ad(self, totals: SubmitterTotals | None = None) -> dict:
        """The Scheduler ad, with the job totals of ``totals`` (counted now when None)."""
        ad = super().own_ad()
        ad["Name"] = socket.gethostname()
        ad["ScheddIpAddr"] = f"<{self.address}>"
        ad.update(scheduler_totals(owner_totals(self._counted(totals))))
        ad["TotalFlockedJobs"] = sum(self._flocked().values())
        if self.schedd_settings.flock.collectors:
            ad["EffectiveFlockList"] = self.flock_advertiser.effective_flock_list()
        return ad

    def _flocked(self) -> dict[str, int]:
        return self.execution.flocked_by_submitter() if self.execution is not None else {}

    def submitter_ads(self, schedd_name: str, totals: SubmitterTotals | None = None) -> list[dict]:
        """The Submitter ads this schedd sends: one per submitter with jobs (its jobs'
        ``AccountingGroup``, else their owner, ``@UID_DOMAIN``), with how many run in other
        pools; the job totals of ``totals`` (counted now when None)."""
        return flocked_ads(submitter_ads(self._counted(totals), schedd_name, self.address, self.schedd_settings.domain),
                           self._flocked())

    def advertise(self) -> Deferred | None:
        """Count the queue in a worker thread (100,000 jobs held the reactor up to 109 ms),
        then send the Scheduler ad and the Submitter ads made from that one count."""
        if not self.has_collector():
            return None
        return self.fresh_totals().addCallback(self._advertise_counted)

    def _advertise_counted(self, totals: SubmitterTotals) -> Deferred | None:
        if self._stopping:
            return None
        ad = self.own_ad(totals)
        sent = [self.advertise_self(ad)]
        submitters = self.submitter_ads(ad["Name"], totals)
        if self.schedd_settings.flock.collectors:
            sent.append(self.flock_advertiser.advertise(submitters))
        client = self.daemon_client(self.settings.collector_host)
        if submitters:
            sent.append(client.call(ADVERTISE, {"ads": submitters}, ad_type="Submitter"))
        names = {submitter["Name"] for submitter in submitters}
        gone = self._advertised_submitters - names
        if gone:
            sent.append(client.call(INVALIDATE, {"names": sorted(gone)}, ad_type="Submitter"))
        self._advertised_submitters = names
        return DeferredList(sent, fireOnOneErrback=True, consumeErrors=True)

    def _latest_owner_totals(self) -> dict:
        """Per owner and status, the jobs of the last count (the metrics' gauge: a scrape
        must not count the queue on the reactor); counted now before the first."""
        return owner_totals(self._counted(self.fresh_totals.latest))

    def _counted(self, totals: SubmitterTotals | None) -> SubmitterTotals:
        """``totals``, or the queue counted now (on the reactor) when there are none."""
        return self.queue.totals_by_submitter() if totals is None else totals

    # --- lifecycle ------------------------------------------------------------
    def startService(self) -> None:
        super().startService()
        self._periodic.start(self.schedd_settings.periodic_interval, now=False)
        self.factory_events.resume(self._factory_per_row)
        self.spool_cleanup.start()  # sandboxes of jobs that left while the schedd was down
        self._pending_materialize = self.reactor.callLater(0, self._materialize_soon)  # resume factories

    def stopService(self):
        # the service runs until its listener has closed, while the queue closes after
        # that: a change meanwhile must not schedule work the closed queue would fail
        self._stopping = True
        if self._periodic.running:
            self._periodic.stop()
        self.spool_cleanup.stop()
        for pending in (self._pending_advertise, self._pending_materialize, self._pending_reschedule):
            if pending is not None and pending.active():
                pending.cancel()
        stopping = super().stopService()
        stopping.addCallback(lambda _: self.queue.close())
        return stopping


def _write_as_owner(writer: EventLogWriter, owner: str | None, events: list[Event]) -> None:
    """``writer.write(events)`` with the rights of the jobs' ``owner`` (see
    ``shadow.owner_rights``).

    Raises:
        EventLogError: the owner has no account here, or the log cannot be written as them.
    """
    if not events:
        return
    job = f"{events[0].cluster}.{events[0].proc}"
    try:
        with acting_as(owner_account(owner, job, EVENT_LOG)):
            writer.write(events)
    except (NoOwnerAccountError, ActingAsError) as exc:
        raise EventLogError(f"event log {writer.path} not written: {exc}") from None


def _stored_log_target(cluster_ad: ClassAd, proc_ads: Sequence[ClassAd]) -> LogTarget | None:
    """What :meth:`ScheddService._cluster_log` reads back for a cluster stored from
    ``cluster_ad`` and ``proc_ads``: the cluster's own log, or ``PER_PROC`` when a proc
    sets its own UserLog, Iwd, log format or Owner."""
    if not all(proc.entries_by_key().keys().isdisjoint(_LOG_KEYS) for proc in proc_ads):  # 100,000: ~25 ms
        return PER_PROC
    return log_target({key: (key, cluster_ad.expression(key)) for key in _LOG_KEYS if key in cluster_ad})


def _cluster_log_target(cluster_text: str) -> LogTarget | None:
    """The event log a cluster's own ad names (where its cluster events go)."""
    return log_target(decode_entries(cluster_text, _LOG_KEYS))



def _execution_for(service: ScheddService) -> Execution:
    """The execution side for ``service`` (claims, shadows, file transfer)."""
    return Execution(service)


def build_schedd(settings: DaemonSettings, reactor, config: Config) -> ScheddService:
    """The schedd for ``settings``: its ads go out every ``SCHEDD_INTERVAL``.

    Raises:
        ConfigError: a knob has the wrong type or a policy expression does not parse.
        SigningKeyError: the pool signing key cannot be loaded.
    """
    interval = config.param_duration("SCHEDD_INTERVAL", DEFAULT_SCHEDD_INTERVAL)
    settings = attrs.evolve(settings, update_interval=interval)
    return ScheddService(settings, reactor, ScheddSettings.from_config(config, settings.trust_domain), config)


__all__ = ["ScheddService", "ScheddSettings", "LogTarget", "build_schedd", "log_target"]
