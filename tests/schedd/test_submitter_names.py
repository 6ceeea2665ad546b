"""A submitter is one name everywhere, as in HTCondor: ``owner@UID_DOMAIN`` is its
jobs' ``User`` and the Name of its Submitter ad, whatever domain its token names (in
a pool of several hosts a token says the pool, ``UID_DOMAIN`` the submit host)."""

from __future__ import annotations

import pytest

from schedd.ads import user_name
from schedd.service import ScheddService, ScheddSettings
from tests.schedd.test_service import KEY, call, submit  # noqa: F401 (call is a fixture)
from tests.support.daemon_settings import daemon_settings

UID_DOMAIN = "submit-a.example.org"  # alice's token is alice@pool
SLEEP = "executable = /bin/sleep\narguments = 60\nqueue 2\n"


@pytest.fixture
def schedd(tmp_path, reactor):
    """A schedd whose UID_DOMAIN is not the domain of the tokens it is called with."""
    settings = daemon_settings(tmp_path, "SCHEDD", "Scheduler", max_body=1 << 20)
    service = ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool"), domain=UID_DOMAIN),
                            key=KEY, with_execution=False)
    yield service
    service.queue.close()


def users(call) -> set[str]:
    return {ad["User"] for ad in call("/v1/jobs/query", {"projection": ["User"]}).lines()}


def test_jobs_user_is_owner_at_uid_domain_not_the_token_domain(call, tmp_path):
    """Token alice@pool, UID_DOMAIN submit-a.example.org: every job's User is
    alice@submit-a.example.org, also when the submitted ads name another."""
    assert submit(call, tmp_path, SLEEP).status == 200
    forged = call("/v1/jobs", {"cluster_ad": {"Cmd": "/bin/true", "Iwd": str(tmp_path), "User": "alice@pool"},
                               "proc_ads": [{"User": "mallory@elsewhere"}]})
    assert forged.status == 200, forged.json()
    assert users(call) == {f"alice@{UID_DOMAIN}"}


def test_submitter_ad_name_is_its_jobs_user(schedd, call, tmp_path):
    """The Submitter ad the schedd sends for alice is named exactly as her jobs' User,
    the name the startd's claimed slot carries as RemoteOwner and the accountant charges."""
    assert submit(call, tmp_path, SLEEP).status == 200
    [ad] = schedd.submitter_ads("sched")
    assert (ad["Name"], ad["Owner"], ad["IdleJobs"]) == (f"alice@{UID_DOMAIN}", "alice", 2)
    assert users(call) == {ad["Name"]} == {user_name("alice", UID_DOMAIN)}
