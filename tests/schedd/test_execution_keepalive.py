"""The schedd's keep-alives for its claims and the shadow's reconnect, on a task.Clock:
claims are renewed at least three times per job lease; a startd that stops answering
puts its job in the disconnected state (022) while it keeps running; an answer within
the lease reconnects it (023); a lease that runs out while disconnected writes 024 and
puts the job back to Idle; a claim the startd no longer holds requeues the job at once."""

from jobmodel.eventlog import EventType
from jobmodel.states import JobStatus
from schedd.claims import alive_period_for
from tests.schedd.test_execution import StandInSchedd, make_execution, start_one, update


def running(queue, clock, lease=30):
    schedd = StandInSchedd(queue, clock, f"SHADOW_LEASE_DURATION = {lease}\n")
    execution = make_execution(schedd)
    execution.startService()
    [job] = start_one(execution, schedd)
    update(execution, job, "execute")
    return schedd, execution, job


def test_alive_period_is_three_times_per_lease_within_alive_interval():
    """A 30 s lease is renewed every 10 s; a 2400 s one every ALIVE_INTERVAL; never more than once a second."""
    assert alive_period_for(30.0) == 10.0
    assert alive_period_for(2400.0) == 300.0
    assert alive_period_for(1.5) == 1.0


def test_claims_are_renewed_every_alive_period(queue, clock):
    """With a 30 s lease the startd hears from the schedd at 10 s and 20 s, one call each time."""
    schedd, execution, job = running(queue, clock)
    clock.pump([1] * 9)
    assert schedd.startd.named("alive") == []
    clock.pump([1] * 11)
    assert schedd.startd.named("alive") == [{"claim_ids": ["dyn-claim-1"]}] * 2
    execution.stopService()
    assert clock.getDelayedCalls() == [], "stopping leaves no keep-alive or lease timer"


def test_a_short_outage_writes_022_then_023_and_the_job_runs_on(queue, clock):
    """The startd is unreachable for 12 s of a 30 s lease: 022, the job stays Running, then 023."""
    schedd, execution, job = running(queue, clock)
    schedd.startd.failing.add("alive")
    clock.pump([1] * 10)
    assert schedd.events(job)[-1] == EventType.JOB_DISCONNECTED
    clock.pump([1] * 12)
    assert schedd.events(job).count(EventType.JOB_DISCONNECTED) == 1
    assert queue.get_job(job)["JobStatus"] == JobStatus.RUNNING
    schedd.startd.failing.discard("alive")
    clock.pump([1] * 2)
    assert schedd.events(job)[-1] == EventType.JOB_RECONNECTED
    update(execution, job, "exit", {"ExitCode": 0})
    assert schedd.events(job)[-1] == EventType.JOB_TERMINATED
    assert schedd.events(job).count(EventType.EXECUTE) == 1
    execution.stopService()


def test_a_report_from_the_starter_also_ends_the_outage(queue, clock):
    """While disconnected, a report that gets through reconnects the job (023)."""
    schedd, execution, job = running(queue, clock)
    schedd.startd.failing.add("alive")
    clock.pump([1] * 10)
    update(execution, job, "usage", {"ImageSize": 5})
    assert EventType.JOB_RECONNECTED in schedd.events(job)
    execution.stopService()


def test_an_outage_longer_than_the_lease_writes_024_and_requeues_the_job(queue, clock):
    """Unreachable past the 30 s lease: 022, then 024 and 004; the job is Idle, to run elsewhere."""
    schedd, execution, job = running(queue, clock)
    schedd.startd.failing.add("alive")
    clock.pump([1] * 31)
    events = schedd.events(job)
    assert events[-3:] == [EventType.JOB_DISCONNECTED, EventType.JOB_RECONNECT_FAILED, EventType.JOB_EVICTED]
    assert queue.get_job(job)["JobStatus"] == JobStatus.IDLE
    assert execution.shadows == {}
    execution.stopService()


def test_a_claim_the_startd_no_longer_holds_requeues_its_job_at_once(queue, clock):
    """ALIVE answers that the claim is unknown: the run is gone there, so the job goes back to Idle."""
    schedd, execution, job = running(queue, clock)
    schedd.startd.unknown.add(0)
    clock.pump([1] * 10)
    assert queue.get_job(job)["JobStatus"] == JobStatus.IDLE
    assert len(execution.claims) == 0
    execution.stopService()
