"""GPU sharing on a real personal pool with two simulated A100s: jobs asking for a
share of a card's memory run side by side, each told its card and its memory limit."""

from __future__ import annotations

import pytest

from tests.integration.conftest import isolated_env, roost

SHARED = """executable = /bin/sh
arguments = "-c 'echo $CUDA_VISIBLE_DEVICES $CUDA_DEVICE_MEMORY_LIMIT_0'"
output = gpu.$(Process).out
request_gpus = 1
request_memory = 64M
+RequestGPUMemory = 10000
queue 4
"""


@pytest.fixture(scope="module")
def gpu_pool(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    env = isolated_env(home)
    env["_ROOST_GPU_DISCOVERY"] = "simulated:2xA100:40G"
    directory = home / "pool"
    try:
        roost(env, "pool", "up", "--dir", str(directory))
        yield {"env": env, "dir": directory, "work": tmp_path_factory.mktemp("work")}
    finally:
        roost(env, "pool", "down", "--dir", str(directory), check=False)


def test_the_slot_advertises_both_cards_with_their_memory(gpu_pool):
    out = roost(gpu_pool["env"], "status", "-af", "GPUs", "size(AvailableGPUs)").stdout.split()
    assert out == ["2", "2"]


def test_memory_shares_of_a_card_run_with_their_card_and_limit(gpu_pool):
    sub = gpu_pool["work"] / "shared.sub"
    sub.write_text(SHARED)
    done = roost(gpu_pool["env"], "run", str(sub), "--timeout", "60", timeout=120)
    assert "4 of 4 job(s) succeeded" in done.stdout
    lines = [(gpu_pool["work"] / f"gpu.{i}.out").read_text().split() for i in range(4)]
    assert all(limit == "10000m" for _, limit in lines)
    assert all(card.startswith("GPU-") for card, _ in lines)


def test_pool_down_leaves_no_empty_execute_directory_behind(tmp_path):
    """A root pool with simulated cards keeps its sandboxes under /var/lib/roost/execute;
    once it is down, its directory there (and the startd's simulated_gpu_usage) is gone."""
    import os

    from bindings.cli.pool import root_execute_dir

    if os.geteuid() != 0:
        pytest.skip("only a pool started by root keeps its execute directory outside the pool directory")
    (tmp_path / "home").mkdir()
    env = isolated_env(tmp_path / "home")
    env["_ROOST_GPU_DISCOVERY"] = "simulated:1xA100:40G"
    directory = tmp_path / "home" / "pool"
    roost(env, "pool", "up", "--dir", str(directory))
    execute = root_execute_dir(str(directory))
    try:
        assert os.path.isdir(os.path.join(execute, "simulated_gpu_usage"))
    finally:
        roost(env, "pool", "down", "--dir", str(directory), check=False)
    assert not os.path.exists(execute)
