"""A slot's public ad (what the collector shows and the negotiator matches) and its
private ad (the ClaimId, readable only at DAEMON level), with HTCondor's attribute names.

GPUs follow HTCondor 23's nested form: one property ad per card in ``GPUs_GPU_<id>``,
``AvailableGPUs`` a list of references to the cards with room left, ``AssignedGPUs``
the ids a dynamic slot holds. Each card's ad also says how much of it is still free
(gpushare's ``FreeMemoryMb``, ``FreeCores``, ``Shares``, ``SplitCount``, ``Index``), which
HTCondor lacks and GPU sharing needs.
"""

from __future__ import annotations

from collections.abc import Mapping

import classad
from gpushare.placement import Card, Grant
from gpushare.slot_cards import card_ad_attributes
from startd.discovery import Machine
from startd.gpus import GpuDevice, cuda_version_number

#: A slot's Requirements: its START and whether the job's requests fit what the slot has now.
#: A whole-card job needs that many untouched cards (``GPUs``); a share job (memory, percent
#: or cores given) that many cards with room (``AvailableGPUs``): a coarse check, the
#: negotiator and the claim decide each card with gpushare's model.
WITHIN_RESOURCE_LIMITS = (
    "(TARGET.RequestCpus ?: 1) <= MY.Cpus && (TARGET.RequestMemory ?: 0) <= MY.Memory"
    " && (TARGET.RequestDisk ?: 0) <= MY.Disk"
    " && ((TARGET.RequestGPUMemory =?= undefined && TARGET.RequestGPUMemoryPercent =?= undefined"
    " && TARGET.RequestGPUCores =?= undefined)"
    " ? (TARGET.RequestGPUs ?: 0) <= MY.GPUs"
    " : (TARGET.RequestGPUs ?: 1) <= size(MY.AvailableGPUs))")
REQUIREMENTS = "MY.Start && MY.WithinResourceLimits"

#: URL schemes the starter fetches and uploads (transfer.urls), as HTCondor lists
#: its transfer plugins; jobs with URL inputs require their scheme here.
TRANSFER_PLUGIN_METHODS = "file,http,https,s3"

#: The HTCondor release whose behaviour Roost follows, in HTCondor's ``$CondorVersion$``
#: form: submit makes some jobs require a version (a self-checkpointing job needs 8.9.7
#: or later, tested with ``split(TARGET.CondorVersion)[1]``).
CONDOR_VERSION = "$CondorVersion: 23.0.0 2023-09-29 BuildID: Roost PackageID: roost $"


def gpu_property_ad(device: GpuDevice, card: Card | None) -> classad.ClassAd:
    """One card's nested property ad, as ``condor_gpu_discovery -properties`` names them,
    with what is free of it when ``card`` (its state in the placement model) is given."""
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
    if card is not None:
        for name, value in card_ad_attributes(card).items():
            ad[name] = value
    return ad


def share_attributes(grants: tuple[Grant, ...]) -> dict[str, object]:
    """What a dynamic slot says of the GPUs it holds: ``GPUShareWhole``, and for a share the
    MiB and percent of cores it has on each card (the least of its cards', should a
    percent of memory come to different MiB on cards of different sizes)."""
    if not grants:
        return {}
    whole = all(grant.whole for grant in grants)
    if whole:
        return {"GPUShareWhole": True}
    return {"GPUShareWhole": False, "AssignedGPUMemoryMb": min(g.memory_mib for g in grants),
            "AssignedGPUCores": min(g.cores for g in grants)}


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
        "CondorVersion": CONDOR_VERSION, "HasFileTransfer": True, "HasSelfCheckpointTransfers": True,
        "HasFileTransferPluginMethods": TRANSFER_PLUGIN_METHODS,
        "FileSystemDomain": domains.get("FileSystemDomain", machine.hostname),
        "UidDomain": domains.get("UidDomain", machine.hostname),
    }


#: Most entries :class:`SharedEntries` keeps (forgotten all at once when full).
MAX_SHARED_ENTRIES = 8192
#: Values whose entries are shared (a list or an ad could be changed by a reader of the ad).
_PLAIN = (bool, int, float, str)


# Mutable: the entries made so far, by attribute name and value.
class SharedEntries:
    """One ClassAd entry per attribute name and plain value, shared by every slot ad made
    with it: a startd running 500 jobs keeps each one's slot ad (its ``.machine.ad``),
    and a full garbage collection scans every entry and node they hold (about 70 apiece
    when each ad had its own, 35,000 in all); most are the same between slots and
    between one ad of a slot and the next. What an entry makes once (its old-syntax
    line, its JSON value) then serves every ad that shares it."""

    def __init__(self, limit: int = MAX_SHARED_ENTRIES) -> None:
        self._limit = limit
        self._made: dict[tuple, classad.Entry] = {}

    def entry(self, name: str, value: object) -> classad.Entry:
        """The entry of attribute ``name`` holding the Python ``value`` (shared when plain)."""
        kind = type(value)
        key = (name, kind, value) if kind in _PLAIN else None
        found = self._made.get(key) if key is not None else None
        if found is None:
            found = classad.ClassAd({name: value}).entries_by_key()[name.lower()]
            if key is not None:
                if len(self._made) >= self._limit:
                    self._made.clear()
                self._made[key] = found
        return found

    def ad(self, base: classad.ClassAd, values: Mapping[str, object]) -> classad.ClassAd:
        """A new ad holding ``base``'s entries (shared, ``base`` is left as it is) with
        ``values`` set (a name ``base`` has keeps its first spelling)."""
        entries = dict(base.entries_by_key())
        for name, value in values.items():
            key = name.lower()
            old = entries.get(key)
            entries[key] = self.entry(old.name if old is not None else name, value)
        return classad.ClassAd.of_entries(entries)


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
