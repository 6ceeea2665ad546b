"""A job factory's cluster events in its event log (schedd.factory_events), as HTCondor's
schedd writes them (schedd.cpp WriteClusterSubmitToUserLog, WriteClusterRemoveToUserLog,
WriteFactoryPauseToUserLog; condor_event.cpp for the events): 035 before the procs'
000s, 037 when the factory pauses, 036 once the cluster ad goes. Through the schedd's
routes in memory, a real queue file and real log files, read back with bindings.eventlog."""

from bindings.eventlog import JobEventLog, JobEventType
from jobmodel.eventlog import COMPLETION_COMPLETE, COMPLETION_INCOMPLETE, COMPLETION_PAUSED
from jobmodel.states import ExitRecord, JobId, start
from schedd.factory_events import FactoryWatch, completion, pause_events, rows_begun
from schedd.queue import JobAction, JobSelection
from schedd.queue.factory import MaterializeMode
from schedd.service import ScheddService, ScheddSettings
from tests.schedd.test_service import KEY, call, schedd, submit  # noqa: F401 (fixtures)
from tests.support.daemon_settings import daemon_settings


def events(tmp_path) -> list:
    return list(JobEventLog(str(tmp_path / "job.log")).events(stop_after=0))


def finish(queue, proc: int, cluster: int = 1) -> None:
    """Run and complete one proc (it leaves the queue: no LeaveJobInQueue)."""
    queue.transition(JobId(cluster, proc), start, "<10.0.0.2:9618>", slot_name="slot1@ep")
    queue.job_exited(JobId(cluster, proc), ExitRecord(exit_code=0))


FACTORY = "executable = /bin/true\nlog = job.log\nmax_materialize = 2\nqueue 3\n"


def test_rows_completion_and_pause_rules():
    """NextRow counts the item rows begun; Completion is Complete out of items, Paused when
    held, else Incomplete; 037 on running -> held, 038 on held -> running, nothing else."""
    assert (rows_begun(0, 3), rows_begun(1, 3), rows_begun(3, 3), rows_begun(4, 3), rows_begun(5, 1)) == (0, 1, 1, 2, 5)
    assert completion(MaterializeMode.NO_MORE_ITEMS) == COMPLETION_COMPLETE
    assert completion(MaterializeMode.HOLD) == COMPLETION_PAUSED
    assert completion(MaterializeMode.CLUSTER_REMOVED) == completion(MaterializeMode.RUNNING) == COMPLETION_INCOMPLETE
    running, held = FactoryWatch(None), FactoryWatch(None, mode=MaterializeMode.HOLD, reason="bad item")
    [paused] = pause_events(4, running, held, 100)
    assert (paused.type, paused.cluster, paused.proc, paused.subproc) == (JobEventType.FACTORY_PAUSED, 4, -1, -1)
    assert paused.attributes == {"PauseCode": 1, "Reason": "bad item"}
    assert [e.type for e in pause_events(4, held, running, 100)] == [JobEventType.FACTORY_RESUMED]
    assert pause_events(4, running, FactoryWatch(None, mode=MaterializeMode.NO_MORE_ITEMS), 100) == []


def test_a_factory_cluster_logs_035_before_its_procs_and_036_when_done(schedd, call, tmp_path):
    """Submit: 035 (cluster.-1.-1, SubmitHost) then a 000 per materialised proc. Each proc
    that leaves lets the next be made; once the last of all three has left, the cluster
    ad goes and 036 says 3 jobs from 1 item row, complete."""
    assert submit(call, tmp_path, FACTORY, who="me").status == 200
    logged = events(tmp_path)
    assert [(e.type, e.cluster, e.proc) for e in logged] == [
        (JobEventType.CLUSTER_SUBMIT, 1, -1), (JobEventType.SUBMIT, 1, 0), (JobEventType.SUBMIT, 1, 1)]
    assert logged[0]["SubmitHost"] == f"<{schedd.address}>" and "Proc" not in logged[0]
    finish(schedd.queue, 0)
    schedd.materialize()
    finish(schedd.queue, 1)
    schedd.materialize()
    assert events(tmp_path)[-1].type == JobEventType.SUBMIT  # proc 2; the cluster is still there
    finish(schedd.queue, 2)
    schedd.materialize()
    logged = events(tmp_path)
    assert [e.type for e in logged].count(JobEventType.CLUSTER_REMOVE) == 1
    removed = logged[-1]
    assert (removed.type, removed.cluster, removed.proc) == (JobEventType.CLUSTER_REMOVE, 1, -1)
    assert (removed["NextProcId"], removed["NextRow"], removed["Completion"]) == (3, 1, COMPLETION_COMPLETE)
    schedd.materialize()
    assert len(events(tmp_path)) == len(logged)  # written once


def test_condor_rm_of_the_factory_logs_036_after_the_aborts(schedd, call, tmp_path):
    """condor_rm of the cluster stops the factory; after its procs' 009s, 036 says how far
    it got (2 of 3 made, from 1 row) and that it was cut short (Incomplete)."""
    submit(call, tmp_path, FACTORY, who="me")
    assert call("/v1/jobs/act", {"action": "Remove", "ids": ["1"]}, "me").json()["changed"] == 2
    schedd.materialize()  # what the next queue change does in a running schedd
    logged = events(tmp_path)
    assert [e.type for e in logged[-3:]] == [JobEventType.JOB_ABORTED, JobEventType.JOB_ABORTED,
                                              JobEventType.CLUSTER_REMOVE]
    assert (logged[-1]["NextProcId"], logged[-1]["NextRow"], logged[-1]["Completion"]) == (2, 1, COMPLETION_INCOMPLETE)


def test_a_factory_that_cannot_make_a_proc_logs_037_and_036_says_paused(schedd, call, tmp_path):
    """A proc whose ad cannot be built pauses the factory (JobMaterializePaused = 1): 037
    with the pause reason and PauseCode 1; removing the cluster then logs 036 Paused."""
    text = ("executable = /bin/true\nlog = job.log\nrequirements = $(Item)\nmax_materialize = 5\n"
            "queue from (\ntrue\ntrue\n(((\n)\n")
    assert submit(call, tmp_path, text, who="me").status == 200
    logged = events(tmp_path)
    assert [e.type for e in logged] == [JobEventType.CLUSTER_SUBMIT, JobEventType.SUBMIT, JobEventType.SUBMIT,
                                        JobEventType.FACTORY_PAUSED]
    assert logged[-1]["PauseCode"] == 1 and "failed to make job 1.2" in logged[-1]["Reason"]
    call("/v1/jobs/act", {"action": "Remove", "ids": ["1"]}, "me")
    schedd.materialize()
    removed = events(tmp_path)[-1]
    assert (removed.type, removed["NextProcId"], removed["Completion"]) == (
        JobEventType.CLUSTER_REMOVE, 2, COMPLETION_PAUSED)


def test_a_restarted_schedd_logs_036_without_a_second_035(schedd, call, tmp_path, reactor):
    """A schedd started on the queue of a running factory watches it again: no second 035,
    and 036 once the cluster is removed."""
    submit(call, tmp_path, FACTORY, who="me")
    schedd.queue.close()
    settings = daemon_settings(tmp_path, "SCHEDD", "Scheduler", max_body=1 << 24)
    again = ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool")), key=KEY,
                          with_execution=False)
    try:
        again.startService()
        reactor.advance(0)
        assert [e.type for e in events(tmp_path)].count(JobEventType.CLUSTER_SUBMIT) == 1
        list(again.queue.act_in_batches(JobAction.Remove, JobSelection(clusters=(1,)), "gone"))
        again.materialize()
        removed = events(tmp_path)[-1]
        assert (removed.type, removed["NextProcId"], removed["NextRow"]) == (JobEventType.CLUSTER_REMOVE, 2, 1)
    finally:
        again.stopService()
        schedd.queue = again.queue  # closed by the fixture
