"""Finding and sampling a job's process tree: the kernel's per-task children lists
give the same tree psutil finds by scanning every process."""

import os
import signal
import subprocess
import time

import psutil
import pytest

from startd.usage import CHILDREN_LISTED, sample_tree, signal_tree, tree_pids, tree_processes

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


def _descendants(pid, count, settled=lambda found: True):
    """``pid``'s descendants once there are ``count`` of them and ``settled(found)`` holds
    (fails the test after 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = psutil.Process(pid).children(recursive=True)
        if len(found) >= count and settled(found):
            return found
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not start {count} descendants")


def _all_end(processes, seconds=10):
    """Whether every one of ``processes`` has ended (or is a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return True
        time.sleep(0.02)
    return False


def _kill_tree(root, descendants):
    for process in descendants:
        try:
            process.kill()
        except psutil.Error:
            pass
    if root.poll() is None:
        root.kill()
    root.wait()


def test_signal_tree_reaches_the_group_and_a_descendant_that_left_it():
    """A job in its own session whose child runs in another session (setsid): one
    SIGTERM to the tree ends the root, its child in the group and the one outside it."""
    root = subprocess.Popen(["/bin/sh", "-c", "sleep 30 & setsid sleep 30 & wait"], start_new_session=True)
    def one_left_the_group(found):  # setsid runs as a child of the group until it calls setsid()
        return any(os.getpgid(p.pid) != root.pid for p in found)

    descendants = _descendants(root.pid, 2, one_left_the_group)
    try:
        assert one_left_the_group(descendants)
        signal_tree(root.pid, signal.SIGTERM)
        root.wait(10)
        assert root.returncode == -signal.SIGTERM
        assert _all_end(descendants)
    finally:
        _kill_tree(root, descendants)


def test_signal_tree_signals_a_root_that_leads_no_group_by_its_pid(tree):
    """A root started without a group of its own (the tree fixture's) is still signalled,
    with its descendants, each by its pid."""
    descendants = psutil.Process(tree.pid).children(recursive=True)
    assert os.getpgid(tree.pid) != tree.pid
    signal_tree(tree.pid, signal.SIGKILL)
    tree.wait(10)
    assert tree.returncode == -signal.SIGKILL
    assert _all_end(descendants)


def test_signal_tree_of_a_gone_process_does_nothing(tree):
    """Signalling a tree whose root has been reaped raises nothing."""
    pid = tree.pid
    for child in psutil.Process(pid).children(recursive=True):
        child.kill()
    tree.kill()
    tree.wait()
    signal_tree(pid, signal.SIGTERM)


@pytest.mark.skipif(not CHILDREN_LISTED, reason="this kernel lists no task children")
def test_figures_read_from_proc_are_psutils(tree):
    """Each process's CPU seconds (with its waited-for children's) and memory read from
    /proc are what psutil reports for it (the tree only sleeps, so nothing moves)."""
    from startd.usage import process_figures

    for process in psutil.Process(tree.pid).children(recursive=True) + [psutil.Process(tree.pid)]:
        with process.oneshot():
            times, memory = process.cpu_times(), process.memory_info()
        expected = (times.user + times.children_user, times.system + times.children_system, memory.rss, memory.vms)
        assert process_figures(process.pid) == pytest.approx(expected)


def test_figures_of_a_gone_process_are_none():
    """A reaped process has no figures."""
    from startd.usage import process_figures

    gone = subprocess.Popen(["/bin/true"])
    gone.wait()
    assert process_figures(gone.pid) is None
