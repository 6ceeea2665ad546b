"""Converting between Python objects and ClassAd values or expression trees, the
way HTCondor's ``classad2`` bindings convert them."""

from __future__ import annotations

import datetime

from classad import nodes as e
from classad.limits import MAX_DEPTH
from classad.transform import merge_entries
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime, Value, wrap_int

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def python_to_node(value):
    """An expression tree for a Python value: literals, lists, dicts and ads."""
    from classad.ad import ClassAd
    from classad.exprtree import ExprTree

    t = type(value)
    if t in (int, float, str, bool) or isinstance(value, Value):
        if t is int:
            value = wrap_int(value)
        return e.Literal(value)
    if value is None:
        return e.Literal(UNDEFINED)
    if isinstance(value, ExprTree):
        return value._node
    if isinstance(value, ClassAd):
        entries = tuple((entry.name, entry.expr) for entry in value._ordered())
        return _shallow(e.RecordExpr(entries, e.depth_of(*(x for _, x in entries))))
    if isinstance(value, dict):
        entries = merge_entries((str(k), python_to_node(v)) for k, v in value.items())
        return _shallow(e.RecordExpr(entries, e.depth_of(*(x for _, x in entries))))
    if isinstance(value, (list, tuple)):
        items = tuple(python_to_node(v) for v in value)
        return _shallow(e.ListExpr(items, e.depth_of(*items)))
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.astimezone()
        offset = int(value.utcoffset().total_seconds())
        return e.Literal(AbsTime((value - _EPOCH).total_seconds(), offset))
    if isinstance(value, datetime.timedelta):
        return e.Literal(RelTime(value.total_seconds()))
    if isinstance(value, (AbsTime, RelTime)):
        return e.Literal(value)
    raise TypeError(f"cannot store a {t.__name__} in a ClassAd")


def _shallow(node):
    """``node``, unless it nests deeper than the parser would accept."""
    if node.depth > MAX_DEPTH:
        raise ValueError(f"a value nested more than {MAX_DEPTH} levels deep cannot be stored in a ClassAd")
    return node


def value_to_python(value):
    """A ClassAd value as the Python object ``classad2`` returns for it."""
    t = type(value)
    if t is list:
        return [value_to_python(v) for v in value]
    if t is AbsTime:
        zone = datetime.timezone(datetime.timedelta(seconds=value.offset))
        return datetime.datetime.fromtimestamp(value.seconds, zone)
    if t is RelTime:
        return value.seconds
    return value


def node_to_python(node, parent=None):
    """What ``ad[key]`` returns: a literal's value, a list or ad built from literal
    parts, or the :class:`ExprTree` itself."""
    from classad.ad import ClassAd
    from classad.exprtree import ExprTree

    t = type(node)
    if t is e.Literal:
        return value_to_python(node.value)
    if t is e.RecordExpr:
        return ClassAd.from_entries(node.entries, parent=parent)
    if t is e.ListExpr:
        return [node_to_python(i, parent) for i in node.items]
    return ExprTree.from_node(node)


__all__ = ["python_to_node", "value_to_python", "node_to_python", "ERROR", "UNDEFINED"]
