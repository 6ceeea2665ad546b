"""HTCondor's job factory rules (late materialisation), as pure logic: a cluster
submitted with ``max_materialize`` or ``max_idle`` is kept as its submit description
and materialises its procs a few at a time, as earlier ones leave the queue.

The rules follow HTCondor's schedd (``MaterializeJobs`` and
``CheckMaterializePolicyExpression`` in ``qmgmt.cpp``, ``MaterializeNextFactoryJob``
in ``qmgmt_factory.cpp``): procs are made while the cluster holds fewer than
``JobMaterializeLimit`` procs (no limit when unset or not positive) and, when
``JobMaterializeMaxIdle`` is set, while fewer than that many of them are idle or
held; a factory that has made its last proc, or whose cluster was removed, makes no
more.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping

import attrs

#: The cluster ad attributes of a factory, named as HTCondor names them.
LIMIT = "JobMaterializeLimit"
MAX_IDLE = "JobMaterializeMaxIdle"
NEXT_PROC_ID = "JobMaterializeNextProcId"
PAUSED = "JobMaterializePaused"
TOTAL_PROCS = "TotalSubmitProcs"
#: Every attribute a factory adds to its cluster ad (and so to each proc's ad).
FACTORY_ATTRIBUTES = (LIMIT, MAX_IDLE, NEXT_PROC_ID, PAUSED, TOTAL_PROCS)

#: Submit commands that make a cluster a factory (HTCondor's ``max_materialize``,
#: ``max_idle`` and its other spelling ``materialize_max_idle``).
LIMIT_COMMAND = "max_materialize"
MAX_IDLE_COMMANDS = ("max_idle", "materialize_max_idle")


class MaterializeMode(enum.IntEnum):
    """``JobMaterializePaused``: HTCondor's ``MaterializeMode`` codes."""

    INVALID = -1
    RUNNING = 0
    HOLD = 1
    NO_MORE_ITEMS = 2
    CLUSTER_REMOVED = 3


def is_complete(mode: int) -> bool:
    """Whether a factory will never make another proc (HTCondor's ``IsComplete``:
    out of items or its cluster removed; INVALID counts too, it cannot resume)."""
    return mode in (MaterializeMode.INVALID, MaterializeMode.NO_MORE_ITEMS, MaterializeMode.CLUSTER_REMOVED)


@attrs.frozen
class FactoryState:
    """What decides how many procs a factory makes now, read from its cluster ad and
    the queue: its limits, its next proc id, its total and its present procs."""

    total_procs: int
    next_proc_id: int
    mode: int = MaterializeMode.RUNNING
    limit: int | None = None
    max_idle: int | None = None


def procs_to_make(state: FactoryState, present: int, not_running: int) -> int:
    """How many procs the factory makes now, given ``present`` procs of its cluster
    in the queue and ``not_running`` of them idle or held (HTCondor's
    ``getNumNotRunning``)."""
    if state.mode != MaterializeMode.RUNNING:
        return 0
    left = max(state.total_procs - state.next_proc_id, 0)
    if state.limit is not None and state.limit > 0:
        left = min(left, max(state.limit - present, 0))
    if state.max_idle is not None and state.max_idle >= 0:
        left = min(left, max(state.max_idle - not_running, 0))
    return left


@attrs.frozen
class FactoryDigest:
    """What a factory keeps to make any of its procs later: the self-contained submit
    description and what the submit was made with (owner, submit directory, the
    client's environment and measured file sizes, the submit time)."""

    description: str
    owner: str
    iwd: str
    qdate: int
    environ: Mapping[str, str] = attrs.field(factory=dict)
    file_sizes: Mapping[str, int] = attrs.field(factory=dict)

    def to_text(self) -> str:
        """The digest's stored form (JSON)."""
        return json.dumps({"description": self.description, "owner": self.owner, "iwd": self.iwd,
                           "qdate": self.qdate, "environ": dict(self.environ),
                           "file_sizes": dict(self.file_sizes)}, separators=(",", ":"))

    @classmethod
    def from_text(cls, text: str) -> "FactoryDigest":
        """A digest from its stored form."""
        data = json.loads(text)
        return cls(data["description"], data["owner"], data["iwd"], int(data["qdate"]),
                   data.get("environ", {}), data.get("file_sizes", {}))


__all__ = ["FACTORY_ATTRIBUTES", "FactoryDigest", "FactoryState", "MaterializeMode", "is_complete",
           "procs_to_make"]
