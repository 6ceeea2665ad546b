"""Roost's public Python API, with the class and method names of HTCondor's
``htcondor2`` bindings (``import bindings as htcondor`` ports a script written for
HTCondor), and the ``roost`` command-line tool built on it.

The names are loaded on first use (PEP 562), so that ``import bindings`` (and every
``roost`` command, which imports this package first) costs nothing until a name is
used, and a command loads only the modules it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: public name -> the module defining it
_HOMES = {
    "Collector": "bindings.collector",
    "AdType": "bindings.enums", "AdTypes": "bindings.enums",
    "DaemonType": "bindings.enums", "DaemonTypes": "bindings.enums",
    "JobEvent": "bindings.eventlog", "JobEventLog": "bindings.eventlog", "JobEventType": "bindings.eventlog",
    "Negotiator": "bindings.negotiator",
    "Schedd": "bindings.schedd", "JobAction": "bindings.schedd", "QueryOpt": "bindings.schedd",
    "SubmitResult": "bindings.schedd",
    "Submit": "bindings.submit",
}

__all__ = [
    "Collector", "AdType", "AdTypes", "DaemonType", "DaemonTypes",
    "Schedd", "JobAction", "QueryOpt", "SubmitResult", "Submit",
    "JobEvent", "JobEventLog", "JobEventType", "Negotiator",
]

if TYPE_CHECKING:
    from bindings.collector import Collector
    from bindings.enums import AdType, AdTypes, DaemonType, DaemonTypes
    from bindings.eventlog import JobEvent, JobEventLog, JobEventType
    from bindings.negotiator import Negotiator
    from bindings.schedd import JobAction, QueryOpt, Schedd, SubmitResult
    from bindings.submit import Submit


def __getattr__(name: str) -> object:
    """The public name ``name``, imported from its module the first time it is asked
    for; a submodule's name (``bindings.schedd``) imports that submodule, as the eager
    imports used to.

    Raises:
        AttributeError: ``name`` is not a public name of the bindings (nor a submodule).
    """
    home = _HOMES.get(name)
    if home is None:
        if name.startswith("_"):
            raise AttributeError(f"module 'bindings' has no attribute {name!r}")
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'bindings' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups find it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
