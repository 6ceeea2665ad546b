"""Real job and slot ClassAds shared by the negotiator tests."""

from classad import ClassAd
from startd.slot_ads import WITHIN_RESOURCE_LIMITS

JOB_REQUIREMENTS = (
    '(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Memory >= RequestMemory)'
    ' && (TARGET.Cpus >= RequestCpus) && (TARGET.Disk >= RequestDisk)'
)


def job(owner="alice", cpus=1, memory=1024, disk=1000, requirements=JOB_REQUIREMENTS,
        rank="0", extra="") -> ClassAd:
    """An idle vanilla job as the schedd holds it."""
    return ClassAd(
        f'[ MyType = "Job"; Owner = "{owner}"; JobStatus = 1; RequestCpus = {cpus}; '
        f'RequestMemory = {memory}; RequestDisk = {disk}; Requirements = {requirements}; '
        f'Rank = {rank}; {extra} ]'
    )


def static_slot(name, cpus=1, memory=2048, disk=100000, opsys="LINUX", kflops=1000,
                start="true", extra="") -> ClassAd:
    """An Unclaimed static slot."""
    return ClassAd(
        f'[ MyType = "Machine"; Name = "{name}"; SlotType = "Static"; State = "Unclaimed"; '
        f'Activity = "Idle"; Arch = "X86_64"; OpSys = "{opsys}"; Cpus = {cpus}; '
        f'Memory = {memory}; Disk = {disk}; GPUs = 0; KFlops = {kflops}; Start = {start}; '
        f'Requirements = START; Rank = 0; {extra} ]'
    )


def partitionable_slot(name, cpus=8, memory=16384, disk=1000000, gpus=0, extra="") -> ClassAd:
    """An Unclaimed partitionable slot holding a whole machine."""
    return ClassAd(
        f'[ MyType = "Machine"; Name = "{name}"; SlotType = "Partitionable"; '
        f'PartitionableSlot = true; State = "Unclaimed"; Activity = "Idle"; Arch = "X86_64"; '
        f'OpSys = "LINUX"; Cpus = {cpus}; Memory = {memory}; Disk = {disk}; GPUs = {gpus}; '
        f'KFlops = 1000; Start = true; Requirements = START; Rank = 0; {extra} ]'
    )


#: The startd's own WithinResourceLimits, so a match here is one its Requirements accept.
GPU_SLOT_REQUIREMENTS = WITHIN_RESOURCE_LIMITS


def card_ad(host: int, index: int, memory=40000, numa=0, name="NVIDIA A100", free_memory=None,
            free_cores=100, shares=0, split_count=10) -> tuple[str, str]:
    """One card's nested ad as the startd advertises it: ``(attribute, ad text)``."""
    short = f"GPU-{host:04x}{index:04x}"
    free_memory = memory if free_memory is None else free_memory
    return (f"GPUs_{short.replace('-', '_')}",
            f'[ Id = "{short}"; UUID = "{short}-0000-0000-0000-000000000000"; DeviceName = "{name}"; '
            f'GlobalMemoryMb = {memory}; NumaNode = {numa}; Index = {index}; FreeMemoryMb = {free_memory}; '
            f'FreeCores = {free_cores}; Shares = {shares}; SplitCount = {split_count} ]')


def gpu_slot(name, cards, cpus=16, memory=65536, partitionable=True) -> ClassAd:
    """An Unclaimed slot with the given ``card_ad`` cards (GPUs = untouched cards)."""
    nested = "; ".join(f"{attr} = {text}" for attr, text in cards)
    available = ", ".join(attr for attr, text in cards
                          if "FreeMemoryMb = 0;" not in text and "FreeCores = 0;" not in text)
    untouched = sum("Shares = 0;" in text for _, text in cards)
    kind = "Partitionable" if partitionable else "Static"
    return ClassAd(
        f'[ MyType = "Machine"; Name = "{name}"; SlotType = "{kind}"; '
        f'PartitionableSlot = {"true" if partitionable else "false"}; State = "Unclaimed"; '
        f'Activity = "Idle"; Arch = "X86_64"; OpSys = "LINUX"; Cpus = {cpus}; Memory = {memory}; '
        f'Disk = 10000000; GPUs = {untouched}; KFlops = 1000; Start = true; '
        f'WithinResourceLimits = {GPU_SLOT_REQUIREMENTS}; Requirements = START && WithinResourceLimits; '
        f'Rank = 0; AvailableGPUs = {{ {available} }}; {nested} ]'
    )


def gpu_job(gpus=None, memory_mib=None, extra="", owner="alice") -> ClassAd:
    """An idle job asking for GPUs: ``gpus`` whole cards, or a share of ``memory_mib``."""
    parts = [extra]
    if gpus is not None:
        parts.append(f"RequestGPUs = {gpus}")
    if memory_mib is not None:
        parts.append(f"RequestGPUMemory = {memory_mib}")
    requirements = JOB_REQUIREMENTS + (" && (TARGET.GPUs >= RequestGPUs)" if memory_mib is None
                                       and "RequestGPUCores" not in extra and "Percent" not in extra else "")
    return job(owner=owner, memory=512, requirements=requirements, extra="; ".join(p for p in parts if p))
