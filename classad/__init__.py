"""The ClassAd language: grammar, expression trees, evaluation, builtin functions,
matching and the three text forms (new syntax, old syntax, JSON).

The public names follow HTCondor's ``classad2`` module, so a script written for it
runs unchanged after ``import classad``. Nothing here does I/O or networking.

Beyond ``classad2``, daemons use these, and nothing else of the package's insides:

- :func:`compile_constraint` (with :class:`ConstraintError` and :func:`is_everything`):
  the one way to turn a query or selection constraint into a predicate.
- :func:`compile_expression`: an expression compiled once, evaluated in many ads.
- Expression trees as data, for code that walks or prints them (the negotiator, the
  wire codec, the schedd's queue): ``ExprTree.node`` is the parsed form, a frozen node
  of :mod:`classad.nodes`; ``ExprTree.from_node`` wraps a node back;
  ``ClassAd.expression(name)`` is one attribute's node and ``ClassAd.entries_by_key()``
  every attribute's :class:`Entry` (name, node, literal value or
  :data:`NOT_CONSTANT`).

Reading order, bottom up (each module imports those before it at the top of the
file): ``values``, ``limits``, ``errors``; ``nodes`` (expression trees) and ``operators``;
``functions.time_text``; ``transform`` and ``parser``; ``unparse``; the other
``functions``; ``evaluate``; ``convert``,
``references``, ``exprtree``, ``flatten``, ``matching``; ``textforms``; ``constraint``;
``ad``. The few imports still made inside functions point upward on purpose: a lower
module that builds or recognises a ``ClassAd`` (a nested ad's value), and the
functions that evaluate their argument (``eval``, ``ifThenElse``); and the time
texts ``unparse`` and ``coercion`` print, since importing ``functions.time_text``
first loads every function module.
"""

from __future__ import annotations

from typing import IO, Callable, Iterator

from classad import convert, evaluate, functions, nodes, parser, unparse
from classad.ad import ClassAd, Entry
from classad.constraint import compile_constraint, is_everything
from classad.errors import ClassAdParseError, ConstraintError
from classad.evaluate import NOT_CONSTANT, compile_expression
from classad.exprtree import ExprTree
from classad.textforms import ParserType, parse_ads
from classad.values import Value

__all__ = [
    "ClassAd", "ExprTree", "Value", "ParserType", "ClassAdParseError",
    "parseAds", "parseOne", "parseNext", "quote", "unquote", "register",
    "compile_expression", "compile_constraint", "is_everything", "ConstraintError",
    "Entry", "NOT_CONSTANT",
]


def _text_of(input: "str | IO[str]") -> str:
    if isinstance(input, str):
        return input
    if hasattr(input, "read"):
        return input.read()
    raise TypeError(f"expected text or a file, not {type(input).__name__}")


def parseAds(input: "str | IO[str]", parser: ParserType = ParserType.Auto) -> Iterator[ClassAd]:
    """Every ad in ``input`` (text or a file), in the given or detected form."""
    return parse_ads(_text_of(input), parser)


def parseOne(input: "str | IO[str]", parser: ParserType = ParserType.Auto) -> ClassAd:
    """All ads in ``input`` merged into one (later attributes win)."""
    merged = ClassAd()
    for ad in parseAds(input, parser):
        for entry in ad.entries_by_key().values():
            merged.set_expr(entry.name, entry.expr)
    return merged


def parseNext(input: "str | IO[str]", parser: ParserType = ParserType.Auto) -> ClassAd:
    """The first ad in ``input``; raises StopIteration when there is none."""
    return next(iter(parseAds(input, parser)))


def quote(text: str) -> str:
    """``text`` as a ClassAd string literal."""
    return unparse.quote_string(text)


def unquote(text: str) -> str:
    """The string value of a ClassAd string literal."""
    node = parser.parse_expression(text)
    if type(node) is not nodes.Literal or type(node.value) is not str:
        raise ClassAdParseError(f"not a string literal: {text!r}")
    return node.value


def register(function: Callable, name: str | None = None) -> None:
    """Make a Python function callable from ClassAd expressions. It receives the
    evaluated arguments as Python values and returns a Python value."""

    def call(*args):
        try:
            result = function(*(convert.value_to_python(a) for a in args))
        except Exception:
            return Value.Error
        node = convert.python_to_node(result)
        return evaluate.compile_expr(node)(None) if not hasattr(node, "value") else node.value

    fname = name or function.__name__
    functions.FUNCTIONS[fname.lower()] = functions.Builtin(fname, call, 0, None)
