"""roost submit's warning when a job asks more GPU memory per card than any card of the pool has."""

from __future__ import annotations

import pytest

import classad
from bindings.cli.submit_gpu_check import check_gpu_memory, gpu_memory_warning, largest_card_mib
from tests.support.gpu_slot_ads import card, partitionable, pool


def test_the_largest_card_is_read_from_the_nested_card_ads():
    """Every slot's GPUs_GPU_* ads count; the largest GlobalMemoryMb wins."""
    ads = [partitionable("a", card("GPU-aaaa0001", 0, total=24576)),
           partitionable("b", card("GPU-bbbb0001", 0, total=81920), card("GPU-bbbb0002", 1, total=40960))]
    assert largest_card_mib(ads) == 81920


def test_a_request_larger_than_every_card_names_the_request_and_the_largest_card():
    """50000 MiB in a pool of 40960-MiB cards warns with both numbers."""
    warning = gpu_memory_warning(50000, pool())
    assert warning is not None
    assert "request_gpu_memory = 50000 MiB" in warning and "the largest has 40960 MiB" in warning


def test_a_request_some_card_holds_says_nothing():
    """A request equal to the largest card, or smaller, fits (even if the card is busy now)."""
    assert gpu_memory_warning(40960, pool()) is None
    assert gpu_memory_warning(1000, pool()) is None


def test_a_pool_without_gpus_or_a_job_without_gpu_memory_says_nothing():
    """No card ads at all: the job just waits; no RequestGPUMemory: nothing to check."""
    plain = classad.ClassAd({"Name": "slot1@c", "Cpus": 4, "Memory": 8192})
    assert gpu_memory_warning(50000, [plain]) is None
    assert gpu_memory_warning(50000, []) is None
    assert gpu_memory_warning(None, pool()) is None
    assert gpu_memory_warning(True, pool()) is None


@pytest.mark.integration
def test_a_collector_that_does_not_answer_says_nothing_within_about_a_second(tmp_path, monkeypatch):
    """A collector port that takes the connection but never answers gives no warning, no error, and
    costs the submit about QUERY_TIMEOUT."""
    import socket
    import time

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "config").touch()
    monkeypatch.setenv("ROOST_CONFIG", str(tmp_path / "config"))
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        started = time.monotonic()
        found = check_gpu_memory(classad.ClassAd({"RequestGPUMemory": 50000}), f"127.0.0.1:{silent.getsockname()[1]}")
        took = time.monotonic() - started
    assert found is None
    assert 0.9 < took < 2.5
