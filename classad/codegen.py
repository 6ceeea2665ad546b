"""Compiling small expressions into one generated Python function.

The closure compiler (:mod:`classad.evaluate`) makes a Python call for every node;
the negotiator's Requirements and Rank (``TARGET.Memory >= RequestMemory && ...``)
spend most of their time in those calls. Here the common shapes (literals, attribute
references whose value is a literal, comparisons, ``&&``/``||``, integer ``+``/``*``)
are written out as the statements of one function, and every case those statements
do not settle goes to the node's ordinary closure, so the answers are the closures'
answers. The source depends only on the expression's shape (constants and closures
are arguments of a factory), so each shape is compiled by Python once.
"""

from __future__ import annotations

import functools
from typing import Callable

from classad import nodes as e
from classad import operators as ops

#: Expressions with more nodes (or nested deeper) keep their closures: generated
#: code is for the short expressions evaluated over and over.
MAX_NODES = 80
MAX_DEPTH = 12

_COMPARE = ("==", "!=", "<", "<=", ">", ">=")
_FACTORIES_LIMIT = 4096


class _TooBig(Exception):
    """The expression is outside what is generated; its closure is used instead."""


class _Writer:
    """Source lines of one generated function plus the values it closes over."""

    def __init__(self, fallback: Callable) -> None:
        self.fallback = fallback
        self.lines: list[str] = []
        self.args: list[object] = []
        self.temps = 0
        self.nodes = 0

    def arg(self, value) -> str:
        self.args.append(value)
        return f"a{len(self.args) - 1}"

    def temp(self) -> str:
        self.temps += 1
        return f"v{self.temps}"

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def closure(self, node, indent: int) -> str:
        """A temp holding the node's value computed by its ordinary closure."""
        out = self.temp()
        self.emit(indent, f"{out} = {self.arg(self.fallback(node))}(ctx)")
        return out


def generate(node, fallback: Callable, runtime: dict) -> Callable | None:
    """One function of the context computing ``node``, or None when the expression
    is too big or has nothing worth generating. ``fallback(node)`` is the closure
    compiler; ``runtime`` names the evaluator's helpers the code calls."""
    writer = _Writer(fallback)
    try:
        result = _node(writer, node, 1, 0)
    except _TooBig:
        return None
    header = ["def fn(ctx):", "    sa = ctx.scope._attrs",
              "    tr = ctx.target_root",
              "    ta = None if tr is None or 'target' in sa else tr._attrs",
              "    sm = None if 'my' in sa else sa"]
    source = "\n".join(header + writer.lines + [f"    return {result}"])
    params = ", ".join(f"a{i}" for i in range(len(writer.args)))
    factory = _factory(f"def make({params}):\n" + _indent(source) + "\n    return fn\n", runtime)
    return factory(*writer.args)


def _indent(source: str) -> str:
    return "\n".join("    " + line for line in source.splitlines())


@functools.lru_cache(maxsize=_FACTORIES_LIMIT)
def _factory_cached(source: str, runtime_id: int):
    namespace = dict(_RUNTIMES[runtime_id])
    exec(compile(source, "<classad generated>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["make"]


_RUNTIMES: dict[int, dict] = {}


def _factory(source: str, runtime: dict):
    _RUNTIMES[id(runtime)] = runtime
    return _factory_cached(source, id(runtime))


def _node(w: _Writer, node, indent: int, depth: int) -> str:
    """Emit statements computing ``node`` at ``indent``; the name holding its value."""
    w.nodes += 1
    if w.nodes > MAX_NODES or depth > MAX_DEPTH:
        raise _TooBig
    t = type(node)
    if t is e.Paren:
        return _node(w, node.inner, indent, depth + 1)
    if t is e.Literal:
        return w.arg(node.value)
    if t is e.AttrRef:
        return _attr(w, node, indent)
    if t is e.Select:
        return _select(w, node, indent)
    if t is e.Binary:
        return _binary(w, node, indent, depth)
    if t is e.Unary:
        operand = _node(w, node.operand, indent, depth + 1)
        out = w.temp()
        w.emit(indent, f"{out} = {w.arg(_UNARY[node.op])}({operand})")
        return out
    return w.closure(node, indent)


def _const_of(w: _Writer, node, table: str, key: str, indent: int) -> str:
    """The literal value of ``key`` in the attribute dict named ``table`` when there
    is one; otherwise the node's closure decides (parents, target, evaluation)."""
    out = w.temp()
    w.emit(indent, f"x = None if {table} is None else {table}.get({key!r})")
    w.emit(indent, f"{out} = NC if x is None else x.const")
    w.emit(indent, f"if {out} is NC:")
    w.emit(indent + 1, f"{out} = {w.arg(w.fallback(node))}(ctx)")
    return out


def _attr(w: _Writer, node: e.AttrRef, indent: int) -> str:
    key = node.name.lower()
    if node.absolute or key in ("my", "target", "parent", "self"):
        return w.closure(node, indent)
    return _const_of(w, node, "sa", key, indent)


def _select(w: _Writer, node: e.Select, indent: int) -> str:
    base = node.base
    if type(base) is e.AttrRef and not base.absolute:
        word = base.name.lower()
        if word == "target":
            return _const_of(w, node, "ta", node.name.lower(), indent)
        if word == "my":
            return _const_of(w, node, "sm", node.name.lower(), indent)
    return w.closure(node, indent)


def _binary(w: _Writer, node: e.Binary, indent: int, depth: int) -> str:
    first, rest = e.left_spine(node)
    acc = w.temp()
    w.emit(indent, f"{acc} = {_node(w, first, indent, depth + 1)}")
    for op, right in rest:
        if op == "&&" or op == "||":
            _logic_step(w, op, acc, right, indent, depth)
        else:
            value = _node(w, right, indent, depth + 1)
            _value_step(w, op, acc, value, right, indent)
    return acc


def _logic_step(w: _Writer, op: str, acc: str, right, indent: int, depth: int) -> None:
    """``acc = acc && right`` (or ``||``) as the closures' and/or steps do it: the
    right side is evaluated only when the left is the neutral boolean."""
    neutral, absorbing = ("True", "False") if op == "&&" else ("False", "True")
    combine = "logical_and" if op == "&&" else "logical_or"
    w.emit(indent, f"if {acc} is {neutral}:")
    value = _node(w, right, indent + 1, depth + 1)
    w.emit(indent + 1, f"{acc} = {value} if type({value}) is bool else "
                       f"ops.{combine}({neutral}, lambda: {value})")
    w.emit(indent, f"elif {acc} is not {absorbing}:")
    w.emit(indent + 1, f"{acc} = ops.{combine}({acc}, lambda: {w.arg(w.fallback(right))}(ctx))")


def _value_step(w: _Writer, op: str, acc: str, value: str, right, indent: int) -> None:
    """``acc = acc op value`` for a non-logical operator, fast paths first."""
    if op in _COMPARE:
        if type(right) is e.Literal and type(right.value) is str:
            folded = w.arg(ops.fold_case(right.value))
            w.emit(indent, f"if type({acc}) is str:")
            w.emit(indent + 1, f"{acc} = fold({acc}) {op} {folded}")
        else:
            w.emit(indent, f"if type({acc}) is type({value}) and (type({acc}) is int or type({acc}) is float):")
            w.emit(indent + 1, f"{acc} = {acc} {op} {value}")
            w.emit(indent, f"elif type({acc}) is str and type({value}) is str:")
            w.emit(indent + 1, f"{acc} = fold({acc}) {op} fold({value})")
        w.emit(indent, "else:")
        w.emit(indent + 1, f"{acc} = ops.compare({op!r}, {acc}, {value})")
    elif op == "=?=" or op == "=!=":
        name = "identical" if op == "=?=" else "not_identical"
        w.emit(indent, f"{acc} = ops.{name}({acc}, {value})")
    elif op in ops.ARITHMETIC:
        if op in ("+", "-", "*"):
            w.emit(indent, f"if type({acc}) is int and type({value}) is int and "
                           f"-0x8000000000000000 <= {acc} {op} {value} <= 0x7FFFFFFFFFFFFFFF:")
            w.emit(indent + 1, f"{acc} = {acc} {op} {value}")
            w.emit(indent, "else:")
            w.emit(indent + 1, f"{acc} = ops.arithmetic({op!r}, {acc}, {value})")
        elif op == "/":  # non-negative integers divide as C does; the rest as operators.py
            w.emit(indent, f"if type({acc}) is int and type({value}) is int and {acc} >= 0 and {value} > 0:")
            w.emit(indent + 1, f"{acc} = {acc} // {value}")
            w.emit(indent, "else:")
            w.emit(indent + 1, f"{acc} = ops.arithmetic({op!r}, {acc}, {value})")
        else:
            w.emit(indent, f"{acc} = ops.arithmetic({op!r}, {acc}, {value})")
    else:
        w.emit(indent, f"{acc} = ops.bitwise({op!r}, {acc}, {value})")


_UNARY = {"-": ops.negate, "+": ops.plus, "!": ops.logical_not, "~": ops.invert}


def runtime_names(not_constant) -> dict:
    """The names generated code uses besides its own arguments."""
    return {"NC": not_constant, "ops": ops, "fold": ops.fold_case}
