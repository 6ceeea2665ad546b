"""Tests of schedd.execution's reconnect after a restart: the claim taken back from the
queue carries the job's AccountingGroup and ConcurrencyLimits as the fresh claim did."""

from daemoncore.wire import schedd_routes
from schedd.execution import Execution
from shadow.shadow import maybe_call
from tests.schedd.test_execution import (
    StandInSchedd,
    match_body,
    request,
    requests_of,
    submit,
    update,
)


def terms_of(claim):
    return (claim.owner, claim.accounting_group, claim.concurrency_limits)


def start_group_job(execution, schedd):
    """One job of group_a.alice taking two limits, matched, claimed and running."""
    [job] = submit(schedd.queue, 1, "alice", AccountingGroup="group_a.alice", ConcurrencyLimits="License,DB:2")
    [first] = requests_of(execution, "group_a.alice@pool")
    answer = execution.matches(request(schedd_routes.MATCHES, match_body(first["request_id"])))
    assert answer.body == {"accepted": 1}
    update(execution, job, "execute")
    return job


def test_a_reconnected_claim_carries_the_jobs_group_and_limits(queue, clock):
    """After a restart the claim of a running job has the AccountingGroup and ConcurrencyLimits its fresh claim had."""
    schedd = StandInSchedd(queue, clock)
    first = Execution(schedd, run_blocking=maybe_call)
    job = start_group_job(first, schedd)
    [fresh] = list(first.claims)
    assert terms_of(fresh) == ("alice", "group_a.alice", "license,db:2")
    first.stopService()
    restarted = Execution(schedd, run_blocking=maybe_call)
    restarted.startService()
    [reconnected] = list(restarted.claims)
    assert reconnected.job_id == job
    assert terms_of(reconnected) == terms_of(fresh)
    restarted.stopService()
