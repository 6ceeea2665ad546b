"""The collector's ad types: HTCondor's ``MyType`` names, the ``AdType`` spellings
that mean the same table (``Startd`` is ``Machine``), and the update and invalidate
commands that name them."""

from __future__ import annotations

import re

from attrs import frozen

ANY = "Any"

# AdType spelling (lower case) -> the MyType under which such ads are stored.
_ALIASES = {
    "startd": "Machine", "machine": "Machine", "slot": "Machine",
    "schedd": "Scheduler", "scheduler": "Scheduler",
    "master": "DaemonMaster", "daemonmaster": "DaemonMaster",
    "submitter": "Submitter", "submittor": "Submitter",
    "negotiator": "Negotiator", "collector": "Collector", "generic": "Generic",
    "accounting": "Accounting", "defrag": "Defrag", "grid": "Grid", "had": "HAD",
    "license": "License", "credd": "CredD", "any": ANY,
}

_COMMAND_TYPES = {
    "STARTD": "Machine", "SCHEDD": "Scheduler", "SUBMITTOR": "Submitter", "MASTER": "DaemonMaster",
    "NEGOTIATOR": "Negotiator", "COLLECTOR": "Collector", "ACCOUNTING": "Accounting",
    "GRID": "Grid", "HAD": "HAD", "LICENSE": "License", "DEFRAG": "Defrag",
}

_TYPE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_UPDATE = re.compile(r"^UPDATE_(?P<what>[A-Z]+)_AD(?P<ack>_WITH_ACK)?$")
_INVALIDATE = re.compile(r"^INVALIDATE_(?P<what>[A-Z]+)_ADS$")


@frozen
class Command:
    """What an HTCondor collector command asks for: ``update`` or ``invalidate`` of an
    ad type (``None`` for the generic commands, whose ads carry their own MyType)."""

    action: str
    ad_type: str | None


def canonical_ad_type(name: str) -> str:
    """The stored type for an ad type name; user-defined names are kept as written.

    Raises:
        ValueError: ``name`` is not an identifier of at most 64 characters.
    """
    if not _TYPE_NAME.match(name):
        raise ValueError(f"ad type {name!r} is not a name like Machine, Scheduler or MyType")
    return _ALIASES.get(name.lower(), name)


def parse_command(command: str) -> Command:
    """The action and ad type of a collector command such as ``UPDATE_STARTD_AD``.

    Raises:
        ValueError: ``command`` is not an update or invalidate command.
    """
    upper = command.strip().upper()
    if upper in ("UPDATE_AD_GENERIC", "MERGE_STARTD_AD"):
        return Command("update", None if upper == "UPDATE_AD_GENERIC" else "Machine")
    if upper == "INVALIDATE_ADS_GENERIC":
        return Command("invalidate", None)
    for action, pattern in (("update", _UPDATE), ("invalidate", _INVALIDATE)):
        found = pattern.match(upper)
        if found and found.group("what") in _COMMAND_TYPES:
            return Command(action, _COMMAND_TYPES[found.group("what")])
    raise ValueError(
        f"unknown collector command {command!r} (expected e.g. UPDATE_STARTD_AD or INVALIDATE_SCHEDD_ADS)"
    )
