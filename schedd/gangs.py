"""Gangs at the schedd: claim all pieces or none, start them together, and vacate a
gang that lost a piece.

A gang's matches arrive in one MATCHES call (the negotiator matches all N or none).
The schedd claims every piece; when one claim fails it releases the others and the
whole gang stays idle. Only once all N are claimed is each piece activated, its job ad
carrying ``GangHosts`` ("host:slot" of every piece, in proc order) for the starter.
A piece lost while the gang runs (evicted, its claim gone, held) leaves the others
waiting for it; after ``GANG_STALE_GRACE`` seconds (default 60; negative: never) the
schedd vacates the rest and the whole gang goes back to Idle (KAI's stale-gang
eviction), to be matched again as one.

:class:`GangClaims` and :func:`stale_gangs` are pure; :class:`Gangs` wires them to the
schedd's execution side (``schedd.execution.Execution``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs
from attrs import frozen
from twisted.internet import task
from twisted.logger import Logger

from classad import ClassAd, quote
from jobmodel.errors import InvalidTransitionError
from jobmodel.states import JobId, JobStatus, job_id_of, status_of, vacate

#: How often running gangs are checked for a lost piece.
GANG_CHECK_INTERVAL = 5.0
DEFAULT_GANG_STALE_GRACE = 60.0
_RUNNING = f"GangId isnt undefined && JobStatus == {int(JobStatus.RUNNING)}"

_log = Logger()


def gang_of(ad: ClassAd | None) -> tuple[str, int] | None:
    """``(GangId, GangSize)`` of a piece of a gang of more than one, else None."""
    if ad is None:
        return None
    gang, size = ad.evaluate("GangId"), ad.evaluate("GangSize")
    return (gang, size) if type(gang) is str and type(size) is int and size > 1 else None


def host_and_slot(slot_name: str, slot_ad: ClassAd | None) -> str:
    """A piece's place as ``host:slot`` (``slot1_2@exec1`` → ``exec1:slot1_2``)."""
    slot, _, host = slot_name.partition("@")
    machine = slot_ad.evaluate("Machine") if slot_ad is not None else None
    return f"{machine if type(machine) is str else host or 'localhost'}:{slot}"


@frozen
class GangStep:
    """What the schedd does next for a gang: pieces to activate, claims to release and
    jobs no longer being started."""

    activate: tuple[tuple[object, JobId], ...] = ()
    release: tuple[object, ...] = ()
    stopped: tuple[JobId, ...] = ()


@attrs.define
class _Forming:
    size: int
    pending: set[JobId]
    claimed: dict[JobId, object] = attrs.field(factory=dict)
    failed: bool = False


# Mutable: the gangs being claimed now.
class GangClaims:
    """The gangs whose pieces are being claimed: all or none."""

    def __init__(self) -> None:
        self._forming: dict[str, _Forming] = {}
        self._gang_of: dict[JobId, str] = {}
        #: "host:slot" of each piece of an activated gang, by job id
        self.hosts: dict[JobId, str] = {}

    def admit(self, picked: list[tuple[object, JobId, ClassAd | None]]) -> tuple[list, list[JobId]]:
        """Of ``(match, job id, ad)`` picks, those to claim now and the job ids dropped:
        a gang with fewer matches than pieces (or one already being claimed) is dropped whole."""
        by_gang: dict[str, list] = {}
        keep, dropped = [], []
        for match, job_id, ad in picked:
            gang = gang_of(ad)
            if gang is None:
                keep.append((match, job_id))
            else:
                by_gang.setdefault(gang[0], []).append((match, job_id, gang[1]))
        for gang_id, pieces in by_gang.items():
            size = pieces[0][2]
            if len(pieces) != size or gang_id in self._forming:
                _log.warn("gang {gang}: {n} matches for {size} pieces; claiming none", gang=gang_id,
                          n=len(pieces), size=size)
                dropped += [job_id for _, job_id, _ in pieces]
                continue
            self._forming[gang_id] = _Forming(size, {job_id for _, job_id, _ in pieces})
            for match, job_id, _ in pieces:
                self._gang_of[job_id] = gang_id
                keep.append((match, job_id))
        return keep, dropped

    def claimed(self, claim: object, job_id: JobId, place: str) -> GangStep:
        """``job_id``'s slot is claimed: activate it (not a gang), wait for the rest,
        release it (its gang failed) or activate the whole gang (it was the last)."""
        gang_id = self._gang_of.get(job_id)
        if gang_id is None:
            return GangStep(activate=((claim, job_id),))
        forming = self._forming[gang_id]
        forming.pending.discard(job_id)
        if forming.failed:
            self._forget_piece(gang_id, job_id)
            return GangStep(release=(claim,), stopped=(job_id,))
        forming.claimed[job_id] = (claim, place)
        if forming.pending:
            return GangStep()
        del self._forming[gang_id]
        order = sorted(forming.claimed, key=lambda piece: (piece.cluster, piece.proc))
        for piece in order:
            self._gang_of.pop(piece, None)
            self.hosts[piece] = ",".join(forming.claimed[p][1] for p in order)
        return GangStep(activate=tuple((forming.claimed[p][0], p) for p in order))

    def claim_failed(self, job_id: JobId) -> GangStep:
        """``job_id``'s claim failed: the gang's claimed pieces are released, all its jobs
        stop being started (those still being claimed are released when they answer)."""
        gang_id = self._gang_of.get(job_id)
        if gang_id is None:
            return GangStep()
        forming = self._forming[gang_id]
        forming.pending.discard(job_id)
        forming.failed = True
        release = tuple(claim for claim, _ in forming.claimed.values())
        stopped = (job_id, *forming.claimed)
        forming.claimed.clear()
        self._forget_piece(gang_id, job_id)
        for piece in stopped[1:]:
            self._gang_of.pop(piece, None)
        return GangStep(release=release, stopped=stopped)

    def _forget_piece(self, gang_id: str, job_id: JobId) -> None:
        self._gang_of.pop(job_id, None)
        forming = self._forming.get(gang_id)
        if forming is not None and not forming.pending:
            del self._forming[gang_id]


RUNNING, LOST, OTHER = "running", "lost", "other"


def piece_state(status: JobStatus, starting: bool, disconnected: bool) -> str:
    """A piece is lost when Idle or Held and not being started again, or Running with
    its startd out of reach; running when Running and in touch."""
    if status is JobStatus.RUNNING:
        return LOST if disconnected else RUNNING
    if status in (JobStatus.IDLE, JobStatus.HELD) and not starting:
        return LOST
    return OTHER


def stale_gangs(pieces: Mapping[str, Iterable[str]], lost_since: dict[str, float],
                now: float, grace: float) -> list[str]:
    """Gangs to vacate: a piece running while another has been lost for ``grace``
    seconds. ``pieces`` gives each running gang's :func:`piece_state` values;
    ``lost_since`` is kept across calls."""
    out = []
    for gang_id, states in pieces.items():
        states = set(states)
        if not (LOST in states and RUNNING in states):
            lost_since.pop(gang_id, None)
            continue
        since = lost_since.setdefault(gang_id, now)
        if grace >= 0 and now - since >= grace:
            out.append(gang_id)
            del lost_since[gang_id]
    for gang_id in [g for g in lost_since if g not in pieces]:
        del lost_since[gang_id]
    return out


# Mutable: wires GangClaims and stale_gangs to the execution side.
class Gangs:
    """The schedd's gang keeping, driven by ``execution`` (its queue, clock, record and
    the jobs it is starting)."""

    def __init__(self, execution, grace: float | None = None) -> None:
        self.execution = execution
        config = execution.schedd.config
        self.grace = grace if grace is not None else config.param_duration("GANG_STALE_GRACE",
                                                                           DEFAULT_GANG_STALE_GRACE)
        self.claims = GangClaims()
        self._lost_since: dict[str, float] = {}
        self._loop = task.LoopingCall(self.check_stale)
        self._loop.clock = execution.clock

    def start(self) -> None:
        self._loop.start(GANG_CHECK_INTERVAL, now=False)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def with_hosts(self, job_ad: ClassAd, job_id: JobId) -> ClassAd:
        """The job ad sent to the starter, with ``GangHosts`` for a piece of a gang."""
        hosts = self.claims.hosts.pop(job_id, None)
        if hosts is None:
            return job_ad
        job_ad = job_ad.copy()
        job_ad["GangHosts"] = hosts
        return job_ad

    def check_stale(self) -> None:
        """Vacate every running gang whose lost piece has not come back within the grace."""
        try:
            execution = self.execution
            pieces: dict[str, list[str]] = {}
            running = {ad.evaluate("GangId") for ad in execution.queue.query(  # running rows only, by index
                _RUNNING, projection=("GangId",), status=JobStatus.RUNNING)}
            for gang_id in running:
                if type(gang_id) is not str:
                    continue
                constraint = f"GangId == {quote(gang_id)}"
                for ad in execution.queue.query(constraint, projection=("ClusterId", "ProcId", "JobStatus")):
                    job_id = job_id_of(ad)
                    shadow = execution.shadows.get(job_id)
                    starting = job_id in execution._starting or shadow is not None
                    disconnected = shadow is not None and shadow.disconnected is not None
                    pieces.setdefault(gang_id, []).append(piece_state(status_of(ad), starting, disconnected))
            for gang_id in stale_gangs(pieces, self._lost_since, execution.clock.seconds(), self.grace):
                self.vacate(gang_id)
        except Exception:
            _log.failure("schedd: checking gangs for lost pieces failed")

    def vacate(self, gang_id: str) -> None:
        """Send every running piece of ``gang_id`` back to Idle (004), vacating it at its startd."""
        execution = self.execution
        _log.warn("gang {gang} lost a piece {grace:g} s ago: vacating the others", gang=gang_id, grace=self.grace)
        constraint = f"GangId == {quote(gang_id)} && JobStatus == {int(JobStatus.RUNNING)}"
        for ad in list(execution.queue.query(constraint, projection=("ClusterId", "ProcId"))):
            try:
                result = execution.queue.transition(job_id_of(ad), vacate)
            except (InvalidTransitionError, KeyError) as exc:
                _log.info("gang {gang}: {job} not vacated: {why}", gang=gang_id, job=job_id_of(ad), why=exc)
                continue
            execution.record(result)


__all__ = ["GangClaims", "GangStep", "Gangs", "gang_of", "host_and_slot", "stale_gangs", "DEFAULT_GANG_STALE_GRACE"]
