"""What this machine has: CPUs, memory, execute-directory disk, platform names, load, GPUs.

:func:`discover_machine` does the reading; the small functions that turn raw
facts into HTCondor's names (``X86_64``, ``LINUX``, ``Ubuntu22``) are pure and
tested on their own. ``NUM_CPUS`` and ``MEMORY`` (MiB) override what is detected.
"""

from __future__ import annotations

import os
import platform
import shutil
import socket

import attrs
import psutil

from daemoncore.config import Config, ConfigError
from startd.errors import DiscoveryError
from startd.gpus import GpuDevice, nvml_backend, read_gpus

#: HTCondor's Arch names for what ``platform.machine()`` reports.
ARCH_NAMES = {"x86_64": "X86_64", "amd64": "X86_64", "i386": "INTEL", "i686": "INTEL",
              "aarch64": "aarch64", "arm64": "aarch64", "ppc64le": "ppc64le", "ppc64": "ppc64"}
#: HTCondor's OpSysName for an /etc/os-release ``ID``.
DISTRO_NAMES = {"ubuntu": "Ubuntu", "debian": "Debian", "almalinux": "AlmaLinux",
                "rocky": "Rocky", "centos": "CentOS", "rhel": "RedHat", "fedora": "Fedora",
                "opensuse-leap": "openSUSE", "sles": "SLES", "amzn": "AmazonLinux", "arch": "Arch"}
OS_RELEASE = "/etc/os-release"


@attrs.frozen
class Platform:
    """The machine's platform under HTCondor's attribute names."""

    arch: str
    opsys: str
    opsys_name: str
    opsys_major_ver: int
    opsys_and_ver: str
    opsys_long_name: str


@attrs.frozen
class Machine:
    """A machine's resources as the startd offers them (overrides applied) and as detected."""

    hostname: str
    cpus: int
    memory_mb: int
    disk_kb: int
    detected_cpus: int
    detected_memory_mb: int
    platform: Platform
    load_avg: float
    gpus: tuple[GpuDevice, ...] = ()


def arch_name(machine: str) -> str:
    """HTCondor's ``Arch`` for a ``uname -m`` value (unknown ones keep their own name)."""
    return ARCH_NAMES.get(machine.lower(), machine)


def parse_os_release(text: str) -> dict[str, str]:
    """The ``KEY=value`` pairs of an os-release file, quotes removed."""
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key and not key.startswith("#"):
            fields[key] = value.strip().strip("\"'")
    return fields


def linux_platform(machine: str, os_release: str) -> Platform:
    """HTCondor's platform attributes for a Linux machine from its os-release text."""
    fields = parse_os_release(os_release)
    distro = fields.get("ID", "linux").lower()
    name = DISTRO_NAMES.get(distro, distro.capitalize() or "Linux")
    major_text = fields.get("VERSION_ID", "0").split(".")[0]
    major = int(major_text) if major_text.isdigit() else 0
    return Platform(arch=arch_name(machine), opsys="LINUX", opsys_name=name,
                    opsys_major_ver=major, opsys_and_ver=f"{name}{major}" if major else name,
                    opsys_long_name=fields.get("PRETTY_NAME", name))


def read_platform() -> Platform:
    """This machine's platform; a machine that is not Linux keeps its system name upper-cased."""
    system = platform.system()
    if system != "Linux":
        name = system or "UNKNOWN"
        return Platform(arch_name(platform.machine()), name.upper(), name, 0, name, name)
    try:
        with open(OS_RELEASE, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        text = ""
    return linux_platform(platform.machine(), text)


def free_disk_kb(path: str) -> int:
    """Free KiB on the file system holding ``path`` (or its nearest existing parent)."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    return shutil.disk_usage(probe).free // 1024


def overridden(config: Config, name: str, detected: int) -> int:
    """``detected``, or the positive whole number the knob ``name`` sets instead.

    Raises:
        DiscoveryError: the knob is not a positive whole number, naming where it was set.
    """
    try:
        value = config.param_int(name)
    except ConfigError as err:
        raise DiscoveryError(str(err)) from None
    if value is None:
        return detected
    if value < 1:
        raise DiscoveryError(f"{name} = {value}: expected a whole number of at least 1")
    return value


def discover_machine(config: Config, execute_dir: str | None = None,
                     hostname: str | None = None) -> Machine:
    """Read this machine's resources, applying ``NUM_CPUS``, ``MEMORY`` and ``GPU_DISCOVERY``.

    Args:
        config: the startd's configuration.
        execute_dir: where sandboxes go (default: the ``EXECUTE`` knob); its free space is ``Disk``.
        hostname: the machine's name in slot names (default: ``FULL_HOSTNAME``, else this host's).

    Raises:
        DiscoveryError: an override or ``GPU_DISCOVERY`` is malformed.
    """
    host = hostname or config.param("FULL_HOSTNAME") or socket.getfqdn()
    cpus = os.cpu_count() or 1
    memory = psutil.virtual_memory().total // (1024 * 1024)
    execute = execute_dir or config.param("EXECUTE") or "."
    return Machine(
        hostname=host,
        cpus=overridden(config, "NUM_CPUS", cpus),
        memory_mb=overridden(config, "MEMORY", memory),
        disk_kb=free_disk_kb(execute),
        detected_cpus=cpus,
        detected_memory_mb=memory,
        platform=read_platform(),
        load_avg=round(os.getloadavg()[0], 2),
        gpus=read_gpus(nvml_backend(config, seed=host)),
    )
