"""The schedd's -spool routes (schedd.spooling) on a real queue and a stand-in service:
inputs into the job's spool directory then the job rewritten and idle (qmgmt.cpp
rewriteSpooledJobAd, StageInStart/StageInFinish), outputs back to condor_transfer_data
(StageOutStart/StageOutFinish), and every refusal changing nothing."""

import io
import tarfile
from types import SimpleNamespace

import pytest

from daemoncore.security import AuthorizationLevel
from daemoncore.security.accounts import current_account
from daemoncore.security.tokens import Identity
from daemoncore.wire import schedd_routes
from daemoncore.wire.errors import BadRequest, Conflict, Forbidden
from daemoncore.wire.server import ApiRequest
from jobmodel.states import JobId, JobStatus, Transition
from schedd.intake import ClusterToStore
from schedd.spooling import Spooling, held_for_input
from shadow.shadow import maybe_call
from tests.schedd.conftest import cluster_ad, proc_ads
from tests.support.deferreds import resolved
from transfer.archive import PackStream
from transfer.resolve import PackItem
from transfer.spooled_job import spool_directory

#: The owner of the test's jobs: this process's own account, whose rights the schedd takes for them.
OWNER = current_account().name


def identity(user=OWNER, level=AuthorizationLevel.WRITE):
    return Identity(user, "pool", frozenset({level}))


def call(route, job_id, body=b"", who=None):
    return ApiRequest(route, {"job_id": str(job_id)}, {}, body, identity=who or identity(), headers={})


@pytest.fixture
def service(queue, clock, tmp_path):
    recorded = []
    return SimpleNamespace(queue=queue, clock=clock, schedd_settings=SimpleNamespace(spool=str(tmp_path / "spool")),
                           record=recorded.append, recorded=recorded)


@pytest.fixture
def spooling(service):
    return Spooling(service, run_blocking=maybe_call)


def submit_spooled(queue, iwd):
    cluster = held_for_input(ClusterToStore(cluster_ad(OWNER, Iwd=str(iwd), Cmd=f"{iwd}/job.sh",
                                                       TransferInput="data.txt"), tuple(proc_ads(1))))
    return JobId(queue.submit_cluster(cluster.cluster_ad, cluster.proc_ads), 0)


def input_tar(tmp_path):
    for name, text in (("job.sh", "#!/bin/sh\n"), ("data.txt", "in\n")):
        (tmp_path / name).write_text(text)
    items = [PackItem(str(tmp_path / "job.sh"), "job.sh"), PackItem(str(tmp_path / "data.txt"), "data.txt")]
    return b"".join(PackStream(items))


def test_spooled_input_lands_in_the_spool_and_the_job_goes_idle(spooling, service, tmp_path):
    """The tar is unpacked into the job's spool directory; the job is rewritten to run there
    (SUBMIT_Iwd, plain names) and leaves the hold with StageInStart/StageInFinish."""
    job = submit_spooled(service.queue, tmp_path)
    assert service.queue.get_job(job)["HoldReasonCode"] == 16
    answer = resolved(spooling.spool_input(call(schedd_routes.SPOOL_INPUT, job, input_tar(tmp_path))))
    assert answer.body == {"job": str(job), "files": 2}
    directory = spool_directory(service.schedd_settings.spool, job.cluster, job.proc)
    assert open(f"{directory}/data.txt").read() == "in\n"
    ad = service.queue.get_job(job)
    assert ad["JobStatus"] == int(JobStatus.IDLE) and "HoldReason" not in ad
    assert ad["Iwd"] == directory and ad["SUBMIT_Iwd"] == str(tmp_path) and ad["Cmd"] == "job.sh"
    assert ad["StageInFinish"] >= ad["StageInStart"]


def test_spooling_is_refused_for_others_jobs_and_jobs_not_waiting(spooling, service, tmp_path):
    """Another user gets 403, a job not held for spooling 409; neither changes the job."""
    job = submit_spooled(service.queue, tmp_path)
    with pytest.raises(Forbidden, match=f"belongs to {OWNER}"):
        spooling.spool_input(call(schedd_routes.SPOOL_INPUT, job, input_tar(tmp_path), identity("bob")))
    plain = JobId(service.queue.submit_cluster(cluster_ad(OWNER), proc_ads(1)), 0)
    with pytest.raises(Conflict, match="not waiting for spooled input"):
        spooling.spool_input(call(schedd_routes.SPOOL_INPUT, plain, input_tar(tmp_path)))
    assert service.queue.get_job(job)["HoldReasonCode"] == 16


def test_a_damaged_input_tar_is_refused_and_the_job_stays_held(spooling, service, tmp_path):
    """A body that is not a tar stream is a 400; the job waits on, its spool directory gone."""
    job = submit_spooled(service.queue, tmp_path)
    with pytest.raises(BadRequest, match="spooled input was refused"):
        resolved(spooling.spool_input(call(schedd_routes.SPOOL_INPUT, job, b"not a tar" * 100)))
    assert service.queue.get_job(job)["HoldReasonCode"] == 16
    directory = spool_directory(service.schedd_settings.spool, job.cluster, job.proc)
    assert not (tmp_path / directory).exists()


def complete(queue, job):
    def done(ad, clock):
        return Transition(job, {"JobStatus": int(JobStatus.COMPLETED), "CompletionDate": 0})
    queue.transition(job, done)


def test_outputs_are_fetched_once_the_job_completed_without_its_inputs(spooling, service, tmp_path):
    """condor_transfer_data: 409 before completion; then the spool's outputs (not the spooled
    inputs) as a tar, and StageOutStart/StageOutFinish recorded."""
    job = submit_spooled(service.queue, tmp_path)
    resolved(spooling.spool_input(call(schedd_routes.SPOOL_INPUT, job, input_tar(tmp_path))))
    with pytest.raises(Conflict, match="has not completed"):
        spooling.spool_output(call(schedd_routes.SPOOL_OUTPUT, job))
    directory = spool_directory(service.schedd_settings.spool, job.cluster, job.proc)
    with open(f"{directory}/result.txt", "w") as handle:
        handle.write("out\n")
    complete(service.queue, job)
    reply = resolved(spooling.spool_output(call(schedd_routes.SPOOL_OUTPUT, job)))
    names = tarfile.open(fileobj=io.BytesIO(reply.body)).getnames()
    assert names == ["result.txt"]
    assert service.queue.get_job(job)["StageOutFinish"] >= 0


def test_a_job_not_spooled_has_nothing_to_fetch(spooling, service):
    """A job submitted without -spool gets a 409 naming -spool."""
    plain = JobId(service.queue.submit_cluster(cluster_ad(OWNER), proc_ads(1)), 0)
    with pytest.raises(Conflict, match="-spool"):
        spooling.spool_output(call(schedd_routes.SPOOL_OUTPUT, plain))
