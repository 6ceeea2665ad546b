"""Claim leases on the startd: the pure lease book, and the routes ending claims whose
schedd went quiet (an idle claim released, a running job killed and its slot freed, a
claim never activated given back after MATCH_TIMEOUT), all on a task.Clock."""

import pytest

import classad
from startd.claim_leases import DEFAULT_JOB_LEASE, LeaseBook, LeaseKind, LeaseTerms, job_lease_of
from startd.job_run import Ending
from tests.startd.test_routes import activate, claim, slot, startd  # noqa: F401  (fixture)

TERMS = LeaseTerms(match_timeout=120.0, claim_lease=1800.0)


def test_a_new_claim_has_match_timeout_to_be_activated():
    """Claimed at t=0, the lease is still there at 119.9 s and expired at 120 s."""
    book = LeaseBook(TERMS)
    book.claimed("c1", 0.0)
    assert book.expired(119.9) == []
    [(claim_id, lease)] = book.expired(120.0)
    assert (claim_id, lease.kind) == ("c1", LeaseKind.MATCH)


def test_an_active_claim_lives_for_the_jobs_lease_and_renewals_extend_it():
    """JobLeaseDuration 60 activated at 10: a renewal at 50 moves the deadline to 110."""
    book = LeaseBook(TERMS)
    book.claimed("c1", 0.0)
    book.activated("c1", classad.ClassAd({"JobLeaseDuration": 60}), 10.0)
    assert book.renew("c1", 50.0)
    assert book.expired(109.9) == []
    assert [c for c, _ in book.expired(110.0)] == ["c1"]


def test_an_idle_claim_between_jobs_lives_for_the_claim_lease():
    """After its job ends the claim waits ALIVE_INTERVAL x MAX_CLAIM_ALIVES_MISSED."""
    book = LeaseBook(TERMS)
    book.claimed("c1", 0.0)
    book.activated("c1", classad.ClassAd(), 1.0)
    book.job_done("c1", 100.0)
    assert book.expired(1899.0) == []
    [(_, lease)] = book.expired(1900.0)
    assert lease.kind is LeaseKind.CLAIM


def test_unknown_claims_are_not_renewed_and_forgotten_claims_never_expire():
    """renew answers False for a claim the book does not hold; forget drops it."""
    book = LeaseBook(TERMS)
    assert not book.renew("nope", 1.0)
    book.claimed("c1", 0.0)
    book.forget("c1")
    assert book.expired(10_000.0) == []
    assert book.job_done("c1", 5.0) is None


@pytest.mark.parametrize("value, expected", [(30, 30.0), (0, DEFAULT_JOB_LEASE), (-5, DEFAULT_JOB_LEASE),
                                             ("x", DEFAULT_JOB_LEASE), (None, DEFAULT_JOB_LEASE)])
def test_job_lease_is_the_positive_job_lease_duration_or_htcondors_default(value, expected):
    """Only a positive number counts; anything else is 2400 s."""
    ad = classad.ClassAd() if value is None else classad.ClassAd({"JobLeaseDuration": value})
    assert job_lease_of(ad) == expected


def test_a_claim_never_activated_is_given_back_after_match_timeout(startd, clock):  # noqa: F811
    """The dynamic slot of a claim nobody activates is gone 120 s later."""
    grant = claim(startd).json()
    clock.advance(119)
    assert startd["routes"].expire_leases() == []
    clock.advance(1)
    assert startd["routes"].expire_leases() == [grant["slot_name"]]
    assert list(startd["table"].slots) == ["slot1@node1"]
    assert activate(startd, grant).status == 404


def test_a_running_job_whose_schedd_goes_quiet_is_killed_and_its_slot_freed(startd, clock):  # noqa: F811
    """JobLeaseDuration 60: keep-alives hold the claim; without them it ends, the run is killed, the slot freed."""
    grant = claim(startd).json()
    body = {"claim_id": grant["claim_id"], "job_id": "4.0", "transfer_key": "t" * 32,
            "schedd_address": "<127.0.0.1:9618>",
            "job_ad": {"ClusterId": 4, "ProcId": 0, "Owner": "alice", "Cmd": "/bin/true", "RequestCpus": 2,
                       "JobLeaseDuration": 60}}
    assert startd["post"]("/activate", body).status == 200
    [run] = startd["runs"]
    for _ in range(3):
        clock.advance(50)
        alive = startd["post"]("/alive", {"claim_ids": [grant["claim_id"], "forged"]}).json()
        assert alive == {"alive": 1, "unknown": [1]}
        assert startd["routes"].expire_leases() == []
    clock.advance(60)
    assert startd["routes"].expire_leases() == ["slot1_1@node1"]
    assert run.asked == [("kill", "the claim lease of 60 s expired")]
    run.end(Ending.EVICTED)
    assert list(startd["table"].slots) == ["slot1@node1"]
    assert startd["table"].public_ad(slot(startd, "slot1@node1"))["Cpus"] == 8


def test_reports_that_reach_the_schedd_renew_the_lease(startd, clock):  # noqa: F811
    """The starter's successful reports count as word from the schedd."""
    grant = claim(startd).json()
    clock.advance(100)
    startd["routes"].heard_from_schedd(grant["claim_id"])
    clock.advance(100)
    assert startd["routes"].expire_leases() == []


def test_alive_needs_a_list_of_claim_ids(startd):  # noqa: F811
    """A body without claim_ids, or with a non-string in it, is a 400 naming the field."""
    assert "$.claim_ids" in startd["post"]("/alive", {}).json()["message"]
    bad = startd["post"]("/alive", {"claim_ids": ["a", 3]})
    assert bad.status == 400 and "$.claim_ids[1]" in bad.json()["message"]


def test_reconnect_points_the_run_at_the_restarted_schedd(startd, clock):  # noqa: F811
    """RECONNECT with the running job's id retargets its link and renews the lease; a wrong job is 404."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    retargeted = []
    run.link = type("Link", (), {"retarget": lambda self, address, key: retargeted.append((address, key))})()
    body = {"claim_id": grant["claim_id"], "job_id": "4.1", "transfer_key": "n" * 32,
            "schedd_address": "<127.0.0.1:9700>"}
    assert startd["post"]("/reconnect", body).status == 404
    answer = startd["post"]("/reconnect", {**body, "job_id": "4.0"})
    assert answer.json() == {"reconnected": True, "slot_name": "slot1_1@node1"}
    assert retargeted == [("<127.0.0.1:9700>", "n" * 32)]
