"""The pure decisions of preempting a claim: the retirement time, the next step as time
passes on a task.Clock, how long a preempting claim waits, and which victims a claim may name."""

import re

import pytest
from twisted.internet.task import Clock

import classad
from daemoncore.config import Config, ConfigError
from startd import preemption
from startd.errors import ClaimError
from startd.preemption import Eviction, PreemptPolicy, Step, next_step
from startd.states import Activity, State

SLOT = classad.ClassAd({"Name": "slot1@node1", "Cpus": 4})


def test_retirement_is_the_smaller_of_the_startds_and_the_jobs():
    """MAXJOBRETIREMENTTIME bounds it; a job may only ask for less; neither means 0."""
    job = classad.ClassAd({"Owner": "alice"})
    assert preemption.retirement_limit(job, SLOT, PreemptPolicy()) == 0.0
    machine = PreemptPolicy(max_job_retirement_time="ifThenElse(TARGET.Owner == \"alice\", 300, 5)")
    assert preemption.retirement_limit(job, SLOT, machine) == 300.0
    assert preemption.retirement_limit(classad.ClassAd({"Owner": "bob"}), SLOT, machine) == 5.0
    asks_less = classad.ClassAd({"Owner": "alice", "MaxJobRetirementTime": 60})
    assert preemption.retirement_limit(asks_less, SLOT, machine) == 60.0
    asks_more = classad.ClassAd({"Owner": "alice", "MaxJobRetirementTime": 6000})
    assert preemption.retirement_limit(asks_more, SLOT, machine) == 300.0
    assert preemption.retirement_limit(asks_more, SLOT, PreemptPolicy()) == 0.0


def test_a_job_retires_then_is_vacated_as_the_clock_moves():
    """Busy -> Retiring while retirement lasts -> Vacating once it is used up; a vacating job
    waits unless KILL turns true; WANT_VACATE false kills instead of vacating."""
    clock = Clock()
    clock.advance(1000)
    eviction = Eviction("preempted", job_start=990.0, retirement=15.0)
    assert next_step(State.CLAIMED, Activity.BUSY, eviction, clock.seconds(), True, False) is Step.RETIRE
    assert next_step(State.CLAIMED, Activity.RETIRING, eviction, clock.seconds(), True, False) is Step.WAIT
    clock.advance(4.9)
    assert next_step(State.CLAIMED, Activity.RETIRING, eviction, clock.seconds(), True, False) is Step.WAIT
    clock.advance(0.1)
    assert next_step(State.CLAIMED, Activity.RETIRING, eviction, clock.seconds(), True, False) is Step.VACATE
    assert next_step(State.CLAIMED, Activity.RETIRING, eviction, clock.seconds(), False, False) is Step.KILL
    assert next_step(State.PREEMPTING, Activity.VACATING, eviction, clock.seconds(), True, False) is Step.WAIT
    assert next_step(State.PREEMPTING, Activity.VACATING, eviction, clock.seconds(), True, True) is Step.KILL
    assert next_step(State.PREEMPTING, Activity.KILLING, eviction, clock.seconds(), True, True) is Step.WAIT


def test_no_retirement_vacates_at_once_and_an_idle_claim_is_released():
    now = 50.0
    assert next_step(State.CLAIMED, Activity.BUSY, Eviction("x", 40.0, 0.0), now, True, False) is Step.VACATE
    assert next_step(State.CLAIMED, Activity.IDLE, Eviction("x", None, 0.0), now, True, False) is Step.RELEASE
    assert next_step(State.DRAINED, Activity.RETIRING, Eviction("x", 40.0, 60.0), now, True, False) is Step.WAIT


def test_ready_within_is_the_longest_retirement_left_plus_the_vacate_time():
    evictions = [Eviction("a", 100.0, 30.0), Eviction("b", 100.0, 5.0), Eviction("c", None, 0.0)]
    assert preemption.ready_within(evictions, 110.0, 10.0) == 30.0
    assert preemption.ready_within(evictions, 200.0, 10.0) == 10.0
    assert preemption.ready_within([Eviction("c", None, 0.0)], 200.0, 10.0) == 0.0


def test_victims_must_be_current_claims_of_the_target_or_its_dynamic_slots():
    """A foreign, unclaimed, unknown, repeated or already-taken ClaimId is refused, named by index and id."""
    claims = {"p1": ("slot1@n", None, False), "d1": ("slot1_1@n", "slot1@n", True),
              "d2": ("slot2_1@n", "slot2@n", True), "s3": ("slot3@n", None, True), "s4": ("slot4@n", None, False)}
    assert preemption.victims_of("slot1@n", False, ["d1"], claims, set()) == ["slot1_1@n"]
    assert preemption.victims_of("slot3@n", True, ["s3"], claims, set()) == ["slot3@n"]
    for target, static, victims, taken, wanted in [
            ("slot1@n", False, ["d1", "d2"], set(), "victims[1] (d2) is not a current claim of slot1@n"),
            ("slot1@n", False, ["nope"], set(), "victims[0] (nope)"),
            ("slot4@n", True, ["s4"], set(), "victims[0] (s4) is not a current claim of slot4@n"),
            ("slot3@n", True, ["s3", "s3"], set(), "victims[1] (s3) is already being preempted"),
            ("slot1@n", False, ["d1"], {"d1"}, "victims[0] (d1) is already being preempted")]:
        with pytest.raises(ClaimError, match=re.escape(wanted)):
            preemption.victims_of(target, static, victims, claims, taken)
    with pytest.raises(ClaimError, match="more than the 256"):
        preemption.victims_of("slot1@n", False, ["d1"] * 257, claims, set())


def test_policy_knobs_read_from_config_and_a_bad_one_names_itself():
    config = Config.from_text("MAXJOBRETIREMENTTIME = 5\nPREEMPT = TARGET.Owner == \"mallory\"\n"
                              "WANT_VACATE = false\n", env={})
    policy = PreemptPolicy.from_config(config, 10.0)
    assert (policy.max_job_retirement_time, policy.want_vacate, policy.kill, policy.vacate_time) == \
        ("5", "false", "false", 10.0)
    assert policy.holds("preempt", SLOT, classad.ClassAd({"Owner": "mallory"}))
    assert not policy.holds("preempt", SLOT, classad.ClassAd({"Owner": "alice"}))
    assert not policy.holds("want_vacate", SLOT, None)
    with pytest.raises(ConfigError, match="KILL = a \\+\\* \\("):
        PreemptPolicy.from_config(Config.from_text("KILL = a +* (\n", env={}), 10.0)


def test_kill_signal_is_the_jobs_killsig_else_sigterm():
    import signal
    for value, wanted in [("SIGUSR1", signal.SIGUSR1), ("usr2", signal.SIGUSR2), (10, 10), ("9", 9),
                          ("SIGNOPE", signal.SIGTERM), (None, signal.SIGTERM), (100000, signal.SIGTERM)]:
        job = classad.ClassAd({} if value is None else {"KillSig": value})
        assert preemption.kill_signal(job) == wanted
