"""Tests for daemoncore.launcher's log files: created 0600 in a directory created 0700."""

import os
import stat

from daemoncore.launcher import open_daemon_log, private_file_opener


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_log_is_0600_in_a_new_0700_directory(tmp_path):
    """A daemon log and the log directory Roost creates for it are readable by their owner only."""
    path = tmp_path / "log" / "ScheddLog"
    with open_daemon_log(str(path)) as log:
        log.write("started\n")
    assert mode_of(path) == 0o600
    assert mode_of(tmp_path / "log") == 0o700
    assert path.read_text() == "started\n"


def test_an_existing_world_readable_log_is_tightened_and_appended_to(tmp_path):
    """A log left 0644 by an older Roost becomes 0600 and keeps its lines."""
    path = tmp_path / "CollectorLog"
    path.write_text("old line\n")
    path.chmod(0o644)
    with open_daemon_log(str(path)) as log:
        log.write("new line\n")
    assert mode_of(path) == 0o600
    assert path.read_text() == "old line\nnew line\n"


def test_an_existing_log_directory_keeps_its_mode(tmp_path):
    """A log directory made by someone else is used as it is, not changed."""
    (tmp_path / "shared").mkdir(mode=0o755)
    os.chmod(tmp_path / "shared", 0o755)
    open_daemon_log(str(tmp_path / "shared" / "StartdLog")).close()
    assert mode_of(tmp_path / "shared") == 0o755


def test_private_opener_creates_0600_even_with_a_permissive_umask(tmp_path):
    """The opener's mode does not depend on the process's umask."""
    old = os.umask(0)
    try:
        with open(tmp_path / "f", "ab", opener=private_file_opener):
            pass
    finally:
        os.umask(old)
    assert mode_of(tmp_path / "f") == 0o600



def test_the_startup_heap_is_frozen_out_of_later_collections():
    """After freeze_startup_heap a container alive then is in no generation a collection
    scans (it went to the permanent one)."""
    import gc

    from daemoncore.launcher import freeze_startup_heap

    kept = [[] for _ in range(3)]
    try:
        freeze_startup_heap()
        assert gc.get_freeze_count() > 0
        scanned = [obj for generation in (0, 1, 2) for obj in gc.get_objects(generation=generation)]
        assert not any(obj is kept for obj in scanned)
    finally:
        gc.unfreeze()
