"""roost submit on a personal pool with two simulated 40 GB cards: a job asking more GPU memory
per card than any card has is submitted with a warning naming the request and the largest card."""

from __future__ import annotations

import pytest

from tests.integration.conftest import personal_pool, roost

pytestmark = pytest.mark.integration

JOB = "executable = /bin/true\nrequest_memory = 32M\nrequest_gpu_memory = {memory}\nqueue\n"


@pytest.fixture(scope="module")
def gpu_pool(tmp_path_factory):
    with personal_pool(tmp_path_factory.mktemp("home"), {"_ROOST_GPU_DISCOVERY": "simulated:2xA100:40G"}) as running:
        yield running


def submit(pool, name, memory):
    sub = pool["home"] / f"{name}.sub"
    sub.write_text(JOB.format(memory=memory))
    return sub, roost(pool["env"], "submit", str(sub))


def test_a_request_larger_than_every_card_is_submitted_with_a_warning(gpu_pool):
    """50G per card on 40960-MiB cards: the warning names both, and the job is in the queue."""
    sub, done = submit(gpu_pool, "huge", "50G")
    try:
        assert "1 job(s) submitted to cluster" in done.stdout
        assert f"roost submit: warning: {sub}: request_gpu_memory = 51200 MiB per card" in done.stderr
        assert "the largest has 40960 MiB" in done.stderr
        cluster = done.stdout.split()[-1].rstrip(".")
        assert roost(gpu_pool["env"], "q", cluster, "-af", "RequestGPUMemory").stdout.split() == ["51200"]
    finally:
        roost(gpu_pool["env"], "rm", "-all", check=False)


def test_a_request_a_card_can_hold_says_nothing(gpu_pool):
    """10000 MiB fits a 40 GB card: no warning."""
    _, done = submit(gpu_pool, "small", "10000")
    roost(gpu_pool["env"], "rm", "-all", check=False)
    assert "1 job(s) submitted" in done.stdout and "warning" not in done.stderr
