"""GPU_SHARING_MODE = mps on a personal pool with two simulated cards and a stand-in
nvidia-cuda-mps-control (GPU_MPS_CONTROL): the startd starts one daemon per card, a share job
is pointed at its card's daemon with its limits, and `roost pool down` quits each daemon."""

from __future__ import annotations

import pytest

from tests.integration.conftest import personal_pool, roost
from tests.support import mps_stand_in

pytestmark = pytest.mark.integration

JOB = """executable = /bin/sh
arguments = "-c 'echo $CUDA_VISIBLE_DEVICES $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_PINNED_DEVICE_MEM_LIMIT \
$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE'"
output = mps.out
request_memory = 32M
request_gpu_memory = 10000
request_gpu_cores = 30
queue
"""


def test_mps_daemons_start_per_card_serve_a_share_job_and_quit_with_the_startd(tmp_path):
    """Two `-d` calls at start, the job's environment names its card's pipe directory and the limits,
    and after pool down each started daemon got `quit`."""
    binary, record = mps_stand_in.install(tmp_path / "bin")
    home = tmp_path / "home"
    home.mkdir()
    overrides = {"_ROOST_GPU_DISCOVERY": "simulated:2xA100:40G", "_ROOST_GPU_SHARING_MODE": "mps",
                 "_ROOST_GPU_MPS_CONTROL": str(binary)}
    with personal_pool(home, overrides) as pool:
        started = mps_stand_in.calls(record)
        assert [call["args"] for call in started] == [["-d"], ["-d"]]
        pipes = {call["env"]["CUDA_VISIBLE_DEVICES"]: call["env"]["CUDA_MPS_PIPE_DIRECTORY"] for call in started}
        sub = tmp_path / "mps.sub"
        sub.write_text(JOB)
        done = roost(pool["env"], "run", str(sub), "--timeout", "60", timeout=120)
        assert "1 of 1 job(s) succeeded" in done.stdout, done.stdout + done.stderr
        card, pipe, limit, threads = (tmp_path / "mps.out").read_text().split()
        assert pipe.endswith(f"/mps/{card}/pipe") and pipe in pipes.values()
        assert (limit, threads) == ("0=10000M", "30")
    quits = mps_stand_in.calls(record)[2:]
    assert [(call["args"], call["stdin"]) for call in quits] == [([], "quit\n"), ([], "quit\n")]
    assert {call["env"]["CUDA_MPS_PIPE_DIRECTORY"] for call in quits} == set(pipes.values())
