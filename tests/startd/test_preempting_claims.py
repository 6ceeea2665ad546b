"""CLAIM with victims over the in-memory wire on a task.Clock: the victims retire, are
vacated and killed as their times say, the new claim waits for their resources and is
carved then; ACTIVATE on it waits (bounded); a hostile victim list changes nothing."""

import json

import pytest
from twisted.internet.defer import Deferred

from daemoncore.config import Config
from daemoncore.security import issue_token
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiRequest, ApiResource, make_site
from daemoncore.wire.startd_routes import ACTIVATE
from startd.job_run import Ending
from startd.preemption import PreemptPolicy
from startd.routes import PENDING_ACTIVATE_WAIT, StartdRoutes
from startd.slot_types import plan_slots
from startd.slots import SlotTable
from tests.startd.test_routes import KEY, RecordedRun

SCHEDD = "<127.0.0.1:9618>"


def make_startd(machine, clock, config_text="", **policy):
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text(config_text, env={}), machine), clock)
    runs = []

    def make_run(activation):
        runs.append(RecordedRun(activation))
        return runs[-1]

    routes = StartdRoutes(table, make_run, table.public_ad, lambda: None,
                          policy=PreemptPolicy(vacate_time=10.0, **policy))
    site = make_site(ApiResource(routes.handlers(), token_verifier(KEY, clock), cooperator=clock_cooperator(clock)),
                     clock=clock)
    token = issue_token(KEY, "daemon@pool", ["DAEMON"], now=clock.seconds())

    def post(path, body):
        raw = encode_request("POST", f"/v1/claims{path}", json.dumps(body).encode(), token=token)
        return exchange(site, raw, clock)[0]

    return {"table": table, "routes": routes, "runs": runs, "post": post, "clock": clock}


@pytest.fixture
def startd(machine, clock):
    return make_startd(machine, clock)


def job(owner="alice", **attrs):
    return {"ClusterId": 4, "ProcId": 0, "Owner": owner, "User": f"{owner}@pool", "Cmd": "/bin/true",
            "RequestCpus": 4, "RequestMemory": 1024, "RequestDisk": 100, **attrs}


def claim(startd, claim_id, victims=None, **attrs):
    body = {"claim_id": claim_id, "job_ad": job(**attrs), "schedd_address": SCHEDD}
    if victims is not None:
        body["victims"] = victims
    return startd["post"]("", body)


def activate_body(claim_id, job_id="4.0", owner="alice"):
    return {"claim_id": claim_id, "job_id": job_id, "job_ad": job(owner), "transfer_key": "t" * 32,
            "schedd_address": SCHEDD}


def pslot_id(startd):
    return startd["table"].slots["slot1@node1"].claim_id


def fill_with_alice(startd, **attrs):
    """Two 4-cpu alice jobs fill the 8-cpu partitionable slot; their grants."""
    grants = [claim(startd, pslot_id(startd), **attrs).json() for _ in range(2)]
    for n, grant in enumerate(grants):
        assert startd["post"]("/activate", activate_body(grant["claim_id"], f"4.{n}")).status == 200
    return grants


def status(startd, name):
    return startd["table"].slots[name].status.describe()


def test_a_victim_is_vacated_and_the_new_claim_is_carved_once_it_is_gone(startd):
    """No retirement: the victim is vacated at once; the answer is pending with ready_within
    the vacate time; when the run ends its cpus go to a new dynamic slot under the new ClaimId."""
    alice = fill_with_alice(startd)
    answer = claim(startd, pslot_id(startd), [alice[1]["claim_id"]], owner="bob")
    assert answer.status == 200
    granted = answer.json()
    assert (granted["pending"], granted["ready_within"], granted["slot_name"]) == (True, 10.0, "slot1@node1")
    assert status(startd, "slot1_2@node1") == "Preempting/Vacating"
    assert startd["runs"][1].asked == [("vacate", "preempted by a job of bob@pool")]
    assert startd["routes"].alive(request({"claim_ids": [granted["claim_id"]]})).body["unknown"] == []
    startd["runs"][1].end(Ending.EVICTED)
    new = startd["table"].by_claim_id(granted["claim_id"])
    assert (new.name, new.remote_user, new.resources.cpus) == ("slot1_3@node1", "bob@pool", 4)
    assert status(startd, "slot1_1@node1") == "Claimed/Busy", "the other alice job runs on"
    assert startd["post"]("/activate", activate_body(granted["claim_id"], "7.0", "bob")).status == 200


def test_retirement_keeps_the_victim_running_then_vacate_then_kill(machine, clock):
    """MAXJOBRETIREMENTTIME = 5: Claimed/Retiring for 5 s, then Preempting/Vacating; KILL true kills it."""
    startd = make_startd(machine, clock, max_job_retirement_time="5", kill="MY.Activity == \"Vacating\"")
    alice = fill_with_alice(startd)
    granted = claim(startd, pslot_id(startd), [alice[0]["claim_id"]], owner="bob").json()
    assert granted["ready_within"] == 15.0
    assert status(startd, "slot1_1@node1") == "Claimed/Retiring"
    clock.advance(4)
    startd["routes"].advance_preemptions()
    assert status(startd, "slot1_1@node1") == "Claimed/Retiring"
    clock.advance(1)
    startd["routes"].advance_preemptions()
    assert status(startd, "slot1_1@node1") == "Preempting/Vacating"
    startd["routes"].advance_preemptions()
    assert status(startd, "slot1_1@node1") == "Preempting/Killing"
    assert [how for how, _ in startd["runs"][0].asked] == ["vacate", "kill"]
    startd["runs"][0].end(Ending.EVICTED)
    assert startd["table"].by_claim_id(granted["claim_id"]).name == "slot1_3@node1"


def test_a_victim_that_finishes_while_retiring_ends_its_claim(machine, clock):
    startd = make_startd(machine, clock, max_job_retirement_time="600")
    alice = fill_with_alice(startd)
    granted = claim(startd, pslot_id(startd), [alice[0]["claim_id"]], owner="bob").json()
    startd["runs"][0].end(Ending.EXITED)
    assert "slot1_1@node1" not in startd["table"].slots
    assert startd["table"].by_claim_id(granted["claim_id"]).remote_user == "bob@pool"


def test_want_vacate_false_kills_at_once(machine, clock):
    startd = make_startd(machine, clock, want_vacate="false")
    alice = fill_with_alice(startd)
    claim(startd, pslot_id(startd), [alice[0]["claim_id"]], owner="bob")
    assert status(startd, "slot1_1@node1") == "Preempting/Killing"


def test_activate_on_a_pending_claim_waits_then_answers_409_pending(startd, clock):
    """ACTIVATE waits up to PENDING_ACTIVATE_WAIT; if the victims are still there it is 409 pending;
    an ACTIVATE waiting when the victim ends starts the job."""
    alice = fill_with_alice(startd)
    granted = claim(startd, pslot_id(startd), [alice[0]["claim_id"]], owner="bob").json()
    waiting = startd["routes"].activate(activate_request(granted["claim_id"]))
    failures = []
    waiting.addErrback(failures.append)
    clock.advance(PENDING_ACTIVATE_WAIT)
    [failure] = failures
    assert failure.value.status == 409 and failure.value.body()["pending"] is True
    again = startd["routes"].activate(activate_request(granted["claim_id"]))
    assert isinstance(again, Deferred) and not again.called
    startd["runs"][0].end(Ending.EVICTED)
    assert again.result.body == {"started": True}
    assert startd["runs"][-1].job_id == "7.0"


def test_a_hostile_victim_list_changes_nothing(machine, clock):
    """Victims that are not the target's children (another pslot's, a made-up id, twice) are 409
    naming them; no job is touched and no claim is issued."""
    startd = make_startd(machine, clock, "NUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_1 = cpus=4\n"
                                         "SLOT_TYPE_1_PARTITIONABLE = true\n")
    grants = [claim(startd, startd["table"].slots[f"slot{n}@node1"].claim_id).json() for n in (1, 2)]
    for grant in grants:
        startd["post"]("/activate", activate_body(grant["claim_id"]))
    before = {name: status(startd, name) for name in startd["table"].slots}
    slot1 = startd["table"].slots["slot1@node1"].claim_id
    for victims, named in [([grants[1]["claim_id"]], grants[1]["claim_id"]), (["forged"], "forged"),
                           ([grants[0]["claim_id"]] * 2, "victims[1]")]:
        answer = claim(startd, slot1, victims, owner="bob")
        assert answer.status == 409 and named in answer.json()["message"]
    assert {name: status(startd, name) for name in startd["table"].slots} == before
    assert not startd["routes"].pending and not startd["routes"].evictions
    assert all(run.asked == [] for run in startd["runs"])
    bad = claim(startd, slot1, "not a list", owner="bob")
    assert bad.status == 400 and "$.victims" in bad.json()["message"]


def test_a_static_slot_is_preempted_and_reclaimed_under_a_new_claim_id(machine, clock):
    startd = make_startd(machine, clock, "NUM_SLOTS = 2\n")
    static = startd["table"].slots["slot1@node1"].claim_id
    assert claim(startd, static, RequestCpus=1).status == 200
    startd["post"]("/activate", activate_body(static))
    granted = claim(startd, static, [static], owner="bob", RequestCpus=1).json()
    assert granted["pending"] is True
    startd["runs"][0].end(Ending.EVICTED)
    slot = startd["table"].by_claim_id(granted["claim_id"])
    assert (slot.name, slot.remote_user, slot.status.describe()) == ("slot1@node1", "bob@pool", "Claimed/Idle")


def test_preempt_true_retires_and_vacates_a_running_job_by_itself(machine, clock):
    startd = make_startd(machine, clock, preempt="TARGET.Owner == \"alice\"")
    fill_with_alice(startd)
    startd["routes"].advance_preemptions()
    assert status(startd, "slot1_1@node1") == "Preempting/Vacating"
    assert "PREEMPT" in startd["runs"][0].asked[0][1]
    startd["runs"][0].end(Ending.EVICTED)
    assert "slot1_1@node1" not in startd["table"].slots


def test_a_pending_claim_whose_resources_were_taken_is_released(startd):
    alice = fill_with_alice(startd)
    granted = claim(startd, pslot_id(startd), [alice[0]["claim_id"]], owner="bob", RequestCpus=8).json()
    startd["runs"][0].end(Ending.EVICTED)
    assert not startd["routes"].pending
    assert startd["post"]("/activate", activate_body(granted["claim_id"])).status == 404


def request(body):
    return ApiRequest("", {}, {}, json.dumps(body).encode(), None)


def activate_request(claim_id):
    return ApiRequest(ACTIVATE, {}, {}, json.dumps(activate_body(claim_id, "7.0", "bob")).encode(), None)
