"""Tests for schedd.gangs: a gang's pieces are claimed all or none and activated
together with every piece's place, and a gang that lost a piece is vacated after
GANG_STALE_GRACE."""

from __future__ import annotations

from classad import ClassAd
from jobmodel.states import JobId, JobStatus
from schedd.gangs import LOST, OTHER, RUNNING, GangClaims, gang_of, host_and_slot, piece_state, stale_gangs


def _ad(gang="s#4", size=3):
    return ClassAd(f'[ GangId = "{gang}"; GangSize = {size} ]')


def _picks(n, size=3, gang="s#4"):
    return [(f"match{p}", JobId(4, p), _ad(gang, size)) for p in range(n)]


def test_gang_of_reads_id_and_size():
    """Only a GangId with GangSize > 1 makes a piece of a gang."""
    assert gang_of(_ad()) == ("s#4", 3)
    assert gang_of(_ad(size=1)) is None
    assert gang_of(ClassAd("[ A = 1 ]")) is None


def test_host_and_slot_is_machine_then_slot():
    assert host_and_slot("slot1_2@exec1", ClassAd('[ Machine = "exec1.pool" ]')) == "exec1.pool:slot1_2"
    assert host_and_slot("slot1@exec2", None) == "exec2:slot1"


def test_a_gang_with_all_its_matches_is_claimed():
    claims = GangClaims()
    keep, dropped = claims.admit(_picks(3) + [("m9", JobId(9, 0), ClassAd("[ A = 1 ]"))])
    assert {job for _, job in keep} == {JobId(4, 0), JobId(4, 1), JobId(4, 2), JobId(9, 0)}
    assert dropped == []


def test_a_gang_with_fewer_matches_than_pieces_is_not_claimed():
    """Two matches for a gang of three: none is claimed, both jobs dropped."""
    keep, dropped = GangClaims().admit(_picks(2))
    assert keep == [] and dropped == [JobId(4, 0), JobId(4, 1)]


def test_pieces_are_activated_only_once_all_are_claimed_in_proc_order():
    claims = GangClaims()
    claims.admit(_picks(3))
    assert claims.claimed("c2", JobId(4, 2), "h2:slot1").activate == ()
    assert claims.claimed("c0", JobId(4, 0), "h0:slot1").activate == ()
    step = claims.claimed("c1", JobId(4, 1), "h1:slot1")
    assert step.activate == (("c0", JobId(4, 0)), ("c1", JobId(4, 1)), ("c2", JobId(4, 2)))
    assert claims.hosts[JobId(4, 1)] == "h0:slot1,h1:slot1,h2:slot1"


def test_one_failed_claim_releases_the_others_and_activates_none():
    """Piece 0 claimed, piece 1 fails: piece 0's claim is released; piece 2's, when it
    answers later, is released too; nothing is activated."""
    claims = GangClaims()
    claims.admit(_picks(3))
    claims.claimed("c0", JobId(4, 0), "h0:slot1")
    step = claims.claim_failed(JobId(4, 1))
    assert step.release == ("c0",) and set(step.stopped) == {JobId(4, 0), JobId(4, 1)}
    late = claims.claimed("c2", JobId(4, 2), "h2:slot1")
    assert late.activate == () and late.release == ("c2",) and late.stopped == (JobId(4, 2),)
    keep, _ = claims.admit(_picks(3))  # the gang can be matched again next cycle
    assert len(keep) == 3


def test_a_plain_job_is_activated_at_once():
    step = GangClaims().claimed("c", JobId(1, 0), "h:slot1")
    assert step.activate == (("c", JobId(1, 0)),)


def test_piece_states():
    assert piece_state(JobStatus.RUNNING, True, False) == RUNNING
    assert piece_state(JobStatus.RUNNING, True, True) == LOST
    assert piece_state(JobStatus.IDLE, False, False) == LOST
    assert piece_state(JobStatus.IDLE, True, False) == OTHER
    assert piece_state(JobStatus.COMPLETED, False, False) == OTHER


def test_a_gang_lost_a_piece_is_vacated_after_the_grace():
    since: dict[str, float] = {}
    pieces = {"g": [RUNNING, RUNNING, LOST]}
    assert stale_gangs(pieces, since, 100.0, 60.0) == []
    assert stale_gangs(pieces, since, 159.0, 60.0) == []
    assert stale_gangs(pieces, since, 160.0, 60.0) == ["g"]


def test_a_piece_back_in_time_resets_the_grace():
    since: dict[str, float] = {}
    stale_gangs({"g": [RUNNING, LOST]}, since, 100.0, 60.0)
    assert stale_gangs({"g": [RUNNING, RUNNING]}, since, 130.0, 60.0) == []
    assert stale_gangs({"g": [RUNNING, LOST]}, since, 170.0, 60.0) == []
    assert stale_gangs({"g": [RUNNING, LOST]}, since, 230.0, 60.0) == ["g"]


def test_negative_grace_never_vacates_and_finished_pieces_are_not_lost():
    since: dict[str, float] = {}
    assert stale_gangs({"g": [RUNNING, LOST]}, since, 0.0, -1.0) == []
    assert stale_gangs({"g": [RUNNING, LOST]}, since, 1e9, -1.0) == []
    assert stale_gangs({"h": [RUNNING, OTHER]}, {}, 0.0, 0.0) == []
