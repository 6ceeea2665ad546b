"""Slot ads of a small GPU pool, as the collector holds them: node1's two cards, one
shared by jobs 12.0 and 12.1 and one held whole by 13.0, and node2's untouched card."""

import classad

NOW = 1_000_000


def card(short, index, free_mb=40960, free_cores=100, shares=0, total=40960, name="NVIDIA A100-SXM4-40GB"):
    return classad.ClassAd({"Id": short, "UUID": f"{short}-0000-1111-2222", "DeviceName": name,
                            "GlobalMemoryMb": total, "Index": index, "FreeMemoryMb": free_mb,
                            "FreeCores": free_cores, "Shares": shares, "SplitCount": 10})


def partitionable(host, *cards, gpus=None):
    ad = {"Name": f"slot1@{host}", "Machine": host, "SlotType": "Partitionable", "PartitionableSlot": True,
          "DynamicSlot": False, "State": "Unclaimed", "Activity": "Idle", "Arch": "X86_64", "OpSys": "LINUX",
          "OpSysAndVer": "Ubuntu22", "Cpus": 4, "Memory": 8192, "TotalSlotCpus": 8, "TotalSlotMemory": 16384,
          "TotalSlotGPUs": len(cards), "GPUs": gpus if gpus is not None else len(cards),
          "EnteredCurrentActivity": NOW}
    ad.update({f"GPUs_{c['Id'].replace('-', '_')}": c for c in cards})
    return classad.ClassAd(ad)


def dynamic(host, n, job, assigned, memory=None, cores=None, *cards):
    ad = {"Name": f"slot1_{n}@{host}", "Machine": host, "SlotType": "Dynamic", "DynamicSlot": True,
          "PartitionableSlot": False, "State": "Claimed", "Activity": "Busy", "Arch": "X86_64", "OpSys": "LINUX",
          "Cpus": 1, "Memory": 1024, "TotalSlotGPUs": len(assigned.split(",")), "AssignedGPUs": assigned,
          "JobId": job, "EnteredCurrentActivity": NOW}
    if memory is not None:
        ad.update({"AssignedGPUMemoryMb": memory, "AssignedGPUCores": cores, "GPUShareWhole": False})
    ad.update({f"GPUs_{c['Id'].replace('-', '_')}": c for c in cards})
    return classad.ClassAd(ad)


def pool():
    shared = card("GPU-aaaa0001", 0, free_mb=20480, free_cores=40, shares=2)
    taken = card("GPU-aaaa0002", 1, free_mb=0, free_cores=0, shares=1)
    return [
        partitionable("node1", shared, taken, gpus=0),
        dynamic("node1", 1, "12.0", "GPU-aaaa0001", 10240, 30, shared),
        dynamic("node1", 2, "12.1", "GPU-aaaa0001", 10240, 30, shared),
        dynamic("node1", 3, "13.0", "GPU-aaaa0002", None, None, taken),
        partitionable("node2", card("GPU-bbbb0001", 0)),
    ]
