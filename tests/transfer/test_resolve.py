"""Tests for transfer.resolve: plans turned into real files on disk."""

import errno
import os

import pytest

import classad
from transfer.errors import BadTransferPathError, InputMissingError, OutputMissingError
from transfer.plan import STDOUT_NAME, input_plan, output_plan
from transfer.resolve import resolve_inputs, resolve_outputs, snapshot_sandbox


@pytest.fixture
def iwd(tmp_path):
    root = tmp_path / "iwd"
    (root / "d" / "sub").mkdir(parents=True)
    (root / "run.sh").write_text("#!/bin/sh\n")
    (root / "a.txt").write_text("a")
    (root / "d" / "top.txt").write_text("t")
    (root / "d" / "sub" / "f").write_text("f")
    return root


def ad_for(iwd, **attrs):
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Cmd": str(iwd / "run.sh"),
                            "Iwd": str(iwd), **attrs})


def names(items):
    return [(i.name, i.is_dir) for i in items]


def test_directory_with_and_without_trailing_slash(iwd):
    """'d' sends the directory itself, 'd/' its contents, each directory before what it holds."""
    items = resolve_inputs(input_plan(ad_for(iwd, TransferInput="d,d/", TransferExecutable=False)))
    assert names(items) == [("d", True), ("d/sub", True), ("d/top.txt", False), ("d/sub/f", False),
                            ("sub", True), ("top.txt", False), ("sub/f", False)]


def test_missing_input_names_job_file_and_errno(iwd):
    """A missing input is an InputMissingError with code 13 and subcode ENOENT."""
    with pytest.raises(InputMissingError) as caught:
        resolve_inputs(input_plan(ad_for(iwd, TransferInput="a.txt,nope.dat")))
    err = caught.value
    assert (err.hold_code, err.hold_subcode) == (13, errno.ENOENT)
    assert "job 1.0" in str(err) and "nope.dat" in str(err) and "No such file" in str(err)


def test_missing_executable_is_named_as_the_executable(iwd):
    """A missing Cmd says 'executable'."""
    (iwd / "run.sh").unlink()
    with pytest.raises(InputMissingError, match="cannot read executable"):
        resolve_inputs(input_plan(ad_for(iwd)))


def test_unreadable_input_gives_eacces(iwd):
    """A file the submitter cannot read is a hold with subcode EACCES (skipped as root)."""
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    (iwd / "a.txt").chmod(0)
    with pytest.raises(InputMissingError) as caught:
        resolve_inputs(input_plan(ad_for(iwd, TransferInput="a.txt")))
    assert caught.value.hold_subcode == errno.EACCES


def test_symlink_to_file_is_followed_and_to_directory_refused(iwd, tmp_path):
    """Input symlinks to files send the file; a symlink to a directory is refused."""
    (iwd / "d" / "link.txt").symlink_to(iwd / "a.txt")
    items = resolve_inputs(input_plan(ad_for(iwd, TransferInput="d/", TransferExecutable=False)))
    assert ("link.txt", False) in names(items)
    (iwd / "d" / "dirlink").symlink_to(tmp_path)
    with pytest.raises(BadTransferPathError, match="symbolic link to a directory"):
        resolve_inputs(input_plan(ad_for(iwd, TransferInput="d/")))


def test_trailing_slash_on_a_file_is_an_error(iwd):
    """'a.txt/' names a file, not a directory."""
    with pytest.raises(BadTransferPathError, match="not a directory"):
        resolve_inputs(input_plan(ad_for(iwd, TransferInput="a.txt/")))


def test_default_output_is_new_or_changed_top_level_files(tmp_path):
    """Without TransferOutput only top-level files made or changed after the snapshot come
    back, never the ads the starter wrote for the job."""
    box = tmp_path / "box"
    (box / "subdir").mkdir(parents=True)
    (box / "input.dat").write_text("in")
    (box / "same.txt").write_text("same")
    snap = snapshot_sandbox(str(box))
    (box / "input.dat").write_text("changed!")
    (box / "new.txt").write_text("new")
    (box / "subdir" / "deep.txt").write_text("not scanned")
    (box / STDOUT_NAME).write_text("hello\n")
    (box / ".job.ad").write_text("ClusterId = 1\n")  # the starter's, written after the snapshot
    (box / ".machine.ad").write_text("Cpus = 1\n")
    plan = output_plan(classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Iwd": "/x", "Out": "o"}))
    assert names(resolve_outputs(plan, str(box), snap)) == [
        (STDOUT_NAME, False), ("input.dat", False), ("new.txt", False)]


def test_listed_outputs_resolve_files_and_directories(tmp_path):
    """Listed outputs travel by base name; 'res' sends the directory, 'res/' its contents."""
    box = tmp_path / "box"
    (box / "res").mkdir(parents=True)
    (box / "res" / "r1").write_text("1")
    (box / "deep").mkdir()
    (box / "deep" / "x.dat").write_text("x")
    plan = output_plan(classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Iwd": "/x",
                                        "TransferOutput": "deep/x.dat,res,res/"}))
    assert names(resolve_outputs(plan, str(box))) == [
        ("x.dat", False), ("res", True), ("res/r1", False), ("r1", False)]


def test_missing_listed_output_holds_with_output_code(tmp_path):
    """A listed output the job never made is an OutputMissingError (code 12)."""
    plan = output_plan(classad.ClassAd({"ClusterId": 4, "ProcId": 1, "Iwd": "/x",
                                        "TransferOutput": "result.txt"}))
    with pytest.raises(OutputMissingError, match=r"job 4\.1: output file 'result.txt'") as caught:
        resolve_outputs(plan, str(tmp_path))
    assert caught.value.hold_code == 12


def test_output_symlink_pointing_out_of_the_sandbox_is_refused(tmp_path):
    """An output symlink to /etc/passwd (or anywhere outside) is refused."""
    box = tmp_path / "box"
    box.mkdir()
    (box / "steal").symlink_to("/etc/passwd")
    (box / "res").mkdir()
    (box / "res" / "inner").symlink_to(tmp_path)
    for listed in ("steal", "res"):
        plan = output_plan(classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Iwd": "/x",
                                            "TransferOutput": listed}))
        with pytest.raises(BadTransferPathError, match="outside the sandbox"):
            resolve_outputs(plan, str(box))
