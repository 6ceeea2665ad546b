"""The startd daemon: its slots, the routes that claim and run jobs on them, and the
slot ads it advertises to the collector every ``UPDATE_INTERVAL`` and soon after
every change (public ads, plus private ads holding the ClaimIds).

:func:`build_startd` does the start-up reading: leftover sandboxes are removed,
the machine is discovered and its slots laid out, before the service exists.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import attrs
import treq
from twisted.internet import task
from twisted.internet.defer import Deferred, DeferredList, FirstError, gatherResults, maybeDeferred, succeed
from twisted.logger import Logger
from twisted.python.failure import Failure

import classad
from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonService, DaemonSettings
from daemoncore.reactor_turns import in_slices
from daemoncore.wire.adcodec import ad_to_json
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.collector_routes import ADVERTISE, INVALIDATE
from daemoncore.worker_threads import OneAtATime, in_worker_thread
from startd.advertised_slots import AdvertisedSlots
from startd.claim_leases import (
    DEFAULT_ALIVE_INTERVAL,
    DEFAULT_MATCH_TIMEOUT,
    DEFAULT_MAX_ALIVES_MISSED,
    LeaseBook,
    LeaseTerms,
)
from startd.discovery import discover_machine
from startd.errors import DiscoveryError, SlotConfigError
from startd.gpu_claims import placement_options
from startd.gpu_enforcement import build_gpu_enforcement
from startd.gpu_metrics import GpuMetrics, no_usage
from startd.gpu_monitor import GpuMonitor
from startd.job_account import JobAccount, RunAsPolicy, choose_account
from startd.job_launcher import JobLauncher
from startd.job_run import DEFAULT_USAGE_INTERVAL, JobRun, RunSettings
from startd.mps import MpsDaemons
from startd.preemption import PreemptPolicy
from startd.routes import Activation, StartdRoutes
from startd.sandbox import clean_leftover_sandboxes, prepare_execute_dir
from startd.schedd_link import ScheddLink
from startd.slot_ads import private_ad
from startd.slot_types import plan_slots
from startd.slots import Slot, SlotTable

#: How soon after a change the slot ads go out again (changes within it share one update).
CHANGE_ADVERTISE_DELAY = 0.1
#: How soon after a change of a claimed slot's activity alone (a job started or ended on
#: its claim) the ads go out: the negotiator does not hand out claimed slots, so back-to-back
#: short jobs on reused claims share one update a second instead of sending one each.
ACTIVITY_ADVERTISE_DELAY = 1.0
#: HTCondor's ``MACHINE_MAX_VACATE_TIME``: a vacated job has this long (or its own shorter
#: ``JobMaxVacateTime``) after its ``KillSig`` before it is killed.
DEFAULT_MACHINE_MAX_VACATE_TIME = 10.0
#: How often the claims' leases are checked (a lease ends at most this late).
LEASE_CHECK_INTERVAL = 1.0
#: How long a run's execute report waits for a job that may end at once: a job that
#: short tells the schedd of its start inside its exit report (one request, not two).
EXECUTE_REPORT_DELAY = 0.05
MACHINE_AD_TYPE = "Machine"
#: How long making the slot ads may hold the reactor per turn.
AD_SLICE_SECONDS = 0.02
#: The reactor's load (daemoncore.prompt_reactor.decayed_load) from which a run's sandbox
#: setup goes to a worker thread.
BUSY_REACTOR = 0.8

_log = Logger()


@attrs.frozen
class SlotAds:
    """One slot's ads as last made: the public and private ad in JSON form and as JSON
    text (what an update carries), with the ``slot`` and ad ``inputs`` they were made of."""

    slot: Slot
    inputs: tuple | None
    public: dict
    private: dict
    texts: tuple[str, str]


def ads_body(texts: list[str], private: bool) -> bytes:
    """An ADVERTISE body carrying the ads already in JSON text (``{"ads": [...]}``)."""
    return ('{"ads": [' + ",".join(texts) + ('], "private": true}' if private else "]}")).encode("utf-8")


def _first_cause(failure: Failure) -> Failure:
    """The failure inside (possibly nested) ``gatherResults`` errors, for the log."""
    while failure.check(FirstError):
        failure = failure.value.subFailure
    return failure


class StartdService(DaemonService):
    """A startd: one slot table, its runs, and its slot ads."""

    def __init__(self, settings: DaemonSettings, reactor, table: SlotTable, run_settings: RunSettings,
                 key: bytes | None = None, http=None,
                 run_blocking: Callable[..., Deferred] = in_worker_thread,
                 run_as_policy: RunAsPolicy | None = None, lease_terms: LeaseTerms | None = None,
                 gpu_monitor: GpuMonitor | None = None, mps_daemons: MpsDaemons | None = None,
                 preempt_policy: PreemptPolicy | None = None) -> None:
        super().__init__(settings, reactor, key, http)
        self.table = table
        self.run_settings = run_settings
        self.run_as_policy = run_as_policy
        self._run_blocking = run_blocking
        self._sandbox_removals = OneAtATime(run_blocking)
        #: The runs' sandbox setups, while launches queue (:meth:`_setup_blocking`).
        self._sandbox_setups = OneAtATime(run_blocking)
        self.routes = StartdRoutes(table, self.make_run, self.slot_ad, self.changed,
                                   LeaseBook(lease_terms or LeaseTerms()),
                                   preempt_policy or PreemptPolicy(vacate_time=run_settings.vacate_time),
                                   activity_changed=self.activity_changed)
        self._lease_loop = task.LoopingCall(self._expire_leases)
        self._lease_loop.clock = reactor
        self._pending_advertise = None
        self._advertised = AdvertisedSlots()
        #: Per slot name: its ads as last made.
        self._ad_cache: dict[str, SlotAds] = {}
        #: Per slot name: the texts of its ads as last sent to the collector.
        self._sent: dict[str, tuple[str, str]] = {}
        self._address_cache: tuple | None = None
        #: Samples the cards and holds jobs over their GPU memory share (None without cards).
        self.gpu_monitor = gpu_monitor
        #: The MPS control daemons started for the cards, quit once the jobs have ended.
        self.mps_daemons = mps_daemons or MpsDaemons()
        if gpu_monitor is not None:
            gpu_monitor.watch(lambda: list(self.routes.runs.values()))
        self.metrics_registry.register(GpuMetrics(self.table.public_ads,
                                                  gpu_monitor.latest if gpu_monitor is not None else no_usage))

    # --- identity and ads ---

    def token(self) -> str:
        """A DAEMON token of this startd's, for calls to the collector and schedds (the
        same one until half its lifetime is gone: see ``daemon_token``)."""
        return self.daemon_token(max(self.settings.request_timeout * 4, 300))

    def address_attributes(self) -> dict[str, str]:
        """Where this startd answers: ``MyAddress`` and ``StartdIpAddr`` as ``<host:port>``
        (the listener is asked its address once: every activation asked it twice)."""
        port = self.port
        if self._address_cache is None or self._address_cache[0] is not port:
            sinful = f"<{self.address}>"
            self._address_cache = (port, {"MyAddress": sinful, "StartdIpAddr": sinful})
        return dict(self._address_cache[1])

    def slot_ad(self, slot: Slot, address_attributes: dict[str, str] | None = None) -> classad.ClassAd:
        """``slot``'s public ad with this startd's address (``address_attributes``, when
        the caller has them already: 500 slots asked the socket its name 500 times)."""
        return self.table.public_ad(slot, address_attributes or self.address_attributes())

    def slot_ads(self) -> tuple[list[dict], list[dict]]:
        """The public and private ads of every slot, in JSON form; a slot's ads are made
        again only when it or what its ad is made of changed (:meth:`SlotTable.ad_inputs`),
        so a startd of 500 static slots does not rebuild 500 ads each update."""
        made: list[SlotAds] = []
        for _ in self._making_slot_ads(made):
            pass
        return [each.public for each in made], [each.private for each in made]

    def _making_slot_ads(self, made: list[SlotAds]) -> Iterator[None]:
        """Every slot's :class:`SlotAds` into ``made``, by name, pausing after each slot
        (500 slots all changed at once took 150 ms to make)."""
        extra = self.address_attributes()
        kept = {}
        for name in sorted(self.table.slots):
            slot = self.table.slots.get(name)
            if slot is None:  # gone while the ads were made over several turns
                continue
            inputs = self.table.ad_inputs(slot)
            entry = self._ad_cache.get(name)
            if inputs is None or entry is None or entry.slot is not slot or entry.inputs != inputs:
                public = ad_to_json(self.slot_ad(slot, extra))
                private = {**ad_to_json(private_ad(name, self.table.machine.hostname, slot.claim_id)), **extra}
                entry = SlotAds(slot, inputs, public, private, (json.dumps(public), json.dumps(private)))
            if inputs is not None:
                kept[name] = entry
            made.append(entry)
            yield
        self._ad_cache = kept

    def handlers(self) -> dict:
        return self.routes.handlers()

    def advertise_self(self, _daemon_ad: dict, changes_only: bool = False) -> Deferred | None:
        """Send the slot ads (not a daemon ad: the collector's Machine ads are slots),
        made :data:`AD_SLICE_SECONDS` of them per reactor turn; with ``changes_only``, only
        the ads that changed since they were last sent (the periodic update sends them all,
        which keeps the others alive in the collector)."""
        if not self.settings.collector_host:
            return None
        made: list[SlotAds] = []
        making = in_slices(self.reactor, self._making_slot_ads(made), AD_SLICE_SECONDS)
        return making.addCallback(lambda _: self._send_slot_ads(made, changes_only))

    def _advertise_changes(self) -> None:
        """Send the ads of the slots that changed; a failure is logged (the periodic update
        sends every ad again)."""
        try:
            sent = self.advertise_self({}, changes_only=True)
        except Exception:
            _log.failure("startd: advertising the changed slots failed")
            return
        if sent is not None:
            sent.addErrback(lambda failure: _log.warn("STARTD: advertising to the collector failed: {why}",
                                                      why=failure.getErrorMessage()))

    def _send_slot_ads(self, made: list[SlotAds], changes_only: bool = False) -> Deferred | None:
        """Send the ads of ``made`` (those changed since last sent, with ``changes_only``) in
        one update each of public and private ads, already in JSON text (one ``json.dumps``
        of 500 slots' ads held the reactor 10-30 ms), and withdraw the slots that ended."""
        if changes_only:
            made = [each for each in made if self._sent.get(each.slot.name) != each.texts]
        else:
            self._sent = {}
        gone = self._advertised.to_withdraw(self.table.slots)
        if not made and not gone:
            return None
        for each in made:
            self._sent[each.slot.name] = each.texts
        sending = self._send_texts(made) if made else succeed(None)
        if not gone:
            return sending.addErrback(_first_cause)
        return self._withdraw(gone, sending)

    def _send_texts(self, made: list[SlotAds]) -> Deferred:
        """The public and private ads of ``made`` to the collector; an update that fails
        has every ad sent by the next change."""
        client = self._collector()
        round_number = self._advertised.begin(each.slot.name for each in made)  # the slots these ads carry
        sent = [client.send(ADVERTISE, ads_body([each.texts[0] for each in made], False), b"application/json",
                            ad_type=MACHINE_AD_TYPE).addCallback(treq.content),
                client.send(ADVERTISE, ads_body([each.texts[1] for each in made], True), b"application/json",
                            ad_type=MACHINE_AD_TYPE).addCallback(treq.content)]
        gathered = gatherResults(sent, consumeErrors=True)
        gathered.addBoth(lambda outcome: (self._advertised.settle(round_number), outcome)[1])
        gathered.addErrback(lambda failure: (self._sent.clear(), failure)[1])
        return gathered

    def _withdraw(self, gone: list[str], gathered: Deferred) -> Deferred:
        """Withdraw the ads of the slots ``gone`` beside the update ``gathered``."""
        client = self._collector()
        # dynamic slots whose claims ended: withdraw their ads (again, until it is safe to stop)
        for name in gone:
            self._sent.pop(name, None)
        unsafe = self._advertised.unsafe_to_forget(gone)
        withdrawing = client.call(INVALIDATE, {"names": gone}, ad_type=MACHINE_AD_TYPE)
        withdrawing.addCallback(lambda answer: (self._advertised.withdrawn(gone, unsafe), answer)[1])
        both = gatherResults([gathered, withdrawing], consumeErrors=True)
        return both.addErrback(_first_cause)

    def changed(self) -> None:
        """The slots changed: advertise them again shortly."""
        self._advertise_within(CHANGE_ADVERTISE_DELAY)

    def activity_changed(self) -> None:
        """Only a claimed slot's activity changed: advertise within :data:`ACTIVITY_ADVERTISE_DELAY`."""
        self._advertise_within(ACTIVITY_ADVERTISE_DELAY)

    def _advertise_within(self, delay: float) -> None:
        """Have the slot ads go out at most ``delay`` seconds from now, sharing an update
        already due by then."""
        pending = self._pending_advertise
        if pending is not None and pending.active():
            if pending.getTime() <= self.reactor.seconds() + delay:
                return
            pending.cancel()
        self._pending_advertise = self.reactor.callLater(delay, self._advertise_changes)

    def _collector(self) -> AsyncClient:
        extra = {"http": self._http} if self._http is not None else {}
        return AsyncClient(self.settings.collector_host, token=self.token(),
                           timeout=self.settings.request_timeout, **extra)

    # --- runs ---

    def make_run(self, activation: Activation) -> JobRun:
        """The run of one ACTIVATE: its link to the schedd, the slot's ad and this startd's settings."""
        extra = {"http": self._http} if self._http is not None else {}
        link = ScheddLink(activation.schedd_address, activation.job_id, activation.transfer_key, self.token,
                          timeout=max(self.settings.request_timeout, 60),
                          heard=lambda: self.routes.heard_from_schedd(activation.claim_id), **extra)
        execute_attrs = {"RemoteHost": activation.slot_name, "StartdName": activation.slot_name,
                         "StartdIpAddr": self.address_attributes()["StartdIpAddr"],
                         "MachineAttrMachine0": self.table.machine.hostname}
        return JobRun(self.reactor, link, activation.job_id, activation.job, activation.slot_ad,
                      self.run_settings, self._run_blocking, execute_attrs, self.run_as(activation),
                      inline_input=activation.input, remove_blocking=self._sandbox_removals,
                      setup_blocking=self._setup_blocking)

    def _setup_blocking(self, function: Callable, *args: object) -> Deferred:
        """Where a run's sandbox setup (its file work: making the sandbox, a small input's
        files, the ad files) goes: while the reactor is busy (its ``load`` at least
        :data:`BUSY_REACTOR`) or other launches wait for their turn, one at a time through a
        worker thread, as its kernel time (a full file system spent 0.3-1 ms on each
        directory or file made) would hold them and every request (500 starts: the probe's
        ping p50 6-7 ms, 2 ms so); else here, at once: a thread hop and its GIL handoffs
        cost more CPU than they spare a reactor with time to spare (500 /bin/true jobs on 2
        slots, all in a thread: 4.0-4.1 ms startd CPU per job against 3.3)."""
        if len(self.routes.launches) or getattr(self.reactor, "load", 0.0) >= BUSY_REACTOR:
            return self._sandbox_setups(function, *args)
        return maybeDeferred(function, *args)

    def run_as(self, activation: Activation) -> JobAccount | str | None:
        """The account the activation's job runs as, or why none fits (None: no policy,
        the job runs as this process)."""
        if self.run_as_policy is None:
            return None
        try:
            return choose_account(activation.job, activation.slot_name, self.run_as_policy)
        except LookupError as exc:
            return str(exc)

    # --- lifecycle ---

    def _expire_leases(self) -> None:
        try:
            self.routes.expire_leases()
        except Exception:
            _log.failure("startd: checking claim leases failed")
        try:
            self.routes.retire_overdue()
        except Exception:
            _log.failure("startd: checking the retirement of draining jobs failed")
        try:
            self.routes.advance_preemptions()
        except Exception:
            _log.failure("startd: moving preempted claims on failed")

    def startService(self) -> None:
        """Start serving, and check the claims' leases, a drain's retirement times and preempted
        claims every second."""
        super().startService()
        self._start_launcher()
        self._lease_loop.start(LEASE_CHECK_INTERVAL, now=False)
        if self.gpu_monitor is not None:
            self.gpu_monitor.start()

    def _start_launcher(self) -> None:
        """Start the job launcher now (it would start with the first job otherwise);
        a failure is logged and jobs start from the startd itself until it is tried again."""
        launcher = self.run_settings.launcher
        if launcher is None:
            return
        try:
            launcher.start()
        except OSError as exc:
            _log.warn("startd: job launcher not started ({why}); it is tried again with a job", why=exc)

    def _stop_launcher(self) -> None:
        if self.run_settings.launcher is not None:
            self.run_settings.launcher.stop()

    def stopService(self) -> Deferred:
        """Kill running jobs, quit the MPS daemons, take the slot ads out of the collector, then stop."""
        if self._lease_loop.running:
            self._lease_loop.stop()
        if self.gpu_monitor is not None:
            self.gpu_monitor.stop()
        if self._pending_advertise is not None and self._pending_advertise.active():
            self._pending_advertise.cancel()
        endings = self.routes.stop_all("the startd is shutting down")
        endings.addCallback(lambda runs: DeferredList(runs, consumeErrors=True))
        endings.addCallback(lambda _: self._stop_launcher())
        endings.addCallback(lambda _: self._stop_mps())
        endings.addCallback(lambda _: self._invalidate())
        endings.addCallback(lambda _: DaemonService.stopService(self))
        return endings

    def _stop_mps(self) -> Deferred:
        if not self.mps_daemons.dirs:
            return succeed(None)
        stopping = self._run_blocking(self.mps_daemons.stop)
        return stopping.addErrback(lambda failure: _log.failure("startd: stopping the MPS daemons failed", failure))

    def _invalidate(self) -> Deferred:
        if not self.settings.collector_host:
            return succeed(None)
        names = sorted(self.table.slots)
        calling = self._collector().call(INVALIDATE, {"names": names}, ad_type=MACHINE_AD_TYPE)
        return calling.addErrback(lambda failure: _log.info("startd: withdrawing slot ads failed: {why}",
                                                            why=failure.getErrorMessage()))


def run_settings_from(config: Config, execute_dir: str) -> RunSettings:
    """The knobs every run shares: ``MACHINE_MAX_VACATE_TIME``, ``STARTER_UPDATE_INTERVAL``.

    Raises:
        ConfigError: a knob is not a duration.
    """
    return RunSettings(
        execute_dir=execute_dir,
        vacate_time=config.param_duration("MACHINE_MAX_VACATE_TIME", DEFAULT_MACHINE_MAX_VACATE_TIME),
        usage_interval=config.param_duration("STARTER_UPDATE_INTERVAL", DEFAULT_USAGE_INTERVAL),
        sample_interval=config.param_duration("STARTER_SAMPLE_INTERVAL", 5.0),
        execute_report_delay=EXECUTE_REPORT_DELAY,
    )


def build_startd(settings: DaemonSettings, reactor, config: Config) -> StartdService:
    """The startd for ``settings``: leftover sandboxes removed, machine discovered, slots laid out.

    Raises:
        ConfigError: a knob is malformed (``EXECUTE``, ``NUM_CPUS``, ``SLOT_TYPE_<n>``,
            ``GPU_SPLIT_COUNT``, ``GPU_PLACEMENT_POLICY``, ``PREEMPT``...).
        SigningKeyError: the pool signing key cannot be loaded.
    """
    execute_dir = os.path.abspath(config.param("EXECUTE") or os.path.join(config.param("LOCAL_DIR", "."), "execute"))
    try:
        prepare_execute_dir(execute_dir)
    except OSError as exc:
        raise ConfigError(f"EXECUTE = {execute_dir}: cannot create the execute directory: "
                          f"{exc.strerror or exc}") from None
    removed = clean_leftover_sandboxes(execute_dir)
    if removed:
        _log.info("startd: removed {count} leftover sandboxes from {dir}", count=len(removed), dir=execute_dir)
    try:
        machine = discover_machine(config, execute_dir)
        plans = plan_slots(config, machine)
    except (DiscoveryError, SlotConfigError) as exc:
        raise ConfigError(str(exc)) from None
    domains = {"UidDomain": config.param("UID_DOMAIN") or machine.hostname,
               "FileSystemDomain": config.param("FILESYSTEM_DOMAIN") or machine.hostname}
    policy = RunAsPolicy.from_config(config, domains["UidDomain"])
    policy.check()
    table = SlotTable.from_plans(machine, plans, reactor, start=config.param("START") or "true",
                                 rank=config.param("RANK") or "0", domains=domains,
                                 max_job_retirement_time=config.param("MAXJOBRETIREMENTTIME") or "0",
                                 **placement_options(config))
    gpu = build_gpu_enforcement(config, execute_dir, machine.hostname, machine.gpus, reactor, in_worker_thread)
    run_settings = attrs.evolve(run_settings_from(config, execute_dir), gpu_sharing=gpu.sharing,
                                launcher=JobLauncher(reactor) if policy.switch_user else None)
    return StartdService(settings, reactor, table, run_settings, run_as_policy=policy,
                         lease_terms=lease_terms_from(config), gpu_monitor=gpu.monitor, mps_daemons=gpu.mps,
                         preempt_policy=PreemptPolicy.from_config(config, run_settings.vacate_time))


def lease_terms_from(config: Config) -> LeaseTerms:
    """The claim lease knobs: ``MATCH_TIMEOUT``, ``ALIVE_INTERVAL`` and ``MAX_CLAIM_ALIVES_MISSED``.

    Raises:
        ConfigError: a knob is not a positive number.
    """
    match_timeout = config.param_duration("MATCH_TIMEOUT", DEFAULT_MATCH_TIMEOUT)
    alive = config.param_duration("ALIVE_INTERVAL", DEFAULT_ALIVE_INTERVAL)
    missed = config.param_int("MAX_CLAIM_ALIVES_MISSED", DEFAULT_MAX_ALIVES_MISSED)
    for name, value in (("MATCH_TIMEOUT", match_timeout), ("ALIVE_INTERVAL", alive),
                        ("MAX_CLAIM_ALIVES_MISSED", missed)):
        if value is None or value <= 0:
            raise ConfigError(f"{name} = {value}: expected a positive number")
    return LeaseTerms(match_timeout, alive * missed)

