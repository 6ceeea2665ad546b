"""Finding and sampling a job's process tree: the kernel's per-task children lists
give the same tree psutil finds by scanning every process."""

import subprocess
import time

import psutil
import pytest

from startd.usage import CHILDREN_LISTED, sample_tree, tree_pids, tree_processes

pytestmark = pytest.mark.integration  # real processes


@pytest.fixture
def tree():
    parent = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & (sleep 30 & wait) & wait"])
    deadline = time.monotonic() + 10
    while len(psutil.Process(parent.pid).children(recursive=True)) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    yield parent
    if parent.poll() is None:
        for child in psutil.Process(parent.pid).children(recursive=True):
            child.kill()
        parent.kill()
        parent.wait()


@pytest.mark.skipif(not CHILDREN_LISTED, reason="this kernel lists no task children")
def test_the_tree_read_from_children_lists_is_the_one_psutil_finds(tree):
    """tree_pids holds the root first, then every descendant psutil sees, once each."""
    expected = {p.pid for p in psutil.Process(tree.pid).children(recursive=True)}
    pids = tree_pids(tree.pid)
    assert pids[0] == tree.pid and set(pids[1:]) == expected and len(pids) == len(set(pids))
    assert {p.pid for p in tree_processes(tree.pid)} == {tree.pid, *expected}


def test_a_gone_process_has_no_tree_and_samples_as_zero(tree):
    """Once the root is reaped there is nothing to find or sample."""
    pid = tree.pid
    for child in psutil.Process(pid).children(recursive=True):
        child.kill()
    tree.kill()
    tree.wait()
    assert tree_processes(pid) == [] and tree_pids(pid) == []
    assert sample_tree(pid).rss_kb == 0


def test_a_live_tree_samples_its_memory(tree):
    """A running tree reports some resident memory."""
    assert sample_tree(tree.pid).rss_kb > 0
