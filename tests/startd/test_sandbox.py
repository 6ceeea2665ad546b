"""Tests for startd.sandbox: sandboxes made private, paths kept inside, leftovers cleaned.
(Which outputs go back, and under which names, is file transfer's: tests/transfer.)"""

import os

import pytest

from startd.errors import StarterError
from startd.sandbox import clean_leftover_sandboxes, inside, make_sandbox, write_private_file


def test_a_sandbox_is_private_to_its_job(tmp_path):
    """A new sandbox is a fresh dir_* directory only its owner can enter."""
    box = make_sandbox(str(tmp_path / "execute"), "1.0")
    assert os.path.basename(box).startswith("dir_1.0_") and os.listdir(box) == []
    assert oct(os.stat(box).st_mode & 0o777) == "0o700"


def test_paths_cannot_leave_the_sandbox(tmp_path):
    """``..`` and absolute names are refused."""
    with pytest.raises(StarterError, match="outside the job's sandbox"):
        inside(str(tmp_path), "../etc/passwd", "output file")
    with pytest.raises(StarterError, match="outside"):
        inside(str(tmp_path), "/etc/passwd", "output file")


def test_startup_removes_leftover_sandboxes_only(tmp_path):
    """Old dir_* sandboxes go; other files in the execute directory stay."""
    old = make_sandbox(str(tmp_path), "3.1")
    os.makedirs(os.path.join(old, "deep"))
    os.chmod(os.path.join(old, "deep"), 0o500)
    (tmp_path / "keep.txt").write_text("k")
    assert clean_leftover_sandboxes(str(tmp_path)) == [os.path.basename(old)]
    assert os.listdir(tmp_path) == ["keep.txt"]


def test_a_private_file_is_its_owners_alone_and_never_written_through_a_symlink(tmp_path):
    """An ad file is written 0600 (a wider one left there is narrowed); a symlink put in its
    place by the inputs is refused, and what it points to is left alone."""
    path = tmp_path / ".job.ad"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_private_file(str(path), b"Cmd = \"x\"\n")
    assert path.read_bytes() == b'Cmd = "x"\n' and oct(os.stat(path).st_mode & 0o777) == "0o600"
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    os.symlink(target, tmp_path / ".machine.ad")
    with pytest.raises(OSError):
        write_private_file(str(tmp_path / ".machine.ad"), b"Name = 1\n")
    assert target.read_text() == "keep"
