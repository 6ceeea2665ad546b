"""Discovery through the real pynvml: every card with its UUID, memory and NUMA node, as
the startd advertises them."""

from __future__ import annotations

import re

from startd.gpus import nvml_backend, read_gpus

MIB = 1024 * 1024


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def test_every_card_is_read_with_its_uuid_memory_and_numa_node(nvml, nvml_config):
    """read_gpus finds each device NVML counts, in index order, with NVML's own UUID and total memory."""
    gpus = read_gpus(nvml_backend(nvml_config))
    assert len(gpus) == nvml.nvmlDeviceGetCount()
    for index, gpu in enumerate(gpus):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        assert gpu.index == index
        assert gpu.uuid == _text(nvml.nvmlDeviceGetUUID(handle))
        assert gpu.memory_mb == nvml.nvmlDeviceGetMemoryInfo(handle).total // MIB > 0
        assert re.fullmatch(r"GPU-[0-9a-f]{8}", gpu.id), gpu.id
        assert gpu.numa_node >= -1
        assert gpu.name and gpu.capability > 0


def test_the_ids_are_distinct(nvml, nvml_config):
    """Short ids (GPU-1a2b3c4d) name one card each, as the slot ads' GPUs_GPU_* need."""
    gpus = read_gpus(nvml_backend(nvml_config))
    assert len({gpu.id for gpu in gpus}) == len({gpu.uuid for gpu in gpus}) == len(gpus)
