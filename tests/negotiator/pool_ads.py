"""Real job and slot ClassAds shared by the negotiator tests."""

from classad import ClassAd

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
