"""Printing values and expressions back as ClassAd text, the way HTCondor prints them."""

from __future__ import annotations

import math
import re

from classad import limits
from classad import nodes as e
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime

_PLAIN = re.compile(r'[ !#-\[\]-~]*\Z')  # printable ASCII without quote or backslash

_ESCAPES = {
    "\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r",
    "\b": "\\b", "\f": "\\f", "\a": "\\a", "\v": "\\v",
}


def format_real(x: float) -> str:
    """A real as HTCondor prints it: ``%.15E``, with zeros, infinities and NaN special."""
    if x == 0.0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    if math.isnan(x):
        return 'real("NaN")'
    if math.isinf(x):
        return 'real("INF")' if x > 0 else 'real("-INF")'
    return "%.15E" % x


def quote_string(s: str) -> str:
    """A string literal with HTCondor's escapes: control characters by name, bytes
    outside ASCII as three-digit octal escapes."""
    if _PLAIN.match(s):
        return f'"{s}"'
    return _escaped(s, '"')


def _escaped(s: str, quote: str) -> str:
    """``s`` between ``quote`` characters, escaped as sink.cpp escapes a string
    literal or a quoted attribute name: the quote character itself, a backslash and
    control characters by name, other control characters and non-ASCII bytes in octal."""
    out = [quote]
    for ch in s:
        if ch == quote or ch == "\\":
            out.append("\\" + ch)
        elif ch in _ESCAPES and ch != '"':
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\%03o" % ord(ch))
        elif ord(ch) < 0x80:
            out.append(ch)
        else:
            out.extend("\\%03o" % b for b in ch.encode("utf-8", "surrogateescape"))
    out.append(quote)
    return "".join(out)


def unparse_value(v: object) -> str:
    """The canonical ClassAd text of a value (as a literal expression). Raises
    :class:`~classad.limits.TooLarge` rather than build text past
    :data:`~classad.limits.MAX_STRING` (lists that share sublists can be
    exponentially long once written out)."""
    if type(v) is not list:
        return _value_text(v)
    parts: list[str] = []
    _write_list(v, parts, [0])
    return "".join(parts)


def _write_list(v: list, parts: list, size: list) -> None:
    if not v:
        parts.append("{  }")
        size[0] += 4
        return
    parts.append("{ ")
    size[0] += 4
    for i, item in enumerate(v):
        if i:
            parts.append(",")
            size[0] += 1
        if type(item) is list:
            _write_list(item, parts, size)
        else:
            text = _value_text(item)
            size[0] += len(text)
            parts.append(text)
        if size[0] > limits.MAX_STRING:
            limits.check_length(size[0])
    parts.append(" }")


def _value_text(v: object) -> str:
    if v is UNDEFINED:
        return "undefined"
    if v is ERROR:
        return "error"
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        return str(v)
    if t is float:
        return format_real(v)
    if t is str:
        return quote_string(v)
    if t is list:
        return unparse_value(v)
    if t is AbsTime:
        return f'absTime("{format_abstime(v)}")'
    if t is RelTime:
        return f'relTime("{format_reltime(v.seconds)}")'
    from classad.ad import ClassAd

    if isinstance(v, ClassAd):
        return v.unparse()
    raise TypeError(f"not a ClassAd value: {v!r}")


def format_abstime(t: AbsTime) -> str:
    """ISO 8601 text of an absolute time in its own offset."""
    from classad.functions.time_text import abstime_text
    return abstime_text(t)


def format_reltime(seconds: float) -> str:
    """A duration as HTCondor prints it (``[-][D+][HH:][MM:]SS``, whole seconds)."""
    from classad.functions.time_text import reltime_text
    return reltime_text(seconds)


_RESERVED = frozenset({"true", "false", "undefined", "error", "is", "isnt", "parent"})


def quote_name(name: str) -> str:
    """An attribute name as it must be written: bare when it is a plain identifier,
    else in single quotes."""
    if name and (name[0].isalpha() or name[0] == "_") and name.isascii() \
            and name.replace("_", "a").isalnum() and name.lower() not in _RESERVED:
        return name
    return _escaped(name, "'")


_PRINTED_OP = {"=?=": "is", "=!=": "isnt"}


def unparse_expr(node, quote=None) -> str:
    """The compact canonical text of an expression tree (HTCondor's one-line form);
    ``quote`` prints string and real literals (:func:`old_literal` for the old syntax,
    which also keeps ``=?=``/``=!=`` rather than ``is``/``isnt``)."""

    t = type(node)
    if t is e.Literal:
        kind = type(node.value)
        return unparse_value(node.value) if quote is None or (kind is not str and kind is not float) \
            else quote(node.value)
    if t is e.AttrRef:
        return ("." if node.absolute else "") + quote_name(node.name)
    if t is e.Binary:
        first, rest = e.left_spine(node)
        parts = [unparse_expr(first, quote)]
        printed = {} if quote is old_literal else _PRINTED_OP  # the old syntax keeps =?=
        for op, right in rest:
            parts.append(f" {printed.get(op, op)} {unparse_expr(right, quote)}")
        return "".join(parts)
    if t is e.Select:
        return f"{unparse_expr(node.base, quote)}.{node.name}"
    if t is e.Subscript:
        return f"{unparse_expr(node.base, quote)}[{unparse_expr(node.index, quote)}]"
    if t is e.Unary:
        return f" {node.op}{unparse_expr(node.operand, quote)}"
    if t is e.Paren:
        return f"({unparse_expr(node.inner, quote)})"
    if t is e.Ternary:
        return f"{unparse_expr(node.cond, quote)} ? {unparse_expr(node.then, quote)} : {unparse_expr(node.otherwise, quote)}"
    if t is e.Elvis:
        return f"{unparse_expr(node.left, quote)} ?: {unparse_expr(node.right, quote)}"
    if t is e.Call:
        if node.is_folded:
            return _unparse_folded(node)
        return f"{node.name}({','.join(unparse_expr(a, quote) for a in node.args)})"
    if t is e.ListExpr:
        if not node.items:
            return "{  }"
        return "{ " + ",".join(unparse_expr(i, quote) for i in node.items) + " }"
    if t is e.RecordExpr:
        return unparse_record(node.entries, quote)
    from classad.ad import ClassAd

    if isinstance(node, ClassAd):
        return node.unparse()
    raise TypeError(f"not an expression: {node!r}")


def _unparse_folded(node) -> str:
    """A time literal folded at parse time prints in its canonical form."""
    if type(node.folded) is AbsTime:
        return unparse_value(node.folded)
    return f'{node.name}("{format_reltime(node.folded)}")'


def unparse_record(entries, quote=None) -> str:
    """``[ a = 1; b = 2 ]`` from ``(name, expr)`` pairs."""
    if not entries:
        return "[  ]"
    parts = []  # a loop, not a generator: one frame less per level of nesting
    for n, x in entries:
        parts.append(f"{quote_name(n)} = {unparse_expr(x, quote)}")
    return "[ " + "; ".join(parts) + " ]"


def unparse_pretty(node, indent: int = 0) -> str:
    """The indented form HTCondor's ``unparse()`` gives for list- and ad-valued
    attributes: each nested list or ad on its own lines."""

    t = type(node)
    if t is e.ListExpr:
        pad = " " * (indent + 3)
        inner = ",\n".join(pad + "   " + unparse_pretty(i, indent + 6) for i in node.items)
        return f"\n{pad}{{\n{inner}\n{pad}}}"
    if t is e.RecordExpr:
        pad = " " * (indent + 4)
        inner = ";\n".join(f"{pad}    {quote_name(n)} = {unparse_pretty(x, indent + 8)}"
                           for n, x in node.entries)
        return f"\n{pad}[\n{inner}\n{pad}]"
    return unparse_expr(node)


def old_literal(v: str | float) -> str:
    """A string or real literal as the old syntax prints it (sink.cpp in old-ClassAd
    mode): strings by :func:`quote_old_string`, reals in ``%.16G`` with ``.0`` added
    to a whole number (``1.5``, ``100.0``, ``1E-05``, ``1E+16``)."""
    if type(v) is str:
        return quote_old_string(v)
    if v == 0.0 or not math.isfinite(v):
        return format_real(v)
    text = "%.16G" % v
    return text if "." in text or "E" in text else text + ".0"


def quote_old_string(s: str) -> str:
    """A string literal in the old syntax, where a backslash escapes only ``"``."""
    return '"' + s.replace('"', '\\"') + '"'
