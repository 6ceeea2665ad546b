"""The GPU watchdog on a personal pool with a simulated card: a job whose simulated card
memory grows past its share is held with HoldReasonCode 34 naming the card, and the card
is whole again afterwards."""

from __future__ import annotations

import time

import pytest

from tests.integration.conftest import personal_pool, roost

pytestmark = pytest.mark.integration

#: Uses 2000 MiB of its card, then 12000 (over its 10000 MiB share), then waits to be held.
GROWING = """#!/bin/sh
echo "$CUDA_VISIBLE_DEVICES 2000 30" > "$ROOST_SIMULATED_GPU_USAGE/$$"
sleep 2
echo "$CUDA_VISIBLE_DEVICES 12000 90" > "$ROOST_SIMULATED_GPU_USAGE/$$"
sleep 120
"""


def wait(predicate, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.5)
    return predicate()


def test_a_job_over_its_gpu_memory_share_is_held_and_the_card_freed(tmp_path_factory):
    knobs = {"_ROOST_GPU_DISCOVERY": "simulated:1xA100:40G", "_ROOST_NUM_CPUS": "4",
             "_ROOST_GPU_SAMPLE_INTERVAL": "1", "_ROOST_GPU_OVERUSE_GRACE": "2"}
    with personal_pool(tmp_path_factory.mktemp("home"), knobs) as pool:
        work = pool["home"] / "work"
        work.mkdir()
        (work / "grow.sh").write_text(GROWING)
        (work / "grow.sh").chmod(0o755)
        (work / "grow.sub").write_text(f"executable = {work / 'grow.sh'}\nrequest_memory = 32M\n"
                                       "request_gpu_memory = 10000\nqueue\n")
        roost(pool["env"], "submit", str(work / "grow.sub"))

        def held():
            out = roost(pool["env"], "q", "-af", "JobStatus", "HoldReasonCode").stdout.split()
            return out if out[:1] == ["5"] else None

        assert wait(held) == ["5", "34"]
        reason = roost(pool["env"], "q", "-af", "HoldReason").stdout.strip()
        assert reason.startswith("GPU GPU-") and "job used 12000 MiB of its 10000 MiB share for more than 2 s" in reason
        peak = roost(pool["env"], "q", "-af", "GPUsMemoryUsage").stdout.strip()
        assert peak == "12000"
        assert wait(lambda: roost(pool["env"], "status", "-af", "GPUs").stdout.split() == ["1"])
