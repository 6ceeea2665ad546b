"""$$() substitution on a real personal pool (condor_submit.rst "$$(attribute)" and
"$$([expression])"; qmgmt.cpp dollarDollarExpand): the job runs with its arguments and
environment filled in from the slot it landed on, the queue keeps MATCH_ attributes, and
a macro no slot can resolve holds the job with HTCondor's reason."""

from __future__ import annotations

import pytest

import bindings as htcondor
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import held_ad, submitted_cluster
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

SUB = """executable = /bin/sh
arguments = "-c 'echo cpus=$1 os=$2 twice=$3 site=$SITE' x $$(Cpus) $$(OpSys) $$([ Cpus * 2 ])"
environment = "SITE=$$(Site:nowhere)"
output = job.out
log = job.log
request_memory = 64M
{extra}queue
"""


def test_a_job_runs_with_the_slots_values_substituted(pool, tmp_path, monkeypatch):
    """$$(Cpus), $$(OpSys), $$([ expr ]) and $$(Site:nowhere) reach the job as the slot's values;
    the queued job keeps MATCH_Cpus and MATCH_EXP_Arguments."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sub").write_text(SUB.format(extra="leave_in_queue = true\n"))
    cluster = submitted_cluster(roost(pool["env"], "submit", str(tmp_path / "job.sub")))
    roost(pool["env"], "wait", "-wait", "60", str(tmp_path / "job.log"), timeout=90)
    [ad] = htcondor.Schedd().query(f"ClusterId == {cluster}", ["MATCH_Cpus", "MATCH_OpSys", "Arguments", "MATCH_EXP_Arguments"])
    cpus, opsys = ad["MATCH_Cpus"], ad["MATCH_OpSys"]
    assert (tmp_path / "job.out").read_text() == f"cpus={cpus} os={opsys} twice={cpus * 2} site=nowhere\n"
    assert "$$(Cpus)" in ad["Arguments"] and f" x {cpus} " in ad["MATCH_EXP_Arguments"]


def test_a_macro_no_slot_resolves_holds_the_job(pool, tmp_path, monkeypatch):
    """An attribute the slot lacks, with no default, holds the job naming the macro."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sub").write_text("executable = /bin/echo\narguments = $$(NoSuchMachineAttr)\n"
                                      "log = job.log\nrequest_memory = 64M\nqueue\n")
    cluster = submitted_cluster(roost(pool["env"], "submit", str(tmp_path / "job.sub")))
    ad = wait_for(lambda: held_ad(htcondor.Schedd(), cluster), seconds=60)
    assert ad["HoldReason"] == "Cannot expand $$ expression (NoSuchMachineAttr)."
