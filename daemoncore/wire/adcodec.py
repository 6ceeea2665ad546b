"""ClassAds on the wire, in HTCondor's JSON form, converted straight from and to
expression trees (no JSON text in between), so that a query of 100,000 jobs spends
its time sending, not re-parsing.

An attribute whose expression is a literal travels as the JSON value (a string,
number, boolean, or ``null`` for UNDEFINED); a list or nested ad as a JSON array or
object of such values; any other expression as the string ``"/Expr(<text>)/"``
(HTCondor writes it ``"\\/Expr(...)\\/"``; in JSON both spell the same string). The
daemons and the bindings send and receive every ad through :func:`ad_to_json` and
:func:`ad_from_json`; what comes off the wire is always a ``classad.ClassAd``. (The
command-line tools print ``-json`` with ``ClassAd.printJson``, HTCondor's indented
text of the same form.)
"""

from __future__ import annotations

import json

from classad import ClassAd, Entry, ExprTree, ParserType, Value, parseOne
from classad.ad import NO_WIRE
from classad.errors import ClassAdParseError
from classad.nodes import ListExpr, Literal, RecordExpr
from classad.unparse import unparse_expr
from classad.values import wrap_int
from daemoncore.wire.errors import BadRequest

#: Most attributes one ad on the wire may have.
MAX_ATTRIBUTES = 10_000
#: Entries read off the wire kept for later ads to share (forgotten all at once when
#: full), and the longest text value kept so: at most a few tens of MiB, whatever is sent.
MAX_SHARED_ENTRIES = 16_384
MAX_SHARED_TEXT = 1024

_EXPR_PREFIX = "/Expr("
_EXPR_SUFFIX = ")/"
_PLAIN = (bool, int, str)
_NESTED = (list, dict)
_UNDEFINED = Literal(Value.Undefined)
_ENTRIES: dict[tuple, Entry] = {}


class WireAdError(BadRequest, ValueError):
    """An ad from the wire is not a JSON object of attribute values; a daemon answers
    it with 400, a client sees a ValueError naming where the ad came from."""


def ad_to_json(ad: ClassAd) -> dict:
    """The JSON object of ``ad``, attributes in the ad's order. A plain value is kept on
    its entry, which the ads derived from one another share (a cluster's procs)."""
    obj = {}
    for entry in ad.ordered_entries():
        value = entry.wire
        if value is NO_WIRE:
            value = node_to_json(entry.expr)
            if type(value) not in _NESTED:  # a list or object could be changed by its reader
                entry.wire = value
        obj[entry.name] = value
    return obj


def node_to_json(node) -> object:
    """The JSON value of one attribute's expression tree node."""
    kind = type(node)
    if kind is Literal:
        value = node.value
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is float and value == value and value not in (float("inf"), float("-inf")):
            return value
        if value is Value.Undefined:
            return None
    elif kind is ListExpr or kind is RecordExpr:
        return json.loads(ClassAd.from_entries([("v", node)]).printJson())["v"]
    return f"{_EXPR_PREFIX}{unparse_expr(node)}{_EXPR_SUFFIX}"


def ad_from_json(obj: object, where: str = "ad") -> ClassAd:
    """The ClassAd of a JSON object from the wire; ``where`` names it in errors
    (``$.ads[3]``).

    Raises:
        WireAdError: ``obj`` is not an object of at most :data:`MAX_ATTRIBUTES`
            names, or a value is not an expression. Names differing only in case
            are one attribute: the later value wins, the first spelling is kept,
            as HTCondor's JSON reader does.
    """
    if not isinstance(obj, dict):
        raise WireAdError(f"{where}: a ClassAd must be a JSON object, got {type(obj).__name__}")
    if len(obj) > MAX_ATTRIBUTES:
        raise WireAdError(f"{where}: {len(obj)} attributes is more than the {MAX_ATTRIBUTES} allowed")
    entries: dict[str, Entry] = {}
    for name, value in obj.items():
        if not isinstance(name, str) or not name:
            raise WireAdError(f"{where}: attribute names must be non-empty strings, got {name!r}")
        key = name.lower()
        earlier = entries.get(key)
        if earlier is None:
            entries[key] = _entry(name, value, where)
        else:
            entries[key] = Entry(earlier.name, json_to_node(value, f"{where}.{name}"))
    return ClassAd.of_entries(entries)


def _entry(name: str, value: object, where: str) -> Entry:
    """The entry for one attribute off the wire, shared with earlier ads that had the
    same name and plain value (the jobs of a cluster, the slots of a machine): such an
    ad costs a look-up per attribute, and what is made of an entry once (its closure,
    its printed forms) serves them all."""
    kind = type(value)
    plain = kind in _PLAIN or value is None
    key = (name, kind, value) if plain and (kind is not str or len(value) <= MAX_SHARED_TEXT) else None
    if key is not None:
        entry = _ENTRIES.get(key)
        if entry is not None:
            return entry
    entry = Entry(name, json_to_node(value, f"{where}.{name}"))
    if key is not None:
        if len(_ENTRIES) >= MAX_SHARED_ENTRIES:
            _ENTRIES.clear()
        _ENTRIES[key] = entry
    return entry


def json_to_node(value: object, where: str):
    """The expression tree node for one JSON value.

    Raises:
        WireAdError: an ``"/Expr(...)/"`` string does not parse, or the value is not
            JSON data the ClassAd language can hold.
    """
    kind = type(value)
    if kind in _PLAIN:
        if kind is str and value.startswith(_EXPR_PREFIX) and value.endswith(_EXPR_SUFFIX):
            return _parsed(value[len(_EXPR_PREFIX):-len(_EXPR_SUFFIX)], where)
        return Literal(wrap_int(value) if kind is int else value)
    if value is None:
        return _UNDEFINED
    if kind is float:
        return Literal(value)
    if kind in _NESTED:
        return _nested(value, where)
    raise WireAdError(f"{where}: {kind.__name__} is not JSON data")


def _parsed(text: str, where: str):
    try:
        return ExprTree(text).node
    except (ClassAdParseError, RecursionError) as exc:
        raise WireAdError(f"{where}: expression {text!r} does not parse: {exc}") from None


def _nested(value: "list | dict", where: str):
    """A list or nested ad, read by the ClassAd JSON reader, which bounds the nesting
    and reads ``"/Expr(...)/"`` strings inside it as expressions."""
    text = json.dumps({"v": value}, ensure_ascii=False).replace("/", "\\/")
    try:
        return parseOne(text, ParserType.JSON).expression("v")
    except (ClassAdParseError, RecursionError) as exc:
        raise WireAdError(f"{where}: not a ClassAd value: {exc}") from None
