"""A root schedd writes a job's event log (``log =``) with the job owner's rights: a
log where the owner may not write is reported and left alone, never written as root,
and the job goes on; a log the owner may write is written and belongs to the owner.

These run as root with a real local account made for the module (``useradd``)."""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

import pytest
from twisted.logger import formatEvent, globalLogPublisher

from jobmodel.states import JobId, JobStatus
from schedd.service import ScheddService, ScheddSettings
from tests.schedd.conftest import cluster_ad, proc_ads
from tests.shadow.test_owner_rights import owner  # noqa: F401 (fixture)
from tests.support.daemon_settings import daemon_settings

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None,
                                reason="acting as a job's owner needs root and useradd to make one")


@pytest.fixture
def schedd(tmp_path, reactor):
    settings = daemon_settings(tmp_path, "SCHEDD", "Scheduler", max_body=1 << 24)
    service = ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool")),
                            key=b"k" * 32, with_execution=False)
    yield service
    service.queue.close()


@pytest.fixture
def warnings():
    """The text of every message logged while the test runs."""
    seen: list[str] = []

    def observe(event):
        seen.append(formatEvent(event))
    globalLogPublisher.addObserver(observe)
    yield seen
    globalLogPublisher.removeObserver(observe)


@pytest.fixture
def area(owner):
    """Under /tmp: the owner's directory ``home`` and root's ``victim`` (0755, with a
    root-owned 0644 file ``x`` in it)."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="roost-eventlog-"))
    base.chmod(0o755)
    (base / "home").mkdir()
    os.chown(base / "home", owner.uid, owner.gid)
    (base / "victim").mkdir()
    (base / "victim" / "x").write_text("root's file\n")
    yield base
    shutil.rmtree(base, ignore_errors=True)


def submit_with_log(schedd, who: str, iwd: pathlib.Path, log: str) -> JobId:
    cluster = schedd.queue.submit_cluster(cluster_ad(who, Iwd=str(iwd), UserLog=log), proc_ads(1))
    schedd.submitted(cluster, 1)
    return JobId(cluster, 0)


def test_a_log_the_owner_cannot_write_is_reported_and_left_alone(schedd, owner, area, warnings):
    """``log = /victim/x`` (root's file) and a new log in root's directory: neither is
    touched, each is reported with the path and the reason, and the job stays queued."""
    victim = area / "victim"
    existing = submit_with_log(schedd, owner.name, area / "home", str(victim / "x"))
    submit_with_log(schedd, owner.name, area / "home", str(victim / "new.log"))
    assert (victim / "x").read_text() == "root's file\n"
    assert sorted(os.listdir(victim)) == ["x"]
    assert any(f"cannot open event log {victim / 'x'}: Permission denied" in text for text in warnings)
    assert any(f"cannot open event log {victim / 'new.log'}: Permission denied" in text for text in warnings)
    assert schedd.queue.get_job(existing)["JobStatus"] == JobStatus.IDLE


def test_the_log_is_written_as_the_owner(schedd, owner, area):
    job = submit_with_log(schedd, owner.name, area / "home", "job.log")
    log = area / "home" / "job.log"
    assert log.read_text().startswith(f"000 ({job.cluster:03d}.000.000)")
    assert os.stat(log).st_uid == owner.uid


def test_no_log_is_written_for_an_owner_with_no_account(schedd, area, warnings):
    """Even where root could write, an owner unknown here gets no log written for them."""
    (area / "open").mkdir()
    (area / "open").chmod(0o777)
    submit_with_log(schedd, "nosuchuser_roost", area / "open", "job.log")
    assert not (area / "open" / "job.log").exists()
    assert any("as its owner, nosuchuser_roost, who has no account on this host" in text for text in warnings)


def test_roots_jobs_log_as_root(schedd, area):
    submit_with_log(schedd, "root", area / "victim", "root.log")
    assert os.stat(area / "victim" / "root.log").st_uid == 0
