"""Late materialisation: a cluster submitted with max_materialize or max_idle is kept
as a job factory (its submit digest, not a row per proc) and makes procs as earlier
ones leave, by HTCondor's rules (qmgmt.cpp MaterializeJobs and
CheckMaterializePolicyExpression, qmgmt_factory.cpp MaterializeNextFactoryJob)."""

import time

import pytest

from jobmodel.errors import NotOwnerError
from jobmodel.states import ExitRecord, JobId, JobStatus, start
from schedd.intake import expand_description, owned_by
from schedd.queue import JobAction, JobQueue, JobSelection
from schedd.queue.factory import (
    FACTORY_ATTRIBUTES,
    FactoryDigest,
    FactoryState,
    MaterializeMode,
    procs_to_make,
)
from schedd.queue.factory_jobs import FactoryMakers, ProcMaker, factory_limits
from schedd.submit import SubmitError
from tests.schedd.conftest import START
from tests.schedd.test_service import call, schedd, submit  # noqa: F401 (fixtures)

DOMAIN = "pool.test"

SLEEPER = """executable = /bin/sleep
arguments = $(Process) $(Item) $(Step) $(ItemIndex)
output = out.$(Cluster).$(Process)
request_memory = 1G
{limits}
queue 2 in (red, green, blue)
"""


def submit_factory(queue: JobQueue, text: str, makers: FactoryMakers, owner: str = "alice") -> int:
    """What the schedd's submit route does with a factory description."""
    limits = factory_limits(text, "/tmp", {})
    assert limits is not None
    maker = ProcMaker(FactoryDigest(text, owner, "/tmp", START), queue.db.peek_cluster_id(), DOMAIN)
    cluster_id = queue.submit_factory(maker.cluster_ad(), FactoryDigest(text, owner, "/tmp", START).to_text(),
                                      maker.total, *limits)
    makers.add(maker)
    queue.materialize(makers)
    return cluster_id


def present(queue: JobQueue) -> list[int]:
    return [ad["ProcId"] for ad in queue.query(projection=["ProcId"])]


def finish(queue: JobQueue, proc: int, cluster: int = 1) -> None:
    queue.transition(JobId(cluster, proc), start, "<10.0.0.2:9618>", slot_name="slot1@ep")
    queue.job_exited(JobId(cluster, proc), ExitRecord(exit_code=0))


@pytest.fixture
def makers():
    return FactoryMakers(DOMAIN)


def test_limits_follow_materialize_jobs():
    """MaterializeJobs: at most JobMaterializeLimit procs present (none when not
    positive); CheckMaterializePolicyExpression: fewer than JobMaterializeMaxIdle idle
    or held; never past TotalSubmitProcs; a paused or finished factory makes none."""
    state = FactoryState(total_procs=20, next_proc_id=5, limit=3)
    assert procs_to_make(state, present=1, not_running=1) == 2
    assert procs_to_make(state, present=3, not_running=0) == 0
    assert procs_to_make(FactoryState(20, 5, limit=0), 7, 7) == 15
    assert procs_to_make(FactoryState(20, 5, max_idle=4), present=10, not_running=1) == 3
    assert procs_to_make(FactoryState(20, 18, limit=100), 0, 0) == 2
    for mode in (MaterializeMode.HOLD, MaterializeMode.NO_MORE_ITEMS, MaterializeMode.CLUSTER_REMOVED):
        assert procs_to_make(FactoryState(20, 5, mode=mode, limit=3), 0, 0) == 0


def test_a_million_procs_are_stored_as_a_factory(queue, makers):
    """A queue 1000000 cluster with max_materialize = 3 stores its digest and three job
    rows; its cluster ad carries TotalSubmitProcs, JobMaterializeLimit,
    JobMaterializeNextProcId and JobMaterializePaused (0, running)."""
    text = "executable = /bin/true\nmax_materialize = 3\nqueue 1000000\n"
    cluster_id = submit_factory(queue, text, makers)
    assert present(queue) == [0, 1, 2]
    assert queue.db.count_jobs() == 3
    ad = queue.cluster_ad(cluster_id)
    assert (ad["TotalSubmitProcs"], ad["JobMaterializeLimit"], ad["JobMaterializeNextProcId"],
            ad["JobMaterializePaused"]) == (1000000, 3, 3, 0)
    assert "JobMaterializeMaxIdle" not in ad


def test_each_proc_is_the_job_a_plain_submit_makes(tmp_path, clock, makers):
    """MaterializeNextFactoryJob makes job N with the same $(Process), $(Step), $(Item)
    and $(ItemIndex) as a plain submit: every attribute but the factory's own is equal."""
    (tmp_path / "plain").mkdir()
    plain = JobQueue(tmp_path / "plain", clock)
    late = JobQueue(tmp_path, clock)
    text = SLEEPER.format(limits="")
    cluster = expand_description(text, cluster_id=1, owner="alice", iwd="/tmp", now=START, environ={})
    cluster = owned_by(cluster, "alice", DOMAIN)
    plain.submit_cluster(cluster.cluster_ad, cluster.proc_ads)
    submit_factory(late, SLEEPER.format(limits="max_materialize = 100"), makers)
    expected = list(plain.query())
    made = list(late.query())
    assert len(made) == len(expected) == 6
    for want, got in zip(expected, made):
        got_attrs = {name: str(got.expression(name)) for name in got if name not in FACTORY_ATTRIBUTES}
        assert got_attrs == {name: str(want.expression(name)) for name in want}
    assert made[5]["Args"] == "5 blue 1 2"
    plain.close()
    late.close()


def test_procs_are_made_as_earlier_ones_leave(queue, makers):
    """At most max_materialize procs exist; a completed one is replaced by the next id,
    and once the last proc left, the factory's cluster goes too."""
    submit_factory(queue, "executable = /bin/true\nmax_materialize = 2\nqueue 5\n", makers)
    assert present(queue) == [0, 1]
    finish(queue, 0)
    queue.materialize(makers)
    assert present(queue) == [1, 2]
    for proc in (1, 2, 3):
        finish(queue, proc)
        queue.materialize(makers)
        assert len(present(queue)) <= 2
    assert queue.cluster_ad(1)["JobMaterializePaused"] == MaterializeMode.NO_MORE_ITEMS
    finish(queue, 4)
    assert present(queue) == [] and queue.db.cluster_ids() == []


def test_max_idle_counts_idle_and_held_procs_only(queue, makers):
    """max_idle alone: no limit on procs present, but fewer than max_idle idle or held
    (a running proc makes room for another)."""
    cluster_id = submit_factory(queue, "executable = /bin/true\nmax_idle = 2\nqueue 10\n", makers)
    assert present(queue) == [0, 1]
    assert queue.cluster_ad(cluster_id)["JobMaterializeMaxIdle"] == 2
    assert "JobMaterializeLimit" not in queue.cluster_ad(cluster_id)
    queue.transition(JobId(1, 0), start, "<10.0.0.2:9618>", slot_name="slot1@ep")
    queue.act(JobAction.Hold, JobSelection.from_spec("1.1"))
    queue.materialize(makers)
    assert present(queue) == [0, 1, 2]


def test_removing_the_cluster_stops_its_factory(queue, makers):
    """condor_rm of the cluster: its procs are removed and the factory makes no more
    (JobMaterializePaused = 3, mmClusterRemoved); the cluster goes with its last proc."""
    submit_factory(queue, "executable = /bin/true\nmax_materialize = 3\nqueue 20\n", makers)
    result = queue.act(JobAction.Remove, JobSelection.from_spec(["1"]), actor="alice")
    assert len(result.transitions) == 3
    assert queue.materialize(makers) == []
    assert present(queue) == [] and queue.db.cluster_ids() == []


def test_only_the_owner_stops_a_factory(queue, makers):
    """Another user naming the cluster changes nothing."""
    submit_factory(queue, "executable = /bin/true\nmax_materialize = 3\nqueue 20\n", makers)
    with pytest.raises(NotOwnerError):
        queue.act(JobAction.Remove, JobSelection.from_spec(["1"]), actor="mallory")
    assert queue.cluster_ad(1)["JobMaterializePaused"] == 0


def test_a_restarted_schedd_resumes_the_factory(tmp_path, clock, makers):
    """The digest and JobMaterializeNextProcId are in the queue file: a new schedd
    (with no maker in memory) goes on from the next proc id."""
    first = JobQueue(tmp_path, clock)
    submit_factory(first, "executable = /bin/true\narguments = $(Process)\nmax_materialize = 2\nqueue 6\n",
                   makers)
    finish(first, 0)
    first.close()
    again = JobQueue(tmp_path, clock)
    assert [job.proc for job in again.materialize(FactoryMakers(DOMAIN))] == [2]
    assert again.get_job(JobId(1, 2))["Args"] == "2"
    again.close()


def test_factory_commands_are_read_as_condor_submit_reads_them():
    """max_materialize wins; max_idle or materialize_max_idle alone make a factory
    with no limit on procs present; a value that is not an integer is refused, and so
    is a factory description with two queue statements."""
    assert factory_limits("executable = x\nqueue 3\n", "/tmp", {}) is None
    assert factory_limits("executable = x\nmax_materialize = 2*5\nmax_idle = 4\nqueue 3\n", "/tmp", {}) == (10, 4)
    assert factory_limits("executable = x\nmaterialize_max_idle = 7\nqueue 3\n", "/tmp", {}) == (None, 7)
    with pytest.raises(SubmitError, match="max_materialize takes a count"):
        factory_limits("executable = x\nmax_materialize = lots\nqueue 3\n", "/tmp", {})
    with pytest.raises(SubmitError, match="one queue statement"):
        factory_limits("executable = x\nmax_materialize = 2\nqueue 3\nqueue 2\n", "/tmp", {})


def test_a_proc_that_cannot_be_made_pauses_the_factory(queue, makers):
    """A job ad that cannot be built holds the factory (JobMaterializePaused = 1) with
    the reason, as MaterializeNextFactoryJob does; the procs already made stay."""
    text = "executable = /bin/true\nrequirements = $(Item)\nmax_materialize = 5\nqueue from (\ntrue\ntrue\n(((\n)\n"
    cluster_id = submit_factory(queue, text, makers)
    ad = queue.cluster_ad(cluster_id)
    assert present(queue) == [0, 1]
    assert ad["JobMaterializePaused"] == MaterializeMode.HOLD
    assert "failed to make job 1.2" in ad["JobMaterializePauseReason"]
    assert queue.get_job(JobId(1, 0))["JobStatus"] == JobStatus.IDLE


def test_the_submit_route_stores_a_million_procs_as_a_factory(call, tmp_path):
    """Through the schedd's submit route: queue 1000000 with max_materialize = 3 answers
    num_procs 1000000 (TotalSubmitProcs) in a few seconds, and three procs are queued."""
    started = time.monotonic()
    response = submit(call, tmp_path, "executable = /bin/true\nmax_materialize = 3\nqueue 1000000\n")
    assert response.status == 200, response.json()
    assert time.monotonic() - started < 5.0
    answer = response.json()
    assert (answer["cluster"], answer["num_procs"]) == (1, 1000000)
    assert answer["cluster_ad"]["TotalSubmitProcs"] == 1000000
    ads = call("/v1/jobs/query", {"projection": ["ProcId"]}).lines()
    assert ads == [{"ProcId": p} for p in range(3)]


def test_the_submit_route_refuses_a_bad_factory_description(call, tmp_path):
    """A max_materialize that is not a count is a 400 naming its line; nothing is stored."""
    response = submit(call, tmp_path, "executable = /bin/true\nmax_materialize = some\nqueue 10\n")
    assert response.status == 400
    assert "line 2" in response.json()["message"] and "max_materialize" in response.json()["message"]
    assert call("/v1/jobs/query", {}).lines() == []


def test_one_pass_makes_a_bounded_number_of_procs(queue, makers):
    """A factory allowed 500 procs makes them over passes of at most 200, so no pass
    holds the schedd for long; the next pass goes on from JobMaterializeNextProcId."""
    submit_factory(queue, "executable = /bin/true\nmax_materialize = 500\nqueue 1000\n", makers)
    assert len(queue) == 200
    assert len(queue.materialize(makers)) == 200
    assert len(queue.materialize(makers)) == 100
    assert queue.materialize(makers) == [] and len(queue) == 500
