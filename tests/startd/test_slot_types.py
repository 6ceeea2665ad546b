"""Tests for startd.slot_types: HTCondor's slot layout knobs."""

import pytest

from daemoncore.config import Config
from startd.errors import SlotConfigError
from startd.slot_types import parse_amount, plan_slots
from tests.startd.conftest import make_machine


def plan(text, **machine):
    return plan_slots(Config.from_text(text, env={}), make_machine(**machine))


def test_default_is_one_partitionable_slot_with_everything():
    """No layout knobs: one partitionable slot holding the whole machine."""
    [slot] = plan("")
    assert slot.partitionable
    assert (slot.cpus, slot.memory_mb, slot.disk_kb, slot.gpu_count) == (8, 16384, 1_000_000, 2)


def test_num_slots_splits_the_machine_into_equal_static_slots():
    """NUM_SLOTS = 4 gives four static quarters."""
    slots = plan("NUM_SLOTS = 4")
    assert [s.slot_id for s in slots] == [1, 2, 3, 4]
    assert {(s.partitionable, s.cpus, s.memory_mb) for s in slots} == {(False, 2, 4096)}


def test_fixed_sizes_with_fractions_and_auto_for_the_rest():
    """Two cpus=2, memory=25% slots and a partitionable slot for what is left."""
    slots = plan("NUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_1 = cpus=2, memory=25%, gpus=1\n"
                 "NUM_SLOTS_TYPE_2 = 1\nSLOT_TYPE_2_PARTITIONABLE = true\n")
    assert [(s.cpus, s.memory_mb, s.gpu_count, s.partitionable) for s in slots] == \
        [(2, 4096, 1, False), (2, 4096, 1, False), (4, 8192, 0, True)]


@pytest.mark.parametrize("text,total,expected", [
    ("2", 8, 2), ("25%", 8, 2), ("1/4", 16, 4), ("auto", 8, None)])
def test_sizes_in_each_form(text, total, expected):
    """A size is a number, a percentage, a fraction or auto."""
    assert parse_amount("cpus", text, total, "SLOT_TYPE_1") == expected


def test_memory_sizes_take_units():
    """memory=2G is 2048 MiB; disk=1G is in KiB."""
    assert parse_amount("memory", "2G", 0, "x") == 2048
    assert parse_amount("disk", "1G", 0, "x") == 1024 * 1024


def test_asking_for_more_than_the_machine_has_is_refused():
    """Slot types that add up past the machine say how much was asked and how much there is."""
    with pytest.raises(SlotConfigError, match="ask for 12 cpus in all, but this machine has 8"):
        plan("NUM_SLOTS_TYPE_1 = 3\nSLOT_TYPE_1 = cpus=4")


def test_unknown_resource_and_bad_size_name_the_knob():
    """A typo names the knob and the accepted words."""
    with pytest.raises(SlotConfigError, match="SLOT_TYPE_1: unknown resource 'cores'"):
        plan("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cores=2")
    with pytest.raises(SlotConfigError, match="SLOT_TYPE_1: memory = 'lots' is not a size"):
        plan("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = memory=lots")


def test_more_slots_than_cpus_is_refused():
    """Every slot needs at least one CPU."""
    with pytest.raises(SlotConfigError, match="cannot each have a CPU"):
        plan("NUM_SLOTS = 9")
