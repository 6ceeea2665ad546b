"""``AdType`` and ``DaemonType``: the enums of HTCondor's ``htcondor2`` bindings, with
the collector ad type each one stands for."""

from __future__ import annotations

import enum


class AdType(enum.Enum):
    """The kinds of ads a collector holds, as ``htcondor2.AdType`` names them."""

    Any = "Any"
    Generic = "Generic"
    Slot = "Machine"
    Startd = "Machine"
    StartDaemon = "StartD"
    Schedd = "Scheduler"
    Master = "DaemonMaster"
    Collector = "Collector"
    Negotiator = "Negotiator"
    Submitter = "Submitter"
    Grid = "Grid"
    HAD = "HAD"
    License = "License"
    Credd = "CredD"
    Defrag = "Defrag"
    Accounting = "Accounting"

    @property
    def collector_type(self) -> str:
        """The ad type in the collector's routes (``Machine`` for ``Slot`` and ``Startd``)."""
        return self.value


class DaemonType(enum.Enum):
    """The daemons ``Collector.locate`` can find, as ``htcondor2.DaemonType`` names them."""

    Any = "Any"
    Master = "DaemonMaster"
    Schedd = "Scheduler"
    Startd = "Machine"
    Collector = "Collector"
    Negotiator = "Negotiator"
    Kbdd = "Kbdd"
    HAD = "HAD"
    Generic = "Generic"
    Credd = "CredD"

    @property
    def collector_type(self) -> str:
        """The ad type whose ads describe this kind of daemon."""
        return self.value


# HTCondor's version 1 bindings spelled them in the plural.
AdTypes = AdType
DaemonTypes = DaemonType
