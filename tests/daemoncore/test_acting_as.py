"""A thread acting as another account opens and creates files with that account's
rights only, and every other thread keeps the daemon's own."""

import os
import pathlib
import tempfile
import threading

import pytest

from daemoncore.security.accounts import current_account, local_account
from daemoncore.security.acting_as import ActingAsError, acting_as

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="acting as another account needs root")


@pytest.fixture
def nobody():
    account = local_account("nobody")
    if account is None:
        pytest.skip("this host has no 'nobody' account")
    return account


@pytest.fixture
def shared_dir():
    """A directory every account may enter and write (pytest's own are root's, 0700)."""
    with tempfile.TemporaryDirectory() as name:
        os.chmod(name, 0o777)
        path = pathlib.Path(name)
        (path / "secret").write_text("key")
        (path / "secret").chmod(0o600)
        (path / "open").write_text("public")
        yield path


@ROOT_ONLY
def test_a_file_only_root_may_read_is_refused_while_acting_as_nobody(nobody, shared_dir):
    with acting_as(nobody):
        assert (shared_dir / "open").read_text() == "public"
        with pytest.raises(PermissionError):
            (shared_dir / "secret").read_text()
    assert (shared_dir / "secret").read_text() == "key"


@ROOT_ONLY
def test_files_created_while_acting_belong_to_the_account(nobody, shared_dir):
    with acting_as(nobody):
        (shared_dir / "made").write_text("out")
    assert os.stat(shared_dir / "made").st_uid == nobody.uid
    assert os.stat(shared_dir / "made").st_gid == nobody.gid


@ROOT_ONLY
def test_other_threads_keep_their_rights_while_one_acts(nobody, shared_dir):
    entered, done = threading.Event(), threading.Event()
    seen = []

    def reader():
        entered.wait(5)
        seen.append((shared_dir / "secret").read_text())
        done.set()

    thread = threading.Thread(target=reader)
    thread.start()
    with acting_as(nobody):
        entered.set()
        done.wait(5)
    thread.join()
    assert seen == ["key"]


def test_acting_as_oneself_or_nobody_given_changes_nothing(tmp_path):
    with acting_as(None):
        (tmp_path / "a").write_text("1")
    with acting_as(current_account()):
        (tmp_path / "b").write_text("2")
    assert os.stat(tmp_path / "b").st_uid == os.geteuid()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may act as anyone")
def test_an_ordinary_user_cannot_act_as_another(nobody):
    with pytest.raises(ActingAsError), acting_as(nobody):
        pass
