"""A slot's public ad (what the collector shows and the negotiator matches) and its
private ad (the ClaimId, readable only at DAEMON level), with HTCondor's attribute names.

GPUs follow HTCondor 23's nested form: one property ad per card in ``GPUs_GPU_<id>``,
``AvailableGPUs`` a list of references to the cards with room left, ``AssignedGPUs``
the ids a dynamic slot holds. Each card's ad also says how much of it is still free
(``FreeMemoryMb``, ``FreeCores``), which HTCondor lacks and GPU sharing needs.
"""

from __future__ import annotations

from collections.abc import Mapping

import classad
from startd.discovery import Machine
from startd.gpu_placement import CardRoom
from startd.gpus import GpuDevice, cuda_version_number

#: A slot's Requirements: its START and whether the job's requests fit what the slot has now.
WITHIN_RESOURCE_LIMITS = (
    "(TARGET.RequestCpus ?: 1) <= MY.Cpus && (TARGET.RequestMemory ?: 0) <= MY.Memory"
    " && (TARGET.RequestDisk ?: 0) <= MY.Disk"
    " && ((TARGET.RequestGPUMemory ?: TARGET.RequestGPUCores ?: 0) > 0"
    " ? (TARGET.RequestGPUs ?: 0) <= size(MY.AvailableGPUs)"
    " : (TARGET.RequestGPUs ?: 0) <= MY.GPUs)")
REQUIREMENTS = "MY.Start && MY.WithinResourceLimits"

#: URL schemes the starter fetches and uploads (transfer.urls), as HTCondor lists
#: its transfer plugins; jobs with URL inputs require their scheme here.
TRANSFER_PLUGIN_METHODS = "file,http,https,s3"


def gpu_property_ad(device: GpuDevice, room: CardRoom | None) -> classad.ClassAd:
    """One card's nested property ad, as ``condor_gpu_discovery -properties`` names them."""
    ad = classad.ClassAd()
    ad["Id"] = device.id
    ad["DeviceName"] = device.name
    ad["Capability"] = device.capability
    ad["GlobalMemoryMb"] = device.memory_mb
    ad["DriverVersion"] = cuda_version_number(device.cuda_driver_version)
    ad["MaxSupportedVersion"] = device.cuda_driver_version
    ad["NvidiaDriverVersion"] = device.driver_version
    ad["UUID"] = device.uuid
    ad["NumaNode"] = device.numa_node
    if room is not None:
        ad["FreeMemoryMb"] = room.free_memory_mb
        ad["FreeCores"] = room.free_cores
    return ad


def machine_attributes(machine: Machine, domains: Mapping[str, str]) -> dict[str, object]:
    """What every slot of ``machine`` says about the machine itself."""
    p = machine.platform
    return {
        "MyType": "Machine", "Machine": machine.hostname, "Arch": p.arch, "OpSys": p.opsys,
        "OpSysName": p.opsys_name, "OpSysMajorVer": p.opsys_major_ver,
        "OpSysAndVer": p.opsys_and_ver, "OpSysLongName": p.opsys_long_name,
        "DetectedCpus": machine.detected_cpus, "DetectedMemory": machine.detected_memory_mb,
        "TotalCpus": machine.cpus, "TotalMemory": machine.memory_mb, "TotalDisk": machine.disk_kb,
        "TotalGPUs": len(machine.gpus), "DetectedGPUs": ", ".join(g.id for g in machine.gpus),
        "TotalLoadAvg": machine.load_avg, "LoadAvg": machine.load_avg,
        "HasFileTransfer": True, "HasFileTransferPluginMethods": TRANSFER_PLUGIN_METHODS,
        "FileSystemDomain": domains.get("FileSystemDomain", machine.hostname),
        "UidDomain": domains.get("UidDomain", machine.hostname),
    }


def private_ad(name: str, machine: str, claim_id: str) -> classad.ClassAd:
    """The private ad of slot ``name``: the capability that claims it."""
    ad = classad.ClassAd()
    ad["MyType"] = "Machine"
    ad["Name"] = name
    ad["Machine"] = machine
    ad["ClaimId"] = claim_id
    return ad


def set_expression(ad: classad.ClassAd, name: str, text: str) -> None:
    """Set attribute ``name`` to the expression ``text`` (not a string)."""
    ad[name] = classad.ExprTree(text)
