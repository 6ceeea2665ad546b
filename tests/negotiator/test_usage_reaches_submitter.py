"""Usage of a running job reaches its submitter's priority: the schedd names the
Submitter ad and the job's ``User`` alike (``owner@UID_DOMAIN``), the startd's claimed
slot carries that ``User`` as ``RemoteOwner``, and the accountant charges the slot's
weight to it, so the name the negotiator orders submitters by is the one charged
(also when the submitter's token names a domain other than ``UID_DOMAIN``)."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from classad import ClassAd, ExprTree
from daemoncore.config import Config
from jobmodel.states import JobStatus
from negotiator.accountant import Accountant
from negotiator.db import AccountantDatabase
from negotiator.pool_view import resources_in_use
from schedd.ads import submitter_ads
from schedd.intake import ClusterToStore, owned_by
from startd.routes import remote_user_of
from startd.slot_types import plan_slots
from startd.slots import SlotTable
from tests.startd.conftest import make_machine

DAY = 86400.0
UID_DOMAIN = "submit-a.example.org"  # the submitter's token said alice@poolA


def running_job_slots(clock: Clock, cpus: int) -> list[ClassAd]:
    """The startd's ads once alice's job (stored by the schedd) has claimed ``cpus`` CPUs."""
    submitted = ClusterToStore(ClassAd({"Cmd": "/bin/true", "RequestCpus": cpus, "User": "alice@poolA"}), ())
    job = owned_by(submitted, "alice", UID_DOMAIN).cluster_ad
    job["ClusterId"], job["ProcId"] = 1, 0
    machine = make_machine(gpus="")
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("", env={}), machine), clock)
    [pslot] = table.private_ads()
    table.request_claim(pslot["ClaimId"], job, remote_user_of(job))
    return table.public_ads()


def test_a_running_jobs_cpus_raise_its_submitters_priority(tmp_path):
    """Alice runs 4 CPUs for one half-life: the priority of the submitter named in her
    Submitter ad goes from 0.5 to 2.25, and no other name was charged."""
    clock = Clock()
    accountant = Accountant(AccountantDatabase(str(tmp_path / "accountant.db")), clock)
    [submitter] = submitter_ads({"alice": {"alice": {JobStatus.RUNNING: 1}}}, "sched", "127.0.0.1:1", UID_DOMAIN)
    in_use = resources_in_use(running_job_slots(clock, 4), ExprTree("Cpus"))
    assert in_use == {submitter["Name"]: 4.0}
    accountant.update_priorities(in_use)
    clock.advance(DAY)
    accountant.update_priorities(in_use)
    assert accountant.real_priority(submitter["Name"]) == pytest.approx(2.25)
    assert accountant.resources_in_use(submitter["Name"]) == 4.0
