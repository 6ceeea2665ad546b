"""The next job's activation riding back on the answer to an exit report: inside the
real schedd service (in memory, the startd faked behind StubTreq as in
test_execution_service.py), and the fallback to an ordinary ACTIVATE on a task.Clock."""

from __future__ import annotations

import re

import pytest
from twisted.internet.task import Clock

from daemoncore.wire import schedd_routes
from schedd.riding_activations import FALLBACK_SECONDS, RidingActivations
from tests.schedd.test_execution_service import OWNER, SLOT, STARTD, call, schedd, startd  # noqa: F401 - fixtures

TWO_JOBS = "executable = /bin/true\nlog = job.log\nqueue 2\n"


def _run_first_of_two(call, startd, tmp_path):  # noqa: F811 - the fixture
    """Submit two jobs, match one slot: the first is activated by request."""
    routes, _ = startd
    assert call("POST", "/v1/jobs", {"description": TWO_JOBS, "iwd": str(tmp_path)}).status == 200
    [line] = call("POST", schedd_routes.RESOURCE_REQUESTS.path(), {"submitter": f"{OWNER}@pool"},
                  "negotiator@pool", "DAEMON").lines()
    arch = re.search(r'TARGET.Arch == "(\w+)"', line["ad"]["Requirements"]).group(1)
    match = {"request_id": line["request_id"], "job_id": None, "slot_name": "slot1@node1",
             "startd_address": STARTD, "claim_id": "negotiated", "slot_ad": dict(SLOT, Arch=arch)}
    assert call("POST", schedd_routes.MATCHES.path(), {"matches": [match]}, "negotiator@pool",
                "DAEMON").json() == {"accepted": 1}
    [first] = routes.named("activate")
    return first


def _report(call, job_id, key, event, takes_activation=None):  # noqa: F811 - the fixture
    body = {"event": event, "attrs": {"ExitCode": 0, "RemoteWallClockTime": 1.0} if event == "exit" else {}}
    if takes_activation is not None:
        body["takes_activation"] = takes_activation
    return call("POST", schedd_routes.JOB_UPDATE.path(job_id=job_id), body, "startd@pool", "DAEMON",
                headers={schedd_routes.TRANSFER_KEY_HEADER: key})


def test_an_exit_report_that_takes_an_activation_gets_the_next_job_in_its_answer(call, schedd, startd,  # noqa: F811
                                                                                tmp_path):
    """The claim's next job comes back inside the answer, not as an ACTIVATE request;
    its run's first report settles it, so no request follows later either."""
    routes, _ = startd
    first = _run_first_of_two(call, startd, tmp_path)
    answer = _report(call, first["job_id"], first["transfer_key"], "exit", takes_activation=True).json()
    riding = answer["activate"]
    assert (answer["job_status"], riding["job_id"], riding["claim_id"]) == (4, "1.1", first["claim_id"])
    assert riding["transfer_key"] != first["transfer_key"]
    assert len(routes.named("activate")) == 1
    assert _report(call, "1.1", riding["transfer_key"], "exit", takes_activation=True).json()["job_status"] == 4
    schedd.reactor.advance(FALLBACK_SECONDS * 2)
    assert len(routes.named("activate")) == 1, "a ride heard from is never sent again"
    assert len(schedd.queue) == 0


def test_an_exit_report_that_does_not_take_one_gets_the_next_job_as_a_request(call, schedd, startd,  # noqa: F811
                                                                             tmp_path):
    """A startd that does not ask (an older one) is activated by request, as before."""
    routes, _ = startd
    first = _run_first_of_two(call, startd, tmp_path)
    answer = _report(call, first["job_id"], first["transfer_key"], "exit").json()
    assert "activate" not in answer
    assert [body["job_id"] for body in routes.named("activate")] == ["1.0", "1.1"]


def test_a_ride_never_heard_from_goes_again_as_a_request(call, schedd, startd, tmp_path):  # noqa: F811
    """The answer was lost, or the startd could not start it: after FALLBACK_SECONDS of
    silence the same activation (same transfer key) is sent as ACTIVATE."""
    routes, _ = startd
    first = _run_first_of_two(call, startd, tmp_path)
    riding = _report(call, first["job_id"], first["transfer_key"], "exit", takes_activation=True).json()["activate"]
    schedd.reactor.advance(FALLBACK_SECONDS - 0.1)
    assert len(routes.named("activate")) == 1
    schedd.reactor.advance(0.2)
    call("GET", "/v1/ping", {})  # lets the in-memory startd answer
    [_, again] = routes.named("activate")
    assert (again["job_id"], again["transfer_key"]) == ("1.1", riding["transfer_key"])


class _Claim:
    def __init__(self, claim_id, ready_by=None):
        self.claim_id, self.ready_by = claim_id, ready_by


class _Shadow:
    def __init__(self, job_id):
        self.job_id, self.taken = job_id, []

    def input_taken(self, counts):
        self.taken.append(counts)


@pytest.fixture
def rides():
    clock, sent = Clock(), []
    return RidingActivations(clock, lambda *args: sent.append(args)), clock, sent


def test_only_the_answered_claims_ready_activation_boards(rides):
    """Another claim's activation, a second one, or one for a claim still pending its
    victims goes as a request; none boards outside an answer."""
    riding, _, _ = rides
    assert not riding.board(_Claim("c1"), _Shadow("1.1"), {}, None)
    with riding.answering_exit("c1") as boarded:
        assert not riding.board(_Claim("c2"), _Shadow("2.0"), {"n": 2}, None)
        assert not riding.board(_Claim("c1", ready_by=5.0), _Shadow("1.1"), {"n": 1}, None)
        assert riding.board(_Claim("c1"), _Shadow("1.1"), {"n": 1}, None)
        assert not riding.board(_Claim("c1"), _Shadow("1.2"), {"n": 3}, None)
        assert boarded() == {"n": 1}


def test_the_input_counts_once_the_run_is_heard_from(rides):
    """The inline input's counts are the shadow's when its run speaks, not before."""
    riding, clock, sent = rides
    shadow = _Shadow("1.1")
    with riding.answering_exit("c1"):
        riding.board(_Claim("c1"), shadow, {"n": 1}, {"BytesSent": 10})
    assert shadow.taken == []
    riding.heard_from(shadow)
    riding.heard_from(shadow)
    clock.advance(FALLBACK_SECONDS * 2)
    assert (shadow.taken, sent) == ([{"BytesSent": 10}], [])


def test_a_failed_answer_sends_its_boarded_activation_at_once(rides):
    """When handling the exit report fails after the activation boarded, the answer is
    an error: the activation goes as a request now, not after the fallback delay."""
    riding, _, sent = rides
    claim, shadow = _Claim("c1"), _Shadow("1.1")
    with pytest.raises(RuntimeError), riding.answering_exit("c1"):
        riding.board(claim, shadow, {"n": 1}, None)
        raise RuntimeError("the exit was not recorded")
    assert sent == [(claim, shadow, {"n": 1}, None)]
