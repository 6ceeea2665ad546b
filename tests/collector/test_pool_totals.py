"""The pool totals the collector exports: slots by state, and cpus, memory and GPUs in
total and free, counting a partitionable slot's dynamic slots once."""

from collector.pool_totals import pool_totals


def test_partitionable_dynamic_and_static_slots():
    """Totals come from partitionable and static slots; free is what the partitionable
    slot has left plus unclaimed static slots."""
    ads = [
        {"Name": "slot1@a", "State": "Unclaimed", "PartitionableSlot": True, "SlotType": "Partitionable",
         "TotalSlotCpus": 8, "Cpus": 6, "TotalSlotMemory": 16384, "Memory": 12288, "TotalSlotGPUs": 2, "GPUs": 1},
        {"Name": "slot1_1@a", "State": "Claimed", "DynamicSlot": True, "SlotType": "Dynamic",
         "TotalSlotCpus": 2, "Cpus": 2, "TotalSlotMemory": 4096, "Memory": 4096, "TotalSlotGPUs": 1},
        {"Name": "slot1@b", "State": "Claimed", "SlotType": "Static", "TotalSlotCpus": 1, "Cpus": 1,
         "TotalSlotMemory": 1024, "Memory": 1024},
        {"Name": "slot2@b", "State": "Unclaimed", "SlotType": "Static", "Cpus": 1, "Memory": 1024},
    ]
    totals = pool_totals(ads)
    assert totals.slots_by_state == {"Unclaimed": 2, "Claimed": 2}
    assert totals.total == {"cpus": 10, "memory_mb": 18432, "gpus": 2}
    assert totals.free == {"cpus": 7, "memory_mb": 13312, "gpus": 1}


def test_an_ad_with_odd_values_counts_as_nothing():
    """A non-number is no amount, a missing State is Unknown."""
    totals = pool_totals([{"Name": "x", "Cpus": "many", "State": 3}])
    assert totals.slots_by_state == {"Unknown": 1} and totals.total["cpus"] == 0


def test_running_totals_follow_ads_added_and_dropped():
    """RunningTotals of ads added and dropped equal pool_totals of those still held;
    leaving some out takes their share away."""
    from collector.pool_totals import RunningTotals

    class Held:
        def __init__(self, wire):
            self.wire = wire

    ads = [Held({"Name": f"s{n}", "State": ["Unclaimed", "Claimed", 3][n % 3], "SlotType": "Static",
                 "Cpus": n % 5, "Memory": 1024 * n, "GPUs": n % 2}) for n in range(30)]
    running = RunningTotals()
    for held in ads:
        running.added(held)
    for held in ads[:10]:
        running.dropped(held)
    assert running.totals() == pool_totals(held.wire for held in ads[10:])
    assert running.totals(ads[10:12]) == pool_totals(held.wire for held in ads[12:])
