"""The GPU share submit commands: the job attributes they make, the Requirements clause
of share and whole-card jobs, and the errors a bad value gets (naming its command)."""

from __future__ import annotations

import warnings

import pytest

from bindings.submit import Submit
from schedd.submit import SubmitError, SubmitWarning


def job(text: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SubmitWarning)
        return next(iter(Submit("executable = /bin/true\n" + text + "\nqueue\n").jobs(owner="alice")))


def requirements(ad) -> str:
    return str(ad.lookup("Requirements"))


@pytest.mark.parametrize("text, mib", [("10G", 10240), ("512M", 512), ("1T", 1 << 20), ("3000", 3000),
                                       ("1.5G", 1536), ("2GB", 2048)])
def test_gpu_memory_is_mib_per_card_with_units(text, mib):
    ad = job(f"request_gpu_memory = {text}")
    assert ad["RequestGPUMemory"] == mib


def test_a_share_without_request_gpus_asks_for_one_card():
    ad = job("request_gpu_memory = 10G")
    assert ad["RequestGPUs"] == 1


def test_share_attributes_and_placement_are_made():
    ad = job("request_gpus = 2\nrequest_gpu_memory_percent = 25\nrequest_gpu_cores = 30\n"
             "gpu_placement = NUMA, binpack\ngpu_numa_bind = true\nuse_gpu_uuids = GPU-1a2b3c4d, 3\n"
             "avoid_gpu_uuids = GPU-0f0f0f0f-aaaa-bbbb-cccc-000000000000\nuse_gpu_types = A100, H100\n"
             "avoid_gpu_types = Tesla K80\nnode_placement = binpack")
    assert (ad["RequestGPUs"], ad["RequestGPUMemoryPercent"], ad["RequestGPUCores"]) == (2, 25, 30)
    assert ad["GPUPlacementPolicy"] == "numa,binpack" and ad["GPUNumaBind"] is True
    assert ad["RequestGPUIds"] == "GPU-1a2b3c4d,3"
    assert ad["AvoidGPUIds"] == "GPU-0f0f0f0f-aaaa-bbbb-cccc-000000000000"
    assert ad["RequestGPUTypes"] == "A100,H100" and ad["AvoidGPUTypes"] == "Tesla K80"
    assert ad["NodePlacementPolicy"] == "binpack"


def test_share_jobs_drop_the_whole_card_clause():
    assert "TARGET.GPUs" not in requirements(job("request_gpu_memory = 10G"))
    assert "TARGET.GPUs" not in requirements(job("request_gpus = 1\nrequest_gpu_cores = 50"))


def test_whole_card_jobs_keep_htcondors_clause():
    assert "(TARGET.GPUs >= RequestGPUs)" in requirements(job("request_gpus = 1"))
    assert "(TARGET.GPUs >= RequestGPUs)" in requirements(job("request_gpus = 1\nuse_gpu_types = A100"))


def test_a_share_with_require_gpus_still_counts_available_cards():
    ad = job("request_gpu_memory = 4G\nrequire_gpus = Capability >= 8.0")
    assert "countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs" in requirements(ad)


def test_htcondors_gpu_commands_still_work_beside_a_share():
    ad = job("request_gpu_memory = 4G\ngpus_minimum_memory = 8G\ncuda_version = 11.4")
    assert ad["GPUsMinMemory"] == 8192 and ad["CUDAVersion"] == 11004
    assert str(ad.lookup("RequireGPUs")) == "GlobalMemoryMb >= GPUsMinMemory"


@pytest.mark.parametrize("text, command, words", [
    ("request_gpus = 0.5", "request_gpus", "request_gpu_memory_percent = 50"),
    ("request_gpu_cores = 101", "request_gpu_cores", "outside 0..100"),
    ("request_gpu_cores = -1", "request_gpu_cores", "outside 0..100"),
    ("request_gpu_cores = half", "request_gpu_cores", "not a whole number"),
    ("request_gpu_memory_percent = 0", "request_gpu_memory_percent", "outside 1..100"),
    ("request_gpu_memory_percent = 150", "request_gpu_memory_percent", "outside 1..100"),
    ("request_gpu_memory = 10Q", "request_gpu_memory", "not a size"),
    ("request_gpu_memory = 0", "request_gpu_memory", "at least 1 MiB"),
    ("request_gpu_memory = Memory * 2", "request_gpu_memory", "not an amount of GPU memory"),
    ("request_gpu_memory = 4000P", "request_gpu_memory", "not a size"),
    ("request_gpu_memory = 4G\nrequest_gpu_memory_percent = 10", "request_gpu_memory_percent", "not both"),
    ("request_gpus = 0\nrequest_gpu_memory = 4G", "request_gpu_memory", "request_gpus = 0"),
    ("request_gpus = 1\ngpu_placement = tight", "gpu_placement", "'tight' is not a placement policy"),
    ("request_gpus = 1\ngpu_placement = numa,,binpack", "gpu_placement", "empty word"),
    ("request_gpus = 1\ngpu_placement = binpack,spread", "gpu_placement", "contradict"),
    ("request_gpus = 1\nnode_placement = numa", "node_placement", "not a placement policy"),
    ("request_gpus = 1\nnode_placement = binpack,spread", "node_placement", "is not one of"),
    ("request_gpus = 1\ngpu_numa_bind = maybe", "gpu_numa_bind", "not true or false"),
    ("request_gpus = 1\nuse_gpu_uuids = GPU-1a2b3c4d,", "use_gpu_uuids", "empty item"),
    ("request_gpus = 1\nuse_gpu_uuids = card one", "use_gpu_uuids", "not a GPU UUID"),
    ("request_gpus = 1\navoid_gpu_types = A100;rm", "avoid_gpu_types", "not part of a GPU's DeviceName"),
    ("request_gpus = 1\nuse_gpu_uuids = 0\navoid_gpu_uuids = 0", "avoid_gpu_uuids", "both used and avoided"),
    ("request_gpus = 1\nuse_gpu_uuids = " + ",".join(["0"] * 65), "use_gpu_uuids", "at most 64"),
])
def test_bad_gpu_values_are_refused_naming_the_command(text, command, words):
    with pytest.raises(SubmitError) as caught:
        job(text)
    assert caught.value.command == command
    assert words in str(caught.value)


def test_placement_without_a_gpu_request_warns_and_adds_nothing():
    with pytest.warns(SubmitWarning, match="gpu_placement has no effect"):
        ad = next(iter(Submit("executable = /bin/true\ngpu_placement = binpack\nqueue\n").jobs(owner="a")))
    assert "GPUPlacementPolicy" not in ad and "RequestGPUs" not in ad


def test_share_commands_are_known_to_the_misspelling_check():
    job("request_gpu_memory = 4G\nrequest_gpu_cores = 10\nuse_gpu_types = A100")
    with pytest.warns(SubmitWarning, match="did you mean 'request_gpu_memory'"):
        Submit("executable = /bin/true\nrequest_gpu_memroy = 4096\nqueue\n").jobs(owner="a")


def test_the_placement_model_reads_what_submit_makes():
    """The negotiator's and startd's reader (gpushare) sees the request the commands describe."""
    from gpushare.job_request import request_from_job
    from gpushare.placement import ShareRequest

    ad = job("request_gpus = 2\nrequest_gpu_memory = 10G\nrequest_gpu_cores = 30\ngpu_placement = numa,binpack\n"
             "gpu_numa_bind = true\nuse_gpu_uuids = GPU-1a2b3c4d,1\navoid_gpu_types = K80")
    assert request_from_job(ad) == ShareRequest(
        count=2, memory_mib=10240, cores=30, use_ids=("GPU-1a2b3c4d", "1"), avoid_types=("K80",),
        policy=("numa", "binpack"), numa_bind=True)
    assert request_from_job(job("request_gpu_memory_percent = 25")) == ShareRequest(memory_percent=25)
