"""The startd's route handlers over the in-memory wire on a task.Clock: claims carve
and return dynamic slots, activation starts a run, vacate and release stop it and end
the claim. Runs are stand-ins that record what they were asked and end on demand."""

import base64
import json

import pytest
from twisted.internet.defer import Deferred
from twisted.logger import formatEvent, globalLogPublisher

import classad
from daemoncore.config import Config
from daemoncore.security import issue_token
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiRequest, ApiResource, make_site
from daemoncore.wire.startd_routes import ACTIVATE
from startd.job_run import Ending
from startd.routes import MAX_INLINE_INPUT, StartdRoutes, remote_user_of
from startd.slot_types import plan_slots
from startd.slots import SlotTable

KEY = b"startd-route-test-signing-key-0123456789"


class RecordedRun:
    """A run that records vacate/kill and ends when the test says so."""

    def __init__(self, activation):
        self.activation = activation
        self.job_id = activation.job_id
        self.job = activation.job
        self.asked = []
        self.ending = Deferred()
        self.stopping = False
        self.next_activation = None

    def run(self):
        return self.ending

    def vacate(self, reason, reported=True):
        self.asked.append(("vacate", reason))
        self.stopping = True
        self.reported = reported

    def kill(self, reason, reported=True):
        self.asked.append(("kill", reason))
        self.stopping = True
        self.reported = reported

    def end(self, how=Ending.EXITED):
        self.ending.callback(how)


@pytest.fixture
def startd(machine, clock):
    table = SlotTable.from_plans(machine, plan_slots(Config.from_text("", env={}), machine), clock,
                                 start="TARGET.Owner =!= \"mallory\"")
    runs, changes = [], []

    def make_run(activation):
        runs.append(RecordedRun(activation))
        return runs[-1]

    routes = StartdRoutes(table, make_run, table.public_ad, lambda: changes.append(clock.seconds()))
    site = make_site(ApiResource(routes.handlers(), token_verifier(KEY, clock), cooperator=clock_cooperator(clock)),
                     clock=clock)
    tokens = {level: issue_token(KEY, f"{level.lower()}@pool", [level], now=clock.seconds())
              for level in ("READ", "DAEMON", "ADMINISTRATOR")}

    def post(path, body, level="DAEMON", under="/v1/claims"):
        raw = encode_request("POST", f"{under}{path}", json.dumps(body).encode(), token=tokens.get(level))
        response, _ = exchange(site, raw, clock)
        return response

    def drain(path, body, level="ADMINISTRATOR"):
        return post(path, body, level, under="/v1/drain")

    return {"table": table, "routes": routes, "runs": runs, "changes": changes, "post": post, "drain": drain,
            "clock": clock}


def job(**attrs):
    return {"ClusterId": 4, "ProcId": 0, "Owner": "alice", "User": "alice@pool", "Cmd": "/bin/true",
            "RequestCpus": 2, "RequestMemory": 1024, "RequestDisk": 100, **attrs}


def pslot_claim(startd):
    return startd["table"].private_ads()[0]["ClaimId"]


def claim(startd, **attrs):
    body = {"claim_id": pslot_claim(startd), "job_ad": job(**attrs), "schedd_address": "<127.0.0.1:9618>"}
    return startd["post"]("", body)


def activate(startd, grant, job_id="4.0"):
    body = {"claim_id": grant["claim_id"], "job_id": job_id, "job_ad": job(), "transfer_key": "t" * 32,
            "schedd_address": "<127.0.0.1:9618>"}
    return startd["post"]("/activate", body)


def slot(startd, name):
    return startd["table"].slots.get(name)


def test_claim_carves_a_dynamic_slot_and_answers_its_claim_id(startd):
    """The job's requested size is carved from slot1; the answer carries the new ClaimId."""
    response = claim(startd)
    assert response.status == 200
    grant = response.json()
    assert grant["slot_name"] == "slot1_1@node1"
    assert grant["claim_id"] != pslot_claim(startd)
    assert (grant["slot_ad"]["Cpus"], grant["slot_ad"]["State"]) == (2, "Claimed")
    assert startd["table"].public_ad(slot(startd, "slot1@node1"))["Cpus"] == 6
    assert slot(startd, "slot1_1@node1").remote_user == "alice@pool"
    assert startd["changes"], "a claim re-advertises the slots"


def test_refused_claims_say_why(startd):
    """Unknown ClaimId is 404; START false and a job too big are 409 with the reason."""
    body = {"claim_id": "forged", "job_ad": job(), "schedd_address": "<127.0.0.1:9618>"}
    unknown = startd["post"]("", body)
    assert unknown.status == 404 and "no slot holds this ClaimId" in unknown.json()["message"]
    refused = claim(startd, Owner="mallory", User="mallory@pool")
    assert refused.status == 409 and "START" in refused.json()["message"]
    too_big = claim(startd, RequestCpus=64)
    assert too_big.status == 409 and "the job asks for 64" in too_big.json()["message"]
    assert list(startd["table"].slots) == ["slot1@node1"]


def test_claim_routes_need_a_daemon_token_and_a_well_formed_body(startd):
    """READ cannot claim (403); a missing job ad or an unknown field is a 400 naming it."""
    body = {"claim_id": pslot_claim(startd), "job_ad": job(), "schedd_address": "<127.0.0.1:9618>"}
    assert startd["post"]("", body, level="READ").status == 403
    assert startd["post"]("", body, level=None).status == 401
    missing = startd["post"]("", {"claim_id": "x", "schedd_address": "<a:1>"})
    assert missing.status == 400 and "$.job_ad" in missing.json()["message"]
    typo = startd["post"]("/release", {"claim_id": "x", "claimid": "y"})
    assert typo.status == 400 and "$.claimid" in typo.json()["message"]


def test_a_malformed_gpu_request_is_a_400_naming_the_attribute(startd):
    """RequestGPUCores = 150 is answered 400 with the model's message, not a 500; nothing is carved."""
    response = claim(startd, RequestGPUMemory=1000, RequestGPUCores=150)
    assert response.status == 400
    assert "RequestGPUCores must be between 0 and 100" in response.json()["message"]
    assert list(startd["table"].slots) == ["slot1@node1"]


def test_a_gpu_refusal_is_a_409_and_logs_the_jobs_request_and_each_card(startd):
    """A share no card holds is refused with why; the log has both views: the request and every card."""
    logged = []
    globalLogPublisher.addObserver(logged.append)
    try:
        response = claim(startd, RequestGPUMemory=50000)
    finally:
        globalLogPublisher.removeObserver(logged.append)
    assert response.status == 409
    assert "cannot give 1 card(s) with 50000 MiB" in response.json()["message"]
    [line] = [formatEvent(e) for e in logged if "refused for GPUs" in e.get("log_format", "")]
    assert "the job asks: 1 card(s) with 50000 MiB and 0% cores each" in line
    cards = startd["table"].machine.gpus
    assert all(f"{g.id} (index {g.index}" in line for g in cards)
    assert line.count("40960 of 40960 MiB, 100% cores free, 0 of 10 shares; refused for memory") == 2


def test_activate_runs_the_job_and_its_end_keeps_the_claim_for_the_next_job(startd):
    """The slot is Busy while the run goes; after it ends the claim is Claimed/Idle and takes another job."""
    grant = claim(startd).json()
    assert activate(startd, grant).json() == {"started": True}
    [run] = startd["runs"]
    assert (run.activation.job_id, run.activation.slot_name) == ("4.0", "slot1_1@node1")
    assert run.activation.schedd_address == "<127.0.0.1:9618>"
    assert slot(startd, "slot1_1@node1").status.describe() == "Claimed/Busy"
    busy = activate(startd, grant, "4.1")
    assert busy.status == 409 and "Claimed/Busy" in busy.json()["message"]
    run.end()
    assert slot(startd, "slot1_1@node1").status.describe() == "Claimed/Idle"
    assert activate(startd, grant, "4.1").status == 200
    assert startd["runs"][-1].job_id == "4.1"


def test_the_next_job_inside_the_exit_answer_starts_when_the_run_ends_and_only_once(startd):
    """An activation the schedd sent back inside its answer to the exit report starts
    as the run ends; the same activation coming again as ACTIVATE (the schedd's fallback
    when it heard nothing) is answered without a second run."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    riding = {"claim_id": grant["claim_id"], "job_id": "4.1", "job_ad": job(ProcId=1), "transfer_key": "k" * 32,
              "schedd_address": "<127.0.0.1:9618>"}
    run.next_activation = riding
    run.end()
    assert [r.job_id for r in startd["runs"]] == ["4.0", "4.1"]
    assert slot(startd, "slot1_1@node1").status.describe() == "Claimed/Busy"
    assert startd["post"]("/activate", riding).json() == {"started": True}
    assert len(startd["runs"]) == 2


def test_a_riding_activation_for_another_claim_is_not_started(startd):
    """The answer to a run's exit report may only activate that run's claim."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    run.next_activation = {"claim_id": pslot_claim(startd), "job_id": "4.1", "job_ad": job(),
                           "transfer_key": "k" * 32, "schedd_address": "<127.0.0.1:9618>"}
    run.end()
    assert len(startd["runs"]) == 1
    assert slot(startd, "slot1_1@node1").status.describe() == "Claimed/Idle"


def test_activation_that_overtakes_the_last_runs_end_waits_for_it(startd):
    """Once a run's final report is out, the schedd may activate the claim again before
    the answer has ended the run here: the activation waits for that end, then starts."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    run.final_report_sent = True
    body = {"claim_id": grant["claim_id"], "job_id": "4.1", "job_ad": job(), "transfer_key": "t" * 32,
            "schedd_address": "<127.0.0.1:9618>"}
    waiting = startd["routes"].activate(request_for(body))
    assert not waiting.called and len(startd["runs"]) == 1
    run.end()
    assert waiting.result.body == {"started": True}
    assert startd["runs"][-1].job_id == "4.1"
    assert slot(startd, "slot1_1@node1").status.describe() == "Claimed/Busy"


def test_inputs_sent_inside_activate_reach_the_run_and_bad_ones_are_refused(startd):
    """A base64 ``input`` in ACTIVATE is handed to the run as bytes; one that is not base64,
    or is over MAX_INLINE_INPUT, is refused with 400 and starts nothing."""
    grant = claim(startd).json()
    body = {"claim_id": grant["claim_id"], "job_id": "4.0", "job_ad": job(), "transfer_key": "t" * 32,
            "schedd_address": "<127.0.0.1:9618>"}
    bad = startd["post"]("/activate", {**body, "input": "not base64!"})
    assert bad.status == 400 and "$.input" in bad.json()["message"]
    huge = base64.b64encode(b"\0" * (MAX_INLINE_INPUT + 1)).decode()
    too_big = startd["post"]("/activate", {**body, "input": huge})
    assert too_big.status == 400 and "JOB_INPUT" in too_big.json()["message"]
    assert not startd["runs"]
    tar = b"a tar stream" * 10
    assert startd["post"]("/activate", {**body, "input": base64.b64encode(tar).decode()}).status == 200
    [run] = startd["runs"]
    assert run.activation.input == tar
    run.end()
    assert activate(startd, grant, "4.1").status == 200
    assert startd["runs"][-1].activation.input is None


def request_for(body):
    return ApiRequest(ACTIVATE, {}, {}, json.dumps(body).encode(), None)


def test_vacate_stops_the_job_gracefully_and_its_end_returns_the_resources(startd):
    """VACATE asks the run to vacate (Preempting/Vacating); once it has ended the dynamic slot is gone."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    body = {"claim_id": grant["claim_id"], "reason": "user removed it", "graceful": True}
    assert startd["post"]("/vacate", body).json() == {"vacating": True}
    assert run.asked == [("vacate", "user removed it")]
    assert slot(startd, "slot1_1@node1").status.describe() == "Preempting/Vacating"
    run.end(Ending.EVICTED)
    assert list(startd["table"].slots) == ["slot1@node1"]
    assert startd["table"].public_ad(slot(startd, "slot1@node1"))["Cpus"] == 8


def test_release_kills_a_running_job_then_ends_the_claim(startd):
    """RELEASE during a run kills it and ends the claim once it is gone; a second RELEASE is 404."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    assert startd["post"]("/release", {"claim_id": grant["claim_id"]}).json() == {"released": True}
    assert run.asked == [("kill", "the claim was released")]
    assert slot(startd, "slot1_1@node1").status.describe() == "Preempting/Killing"
    run.end(Ending.EVICTED)
    assert "slot1_1@node1" not in startd["table"].slots
    assert startd["post"]("/release", {"claim_id": grant["claim_id"]}).status == 404


def test_a_released_claims_run_is_killed_without_reporting_its_end(startd):
    """RELEASE comes from the claim's holder, which has no shadow left for the run: the
    kill asks the run not to report; a vacate's kill still does."""
    released = claim(startd).json()
    activate(startd, released)
    vacated = claim(startd).json()
    activate(startd, vacated, job_id="4.1")
    first, second = startd["runs"]
    startd["post"]("/release", {"claim_id": released["claim_id"]})
    startd["post"]("/vacate", {"claim_id": vacated["claim_id"], "graceful": False})
    assert (first.reported, second.reported) == (False, True)


def test_a_release_during_a_kill_still_silences_the_run(startd):
    """A claim being killed already (a forceful vacate) and then released: the run is told
    not to report its end."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    startd["post"]("/vacate", {"claim_id": grant["claim_id"], "graceful": False})
    startd["post"]("/release", {"claim_id": grant["claim_id"]})
    assert run.reported is False


def test_release_of_an_idle_claim_returns_its_resources_at_once(startd):
    """A claim with no job is released on the spot, and its ClaimId stops working."""
    grant = claim(startd).json()
    assert startd["post"]("/release", {"claim_id": grant["claim_id"]}).json() == {"released": True}
    assert list(startd["table"].slots) == ["slot1@node1"]
    assert activate(startd, grant).status == 404


def test_stopping_the_startd_kills_every_running_job(startd):
    """stop_all kills each run and ends its claim when it has gone."""
    grants = [claim(startd, RequestCpus=1).json() for _ in range(2)]
    for n, grant in enumerate(grants):
        activate(startd, grant, f"4.{n}")
    stopped = []
    startd["routes"].stop_all("shutting down").addCallback(stopped.append)
    [endings] = stopped
    assert len(endings) == 2
    assert all(run.asked == [("kill", "shutting down")] for run in startd["runs"])
    for run in startd["runs"]:
        run.end(Ending.EVICTED)
    assert list(startd["table"].slots) == ["slot1@node1"]


def test_stopping_the_startd_spreads_its_kills_over_turns_and_kills_late_starts(startd, monkeypatch):
    """With no time to spare per turn, one kill per turn; a job activated between two
    turns is killed as well before the endings are given."""
    monkeypatch.setattr("startd.routes.STOP_SLICE_SECONDS", 0.0)
    grants = [claim(startd, RequestCpus=1).json() for _ in range(3)]
    for n, grant in enumerate(grants[:2]):
        activate(startd, grant, f"4.{n}")
    stopped = []
    startd["routes"].stop_all("shutting down").addCallback(stopped.append)
    assert [run.asked for run in startd["runs"]] == [[("kill", "shutting down")], []]
    activate(startd, grants[2], "4.2")
    for _ in range(4):
        startd["clock"].advance(0)
    assert all(run.asked == [("kill", "shutting down")] for run in startd["runs"]) and len(startd["runs"]) == 3
    assert len(stopped) == 1 and len(stopped[0]) == 3


def test_remote_user_is_the_jobs_user_else_its_owner():
    """RemoteUser follows HTCondor: User (owner@domain) when the job has it."""
    assert remote_user_of(classad.ClassAd({"Owner": "bob", "User": "bob@pool"})) == "bob@pool"
    assert remote_user_of(classad.ClassAd({"Owner": "bob"})) == "bob"
    assert remote_user_of(classad.ClassAd({})) is None


def test_drain_needs_an_administrator_and_a_known_schedule(startd):
    """DRAIN with a DAEMON token is 403, an unknown schedule 400 naming the choices; nothing changes."""
    assert startd["drain"]("", {}, level="DAEMON").status == 403
    bad = startd["drain"]("", {"how": "slowly"})
    assert bad.status == 400 and "graceful, quick or fast" in bad.json()["message"]
    assert startd["drain"]("", {"reason": "x" * 5000}).status == 400
    assert startd["table"].draining is None
    assert slot(startd, "slot1@node1").status.describe() == "Unclaimed/Idle"


def test_graceful_drain_lets_the_job_finish_then_the_slot_is_drained_and_refuses_claims(startd):
    """The running job carries on; its end ends the claim; the machine takes no new claim."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    answer = startd["drain"]("", {"reason": "kernel update"}).json()
    assert answer == {"request_id": "1", "slots": 2, "retiring": 2}
    assert run.asked == []
    assert claim(startd).status == 409
    run.end()
    assert list(startd["table"].slots) == ["slot1@node1"]
    assert slot(startd, "slot1@node1").status.describe() == "Drained/Idle"
    assert grant["claim_id"] not in startd["routes"].leases.leases
    assert activate(startd, grant, "4.1").status == 404


def test_quick_and_fast_drains_vacate_and_kill_the_running_jobs(startd):
    """-quick vacates the job; a later -fast kills it; the slot is Drained once it is gone."""
    grant = claim(startd).json()
    activate(startd, grant)
    [run] = startd["runs"]
    startd["drain"]("", {"how": "quick"})
    assert run.asked == [("vacate", "the machine is draining: by command")]
    startd["drain"]("", {"how": "fast", "reason": "now"})
    assert run.asked[-1] == ("kill", "the machine is draining: now")
    run.end(Ending.EVICTED)
    assert [s.status.describe() for s in startd["table"].slots.values()] == ["Drained/Idle"]


def test_a_graceful_drain_vacates_a_job_whose_retirement_time_is_over(startd):
    """MaxJobRetirementTime = 30: the job is vacated 30 s after it started, not before."""
    grant = claim(startd).json()
    body = {"claim_id": grant["claim_id"], "job_id": "4.0", "job_ad": job(MaxJobRetirementTime=30),
            "transfer_key": "t" * 32, "schedd_address": "<127.0.0.1:9618>"}
    startd["post"]("/activate", body)
    [run] = startd["runs"]
    startd["drain"]("", {})
    startd["clock"].advance(29)
    assert startd["routes"].retire_overdue() == [] and run.asked == []
    startd["clock"].advance(1)
    assert startd["routes"].retire_overdue() == ["slot1_1@node1"]
    assert run.asked[0][0] == "vacate" and "MaxJobRetirementTime" in run.asked[0][1]


def test_cancel_drain_lets_claims_in_again_and_the_running_job_carry_on(startd):
    """-cancel: the p-slot is Unclaimed, the job's slot Claimed/Busy; a second cancel is 409."""
    grant = claim(startd).json()
    activate(startd, grant)
    startd["drain"]("", {})
    assert startd["drain"]("/cancel", {"request_id": "7"}).status == 409
    assert startd["drain"]("/cancel", {"request_id": "1"}).json() == {"cancelled": True}
    assert slot(startd, "slot1@node1").status.describe() == "Unclaimed/Idle"
    assert slot(startd, "slot1_1@node1").status.describe() == "Claimed/Busy"
    assert claim(startd).status == 200
    again = startd["drain"]("/cancel", {})
    assert again.status == 409 and "not draining" in again.json()["message"]


def test_a_vacate_the_schedd_wants_no_report_of_is_passed_to_the_run(startd):
    """VACATE with ``reported`` false (its shadow has ended) vacates the run gracefully
    and asks it not to report its end; a plain VACATE leaves the report."""
    quiet = claim(startd).json()
    activate(startd, quiet)
    plain = claim(startd).json()
    activate(startd, plain, job_id="4.1")
    first, second = startd["runs"]
    startd["post"]("/vacate", {"claim_id": quiet["claim_id"], "reported": False})
    startd["post"]("/vacate", {"claim_id": plain["claim_id"]})
    assert first.asked == [("vacate", "the schedd vacated the claim")]
    assert (first.reported, second.reported) == (False, True)
