"""Tests for startd.gpus and startd.simulated_nvml: one discovery path over real or fake NVML."""

import pytest

from daemoncore.config import Config
from startd.errors import DiscoveryError
from startd.gpus import cuda_version_number, nvml_backend, read_gpus
from startd.simulated_nvml import SimulatedNvml, parse_simulated_spec


def config(text=""):
    return Config.from_text(text, env={"HOME": "/nonexistent"})


def test_simulated_spec_gives_count_model_and_memory():
    """``2xA100:40G`` is two A100 cards of 40 GiB each."""
    assert parse_simulated_spec("2xA100:40G") == [(2, "A100", 40960)]
    assert parse_simulated_spec("1xT4:16384M+1xH100:80GB") == [(1, "T4", 16384), (1, "H100", 81920)]


@pytest.mark.parametrize("spec", ["", "2A100:40G", "0xA100:40G", "2xA100", "2xA100:lots"])
def test_malformed_simulated_spec_names_the_expected_form(spec):
    """A bad spec says what form was expected."""
    with pytest.raises(DiscoveryError, match="GPU_DISCOVERY"):
        parse_simulated_spec(spec)


def test_simulated_cards_are_read_through_the_nvml_calls():
    """Discovery over the fake library reports each card's id, name, memory and capability."""
    gpus = read_gpus(nvml_backend(config("GPU_DISCOVERY = simulated:2xA100:40G")))
    assert [g.index for g in gpus] == [0, 1]
    assert {g.name for g in gpus} == {"NVIDIA A100"}
    assert {g.memory_mb for g in gpus} == {40960}
    assert {g.capability for g in gpus} == {8.0}
    assert [g.numa_node for g in gpus] == [0, 1]
    assert all(g.id.startswith("GPU-") and len(g.id) == 12 for g in gpus)
    assert gpus[0].attr_name == "GPUs_" + gpus[0].id.replace("-", "_")
    assert gpus[0].id != gpus[1].id


def test_simulated_ids_are_stable_between_runs():
    """The same spec on the same host names the same cards, so ads do not churn on restart."""
    first = read_gpus(SimulatedNvml("2xA100:40G", seed="host-a"))
    again = read_gpus(SimulatedNvml("2xA100:40G", seed="host-a"))
    other = read_gpus(SimulatedNvml("2xA100:40G", seed="host-b"))
    assert [g.uuid for g in first] == [g.uuid for g in again]
    assert [g.uuid for g in first] != [g.uuid for g in other]


def test_simulated_library_refuses_calls_before_init():
    """Like NVML, the fake fails when used before nvmlInit."""
    nvml = SimulatedNvml("1xT4:16G")
    with pytest.raises(nvml.NVMLError):
        nvml.nvmlDeviceGetCount()


def test_discovery_off_means_no_gpus():
    """``GPU_DISCOVERY = none`` gives no backend and no cards."""
    assert nvml_backend(config("GPU_DISCOVERY = none")) is None
    assert read_gpus(None) == ()


def test_auto_discovery_without_a_gpu_finds_none_without_error():
    """On a machine without a driver, the default finds no GPUs and raises nothing."""
    backend = nvml_backend(config())
    gpus = read_gpus(backend)
    assert isinstance(gpus, tuple)


def test_unknown_discovery_mode_is_refused_with_the_choices():
    """An unknown mode lists the accepted ones."""
    with pytest.raises(DiscoveryError, match="expected auto, nvml, none or simulated"):
        nvml_backend(config("GPU_DISCOVERY = magic"))


def test_driver_version_follows_htcondor_number_form():
    """NVML's CUDA driver version 12040 is HTCondor's DriverVersion 12.4."""
    assert cuda_version_number(12040) == 12.4
    assert cuda_version_number(11080) == 11.8
