"""The schedd's claim path for preempting matches, on task.Clock: the victims go to the
startd in CLAIM, a pending claim is activated again every few seconds while the startd
answers 409 pending, and given back (the job idle) after ready_within + MATCH_TIMEOUT."""

import pytest
from twisted.internet.defer import fail, succeed

from daemoncore.wire import schedd_routes, startd_routes
from daemoncore.wire.errors import BadRequest, RemoteError
from jobmodel.states import JobStatus
from schedd.execution import PENDING_RETRY, pending_until
from schedd.negotiation import MAX_VICTIMS, Victim, parse_matches
from tests.schedd.test_execution import (
    RecordingStartd,
    StandInSchedd,
    make_execution,
    match_body,
    request,
    requests_of,
    slot_json,
    submit,
)


class PreemptingStartd(RecordingStartd):
    """Answers a CLAIM with victims pending (ready within 20 s) and ACTIVATE with 409 pending
    ``pending_answers`` times before it starts the job."""

    def __init__(self, pending_answers):
        super().__init__()
        self.pending_answers = pending_answers

    def call(self, route, body=None, **params):
        if route is startd_routes.CLAIM and body.get("victims"):
            self.calls.append((route.name, body))
            return succeed({"claim_id": "new-claim", "slot_name": "slot1@node1", "slot_ad": slot_json(),
                            "pending": True, "ready_within": 20})
        if route is startd_routes.ACTIVATE and self.pending_answers > 0:
            self.pending_answers -= 1
            self.calls.append((route.name, body))
            return fail(RemoteError(409, "pending", "the claim waits for the claims it preempts to end"))
        return super().call(route, body, **params)


def preempting_match(request_id):
    body = match_body(request_id)
    body["matches"][0]["victims"] = [{"slot_name": "slot1_1@node1", "claim_id": "alice-claim"}]
    return body


@pytest.fixture
def schedd(queue, clock):
    schedd = StandInSchedd(queue, clock, "MATCH_TIMEOUT = 30\n")
    schedd.startd = PreemptingStartd(pending_answers=3)
    return schedd


def start_preempting(schedd):
    execution = make_execution(schedd)
    [job] = submit(schedd.queue, 1, "bob")
    [line] = requests_of(execution, "bob@pool")
    assert execution.matches(request(schedd_routes.MATCHES, preempting_match(line["request_id"]))).body == \
        {"accepted": 1}
    return execution, job


def test_parse_matches_reads_victims_and_refuses_malformed_ones():
    [match] = parse_matches(preempting_match("r#1"))
    assert match.victims == (Victim("slot1_1@node1", "alice-claim"),)
    assert parse_matches(match_body("r#1"))[0].victims == ()
    for victims, where in [("x", r"\$\.matches\[0\]\.victims must be a list"),
                           ([{"slot_name": "s"}], r"\$\.matches\[0\]\.victims\[0\]\.claim_id"),
                           (["c"], r"\$\.matches\[0\]\.victims\[0\] must be an object"),
                           ([{"slot_name": "s", "claim_id": "c"}] * (MAX_VICTIMS + 1), "at most 256")]:
        body = match_body("r#1")
        body["matches"][0]["victims"] = victims
        with pytest.raises(BadRequest, match=where):
            parse_matches(body)


def test_pending_until_is_ready_within_plus_match_timeout():
    assert pending_until({"pending": True, "ready_within": 20}, 100.0, 30.0) == 150.0
    assert pending_until({"pending": True, "ready_within": "soon"}, 100.0, 30.0) == 130.0
    assert pending_until({"claim_id": "x"}, 100.0, 30.0) is None


def test_a_pending_claim_is_activated_again_until_the_startd_starts_it(schedd, clock):
    """CLAIM carries the victims; ACTIVATE answered 409 pending is sent again every few
    seconds with the same transfer key; the job is not offered again meanwhile."""
    execution, job = start_preempting(schedd)
    [claim_body] = schedd.startd.named("claim")
    assert claim_body["victims"] == ["alice-claim"] and claim_body["claim_id"] == "claim-1"
    assert len(schedd.startd.named("activate")) == 1
    assert requests_of(execution, "bob@pool") == []
    for _ in range(3):
        clock.advance(PENDING_RETRY)
    bodies = schedd.startd.named("activate")
    assert len(bodies) == 4 and {body["transfer_key"] for body in bodies} == {bodies[0]["transfer_key"]}
    assert bodies[-1]["claim_id"] == "new-claim"
    assert job in execution.shadows and schedd.startd.named("release") == []


def test_a_claim_pending_past_ready_within_and_match_timeout_is_given_back(schedd, clock):
    """With the startd pending for ever, the schedd stops after 20 + 30 s, releases the claim,
    and the job is idle and offered again."""
    schedd.startd.pending_answers = 1000
    execution, job = start_preempting(schedd)
    clock.pump([PENDING_RETRY] * 9)
    assert schedd.startd.named("release") == []
    clock.pump([PENDING_RETRY] * 2)
    assert [body["claim_id"] for body in schedd.startd.named("release")] == ["new-claim"]
    assert execution.shadows == {} and len(execution.claims) == 0
    assert schedd.queue.get_job(job)["JobStatus"] == int(JobStatus.IDLE)
    assert requests_of(execution, "bob@pool")[0]["count"] == 1
    retries = len(schedd.startd.named("activate"))
    clock.advance(60)
    assert len(schedd.startd.named("activate")) == retries


def test_a_pending_claim_is_kept_alive(schedd, clock):
    """The pending claim is in the claim table, so keep-alives cover it like any other."""
    execution, _ = start_preempting(schedd)
    assert [claim.claim_id for claim in execution.claims] == ["new-claim"]
    assert execution.claims.get("new-claim").ready_by == clock.seconds() + 50
