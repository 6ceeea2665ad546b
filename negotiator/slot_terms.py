"""Slot-side rank terms remembered per slot class.

``NEGOTIATOR_PRE_JOB_RANK`` and ``NEGOTIATOR_POST_JOB_RANK`` are evaluated with the
slot as MY and the job as TARGET, but the defaults read the job only through a few
attributes it rarely has (``RemoteOwner``, ``Offline``). So a term's value depends
on the slot class and on the literal values of just those job attributes: it is
worked out once per (class, those values) instead of once per (request, class).
Anything that defeats the analysis (``eval()``, a subscript, a job attribute that is
an expression) is simply evaluated each time.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

import attrs

from classad import ClassAd, ExprTree
from classad.nodes import Call, Literal, Subscript
from classad.references import references
from classad.signature import ExpressionTexts, attribute_key

_ABSENT = ("<absent>",)


def target_reads(slot: ClassAd, node, by_value=None) -> frozenset[str] | None:
    """Lower-cased names of the job attributes ``node`` may read when evaluated in
    ``slot``'s scope (following the slot's own expressions), or None when that cannot
    be known statically. ``by_value`` stands in for :func:`looks_up_by_value` (a
    remembering one, when many slots share their trees)."""
    by_value = by_value or looks_up_by_value
    reads: set[str] = set()
    pending, seen = [node], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if by_value(node):
            return None
        internal, external = references(slot, node)
        for name in external:
            if name[:7].lower() == "target.":
                name = name[7:]
            reads.add(name.split(".")[0].lower())
        for name in internal:
            inner = slot.expression(name.split(".")[0])
            if inner is not None and type(inner) is not Literal:
                pending.append(inner)
    return frozenset(reads)


class SlotTerms:
    """The values of slot-side expressions per (slot class, job values read).
    Mutable: it fills as the cycle asks."""

    def __init__(self) -> None:
        self._reads: dict[tuple, frozenset[str] | None] = {}
        self._values: dict[tuple, float] = {}
        self._texts = ExpressionTexts()
        #: looks_up_by_value of each tree seen, by identity (the tree kept alive with it)
        self._by_value: dict[int, tuple[object, bool]] = {}

    def _looks_up_by_value(self, node) -> bool:
        hit = self._by_value.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self._by_value[id(node)] = (node, looks_up_by_value(node))
        return hit[1]

    def value(self, which: int, expr: ExprTree | None, signature: Hashable, slot: ClassAd, job: ClassAd,
              shape: Hashable = None) -> float:
        """``expr`` (term ``which``) of a slot of class ``signature`` against ``job``,
        as a number (-inf when it is not one, 0 when there is no such term). Classes of
        one ``shape`` (same names, same non-literal expressions) read the same job
        attributes, so that is worked out once per shape when one is given."""
        if expr is None:
            return 0.0
        reads_key = (which, signature if shape is None else ("shape", shape))
        if reads_key not in self._reads:
            self._reads[reads_key] = target_reads(slot, expr.node, self._looks_up_by_value)
        reads = self._reads[reads_key]
        job_key = self._job_key(job, reads) if reads is not None else None
        if job_key is None:
            return number(expr, slot, job)
        key = (which, signature, job_key)
        value = self._values.get(key)
        if value is None:
            value = self._values[key] = number(expr, slot, job)
        return value

    def _job_key(self, job: ClassAd, reads: frozenset[str]) -> tuple | None:
        """The job's literal values of ``reads``, or None when one is an expression."""
        entries = job.entries_by_key()
        out = []
        for name in sorted(reads):
            entry = entries.get(name)
            if entry is None:
                out.append(_ABSENT)
            elif type(entry.expr) is Literal:
                out.append(attribute_key(name, entry.expr, self._texts))
            else:
                return None
        return tuple(out)


def number(expr: ExprTree | None, scope: ClassAd, target, default: float = -math.inf) -> float:
    """``expr`` evaluated in ``scope`` against ``target`` as a float; ``default`` when
    it is not a number (0 when there is no expression)."""
    if expr is None:
        return 0.0
    value = expr.evaluate(scope, target)
    t = type(value)
    if t is int or t is float or t is bool:
        return float(value)
    return default


def expression_children(node) -> list:
    """The direct sub-expressions of an expression node, left to right."""
    children = []
    for field in attrs.fields(type(node)):
        value = getattr(node, field.name)
        items = value if type(value) is tuple else (value,)
        for item in items:
            if type(item) is tuple:
                item = item[1]
            if attrs.has(type(item)):
                children.append(item)
    return children


def expression_nodes(node):
    """Every node of an expression tree, parents before children, left to right;
    without recursion, as a machine list can nest thousands deep."""
    pending = [node]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(reversed(expression_children(node)))


def looks_up_by_value(node) -> bool:
    """True when an expression may read attributes whose names are computed at
    evaluation time (``eval()``, ``ad["name"]``), so no static list covers it."""
    for n in expression_nodes(node):
        if type(n) is Call and n.name.lower() in ("eval", "unparse"):
            return True
        if type(n) is Subscript:
            return True
    return False
