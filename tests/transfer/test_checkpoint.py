"""A self-checkpointing job's files (the manual's "Self-Checkpointing Applications";
condor_submit's ``transfer_checkpoint_files``): what a checkpoint holds, where the
schedd keeps it, and how it comes back into the next sandbox. Real tar streams on disk."""

import io
import itertools
import os

import pytest

import classad
from transfer.archive import PackStream, into_directory, stream_of, unpack
from transfer.checkpoint import (
    checkpoint_plan,
    checkpoint_stream,
    receive_checkpoint,
    remove_checkpoint,
    send_checkpoint,
    spool_directory,
)
from transfer.errors import TransferError
from transfer.plan import input_plan
from transfer.resolve import resolve_inputs


def job(iwd, **attrs) -> classad.ClassAd:
    return classad.ClassAd({"ClusterId": 3, "ProcId": 1, "Cmd": str(iwd / "run.sh"), "Iwd": str(iwd),
                            "Out": "job.out", "Err": "job.err", **attrs})


@pytest.fixture
def sandbox(tmp_path):
    root = tmp_path / "sandbox"
    root.mkdir()
    (root / "count.ckpt").write_text("6")
    (root / "result.dat").write_text("partial")
    (root / "scratch.tmp").write_text("x")
    (root / "_condor_stdout").write_text("start 0\nstart 2\n")
    (root / "_condor_stderr").write_text("")
    return root


def members(stream) -> dict[str, bytes]:
    import tarfile
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream)), mode="r:") as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


def test_the_checkpoint_is_transfer_checkpoint_s_files_and_the_standard_streams(tmp_path, sandbox):
    """transfer_checkpoint_files names what a checkpoint holds; stdout and stderr go
    with it so a restarted job's output goes on where it stopped."""
    ad = job(tmp_path, TransferCheckpoint="count.ckpt", TransferOutput="result.dat")
    files = members(send_checkpoint(ad, str(sandbox), None))
    assert files["count.ckpt"] == b"6"
    assert "result.dat" not in files and "scratch.tmp" not in files
    assert files["_condor_stdout"] == b"start 0\nstart 2\n"


def test_without_transfer_checkpoint_the_output_files_are_the_checkpoint(tmp_path, sandbox):
    """The manual: when transfer_checkpoint_files is not set, the checkpoint is the output files."""
    ad = job(tmp_path, TransferOutput="result.dat,count.ckpt")
    assert {"result.dat", "count.ckpt"} <= set(members(send_checkpoint(ad, str(sandbox), None)))
    assert checkpoint_plan(job(tmp_path, TransferCheckpoint="a, b")).files != ()


def test_a_listed_checkpoint_file_that_is_missing_is_an_error(tmp_path, sandbox):
    ad = job(tmp_path, TransferCheckpoint="missing.ckpt")
    with pytest.raises(TransferError, match="missing.ckpt"):
        b"".join(send_checkpoint(ad, str(sandbox), None))


def test_the_spool_path_is_htcondor_s():
    """SPOOL/<cluster>/<proc>/cluster<c>.proc<p>.subproc0, as the manual's example shows."""
    assert spool_directory("/var/spool", 12, 3) == "/var/spool/12/3/cluster12.proc3.subproc0"


def test_a_new_checkpoint_replaces_the_kept_one_whole(tmp_path, sandbox):
    ad = job(tmp_path, TransferCheckpoint="count.ckpt")
    kept = spool_directory(str(tmp_path / "spool"), 3, 1)
    stats = receive_checkpoint(stream_of(send_checkpoint(ad, str(sandbox), None)), kept, ad)
    assert stats.files == 3 and open(os.path.join(kept, "count.ckpt")).read() == "6"
    (sandbox / "count.ckpt").write_text("8")
    receive_checkpoint(stream_of(send_checkpoint(ad, str(sandbox), None)), kept, ad)
    assert open(os.path.join(kept, "count.ckpt")).read() == "8"
    assert sorted(os.listdir(os.path.dirname(kept))) == ["cluster3.proc1.subproc0"]


def test_a_damaged_checkpoint_leaves_the_kept_one_in_place(tmp_path, sandbox):
    """A transfer cut short never replaces the last good checkpoint."""
    ad = job(tmp_path, TransferCheckpoint="count.ckpt")
    kept = spool_directory(str(tmp_path / "spool"), 3, 1)
    receive_checkpoint(stream_of(send_checkpoint(ad, str(sandbox), None)), kept, ad)
    whole = b"".join(send_checkpoint(ad, str(sandbox), None))
    with pytest.raises(TransferError, match="checkpoint not kept"):
        receive_checkpoint(io.BytesIO(whole[:700]), kept, ad)
    assert open(os.path.join(kept, "count.ckpt")).read() == "6"
    assert not os.path.exists(kept + ".incoming")


def test_a_checkpoint_over_max_transfer_output_mb_is_refused(tmp_path, sandbox):
    """The schedd takes no checkpoint larger than the job's MaxTransferOutputMB."""
    (sandbox / "count.ckpt").write_bytes(b"\0" * (2 << 20))
    unlimited = b"".join(send_checkpoint(job(tmp_path, TransferCheckpoint="count.ckpt"), str(sandbox), None))
    limited = job(tmp_path, TransferCheckpoint="count.ckpt", MaxTransferOutputMB=1)
    with pytest.raises(TransferError, match="checkpoint not kept"):
        receive_checkpoint(io.BytesIO(unlimited), spool_directory(str(tmp_path / "spool"), 3, 1), limited)


def test_the_kept_checkpoint_follows_the_inputs_in_one_stream(tmp_path, sandbox):
    """The next sandbox gets the inputs, then the checkpoint (which wins on a shared name)."""
    iwd = tmp_path / "iwd"
    iwd.mkdir()
    (iwd / "run.sh").write_text("#!/bin/sh\n")
    (iwd / "count.ckpt").write_text("0")
    ad = job(iwd, TransferCheckpoint="count.ckpt", TransferInput="count.ckpt")
    kept = spool_directory(str(tmp_path / "spool"), 3, 1)
    receive_checkpoint(stream_of(send_checkpoint(ad, str(sandbox), None)), kept, ad)
    inputs = PackStream(resolve_inputs(input_plan(ad)), None, "3.1", end=False)
    back = checkpoint_stream(kept, ad)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    unpack(stream_of(itertools.chain(inputs, back)), into_directory(str(fresh)))
    assert (fresh / "count.ckpt").read_text() == "6" and (fresh / "_condor_stdout").exists()
    assert (fresh / "run.sh").exists()


def test_no_kept_checkpoint_means_no_stream_and_removal_tidies_the_spool(tmp_path, sandbox):
    ad = job(tmp_path, TransferCheckpoint="count.ckpt")
    spool = tmp_path / "spool"
    kept = spool_directory(str(spool), 3, 1)
    assert checkpoint_stream(kept, ad) is None and checkpoint_stream(None, ad) is None
    receive_checkpoint(stream_of(send_checkpoint(ad, str(sandbox), None)), kept, ad)
    remove_checkpoint(kept)
    assert os.listdir(spool) == []
