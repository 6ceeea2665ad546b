"""The GPU watchdog's sampler on the real cards: a child process that takes card memory through
the CUDA driver (ctypes, no CUDA toolkit) is seen in nvmlDeviceGetComputeRunningProcesses and
counted for the job whose process tree it is."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from startd.gpu_monitor import read_sample
from startd.gpu_watchdog import CardLimit, attribute
from startd.gpus import nvml_backend, read_gpus

pytestmark = pytest.mark.integration

ALLOCATED_MIB = 256
#: Takes ALLOCATED_MIB on CUDA device 0 (PCI order, as NVML counts), says "ready", waits for stdin.
HOLDER = f"""
import ctypes, sys
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as exc:
    print("no libcuda:", exc); sys.exit(3)
device, context, pointer = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
for call, args in (("cuInit", (0,)), ("cuDeviceGet", (ctypes.byref(device), 0)),
                   ("cuCtxCreate_v2", (ctypes.byref(context), 0, device)),
                   ("cuMemAlloc_v2", (ctypes.byref(pointer), {ALLOCATED_MIB} * 1024 * 1024))):
    code = getattr(cuda, call)(*args)
    if code != 0:
        print(call, "failed with CUresult", code); sys.exit(3)
print("ready", flush=True)
sys.stdin.read()
"""


def test_a_jobs_process_tree_is_charged_its_real_card_memory(nvml, nvml_config):
    """The sampler finds the child's allocation on its card and charges at least ALLOCATED_MIB to the job
    whose tree it is, and nothing to a job without processes."""
    gpus = read_gpus(nvml_backend(nvml_config))
    child = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env={"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "PATH": "/usr/bin:/bin"})
    try:
        said = child.stdout.readline().strip()
        if said != "ready":
            pytest.skip(f"cannot take card memory through the CUDA driver: {said or child.wait()}")
        limits = tuple(CardLimit(gpu.uuid, gpu.id, None) for gpu in gpus)
        deadline, used = time.monotonic() + 10, 0
        while used < ALLOCATED_MIB and time.monotonic() < deadline:
            samples, jobs = read_sample(nvml, [("1.0", child.pid, limits)])
            used = sum(mib for mib, _ in attribute(samples, jobs)["1.0"].values())
            time.sleep(0.2)
        assert used >= ALLOCATED_MIB, samples
        assert child.pid in {p.pid for sample in samples for p in sample.processes}
        samples, jobs = read_sample(nvml, [("2.0", None, limits)])
        assert all(mib == 0 for mib, _ in attribute(samples, jobs)["2.0"].values())
    finally:
        child.stdin.close()
        child.wait(timeout=30)
