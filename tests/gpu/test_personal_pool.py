"""A personal pool started with GPU_DISCOVERY = nvml on the real cards: a share job (no CUDA
needed) is told its card and its limits in HAMi-core's variables."""

from __future__ import annotations

import pytest

from startd.gpus import nvml_backend, read_gpus
from tests.integration.conftest import personal_pool, roost

pytestmark = pytest.mark.integration

JOB = """executable = /bin/sh
arguments = "-c 'echo $CUDA_VISIBLE_DEVICES $CUDA_DEVICE_MEMORY_LIMIT_0 $CUDA_DEVICE_SM_LIMIT'"
output = share.out
request_memory = 32M
request_gpu_memory = 1000
request_gpu_cores = 20
queue
"""


def test_a_share_job_on_a_real_card_gets_its_card_and_limits(nvml, nvml_config, tmp_path):
    """request_gpu_memory = 1000 and request_gpu_cores = 20 reach the job as 1000m and 20 on a discovered card."""
    ids = {gpu.id for gpu in read_gpus(nvml_backend(nvml_config))}
    home = tmp_path / "home"
    home.mkdir()
    with personal_pool(home, {"_ROOST_GPU_DISCOVERY": "nvml"}) as pool:
        assert roost(pool["env"], "status", "-af", "TotalGPUs").stdout.split() == [str(len(ids))]
        sub = tmp_path / "share.sub"
        sub.write_text(JOB)
        done = roost(pool["env"], "run", str(sub), "--timeout", "60", timeout=120)
        assert "1 of 1 job(s) succeeded" in done.stdout, done.stdout + done.stderr
    card, memory, cores = (tmp_path / "share.out").read_text().split()
    assert card in ids
    assert (memory, cores) == ("1000m", "20")
