"""roost q's batch line for a late-materialisation cluster (condor_q's batch mode,
docs/man-pages/condor_q.rst "Batches of jobs"): TOTAL counts every proc the factory
will make (TotalSubmitProcs), DONE the procs that already left the queue."""

import classad
from bindings.cli.q_tables import TABLE_ATTRIBUTES, batch_table


def proc(proc_id, status, **extra):
    return classad.ClassAd({"ClusterId": 7, "ProcId": proc_id, "Owner": "alice", "QDate": 0, "JobStatus": status,
                            **extra})


def test_a_factory_cluster_shows_its_total_and_the_procs_that_left():
    """20 procs, 3 present (1 running, 2 idle), next proc id 8: 5 done, total 20."""
    factory = {"TotalSubmitProcs": 20, "JobMaterializeNextProcId": 8}
    ads = [proc(5, 2, **factory), proc(6, 1, **factory), proc(7, 1, **factory)]
    [heading, line] = batch_table(ads)
    assert heading.split() == ["OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE", "TOTAL", "JOB_IDS"]
    assert line.split()[-5:] == ["5", "1", "2", "20", "7.5-7"]


def test_a_plain_cluster_counts_its_present_procs():
    """Without the factory attributes TOTAL is the procs present, as before."""
    [_, line] = batch_table([proc(0, 4), proc(1, 1)])
    assert line.split()[-5:] == ["1", "_", "1", "2", "7.0-1"]


def test_the_query_asks_for_the_factory_attributes():
    assert {"TotalSubmitProcs", "JobMaterializeNextProcId"} <= set(TABLE_ATTRIBUTES)
