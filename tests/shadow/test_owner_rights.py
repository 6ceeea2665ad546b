"""A root schedd touches a job's files with its owner's rights, never its own: outputs,
remaps, ``output_destination`` and the event log land only where the owner may write
(owned by the owner's uid), and inputs are read only where the owner may read; an
owner with no account on this host gets no file work at all.

These run as root with a real local account made for the module (``useradd``)."""

from __future__ import annotations

import os
import pathlib
import secrets
import shutil
import subprocess
import tempfile

import pytest

import classad
from daemoncore.security.accounts import local_account
from daemoncore.wire.errors import Conflict
from jobmodel.states import JobId, JobStatus
from shadow import Shadow
from shadow.owner_rights import INPUT, NoOwnerAccountError, as_owner, owner_account
from tests.shadow.test_shadow import clock, host, output_of, queue, resolved, shadow_for  # noqa: F401 (fixtures)
from transfer import input_plan, receive_input
from transfer.errors import TRANSFER_INPUT_FAILED, TRANSFER_OUTPUT_FAILED, TransferError

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None,
                                reason="acting as a job's owner needs root and useradd to make one")

KEY_TEXT = "-----POOL SIGNING KEY-----\n"


@pytest.fixture(scope="module")
def owner():
    """A real local account (no home) for the module, removed afterwards."""
    name = f"roosttest_{secrets.token_hex(3)}"
    subprocess.run(["useradd", "--system", "--no-create-home", name], check=True)
    try:
        yield local_account(name)
    finally:
        subprocess.run(["userdel", name], check=False)


@pytest.fixture
def area(owner):
    """Under /tmp (pytest's own directories are root's, 0700): the owner's submit
    directory ``home``, a directory only root may enter ``locked``, and ``pool.key``,
    a root-only (0600) copy of a signing key beside them."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="roost-owner-"))
    base.chmod(0o755)
    home, locked = base / "home", base / "locked"
    home.mkdir()
    locked.mkdir(mode=0o700)
    (home / "job.sh").write_text("#!/bin/sh\necho done\n")
    (home / "in.dat").write_text("input\n")
    for path in (home, home / "job.sh", home / "in.dat"):
        os.chown(path, owner.uid, owner.gid)
    (base / "pool.key").write_text(KEY_TEXT)
    (base / "pool.key").chmod(0o600)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def submit_as(queue, who: str, home: pathlib.Path, **extra) -> JobId:
    ad = classad.ClassAd({"Owner": who, "Cmd": str(home / "job.sh"), "Iwd": str(home),
                          "TransferInput": "in.dat", "RequestMemory": 64, **extra})
    return JobId(queue.submit_cluster(ad, [classad.ClassAd()]), 0)


def held(queue, job: JobId) -> tuple[int, str]:
    ad = queue.get_job(job)
    assert ad["JobStatus"] == JobStatus.HELD
    return ad["HoldReasonCode"], ad["HoldReason"]


def send_back(host, queue, job: JobId, tmp_path, staging_root: str | None = None, **files: str):
    """The starter's side: a sandbox holding ``files``, packed as the job's output and
    handed to the job's shadow (staging outputs bound for URLs under ``staging_root``)."""
    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    for name, text in files.items():
        (sandbox / name).write_text(text)
    shadow = Shadow(host, job, "claim-xyz", "<127.0.0.1:9700>", "slot1_1@node1", "the-key", 600.0,
                    staging_root=staging_root)
    shadow.update("execute", {})
    return resolved(shadow.receive_output(output_of(queue.get_job(job), sandbox)))


# --- the rule -----------------------------------------------------------------------

def test_an_owner_with_no_local_account_is_refused_naming_job_and_owner():
    """A root schedd does no file work for an Owner this host has no account for."""
    with pytest.raises(NoOwnerAccountError) as caught:
        owner_account("nosuchuser_roost", "12.0", INPUT)
    assert str(caught.value) == ("the schedd reads job 12.0's input as its owner, nosuchuser_roost, "
                                 "who has no account on this host")
    assert caught.value.hold_code == TRANSFER_INPUT_FAILED


def test_the_owner_and_root_are_their_own_accounts(owner):
    """The Owner's own local account; root's jobs as root."""
    assert owner_account(owner.name, "1.0", INPUT) == owner
    assert owner_account("root", "1.0", INPUT).uid == 0


# --- outputs ------------------------------------------------------------------------

@pytest.mark.parametrize("stream", ["Out", "Err"])
def test_output_into_a_root_only_directory_holds_the_job_naming_the_path(host, queue, area, owner, tmp_path,
                                                                         stream):
    """``output = /locked/x`` (or ``error``): held with code 12, the path and the reason; nothing written."""
    target = area / "locked" / "x"
    job = submit_as(queue, owner.name, area / "home", **{stream: str(target)})
    sandbox_name = "_condor_stdout" if stream == "Out" else "_condor_stderr"
    with pytest.raises(Conflict, match="held"):
        send_back(host, queue, job, tmp_path, **{sandbox_name: "stolen\n"})
    code, reason = held(queue, job)
    assert code == TRANSFER_OUTPUT_FAILED
    assert repr(str(target)) in reason and "Permission denied" in reason
    assert os.listdir(area / "locked") == []


def test_remap_to_a_root_only_path_holds_the_job(host, queue, area, owner, tmp_path):
    """``transfer_output_remaps = "out = /locked/x"`` is refused as the owner would be."""
    target = area / "locked" / "x"
    job = submit_as(queue, owner.name, area / "home", TransferOutput="out",
                    TransferOutputRemaps=f"out = {target}")
    with pytest.raises(Conflict, match="held"):
        send_back(host, queue, job, tmp_path, out="stolen\n")
    code, reason = held(queue, job)
    assert code == TRANSFER_OUTPUT_FAILED and str(target) in reason
    assert os.listdir(area / "locked") == []


def test_output_destination_file_url_into_a_root_only_directory_holds_the_job(host, queue, area, owner, tmp_path):
    """``output_destination = file:///locked/`` is refused; the staging directory is gone."""
    job = submit_as(queue, owner.name, area / "home", TransferOutput="out",
                    OutputDestination=f"file://{area / 'locked'}/")
    with pytest.raises(Conflict, match="held"):
        send_back(host, queue, job, tmp_path, out="stolen\n")
    code, reason = held(queue, job)
    assert code == TRANSFER_OUTPUT_FAILED and str(area / "locked" / "out") in reason
    assert os.listdir(area / "locked") == []
    assert not [name for name in os.listdir(tempfile.gettempdir()) if name.startswith(f"output-{job}-")]


@pytest.mark.parametrize("spool_mode", [0o755, 0o700])
def test_outputs_land_owned_by_the_owner(host, queue, area, owner, tmp_path, spool_mode):
    """stdout, a remap into a new directory and a file:// destination: all the owner's,
    whether or not the owner can reach the spool (a root pool's is 0700)."""
    home = area / "home"
    (home / "dest").mkdir()
    os.chown(home / "dest", owner.uid, owner.gid)
    job = submit_as(queue, owner.name, home, Out=str(home / "job.out"), TransferOutput="out,copy",
                    TransferOutputRemaps=f"out = made/final.txt; copy = file://{home / 'dest'}/copy")
    spool = area / "spool"  # the schedd's own, where outputs bound for URLs are staged
    spool.mkdir(mode=spool_mode)
    answer = send_back(host, queue, job, tmp_path, str(spool), _condor_stdout="hello\n", out="result\n",
                       copy="again\n")
    assert answer["files"] == 3
    assert os.listdir(spool) == [] and os.stat(spool).st_uid == 0
    assert not [name for name in os.listdir(tempfile.gettempdir()) if name.startswith(f"output-{job}-")]
    for path in (home / "job.out", home / "made", home / "made" / "final.txt", home / "dest" / "copy"):
        assert os.stat(path).st_uid == owner.uid, path
    assert (home / "made" / "final.txt").read_text() == "result\n"
    assert queue.get_job(job)["JobStatus"] == JobStatus.RUNNING


def test_output_of_an_owner_with_no_account_holds_the_job_and_writes_nothing(host, queue, area, tmp_path):
    job = submit_as(queue, "nosuchuser_roost", area / "home", TransferOutput="out")
    with pytest.raises(Conflict, match="held"):
        send_back(host, queue, job, tmp_path, out="result\n")
    code, reason = held(queue, job)
    assert code == TRANSFER_OUTPUT_FAILED
    assert reason == (f"the schedd writes job {job}'s output as its owner, nosuchuser_roost, "
                      "who has no account on this host")
    assert not (area / "home" / "out").exists()


# --- inputs -------------------------------------------------------------------------

def input_hold(host, queue, job: JobId) -> tuple[int, str]:
    with pytest.raises(Conflict, match="held"):
        resolved(shadow_for(host, job).input_reply())
    return held(queue, job)


@pytest.mark.parametrize("entry", ["absolute", "../pool.key"])
def test_a_root_only_input_is_refused_with_code_13_naming_it(host, queue, area, owner, entry):
    """The pool's key, named by absolute path or by climbing out of Iwd, is never sent."""
    name = str(area / "pool.key") if entry == "absolute" else entry
    job = submit_as(queue, owner.name, area / "home", TransferInput=f"in.dat,{name}")
    code, reason = input_hold(host, queue, job)
    assert code == TRANSFER_INPUT_FAILED
    assert repr(str(area / "pool.key")) in reason and "Permission denied" in reason


def test_a_symlink_to_a_root_only_file_inside_an_input_directory_is_refused(host, queue, area, owner):
    data = area / "home" / "data"
    data.mkdir()
    (data / "fine.txt").write_text("ok\n")
    (data / "key").symlink_to(area / "pool.key")
    for path in (data, data / "fine.txt"):
        os.chown(path, owner.uid, owner.gid)
    os.lchown(data / "key", owner.uid, owner.gid)
    job = submit_as(queue, owner.name, area / "home", TransferInput="data")
    code, reason = input_hold(host, queue, job)
    assert code == TRANSFER_INPUT_FAILED
    assert repr(str(data / "key")) in reason and "Permission denied" in reason


def test_an_input_directory_the_owner_cannot_list_is_refused_not_skipped(host, queue, area, owner):
    data = area / "home" / "data"
    (data / "private").mkdir(parents=True)
    os.chown(data, owner.uid, owner.gid)
    (data / "private").chmod(0o700)  # root's
    job = submit_as(queue, owner.name, area / "home", TransferInput="data")
    code, reason = input_hold(host, queue, job)
    assert code == TRANSFER_INPUT_FAILED and str(data / "private") in reason


def test_inputs_only_the_owner_may_read_are_sent(host, queue, area, owner):
    """A 0600 input of the owner's is read with the owner's rights and sent whole."""
    (area / "home" / "in.dat").chmod(0o600)
    job = submit_as(queue, owner.name, area / "home")
    reply = resolved(shadow_for(host, job).input_reply())
    assert b"input\n" in b"".join(reply.items)
    assert queue.get_job(job)["JobStatus"] == JobStatus.IDLE


def test_input_of_an_owner_with_no_account_is_refused_unless_it_has_none(host, queue, area):
    """Files to send: held with the reason. Nothing to send: nothing to refuse."""
    job = submit_as(queue, "nosuchuser_roost", area / "home")
    code, reason = input_hold(host, queue, job)
    assert code == TRANSFER_INPUT_FAILED and "nosuchuser_roost, who has no account on this host" in reason
    bare = JobId(queue.submit_cluster(classad.ClassAd({"Owner": "nosuchuser_roost", "Cmd": "/bin/true",
                                                       "TransferExecutable": False, "Iwd": str(area)}),
                                      [classad.ClassAd()]), 0)
    reply = resolved(shadow_for(host, bare).input_reply())
    assert len(b"".join(reply.items)) == 1024  # the tar's two end blocks only


def test_a_file_url_input_is_read_with_the_readers_rights(area, owner, tmp_path):
    """``file://`` inputs are fetched by whoever receives the input (the starter, as the
    job's account): acting as the owner, the pool's key is refused with code 13."""
    ad = classad.ClassAd({"Owner": owner.name, "ClusterId": 7, "ProcId": 0, "Iwd": str(area / "home"),
                          "TransferInput": f"file://{area / 'pool.key'}"})
    sandbox = area / "sandbox"
    sandbox.mkdir()
    os.chown(sandbox, owner.uid, owner.gid)
    from transfer.archive import stream_of
    with pytest.raises(TransferError) as caught:
        as_owner(owner, receive_input, stream_of([b"\0" * 1024]), str(sandbox), input_plan(ad))
    assert caught.value.hold_code == TRANSFER_INPUT_FAILED
    assert str(area / "pool.key") in str(caught.value) and "Permission denied" in str(caught.value)
    assert not (sandbox / "pool.key").exists()
