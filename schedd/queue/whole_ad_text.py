"""The JSON text of one job's whole ad, as :func:`schedd.queue.answers.job_line` writes
it for a query without a projection, remembering what a loop of submits repeats: the
submit route answers each submit with its first job's ad, and submits of one
description give the same attribute names (so the same order) and mostly the same
``name: value`` parts."""

from __future__ import annotations

from schedd.queue.answers import WireText
from schedd.queue.stored import overlaid

#: Parts and orders remembered; each table starts over when full.
MAX_REMEMBERED = 4096


class WholeAdText:
    """Writes whole-ad lines from stored pairs, as ``job_line(cluster, proc, None, wire)``."""

    def __init__(self, wire: WireText) -> None:
        self._wire = wire
        #: (name, stored text) -> its ``"name":value`` JSON part
        self._parts: dict[tuple[str, str], str] = {}
        #: the merged ad's names, as merged -> their positions in HTCondor's order
        self._orders: dict[tuple[str, ...], tuple[int, ...]] = {}

    def line(self, cluster: dict[str, tuple[str, str]], proc: list) -> bytes:
        """The NDJSON line of the job whose cluster's stored pairs (lower-case name ->
        ``(name, text)``) are ``cluster`` and whose own stored pairs are ``proc``."""
        pairs = list(overlaid(cluster, proc).values())
        names = tuple(name for name, _ in pairs)
        order = self._orders.get(names)
        if order is None:
            if len(self._orders) >= MAX_REMEMBERED:
                self._orders.clear()
            order = self._orders[names] = tuple(sorted(range(len(names)),
                                                       key=lambda at: (len(names[at]), names[at].lower())))
        parts = []
        for at in order:
            pair = pairs[at]
            part = self._parts.get(pair)
            if part is None:
                if len(self._parts) >= MAX_REMEMBERED:
                    self._parts.clear()
                part = self._parts[pair] = f"{self._wire.name(pair[0])}:{self._wire.value(pair[1])}"
            parts.append(part)
        return ("{" + ",".join(parts) + "}\n").encode("utf-8")
