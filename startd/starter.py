"""The starter: runs one job in its sandbox as a real process under Twisted.

It makes the sandbox, copies inputs in, writes ``.job.ad`` and ``.machine.ad``
(all with the rights of the account the job runs as, so nothing the job's inputs
hold can make the startd touch a file that account could not), starts the job as
that account in a new session (so the whole tree can be signalled as one group),
samples its tree's usage every ``sample_interval`` seconds of the injected clock,
stops it on vacate or removal (SIGTERM, then SIGKILL after the vacate time),
and reports the exit with the output files to send back.
"""

from __future__ import annotations

import os
import signal
import stat

import attrs
from twisted.internet import defer, error, task

import classad
from daemoncore.security.accounts import Account, can_switch_user
from daemoncore.security.acting_as import acting_as
from startd import sandbox as sb
from startd.errors import StarterError
from startd.gang_environment import gang_environment
from startd.gpu_sharing import GpuSharing, gpu_environment
from startd.job_command import job_argv, job_environment
from startd.job_launcher import JobLauncher
from startd.job_threads import thread_environment
from startd.preemption import kill_signal
from startd.spawn import JobProcess
from startd.usage import Usage, sample_tree, signal_tree
from transfer.plan import JOB_AD_NAME, MACHINE_AD_NAME, STDERR_NAME, STDOUT_NAME

DEFAULT_VACATE_TIME = 600.0
DEFAULT_SAMPLE_INTERVAL = 5.0
#: The first usage sample comes this soon (or at the sample interval if shorter):
#: a job as short as /bin/true ends first and costs no sampling at all.
FIRST_SAMPLE_DELAY = 1.0
DEVNULL = "/dev/null"


@attrs.frozen
class JobOutcome:
    """How the job ended, what it used, and where its sandbox and standard streams are."""

    exit_code: int | None
    exit_by_signal: bool
    exit_signal: int | None
    usage: Usage
    sandbox: str
    stdout_path: str
    stderr_path: str
    stopped: bool = False

    def attributes(self) -> dict[str, object]:
        """The job-ad attributes to record: exit and usage, under HTCondor's names."""
        found: dict[str, object] = {"ExitBySignal": self.exit_by_signal, **self.usage.attributes()}
        if self.exit_by_signal:
            found["ExitSignal"] = self.exit_signal
        else:
            found["ExitCode"] = self.exit_code
        return found


def _stdio_path(sandbox: str, job: classad.ClassAd, attr: str, default: str,
                transferred: bool = False) -> str:
    value = job.eval(attr) if attr in job else None
    if transferred and isinstance(value, str) and value and value != DEVNULL:
        # file transfer brings stdin in under its base name and takes stdout/stderr
        # back from the starter's fixed names, whatever the job called them
        return os.path.join(sandbox, os.path.basename(value)) if attr == "In" else os.path.join(sandbox, default)
    if not isinstance(value, str) or not value or value == DEVNULL:
        return DEVNULL if value == DEVNULL or (attr == "In" and not value) else os.path.join(sandbox, default)
    if os.path.isabs(value):
        return os.path.join(sandbox, os.path.basename(value)) if attr == "In" else os.path.join(sandbox, default)
    return sb.inside(sandbox, value, attr)


def account_environment(account: Account | None) -> dict[str, str]:
    """``HOME``, ``USER`` and ``LOGNAME`` of the account a root startd runs the job as
    (nothing when the startd runs as an ordinary user: the job is that user, as before)."""
    if account is None or not can_switch_user():
        return {}
    return {"HOME": account.home or "/", "USER": account.name, "LOGNAME": account.name}


@attrs.frozen
class StartPlan:
    """The Python half of a job's start, made on the reactor: its arguments after the
    executable, its environment, and each ad file's path and old-syntax text;
    :meth:`Starter.prepare` does the file half with it."""

    args: tuple[str, ...]
    env: dict[str, str] = attrs.field(eq=False)
    ad_files: tuple[tuple[str, bytes], ...] = attrs.field(repr=False)


@attrs.frozen
class _Launch:
    """What the job is started with, once its sandbox is ready."""

    executable: str
    argv: list[str]
    env: dict[str, str]
    fds: tuple[int, ...]
    stdio: tuple[str, str]

    def close(self) -> None:
        """Close the standard streams' descriptors (the child has its own copies, or never ran)."""
        for fd in self.fds:
            os.close(fd)


# Mutable: one job's run, which moves from sandbox to running to ended.
class Starter:
    """Runs ``job`` on the slot described by ``machine_ad`` in a sandbox under ``execute_dir``.

    ``sandbox`` is one already made and filled (by file transfer); ``transferred``
    says stdio follows file transfer's names (stdout in ``_condor_stdout``);
    ``account`` is whom the job runs as (None: this process's own account);
    ``gpu_sharing`` how the job's card shares are enforced (:mod:`startd.gpu_sharing`);
    ``launcher`` the startd's job launcher, which starts jobs that run as another user.
    """

    process_class: type[JobProcess] = JobProcess

    def __init__(self, reactor, job: classad.ClassAd, machine_ad: classad.ClassAd, execute_dir: str, *,
                 vacate_time: float = DEFAULT_VACATE_TIME,
                 sample_interval: float = DEFAULT_SAMPLE_INTERVAL, sandbox: str | None = None,
                 transferred: bool = False, account: Account | None = None,
                 gpu_sharing: GpuSharing | None = None, launcher: JobLauncher | None = None) -> None:
        self.reactor = reactor
        self.launcher = launcher
        self.account = account
        self.gpu_sharing = gpu_sharing
        self.job = job
        self.machine_ad = machine_ad
        self.execute_dir = execute_dir
        job_limit = job.eval("JobMaxVacateTime") if "JobMaxVacateTime" in job else None
        self.vacate_time = min(vacate_time, job_limit) if isinstance(job_limit, (int, float)) else vacate_time
        self.sample_interval = sample_interval
        self.sandbox: str | None = sandbox
        self._given_sandbox = sandbox is not None
        self.transferred = transferred
        self.pid: int | None = None
        self.usage = Usage()
        self.stopped = False
        self._sampler: task.LoopingCall | None = None
        self._kill_call = None
        self._first_sample = None
        self._launched = False  # start() made the process (its pid may come later)
        self._stop_wanted: str | None = None  # "vacate" or "kill" asked for before the pid came
        self._start_failure = None
        self._waiting: list[defer.Deferred] = []

    def _label(self) -> str:
        cluster = self.job.eval("ClusterId") if "ClusterId" in self.job else 0
        proc = self.job.eval("ProcId") if "ProcId" in self.job else 0
        return f"{cluster}.{proc}"

    def _executable(self) -> str:
        cmd = self.job.eval("Cmd") if "Cmd" in self.job else None
        if not isinstance(cmd, str) or not cmd:
            raise StarterError(f"job {self._label()} has no Cmd (the executable)")
        path = cmd if os.path.isabs(cmd) else os.path.join(self.sandbox, os.path.basename(cmd))
        if not os.path.isfile(path):
            raise StarterError(f"job {self._label()}: executable {cmd!r} does not exist"
                               + ("" if os.path.isabs(cmd) else " in the sandbox (was it an input?)"))
        if not os.path.isabs(cmd):
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        if not os.access(path, os.X_OK):
            raise StarterError(f"job {self._label()}: executable {cmd!r} is not executable")
        return path

    def _environment(self, job_ad_path: str, machine_ad_path: str) -> dict[str, str]:
        own = job_environment(self.job)
        env = {**account_environment(self.account), **thread_environment(self.machine_ad, own), **own}
        env.update(gpu_environment(self.machine_ad, self.gpu_sharing))
        env.update({"_CONDOR_SCRATCH_DIR": self.sandbox, "_CONDOR_JOB_AD": job_ad_path,
                    "_CONDOR_MACHINE_AD": machine_ad_path, "TMPDIR": self.sandbox,
                    "TMP": self.sandbox, "TEMP": self.sandbox})
        if "Name" in self.machine_ad:
            env["_CONDOR_SLOT"] = str(self.machine_ad.eval("Name")).split("@")[0]
        return env

    def start(self, prepared: _Launch | None = None) -> defer.Deferred:
        """Set up the sandbox and start the job; the Deferred fires with its :class:`JobOutcome`.
        ``prepared``: what :meth:`prepare` made already (its file descriptors are closed here).

        Raises:
            StarterError: (synchronously) a missing executable or input, bad arguments or
                environment; the sandbox is removed again.
        """
        if not self._given_sandbox:
            self.sandbox = sb.make_sandbox(self.execute_dir, self._label(), self.account)
        try:
            launch = prepared if prepared is not None else self.prepare(self.plan())
            try:
                extra = {"launcher": self.launcher} if self.launcher is not None else {}
                proc = self.process_class(self.reactor, launch.executable, launch.argv, launch.env, self.sandbox,
                                          launch.fds, self.account, **extra)
            finally:
                launch.close()
        except BaseException:
            sb.remove_sandbox(self.sandbox)
            raise
        self._stdio = launch.stdio
        self._launched = True
        proc.started.addCallbacks(self._running, self._not_running)
        return proc.ended.addCallbacks(self._finished, self._lost)

    def started(self) -> defer.Deferred:
        """Fires with the job's pid once it runs (at once when it does already), or fails
        with what kept it from starting (``OSError``: the sandbox is removed again), as
        :meth:`start` raises it for a job started from this process."""
        if self.pid is not None:
            return defer.succeed(self.pid)
        if self._start_failure is not None:
            return defer.fail(self._start_failure)
        waiter: defer.Deferred = defer.Deferred()
        self._waiting.append(waiter)
        return waiter

    def _running(self, pid: int) -> int:
        self.pid = pid
        self._sampler = task.LoopingCall(self._sample)
        self._sampler.clock = self.reactor
        self._first_sample = self.reactor.callLater(min(FIRST_SAMPLE_DELAY, self.sample_interval),
                                                    self._start_sampling)
        wanted, self._stop_wanted = self._stop_wanted, None
        if wanted is not None:  # stopped while it was being started
            self.stopped = False
            self.kill() if wanted == "kill" else self.vacate()
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            waiter.callback(pid)
        return pid

    def _not_running(self, failure) -> None:
        self._start_failure = failure
        sb.remove_sandbox(self.sandbox)
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            waiter.errback(failure)

    def plan(self) -> StartPlan:
        """The Python work of starting the job (its arguments, environment and ads'
        text), for the reactor to do before :meth:`prepare`, which only touches files.

        Raises:
            StarterError: the job's arguments or environment are malformed.
        """
        paths = (os.path.join(self.sandbox, JOB_AD_NAME), os.path.join(self.sandbox, MACHINE_AD_NAME))
        texts = (self.job.printOld().encode("utf-8"), self.machine_ad.printOld().encode("utf-8"))
        return StartPlan(tuple(job_argv(self.job)), self._environment(*paths), tuple(zip(paths, texts)))

    def prepare(self, plan: StartPlan) -> "_Launch":
        """The file work of starting the job as ``plan`` says: check the executable, write
        the job's and machine's ads and open the job's standard streams, with the job
        account's file rights (a symlink among the inputs leads nowhere it could not go).
        Blocking system calls and little Python: a worker thread may run it, as creating a
        file costs a full file system most of a millisecond of kernel time.

        Raises:
            StarterError: a missing or unusable executable or standard input, a gang's
                contact file that cannot be written. OSError: a file cannot be written or opened.
        """
        with acting_as(self.account):
            return self._open_files(plan)

    def _open_files(self, plan: StartPlan) -> "_Launch":
        executable = self._executable()
        argv = [executable, *plan.args]
        for path, text in plan.ad_files:
            sb.write_private_file(path, text)
        env = {**plan.env, **gang_environment(self.job, self.sandbox)}
        stdin = _stdio_path(self.sandbox, self.job, "In", DEVNULL, self.transferred)
        stdout = _stdio_path(self.sandbox, self.job, "Out", STDOUT_NAME, self.transferred)
        stderr = _stdio_path(self.sandbox, self.job, "Err", STDERR_NAME, self.transferred)
        if stdin != DEVNULL and not os.path.isfile(stdin):
            raise StarterError(f"job {self._label()}: standard input {stdin!r} does not exist")
        fds: list[int] = []
        try:
            fds.append(os.open(stdin, os.O_RDONLY))
            fds.append(os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644))
            fds.append(os.open(stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return _Launch(executable, argv, env, tuple(fds), (stdout, stderr))

    def _start_sampling(self) -> None:
        if self.pid is not None and not self._sampler.running:
            self._sampler.start(self.sample_interval, now=True)

    def _sample(self) -> None:
        if self.pid is not None:
            self.usage = self.usage.peak(sample_tree(self.pid))

    def _signal_tree(self, signum: int) -> None:
        """Send ``signum`` to the job's process group and to every descendant outside it."""
        if self.pid is not None:
            signal_tree(self.pid, signum)

    def vacate(self) -> None:
        """Stop the job gracefully: its ``KillSig`` (SIGTERM by default) now, SIGKILL after the
        vacate time if it lingers."""
        if self.stopped:
            return
        if self.pid is None:
            if self._launched:  # being started: stopped once it runs
                self.stopped, self._stop_wanted = True, "vacate"
            return
        self.stopped = True
        self._signal_tree(kill_signal(self.job))
        self._kill_call = self.reactor.callLater(self.vacate_time, self._signal_tree, signal.SIGKILL)

    remove = vacate

    def kill(self) -> None:
        """Kill the job's whole tree at once (once it runs, when it is being started)."""
        if self.pid is None and self._launched:
            self._stop_wanted = "kill"
        self.stopped = True
        self._signal_tree(signal.SIGKILL)

    def _stop_timers(self) -> None:
        if self._sampler is not None and self._sampler.running:
            self._sampler.stop()
        for call in (self._kill_call, self._first_sample):
            if call is not None and call.active():
                call.cancel()

    def _lost(self, failure):
        """The job's exit cannot be known (its launcher ended): stop sampling and pass the failure on."""
        self._stop_timers()
        return failure

    def _finished(self, status: Exception) -> JobOutcome:
        self._stop_timers()
        try:
            os.killpg(self.pid, signal.SIGKILL)  # whatever the job left running in its group
        except (ProcessLookupError, PermissionError):
            pass
        code, signum = _exit_of(status)
        stdout, stderr = self._stdio
        return JobOutcome(code, signum is not None, signum, self.usage,
                          self.sandbox, stdout, stderr, self.stopped)

    def remove_sandbox(self) -> None:
        """Delete the sandbox once its outputs have been sent."""
        if self.sandbox is not None:
            sb.remove_sandbox(self.sandbox)


def _exit_of(status: Exception) -> tuple[int | None, int | None]:
    """(exit code, None) for a normal exit, (None, signal) for death by a signal."""
    if isinstance(status, error.ProcessDone):
        return 0, None
    if isinstance(status, error.ProcessTerminated):
        if status.signal is not None:
            return None, status.signal
        return status.exitCode, None
    return None, None
