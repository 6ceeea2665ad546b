"""HTCondor's slot layout knobs: ``NUM_SLOTS_TYPE_<n>``, ``SLOT_TYPE_<n>``,
``SLOT_TYPE_<n>_PARTITIONABLE`` and ``NUM_SLOTS``, turned into the slots to create.

A type's size is a list like ``cpus=2, memory=25%, disk=1/4, gpus=1``, or one
share of everything (``50%``, ``1/4``); what a type leaves out is ``auto``: an even
split of what fixed sizes leave. With no layout knobs the machine is one
partitionable slot holding everything, as in HTCondor 23.
"""

from __future__ import annotations

import re

import attrs

from daemoncore.config import Config, ConfigError
from startd.discovery import Machine
from startd.errors import SlotConfigError

RESOURCE_NAMES = {"cpus": "cpus", "cpu": "cpus", "c": "cpus", "memory": "memory", "mem": "memory",
                  "ram": "memory", "m": "memory", "disk": "disk", "d": "disk", "gpus": "gpus",
                  "gpu": "gpus", "g": "gpus"}
RESOURCES = ("cpus", "memory", "disk", "gpus")
_TYPE_KNOB = re.compile(r"^NUM_SLOTS_TYPE_(\d+)$", re.IGNORECASE)
_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}  # in MiB
AUTO = None


@attrs.frozen
class SlotPlan:
    """One slot to create: its number, whether it is partitionable, and its share of each resource."""

    slot_id: int
    partitionable: bool
    cpus: int
    memory_mb: int
    disk_kb: int
    gpu_count: int


def parse_amount(resource: str, text: str, total: int, where: str) -> int | None:
    """One size (``2``, ``25%``, ``1/4``, ``4G``, ``auto``) of ``resource`` out of ``total``.

    Raises:
        SlotConfigError: the size is none of those forms, naming ``where`` it was set.
    """
    value = text.strip()
    if value.lower() == "auto":
        return AUTO
    try:
        if value.endswith("%"):
            return int(total * float(value[:-1]) / 100)
        if "/" in value:
            top, bottom = value.split("/", 1)
            return int(total * float(top) / float(bottom))
        unit = value[-1:].upper()
        if unit in _UNITS and resource in ("memory", "disk"):
            mib = float(value[:-1]) * _UNITS[unit]
            return int(mib if resource == "memory" else mib * 1024)
        return int(value)
    except (ValueError, ZeroDivisionError):
        raise SlotConfigError(f"{where}: {resource} = {value!r} is not a size; expected a number, "
                              "a percentage (25%), a fraction (1/4) or auto") from None


def parse_type(text: str, machine: Machine, where: str) -> dict[str, int | None]:
    """A ``SLOT_TYPE_<n>`` value as a size (or AUTO) per resource.

    Raises:
        SlotConfigError: an item names an unknown resource or has a bad size.
    """
    totals = totals_of(machine)
    sizes: dict[str, int | None] = dict.fromkeys(RESOURCES, AUTO)
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep:
            sizes = {r: parse_amount(r, item, totals[r], where) for r in RESOURCES}
            continue
        resource = RESOURCE_NAMES.get(name.strip().lower())
        if resource is None:
            raise SlotConfigError(f"{where}: unknown resource {name.strip()!r}; expected cpus, "
                                  "memory, disk or gpus")
        sizes[resource] = parse_amount(resource, value, totals[resource], where)
    return sizes


def totals_of(machine: Machine) -> dict[str, int]:
    """The machine's amount of each resource, in the units slot sizes use."""
    return {"cpus": machine.cpus, "memory": machine.memory_mb, "disk": machine.disk_kb,
            "gpus": len(machine.gpus)}


def plan_slots(config: Config, machine: Machine) -> list[SlotPlan]:
    """The slots ``config`` lays out on ``machine``, numbered from 1 in type order.

    Raises:
        SlotConfigError: a knob is malformed or the slots need more than the machine has.
    """
    try:
        requests = _requested_slots(config, machine)
    except ConfigError as err:
        raise SlotConfigError(str(err)) from None
    return _share_out(requests, machine)


def _requested_slots(config: Config, machine: Machine) -> list[tuple[bool, dict[str, int | None]]]:
    types = sorted(int(m.group(1)) for m in map(_TYPE_KNOB.match, config.names()) if m)
    slots = []
    for n in types:
        count = config.param_int(f"NUM_SLOTS_TYPE_{n}", 0) or 0
        if count < 0:
            raise SlotConfigError(f"NUM_SLOTS_TYPE_{n} = {count}: expected 0 or more")
        spec = config.param(f"SLOT_TYPE_{n}", "auto") or "auto"
        sizes = parse_type(spec, machine, f"SLOT_TYPE_{n}")
        partitionable = bool(config.param_bool(f"SLOT_TYPE_{n}_PARTITIONABLE", False))
        slots.extend((partitionable, dict(sizes)) for _ in range(count))
    if slots:
        return slots
    count = config.param_int("NUM_SLOTS")
    if count is not None:
        if count < 1:
            raise SlotConfigError(f"NUM_SLOTS = {count}: expected 1 or more")
        return [(False, dict.fromkeys(RESOURCES, AUTO)) for _ in range(count)]
    return [(True, {r: total for r, total in totals_of(machine).items()})]


def _share_out(requests: list[tuple[bool, dict[str, int | None]]], machine: Machine) -> list[SlotPlan]:
    totals = totals_of(machine)
    final: list[dict[str, int]] = [{} for _ in requests]
    for resource in RESOURCES:
        fixed = sum(sizes[resource] or 0 for _, sizes in requests)
        autos = [i for i, (_, sizes) in enumerate(requests) if sizes[resource] is AUTO]
        left = totals[resource] - fixed
        if left < 0:
            raise SlotConfigError(f"the slot types ask for {fixed} {resource} in all, but this "
                                  f"machine has {totals[resource]}")
        for i, (_, sizes) in enumerate(requests):
            final[i][resource] = left // len(autos) if i in autos else sizes[resource]
        if resource == "cpus" and any(final[i]["cpus"] < 1 for i in range(len(requests))):
            raise SlotConfigError(f"{len(requests)} slots cannot each have a CPU; this machine "
                                  f"offers {totals['cpus']}")
    return [SlotPlan(i + 1, part, f["cpus"], f["memory"], f["disk"], f["gpus"])
            for i, ((part, _), f) in enumerate(zip(requests, final))]
