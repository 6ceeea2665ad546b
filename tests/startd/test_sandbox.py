"""Tests for startd.sandbox: inputs in, outputs found and remapped, leftovers cleaned."""

import os

import classad
import pytest

from startd.errors import StarterError
from startd.sandbox import (clean_leftover_sandboxes, copy_outputs, inside, make_sandbox,
                            output_files, parse_remaps, place_inputs, snapshot)


def test_directory_inputs_with_and_without_trailing_slash(tmp_path):
    """``dir/`` copies the contents, ``dir`` the directory itself."""
    (tmp_path / "src" / "d").mkdir(parents=True)
    (tmp_path / "src" / "d" / "f.txt").write_text("x")
    box = make_sandbox(str(tmp_path / "execute"), "1.0")
    place_inputs(box, [str(tmp_path / "src" / "d"), str(tmp_path / "src" / "d") + "/"])
    assert sorted(os.listdir(box)) == ["d", "f.txt"]
    assert oct(os.stat(box).st_mode & 0o777) == "0o700"


def test_paths_cannot_leave_the_sandbox(tmp_path):
    """``..`` and absolute names are refused."""
    with pytest.raises(StarterError, match="outside the job's sandbox"):
        inside(str(tmp_path), "../etc/passwd", "output file")
    with pytest.raises(StarterError, match="outside"):
        inside(str(tmp_path), "/etc/passwd", "output file")


def test_only_new_or_changed_files_are_outputs_by_default(tmp_path):
    """An unchanged input is not sent back; a new file is, under its remapped name."""
    box = make_sandbox(str(tmp_path), "1.0")
    open(os.path.join(box, "input.txt"), "w").write("in")
    before = snapshot(box)
    open(os.path.join(box, "new.txt"), "w").write("out")
    ad = classad.ClassAd({"TransferOutputRemaps": "new.txt = results/new.txt"})
    found, missing = output_files(box, ad, before)
    assert [(os.path.basename(f.source), f.destination) for f in found] == [("new.txt", "results/new.txt")]
    copy_outputs(found, str(tmp_path / "back"))
    assert (tmp_path / "back" / "results" / "new.txt").read_text() == "out"


def test_bad_remap_is_a_clear_error():
    """A remap entry without = names the entry."""
    with pytest.raises(StarterError, match="'oops' is not 'name = new name'"):
        parse_remaps("a = b; oops")


def test_startup_removes_leftover_sandboxes_only(tmp_path):
    """Old dir_* sandboxes go; other files in the execute directory stay."""
    old = make_sandbox(str(tmp_path), "3.1")
    os.makedirs(os.path.join(old, "deep"))
    os.chmod(os.path.join(old, "deep"), 0o500)
    (tmp_path / "keep.txt").write_text("k")
    assert clean_leftover_sandboxes(str(tmp_path)) == [os.path.basename(old)]
    assert os.listdir(tmp_path) == ["keep.txt"]
