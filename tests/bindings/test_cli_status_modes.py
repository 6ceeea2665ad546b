"""condor_status -avail, -claimed/-run, -sort and -limit, by HTCondor's
src/condor_status.V6 (prettyPrint.h PMODE_*_CONSTRAINT, status.cpp main's mode
constraints and ClassadSortSpecs) and the condor_status manual page."""

from __future__ import annotations

import pytest

import classad
from bindings.cli.status import ordered, parse_arguments, render

NOW = 1_700_000_000.0


def _slot(name: str, state: str, **extra) -> classad.ClassAd:
    ad = classad.ClassAd()
    for key, value in {"Name": name, "Machine": name.split("@")[-1], "State": state, "Activity": "Idle",
                       "OpSys": "LINUX", "Arch": "X86_64", "Cpus": 1, "Memory": 512, "LoadAvg": 0.5,
                       "EnteredCurrentActivity": NOW, **extra}.items():
        ad[key] = value
    return ad


SLOTS = [_slot("slot10@b", "Unclaimed"), _slot("slot2@b", "Claimed", RemoteUser="alice@pool", ClientMachine="ap1"),
         _slot("slot1@a", "Unclaimed", Cpus=0), _slot("slot3@b", "Claimed", RemoteUser="bob@pool", ClientMachine="ap2")]


def _matching(argv: list[str]) -> list[str]:
    test = classad.ExprTree(parse_arguments(argv).constraint())
    return [ad["Name"] for ad in SLOTS if test.eval(ad) is True]


def test_avail_keeps_unclaimed_slots_with_cpus_and_memory():
    """PMODE_AVAIL_CONSTRAINT: State == "Unclaimed" && Cpus > 0 && Memory > 0."""
    assert _matching(["-avail"]) == ["slot10@b"]


@pytest.mark.parametrize("flag", ["-claimed", "-run"])
def test_claimed_keeps_claimed_slots(flag):
    """PMODE_CLAIMED_CONSTRAINT: State == "Claimed" (-run on slots is the same view)."""
    assert _matching([flag]) == ["slot2@b", "slot3@b"]


def test_claimed_compact_also_takes_partly_claimed_partitionable_slots():
    """PMODE_CLAIMED_COMPACT_CONSTRAINT adds partitionable slots with dynamic slots."""
    text = parse_arguments(["-claimed", "-compact"]).constraint()
    assert "NumDynamicSlots > 0" in text


def test_claimed_table_names_user_and_client_then_sums_per_platform():
    """The -claimed view: Name OpSys Arch LoadAv RemoteUser ClientMachine, then a
    Machines/MIPS/KFLOPS/AvgLoadAvg line per platform and a Total line."""
    request = parse_arguments(["-claimed"])
    lines = render(request, ordered(request, SLOTS[1::2]), NOW).splitlines()
    assert lines[0].split() == ["Name", "OpSys", "Arch", "LoadAv", "RemoteUser", "ClientMachine"]
    assert lines[2].split() == ["slot2@b", "LINUX", "X86_64", "0.500", "alice@pool", "ap1"]
    assert lines[5].split() == ["Machines", "MIPS", "KFLOPS", "AvgLoadAvg"]
    assert lines[7].split() == ["X86_64/LINUX", "2", "0", "0", "0.500"]
    assert lines[-1].split() == ["Total", "2", "0", "0", "0.500"]


def test_default_order_is_machine_then_name_in_natural_order():
    """status.cpp: the default sort keys are Machine and Name, compared naturally (slot2 before slot10)."""
    assert [ad["Name"] for ad in ordered(parse_arguments([]), SLOTS)] == ["slot1@a", "slot2@b", "slot3@b", "slot10@b"]


def test_sort_by_an_expression_and_limit():
    """-sort EXPR orders by that value (ties keep the collector's order); -limit N keeps N ads."""
    assert [ad["Name"] for ad in ordered(parse_arguments(["-sort", "State"]), SLOTS)] == [
        "slot2@b", "slot3@b", "slot10@b", "slot1@a"]
    assert [ad["Name"] for ad in ordered(parse_arguments(["-sort", "Cpus", "-limit", "2"]), SLOTS)] == [
        "slot10@b", "slot2@b"]
