"""Tests for startd.sandbox: sandboxes made private, paths kept inside, leftovers cleaned.
(Which outputs go back, and under which names, is file transfer's: tests/transfer.)"""

import os

import pytest

from startd.errors import StarterError
from startd.sandbox import clean_leftover_sandboxes, inside, make_sandbox


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
