"""Tests for startd.discovery: HTCondor's platform names and the resource overrides."""

import pytest

from daemoncore.config import Config
from startd.discovery import arch_name, discover_machine, free_disk_kb, linux_platform
from startd.errors import DiscoveryError

UBUNTU = 'NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nPRETTY_NAME="Ubuntu 22.04.3 LTS"\n'
ALMA = 'ID="almalinux"\nVERSION_ID="9.3"\n'


def config(text=""):
    return Config.from_text(text, env={"HOME": "/nonexistent"})


def test_arch_uses_htcondor_names():
    """``uname -m`` values become HTCondor's Arch names."""
    assert arch_name("x86_64") == "X86_64"
    assert arch_name("aarch64") == "aarch64"
    assert arch_name("riscv64") == "riscv64"


def test_linux_platform_names_distribution_and_major_version():
    """os-release gives OpSysName, OpSysMajorVer and OpSysAndVer as HTCondor spells them."""
    ubuntu = linux_platform("x86_64", UBUNTU)
    assert (ubuntu.opsys, ubuntu.opsys_name, ubuntu.opsys_major_ver, ubuntu.opsys_and_ver) == \
        ("LINUX", "Ubuntu", 22, "Ubuntu22")
    assert ubuntu.opsys_long_name == "Ubuntu 22.04.3 LTS"
    assert linux_platform("x86_64", ALMA).opsys_and_ver == "AlmaLinux9"
    assert linux_platform("x86_64", "").opsys_and_ver == "Linux"


def test_discovery_reads_this_machine(tmp_path):
    """Without overrides the machine's own CPUs and memory are offered."""
    machine = discover_machine(config(), execute_dir=str(tmp_path), hostname="node1")
    assert machine.hostname == "node1"
    assert machine.cpus == machine.detected_cpus >= 1
    assert machine.memory_mb == machine.detected_memory_mb > 0
    assert machine.disk_kb > 0
    assert machine.platform.arch
    assert machine.load_avg >= 0


def test_num_cpus_and_memory_override_detection(tmp_path):
    """NUM_CPUS and MEMORY replace what is offered, keeping what was detected."""
    machine = discover_machine(config("NUM_CPUS = 16\nMEMORY = 4096"), execute_dir=str(tmp_path))
    assert (machine.cpus, machine.memory_mb) == (16, 4096)
    assert machine.detected_cpus != 16 or machine.detected_memory_mb != 4096


@pytest.mark.parametrize("text", ["NUM_CPUS = lots", "MEMORY = 0"])
def test_bad_override_is_a_clear_error(tmp_path, text):
    """A non-number or zero override names the knob."""
    with pytest.raises(DiscoveryError, match=text.split()[0]):
        discover_machine(config(text), execute_dir=str(tmp_path))


def test_simulated_gpus_reach_the_machine(tmp_path):
    """GPU_DISCOVERY = simulated puts its cards on the machine."""
    machine = discover_machine(config("GPU_DISCOVERY = simulated:2xA100:40G"),
                               execute_dir=str(tmp_path), hostname="gpu1")
    assert len(machine.gpus) == 2


def test_free_disk_of_a_directory_not_yet_made(tmp_path):
    """A missing execute directory reports its file system's free space."""
    assert free_disk_kb(str(tmp_path / "not" / "yet")) == free_disk_kb(str(tmp_path))
