"""One activation of a claim: the job's life on this machine, from fetching its input
at the schedd to reporting its exit.

Steps: make the sandbox; GET the input tar (JOB_INPUT; a small one comes inside
ACTIVATE instead) and unpack it; start the job
(:class:`~startd.starter.Starter`); report ``execute``, then ``usage`` every update
interval; when the job ends, POST its output tar (JOB_OUTPUT, unless it holds no
file) and report ``exit``; remove the sandbox. A vacate stops the job and reports ``evicted`` instead. A
transfer or start failure on this side reports ``hold`` with the reason; a refusal
from the schedd (it holds the job itself) just ends the run.
"""

from __future__ import annotations

import enum
import tempfile
from collections.abc import Callable
from typing import Any

import attrs
from twisted.internet import task
from twisted.internet.defer import Deferred, maybeDeferred, succeed
from twisted.internet.task import deferLater
from twisted.logger import Logger

import classad
from daemoncore.security.accounts import Account
from daemoncore.security.acting_as import acting_as
from daemoncore.wire.errors import RemoteError, Unreachable
from startd import sandbox as sb
from startd.claim_leases import job_lease_of
from startd.errors import StarterError
from startd.gpu_sharing import GpuSharing
from startd.job_account import JobAccount
from startd.job_launcher import JobLauncher
from startd.schedd_link import ScheddLink
from startd.self_checkpoint import carried, first_checkpoint_number, is_checkpoint_exit
from startd.starter import JobOutcome, Starter
from startd.usage import Usage
from transfer import TransferError, TransferStats, input_plan, output_plan, receive_input, send_output
from transfer.checkpoint import send_checkpoint
from transfer.errors import MAX_OUTPUT_SIZE_EXCEEDED, TRANSFER_OUTPUT_FAILED
from transfer.inline import sandbox_is_small, stream_is_small

#: HTCondor's HoldReasonCode 6, FailedToCreateProcess.
FAILED_TO_CREATE_PROCESS = 6
DEFAULT_USAGE_INTERVAL = 300.0
#: The reports after which a run has nothing more to tell the schedd.
FINAL_REPORTS = frozenset({"exit", "evicted", "hold"})
#: Input and output tar streams up to this size are spooled in memory, larger ones on disk.
SPOOL_IN_MEMORY_BYTES = 8 << 20

_log = Logger()

RunBlocking = Callable[..., Deferred]


class Ending(str, enum.Enum):
    """How a run ended, as far as the slot is concerned."""

    EXITED = "exited"  # the job ran to its end; exit reported
    EVICTED = "evicted"  # vacated or killed here; eviction reported
    HELD = "held"  # input, start or output failed; the job is held
    LOST = "lost"  # the schedd could not be reached or refused; nothing more to say


@attrs.frozen
class RunSettings:
    """What every run on this startd shares."""

    execute_dir: str
    vacate_time: float = 600.0
    usage_interval: float = DEFAULT_USAGE_INTERVAL
    sample_interval: float = 5.0
    gpu_sharing: GpuSharing = GpuSharing()
    #: How long the execute report waits for the job to end (0: it goes at once). A job
    #: that ends by then has its start told by its exit report, one round trip fewer.
    execute_report_delay: float = 0.0
    #: Starts the jobs that run as another user (a root startd's), None: the startd forks them itself.
    launcher: JobLauncher | None = attrs.field(default=None, eq=False)


def starter_job_ad(job: classad.ClassAd, transferred_executable: str | None) -> classad.ClassAd:
    """The job ad the starter runs: ``Cmd`` names the transferred executable in the sandbox."""
    ad = job.copy()
    if transferred_executable:
        ad["Cmd"] = transferred_executable
    return ad


def exit_attributes(outcome: JobOutcome, wall_seconds: float) -> dict[str, Any]:
    """The ``exit`` report: exit status, usage and ``RemoteWallClockTime``."""
    return {**outcome.attributes(), "RemoteWallClockTime": round(max(wall_seconds, 0.0), 3)}


def hold_attributes(reason: str, code: int, subcode: int = 0) -> dict[str, Any]:
    """The ``hold`` report for a failure on the execute side."""
    return {"HoldReason": reason, "HoldReasonCode": code, "HoldReasonSubCode": subcode}


# Mutable: one job's run moves from transfer to running to reported.
class JobRun:
    """Runs ``job`` (``job_id``) on the slot described by ``machine_ad``, reporting through ``link``,
    as the account ``run_as`` (or holds it with ``run_as`` when that is why no account fits)."""

    def __init__(self, reactor, link: ScheddLink, job_id: str, job: classad.ClassAd,
                 machine_ad: classad.ClassAd, settings: RunSettings, run_blocking: RunBlocking,
                 execute_attrs: dict[str, Any], run_as: JobAccount | str | None = None, *,
                 inline_input: bytes | None = None, remove_blocking: RunBlocking | None = None,
                 setup_blocking: RunBlocking | None = None) -> None:
        self.reactor = reactor
        self.link = link
        self.job_id = job_id
        self.job = job
        self.machine_ad = machine_ad
        self.settings = settings
        self.run_blocking = run_blocking
        #: Runs the sandbox's removal (the startd's removals go one at a time); else ``run_blocking``.
        self.remove_blocking = remove_blocking or run_blocking
        #: Runs the file work of setting up the sandbox (making it, a small input's files,
        #: the ad files, the standard streams): the startd's setups go one at a time in a
        #: worker thread. None: here, in the reactor's thread.
        self.setup_blocking = setup_blocking
        self.execute_attrs = execute_attrs
        self.run_as = run_as
        #: The input tar the schedd sent inside ACTIVATE (None: GET it with JOB_INPUT).
        self.inline_input = inline_input
        self.account: Account | None = run_as.account if isinstance(run_as, JobAccount) else None
        self.starter: Starter | None = None
        #: The next starter and what its file work prepared, until the job is started with it.
        self._prepared: tuple | None = None
        self.stop_reason: str | None = None
        self.sandbox: str | None = None
        self._forceful = False
        self._usage_loop: task.LoopingCall | None = None
        #: What the run's earlier segments (before each restart in place) used.
        self._earlier_usage = Usage()
        self._counted_starter: Starter | None = None  # the starter whose usage _earlier_usage holds
        #: The job ended before its execute report went: the exit report carries it,
        #: any other word to the schedd sends it first.
        self._execute_pending = False
        #: The run's last report (exit, evicted or hold) is on its way: once the schedd
        #: has it, it may activate the claim again before this run has wound up.
        self.final_report_sent = False
        #: GPUsMemoryUsage/GPUsAverageUsage, kept up to date by the startd's GPU monitor.
        self.gpu_attributes: dict[str, Any] = {}
        self._gpu_hold: dict[str, Any] | None = None
        self.ended = False
        #: The claim was released by its holder: the run reports nothing more.
        self.unreported = False
        #: The claim's next activation, when the schedd sent it back inside the answer
        #: to this run's exit report (ACTIVATE's body; the startd starts it once this run is over).
        self.next_activation: dict | None = None

    # --- stopping ---

    @property
    def stopping(self) -> bool:
        """Whether a vacate or kill was asked for."""
        return self.stop_reason is not None

    def vacate(self, reason: str, reported: bool = True) -> None:
        """Stop the job gracefully (SIGTERM, SIGKILL after the vacate time); it is reported
        evicted, unless not ``reported`` (as :meth:`kill`)."""
        self.stop_reason = self.stop_reason or reason
        if not reported:
            self.unreported = True
        if self.starter is not None:
            self.starter.vacate()

    def kill(self, reason: str, reported: bool = True) -> None:
        """Kill the job's whole tree now; it is reported evicted, unless not ``reported``:
        the claim's holder released the claim, so no shadow there waits for a word of
        this run (500 jobs removed at once each sent an evicted report the schedd could
        only refuse, 500 connections and answers on both reactors)."""
        self.stop_reason = self.stop_reason or reason
        self._forceful = True
        if not reported:
            self.unreported = True
        if self.starter is not None:
            self.starter.kill()

    def hold_for(self, attrs_: dict[str, Any]) -> None:
        """Kill the job now and report it held with ``attrs_`` (the GPU watchdog's overuse)."""
        if self._gpu_hold is None and not self.final_report_sent:
            self._gpu_hold = attrs_
            self.kill(attrs_["HoldReason"])

    # --- the run ---

    def run(self) -> Deferred:
        """Fire with the :class:`Ending` once the run is over and reported; never fails."""
        return Deferred.fromCoroutine(self._run())

    async def _run(self) -> Ending:
        started_at = self.reactor.seconds()
        if isinstance(self.run_as, str):
            return await self._hold(hold_attributes(f"Error from starter on {self.execute_attrs.get('RemoteHost')}:"
                                                    f" no account to run the job as: {self.run_as}",
                                                    FAILED_TO_CREATE_PROCESS))
        if self.run_as is not None:
            _log.info("job {job} runs as {account} (uid {uid}): {why}", job=self.job_id,
                      account=self.run_as.account.name, uid=self.run_as.account.uid, why=self.run_as.reason)
        try:
            return await self._in_sandbox(started_at)
        except Exception as exc:
            _log.failure("job {job}: the run failed unexpectedly", job=self.job_id)
            return await self._failed(exc)
        finally:
            self.ended = True
            self._drop_prepared()
            self._stop_usage_loop()
            if self.sandbox is not None:
                self._remove_sandbox(self.sandbox)

    def _remove_sandbox(self, path: str) -> None:
        """Remove the sandbox, in a worker thread when there is a pool: the run is over
        without it (nothing reads it again), so neither the reactor nor the claim's next
        job waits for the disk (about a millisecond per sandbox here; a large one longer).
        A startd stopped meanwhile removes what is left when it starts again."""
        if self.remove_blocking is None:
            sb.remove_sandbox(path)
            return
        removing = self.remove_blocking(sb.remove_sandbox, path)
        removing.addErrback(lambda failure: _log.failure("job {job}: removing the sandbox {path} failed", failure,
                                                         job=self.job_id, path=path))

    def _setup(self, function: Callable, *args: Any) -> Deferred:
        """``function(*args)``, file work of the sandbox's setup, by :attr:`setup_blocking`
        (else here); a Deferred of its result."""
        if self.setup_blocking is None:
            return maybeDeferred(function, *args)
        return self.setup_blocking(function, *args)

    async def _in_sandbox(self, started_at: float) -> Ending:
        self.sandbox = sb.sandbox_path(self.settings.execute_dir, self.job_id)
        try:
            await self._setup(sb.create_reachable_sandbox, self.sandbox, self.account)
        except StarterError as exc:
            return await self._hold(hold_attributes(f"Error from starter on {self.execute_attrs.get('RemoteHost')}:"
                                                    f" {exc}", FAILED_TO_CREATE_PROCESS))
        return await self._transfer_and_run(started_at)

    async def _failed(self, exc: Exception) -> Ending:
        """An unexpected failure still ends with a report (evicted: the job runs again
        elsewhere) unless the final one already went, so the schedd never waits out the lease."""
        if self.final_report_sent:
            return Ending.LOST
        if self.starter is not None and self.starter.pid is not None:
            self.starter.kill()
        self.stop_reason = f"the starter on {self.execute_attrs.get('RemoteHost')} failed: {type(exc).__name__}: {exc}"
        try:
            return await self._evicted(None)
        except Exception:
            _log.failure("job {job}: the evicted report failed too", job=self.job_id)
            return Ending.LOST

    async def _transfer_and_run(self, started_at: float) -> Ending:
        try:
            plan = input_plan(self.job)
            snapshot = await self._fetch_input(plan)
        except TransferError as exc:
            return await self._hold(exc.hold_attributes())
        except (RemoteError, Unreachable) as exc:
            _log.warn("job {job}: input transfer from the schedd failed: {why}", job=self.job_id, why=exc)
            return Ending.LOST
        if self.stopping:
            return await self._evicted(None)
        job = starter_job_ad(self.job, plan.executable)
        ended = None
        try:
            if not await self._prepare_start(job):  # stopped while its files were made
                return await self._evicted(None)
            segment_start, ended = self.reactor.seconds(), self._start(job)
            if self.starter is not None and self.starter.pid is None:
                await self.starter.started()  # the launcher starts it: its pid comes in a moment
        except (StarterError, OSError) as exc:
            _consume(ended)
            return await self._start_failed(exc)
        except Exception:
            _consume(ended)
            raise
        if await self._ends_within(ended, self.settings.execute_report_delay):
            self._execute_pending = True
            reported: Deferred = succeed(None)
        else:  # the job runs while the execute report travels; every later report waits for it
            reported = Deferred.fromCoroutine(self._report("execute", self.execute_attrs))
            reported.addCallback(self._execute_reported)
        outcome: JobOutcome = self._segment_ended(await ended)
        await reported
        number = first_checkpoint_number(self.job)
        while self._is_checkpoint(outcome):
            await self._checkpoint(outcome, snapshot, number, segment_start, self.reactor.seconds())
            number += 1
            if self.stopping:  # vacated while the checkpoint travelled: it is kept, the job stops
                break
            try:  # the same job again, in the same sandbox: it resumes from its checkpoint
                if not await self._prepare_start(job):  # vacated while its files were made
                    break
                segment_start = self.reactor.seconds()
                outcome = self._segment_ended(await self._start(job))
            except (StarterError, OSError) as exc:
                return await self._start_failed(exc)
        self._stop_usage_loop()
        if self._gpu_hold is not None:
            return await self._hold({**self._gpu_hold, **outcome.usage.attributes(), **self.gpu_attributes})
        if self.stopping or outcome.stopped:
            return await self._evicted(outcome)
        return await self._finish(outcome, snapshot, self.reactor.seconds() - started_at)

    async def _ends_within(self, ended: Deferred, delay: float) -> bool:
        """Whether the job's run ``ended`` fires within ``delay`` seconds (never, for a
        delay of 0); ``ended``'s result is left for its own waiter."""
        if delay <= 0:
            return False
        settled: Deferred = Deferred()
        timer = self.reactor.callLater(delay, settled.callback, False)

        def note(result):
            if timer.active():
                timer.cancel()
                settled.callback(True)
            return result
        ended.addBoth(note)
        return await settled

    async def _flush_execute(self, runs_on: bool = False) -> None:
        """Send the execute report held back for a job that ended early, before any
        report or transfer of that run other than its exit (which carries it). When the
        job ``runs_on`` (restarted in place after a checkpoint), the answer is taken as
        an at-once report's is: refused, the run is killed; taken, usage reports start
        (they keep the shadow's lease alive)."""
        if not self._execute_pending:
            return
        self._execute_pending = False
        taken = await self._report("execute", self.execute_attrs)
        if not runs_on:
            return
        if not taken:
            self.kill("the schedd did not take the execute report")
        elif self._usage_loop is None:
            self._start_usage_loop()

    async def _prepare_start(self, job: classad.ClassAd) -> bool:
        """Make the starter of ``job`` and its files in the sandbox: its Python work here,
        its file work by :meth:`_setup`; :meth:`_start` starts it. False (nothing to
        start) when the run was stopped meanwhile.

        Raises:
            StarterError, OSError: the job's files could not be made.
        """
        self._drop_prepared()
        starter = Starter(self.reactor, job, self.machine_ad, self.settings.execute_dir,
                          sandbox=self.sandbox, vacate_time=self.settings.vacate_time,
                          sample_interval=self.settings.sample_interval, transferred=True,
                          account=self.account, gpu_sharing=self.settings.gpu_sharing,
                          launcher=self.settings.launcher)
        self._prepared = (starter, await self._setup(starter.prepare, starter.plan()))
        if self.stopping:
            self._drop_prepared()
            return False
        return True

    def _start(self, job: classad.ClassAd) -> Deferred:
        """Start ``job`` as :meth:`_prepare_start` prepared it; fires with its :class:`JobOutcome`.

        Raises:
            StarterError, OSError: the job could not be started.
        """
        (self.starter, launch), self._prepared = self._prepared, None
        return self.starter.start(launch)

    def _drop_prepared(self) -> None:
        """Close the standard streams of a start prepared but not made."""
        if self._prepared is not None:
            (_, launch), self._prepared = self._prepared, None
            launch.close()

    def _segment_ended(self, outcome: JobOutcome) -> JobOutcome:
        """``outcome`` with the usage of the run's earlier segments added: a job restarted
        in place after a checkpoint is one run, whose CPU time adds up over its segments."""
        self._earlier_usage = carried(self._earlier_usage, outcome.usage)
        self._counted_starter = self.starter
        return attrs.evolve(outcome, usage=self._earlier_usage)

    async def _start_failed(self, exc: Exception) -> Ending:
        subcode = exc.errno if isinstance(exc, OSError) and exc.errno else 0
        return await self._hold(hold_attributes(f"Error from starter on {self.execute_attrs.get('RemoteHost')}:"
                                                f" {exc}", FAILED_TO_CREATE_PROCESS, subcode))

    def _is_checkpoint(self, outcome: JobOutcome) -> bool:
        """Whether the job exited to say it checkpointed (never while it is being stopped)."""
        return (not self.stopping and not outcome.stopped and self._gpu_hold is None
                and is_checkpoint_exit(self.job, outcome.exit_code, outcome.exit_signal))

    async def _checkpoint(self, outcome: JobOutcome, snapshot: dict, number: int, started: float,
                          exited: float) -> None:
        """Send the checkpoint files to the schedd's spool, then report the checkpoint:
        its number, its time (the job's exit) and the run time it commits (from the
        job's start to that exit), as VanillaProc::notifySuccessfulPeriodicCheckpoint
        does. A checkpoint that cannot be sent is logged and skipped: the job restarts
        anyway and sends the next one."""
        await self._flush_execute(runs_on=True)
        try:
            with tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY_BYTES, dir=self.settings.execute_dir,
                                               prefix=".checkpoint-") as spool:
                await self.run_blocking(_pack, send_checkpoint, self.job, self.sandbox, snapshot, spool,
                                        self.account)
                await self._persist(lambda: self.link.send_checkpoint(_rewound(spool)))
        except (TransferError, RemoteError, Unreachable, OSError) as exc:
            _log.warn("job {job}: checkpoint {number} not sent: {why}", job=self.job_id, number=number, why=exc)
            return
        await self._report("checkpoint", {
            **outcome.usage.attributes(), "CheckpointNumber": number,
            "LastCheckpointTime": int(exited), "NewlyCommittedTime": int(max(exited - started, 0.0))})

    def _execute_reported(self, taken: bool) -> None:
        if not taken:
            self.kill("the schedd did not take the execute report")
        elif self.starter is not None and self.starter.pid is not None and not self.stopping:
            self._start_usage_loop()

    async def _fetch_input(self, plan) -> dict:
        with tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY_BYTES, dir=self.settings.execute_dir,
                                           prefix=".input-") as spool:
            if self.inline_input is not None:  # it came with the activation: no round trip
                spool.write(self.inline_input)
                size, self.inline_input = len(self.inline_input), None
            else:
                size = await self.link.fetch_input(spool)
            spool.seek(0)
            # a small input is unpacked with the sandbox's other setup work: mostly creating files
            unpack = self._setup if stream_is_small(size, plan) else self.run_blocking
            received = await unpack(_as, self.account, receive_input, spool, self.sandbox, plan)
        return dict(received.snapshot)

    async def _finish(self, outcome: JobOutcome, snapshot: dict, wall: float) -> Ending:
        try:
            with tempfile.SpooledTemporaryFile(SPOOL_IN_MEMORY_BYTES, dir=self.settings.execute_dir,
                                               prefix=".output-") as spool:
                light = _as(self.account, sandbox_is_small, self.sandbox, output_plan(self.job))
                sent = await self._blocking(light, _pack_output, self.job, self.sandbox, snapshot, spool,
                                            self.account)
                if sent.files or sent.directories:  # an empty stream would change nothing there
                    await self._flush_execute()
                    await self._persist(lambda: self.link.send_output(_rewound(spool)))
        except TransferError as exc:
            return await self._hold(exc.hold_attributes())
        except RemoteError as exc:
            if exc.status == 413:  # a rerun would make the same output: hold, never loop
                return await self._hold(_output_refused(exc))
            _log.warn("job {job}: output transfer to the schedd failed: {why}", job=self.job_id, why=exc)
            return Ending.LOST
        except Unreachable as exc:
            _log.warn("job {job}: output transfer to the schedd failed: {why}", job=self.job_id, why=exc)
            return Ending.LOST
        except OSError as exc:
            return await self._hold(_output_unreadable(exc))
        await self._report("exit", {**exit_attributes(outcome, wall), **self.gpu_attributes})
        return Ending.EXITED

    def _blocking(self, light: bool, function: Callable, *args: Any) -> Deferred:
        """Run a transfer step inline when ``light`` (a thread hop costs more than a small
        step), else in the thread pool."""
        return maybeDeferred(function, *args) if light else self.run_blocking(function, *args)

    async def _evicted(self, outcome: JobOutcome | None) -> Ending:
        attrs_ = {"Reason": self.stop_reason or "the job was stopped on the execute machine"}
        if outcome is not None:
            attrs_.update(outcome.usage.attributes())
        attrs_.update(self.gpu_attributes)
        await self._report("evicted", attrs_)
        return Ending.EVICTED

    async def _hold(self, attrs_: dict) -> Ending:
        _log.warn("job {job}: holding it: {why}", job=self.job_id, why=attrs_["HoldReason"])
        await self._report("hold", attrs_)
        return Ending.HELD

    async def _report(self, event: str, attrs_: dict) -> bool:
        """Post one update; a failure is logged, not raised (the schedd's lease covers it).
        An execute report held back goes first, or inside the exit report: the shadow
        records the start before the exit, so both events are written, in order."""
        if event in FINAL_REPORTS:
            self.final_report_sent = True
        if self.unreported:
            return False
        if event == "exit" and self._execute_pending:
            self._execute_pending = False
            attrs_ = {**self.execute_attrs, **attrs_}
        elif event != "execute":
            await self._flush_execute()
        try:
            if event in FINAL_REPORTS:  # what the job did must not be lost to a short outage
                answer = await self._persist(lambda: self.link.update(event, attrs_, takes_activation=event == "exit"))
            else:
                answer = await self.link.update(event, attrs_)
        except (RemoteError, Unreachable) as exc:
            _log.info("job {job}: the schedd did not take the {event} report: {why}",
                      job=self.job_id, event=event, why=exc)
            return False
        if event == "exit" and isinstance(answer, dict) and isinstance(answer.get("activate"), dict):
            self.next_activation = answer["activate"]
        return True

    async def _persist(self, attempt: Callable[[], Deferred]) -> Any:
        """``attempt()`` again every few seconds while the schedd is unreachable, for as
        long as the job's lease lasts (the shadow waits as long for it to come back), and
        not after the run was killed (its claim ended here).

        Raises:
            Unreachable: the lease ran out, or the run was killed, before the schedd answered.
        """
        lease = job_lease_of(self.job)
        delay = retry_delay(lease)
        deadline = self.reactor.seconds() + lease
        while True:
            try:
                return await attempt()
            except Unreachable as exc:
                if self._forceful or self.reactor.seconds() + delay > deadline:
                    raise
                _log.info("job {job}: the schedd is unreachable ({why}); trying again in {delay:g} s",
                          job=self.job_id, why=exc, delay=delay)
                await deferLater(self.reactor, delay, lambda: None)

    # --- usage reports ---

    def _start_usage_loop(self) -> None:
        self._usage_loop = task.LoopingCall(self._report_usage)
        self._usage_loop.clock = self.reactor
        self._usage_loop.start(report_interval(self.job, self.settings.usage_interval), now=False)

    def _stop_usage_loop(self) -> None:
        if self._usage_loop is not None and self._usage_loop.running:
            self._usage_loop.stop()

    def _report_usage(self) -> Deferred | None:
        if self.starter is None:
            return None
        running = Usage() if self.starter is self._counted_starter else self.starter.usage
        usage = carried(self._earlier_usage, running)
        return Deferred.fromCoroutine(self._report("usage", {**usage.attributes(),
                                                             **self.gpu_attributes}))


def report_interval(job: classad.ClassAd, usage_interval: float) -> float:
    """How often a running job reports: every ``usage_interval``, but at least three
    times per ``JobLeaseDuration`` so that a short lease never expires on a healthy job."""
    lease = job.get("JobLeaseDuration") if "JobLeaseDuration" in job else None
    if type(lease) in (int, float) and lease > 0:
        return max(1.0, min(usage_interval, lease / 3))
    return usage_interval


def retry_delay(lease: float) -> float:
    """How long a run waits between tries to reach an unreachable schedd: a tenth of the
    job's lease, between half a second and five seconds."""
    return max(0.5, min(5.0, lease / 10))


def _consume(ended: Deferred | None) -> None:
    """Drop the failure a job's ``ended`` carries when it never started (already told)."""
    if ended is not None:
        ended.addErrback(lambda _: None)


def _rewound(spool):
    spool.seek(0)
    return spool


def _output_refused(exc: RemoteError) -> dict:
    """Hold attributes for outputs the schedd refused as too large."""
    return {"HoldReason": f"output too large for the schedd to accept: {exc.message}",
            "HoldReasonCode": MAX_OUTPUT_SIZE_EXCEEDED, "HoldReasonSubCode": 0}


def _output_unreadable(exc: OSError) -> dict:
    """Hold attributes for outputs the starter could not read or pack."""
    where = f" {exc.filename!r}" if exc.filename else ""
    return {"HoldReason": f"cannot send output{where}: {exc.strerror or exc}",
            "HoldReasonCode": TRANSFER_OUTPUT_FAILED, "HoldReasonSubCode": exc.errno or 0}


def _as(account: Account | None, function: Callable, *args: Any) -> Any:
    """``function(*args)`` with ``account``'s file rights, in the calling thread."""
    with acting_as(account):
        return function(*args)


def _pack_output(job: classad.ClassAd, sandbox: str, snapshot: dict, into,
                 account: Account | None = None) -> TransferStats:
    """Write the job's output tar to ``into``, rewind it and say what it holds."""
    return _pack(send_output, job, sandbox, snapshot, into, account)


def _pack(make_stream: Callable, job: classad.ClassAd, sandbox: str, snapshot: dict, into,
          account: Account | None = None) -> TransferStats:
    """Write the stream ``make_stream(job, sandbox, snapshot)`` gives to ``into``, rewind
    it and say what it holds. The sandbox is read with ``account``'s rights (a link the
    job made to a file it may not read fails to open), the spool written with the startd's."""
    stream = _as(account, make_stream, job, sandbox, snapshot)
    chunks = iter(stream)
    while True:
        chunk = _as(account, next, chunks, None)
        if chunk is None:
            break
        into.write(chunk)
    into.flush()
    into.seek(0)
    return stream.stats
