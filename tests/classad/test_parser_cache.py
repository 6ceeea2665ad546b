"""The analysed ClassAd grammar is cached only in a cache directory of this user's
that no one else can write, and a cached grammar parses as the built one does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from classad import parser


def test_the_cache_lives_in_the_users_own_cache_directory(tmp_path, monkeypatch):
    """With XDG_CACHE_HOME set, the cache file is under its roost folder, made private."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = parser._grammar_cache()
    assert path == os.path.join(tmp_path, "roost", os.path.basename(path))
    assert os.stat(tmp_path / "roost").st_mode & 0o077 == 0


def test_no_cache_in_a_directory_others_can_write(tmp_path, monkeypatch):
    """A roost cache folder writable by group or others is not used."""
    (tmp_path / "roost").mkdir()
    (tmp_path / "roost").chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert parser._grammar_cache() is False


def test_no_cache_where_the_folder_cannot_be_made(tmp_path, monkeypatch):
    """A cache home that is a file gives no cache rather than an error."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert parser._grammar_cache() is False


@pytest.mark.integration
def test_a_process_loading_the_cached_grammar_parses_the_same(tmp_path):
    """A second process, which loads the grammar from the cache the first wrote, parses the same trees."""
    code = ("from classad.parser import parse_expression as p\n"
            "print(repr(p('a + b * 2 > 3 && x[1] =?= \"s\" ? f(y) : {1, [k = 2]}')))")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert os.listdir(tmp_path / "roost")
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout == second.stdout and "Binary" in first.stdout
