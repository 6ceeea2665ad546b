"""Preempting a claim (HTCondor's retirement, vacate and kill), as pure decisions over
times passed in.

A claim is preempted when a schedd's CLAIM names it among its ``victims`` (the negotiator
gave its slot to a better job) or when the startd's ``PREEMPT`` expression turns true for
its job. The job first retires: it runs on, the slot Claimed/Retiring, until its
``MaxJobRetirementTime`` since it started is used up; then it is vacated (its ``KillSig``,
then SIGKILL after its vacate time: Preempting/Vacating), or killed at once when
``WANT_VACATE`` is false, or when ``KILL`` turns true while it vacates (Preempting/Killing).
A claim with no job is released at once.
"""

from __future__ import annotations

import enum
import signal
from collections.abc import Iterable

import attrs

import classad
from classad.errors import ClassAdParseError
from daemoncore.config import Config, ConfigError
from startd.claim_ads import retirement_time as claim_retirement_time
from startd.errors import ClaimError
from startd.states import Activity, State

#: The most victims one CLAIM may name.
MAX_VICTIMS = 256


class Step(str, enum.Enum):
    """What to do next to a claim being preempted."""

    WAIT = "wait"  # retiring, or already being stopped
    RETIRE = "retire"  # the job runs on: Claimed/Retiring
    VACATE = "vacate"  # KillSig now, SIGKILL after the vacate time: Preempting/Vacating
    KILL = "kill"  # SIGKILL now: Preempting/Killing
    RELEASE = "release"  # no job: the claim ends at once


def _expression(config: Config, name: str, default: str) -> str:
    text = (config.param(name) or default).strip()
    try:
        classad.ExprTree(text)
    except ClassAdParseError as exc:
        raise ConfigError(f"{name} = {text}: not a ClassAd expression: {exc}") from None
    return text


@attrs.frozen
class PreemptPolicy:
    """The startd's preemption knobs: ``MAXJOBRETIREMENTTIME``, ``PREEMPT``, ``WANT_VACATE``
    and ``KILL`` (expressions, MY = the slot, TARGET = the job), and the vacate time
    (``MACHINE_MAX_VACATE_TIME``) that bounds how long a vacate may take."""

    max_job_retirement_time: str = "0"
    preempt: str = "false"
    want_vacate: str = "true"
    kill: str = "false"
    vacate_time: float = 600.0

    @classmethod
    def from_config(cls, config: Config, vacate_time: float) -> PreemptPolicy:
        """The knobs as configured (HTCondor's defaults: 0, false, true, false).

        Raises:
            ConfigError: a knob is not a ClassAd expression, naming it.
        """
        return cls(_expression(config, "MAXJOBRETIREMENTTIME", "0"), _expression(config, "PREEMPT", "false"),
                   _expression(config, "WANT_VACATE", "true"), _expression(config, "KILL", "false"), vacate_time)

    def holds(self, which: str, slot_ad: classad.ClassAd, job: classad.ClassAd | None) -> bool:
        """Whether knob ``which`` (``preempt``, ``want_vacate`` or ``kill``) is true for ``job`` on the slot."""
        text = getattr(self, which)
        if text in ("true", "false"):
            return text == "true"
        return classad.ExprTree(text).eval(slot_ad, job if job is not None else classad.ClassAd()) is True


def kill_signal(job: classad.ClassAd) -> int:
    """The signal that vacates ``job``: its ``KillSig`` (``"SIGUSR1"``, ``"USR1"`` or a number),
    SIGTERM when it has none or names no signal this system has."""
    value = job.eval("KillSig") if "KillSig" in job else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value in signal.valid_signals() else signal.SIGTERM
    if not isinstance(value, str) or not value.strip():
        return signal.SIGTERM
    text = value.strip().upper()
    if text.isdigit():
        return kill_signal(classad.ClassAd({"KillSig": int(text)}))
    found = getattr(signal, text if text.startswith("SIG") else f"SIG{text}", None)
    return found if isinstance(found, signal.Signals) else signal.SIGTERM


def retirement_limit(job: classad.ClassAd, slot_ad: classad.ClassAd, policy: PreemptPolicy) -> float:
    """The job's retirement time in seconds: the smaller of the startd's ``MAXJOBRETIREMENTTIME``
    (evaluated against the job) and the job's own ``MaxJobRetirementTime``; 0 when neither says.
    The same number the claimed slot advertises as ``MaxJobRetirementTime``."""
    return claim_retirement_time(job, slot_ad, policy.max_job_retirement_time)


@attrs.frozen
class Eviction:
    """One claim being preempted: why, when its job started (None: no job), and its retirement time."""

    reason: str
    job_start: float | None
    retirement: float

    @property
    def retirement_ends(self) -> float | None:
        """When the job's retirement is used up (None: no job)."""
        return None if self.job_start is None else self.job_start + self.retirement

    def remaining(self, now: float) -> float:
        """Seconds of retirement left at ``now``."""
        ends = self.retirement_ends
        return 0.0 if ends is None else max(0.0, ends - now)


def next_step(state: State, activity: Activity, eviction: Eviction, now: float, want_vacate: bool,
              kill_now: bool) -> Step:
    """What the preemption of a slot in ``state``/``activity`` does at ``now``."""
    if state is State.PREEMPTING:
        return Step.KILL if activity is Activity.VACATING and kill_now else Step.WAIT
    if activity is Activity.IDLE:
        return Step.RELEASE
    if eviction.remaining(now) > 0:
        return Step.WAIT if activity is Activity.RETIRING else Step.RETIRE
    return Step.VACATE if want_vacate else Step.KILL


def ready_within(evictions: Iterable[Eviction], now: float, vacate_time: float) -> float:
    """How long until every evicted claim should be over: the longest retirement left plus
    the vacate time (0 when no victim runs a job)."""
    running = [e.remaining(now) for e in evictions if e.job_start is not None]
    return max(running) + vacate_time if running else 0.0


@attrs.frozen
class PendingClaim:
    """A claim granted by preempting others: it is carved on ``slot_name`` once every
    victim's claim is over, for ``job``; given up at ``deadline``."""

    slot_name: str
    job: classad.ClassAd = attrs.field(eq=False, repr=False)
    remote_user: str | None
    victims: tuple[str, ...] = attrs.field(repr=False)
    deadline: float


def victims_of(target_name: str, target_kind_static: bool, victims: list[str],
               claims: dict[str, tuple[str, str | None, bool]], taken: set[str]) -> list[str]:
    """The slot names of ``victims`` (ClaimIds), each checked to be a current claim of the
    target slot itself (static) or of one of its dynamic slots (partitionable).

    ``claims`` maps every ClaimId the startd holds to (slot name, parent name, claimed);
    ``taken`` holds the ClaimIds another pending claim is already preempting.

    Raises:
        ClaimError: a victim is not such a claim, or is named twice or by another claim; the
            message names it by its index and id.
    """
    if len(victims) > MAX_VICTIMS:
        raise ClaimError(f"{len(victims)} victims is more than the {MAX_VICTIMS} one claim may name")
    names = []
    for index, claim_id in enumerate(victims):
        found = claims.get(claim_id)
        mine = found is not None and found[2] and (
            found[0] == target_name if target_kind_static else found[1] == target_name)
        if not mine:
            raise ClaimError(f"victims[{index}] ({claim_id}) is not a current claim of {target_name}"
                             f"{'' if target_kind_static else ' or its dynamic slots'}")
        if claim_id in taken or victims.index(claim_id) != index:
            raise ClaimError(f"victims[{index}] ({claim_id}) is already being preempted for another claim")
        names.append(found[0])
    return names


__all__ = ["Step", "PreemptPolicy", "Eviction", "PendingClaim", "next_step", "ready_within", "retirement_limit",
           "victims_of", "kill_signal", "MAX_VICTIMS"]
