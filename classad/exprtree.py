"""``ExprTree``: a parsed expression, as HTCondor's ``classad2.ExprTree``."""

from __future__ import annotations

from classad.convert import python_to_node, value_to_python
from classad.evaluate import evaluate, root_of
from classad.nodes import Literal
from classad.parser import parse_expression
from classad.unparse import unparse_expr


class ExprTree:
    """A ClassAd expression. ``ExprTree("1 + 2").eval()`` is 3."""

    __slots__ = ("_node",)

    def __init__(self, expr: "str | ExprTree") -> None:
        if isinstance(expr, ExprTree):
            self._node = expr._node
        elif isinstance(expr, str):
            self._node = parse_expression(expr)
        else:
            raise TypeError(f"ExprTree() takes expression text, not {type(expr).__name__}")

    @classmethod
    def from_node(cls, node) -> "ExprTree":
        """The expression whose parsed form is ``node`` (a :mod:`classad.nodes` node),
        without printing and re-parsing it."""
        tree = cls.__new__(cls)
        tree._node = node
        return tree

    @property
    def node(self):
        """The parsed form: a frozen :mod:`classad.nodes` node, for code that walks or
        compiles the expression (the negotiator, the schedd's queue)."""
        return self._node

    def eval(self, scope=None, target=None):
        """The Python value of the expression evaluated in ``scope`` (an ad, as if
        the expression were one of its attributes) against ``target``."""
        return value_to_python(self.evaluate(scope, target))

    def evaluate(self, scope=None, target=None):
        """Like :meth:`eval` but returns the raw ClassAd value."""
        from classad.ad import ClassAd
        if scope is None:
            scope = ClassAd()
        return evaluate(self._node, scope, None if target is None else root_of(target))

    def simplify(self, scope=None, target=None) -> "ExprTree":
        """The expression's value as a literal expression tree."""
        value = self.evaluate(scope, target)
        if type(value) is list or hasattr(value, "_attrs"):
            return ExprTree.from_node(python_to_node(value))
        return ExprTree.from_node(Literal(value))

    def __str__(self) -> str:
        return unparse_expr(self._node)

    def __repr__(self) -> str:
        return f"ExprTree({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ExprTree):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __bool__(self) -> bool:
        value = self.eval()
        if isinstance(value, bool):
            return value
        raise ValueError(f"expression {self} does not evaluate to a boolean")
