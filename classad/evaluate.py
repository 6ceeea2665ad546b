"""Compiling expression trees into Python closures and evaluating them.

A compiled expression is a function of a :class:`Context`: the ad the expression
lives in (``scope``), the root ad of its side (``my_root``) and, while matching, the
root ad of the other side (``target_root``). An attribute found in the other side's
ad is evaluated with the two sides swapped, so that ``TARGET`` always means "the
other ad". Attribute names are lower-cased at compile time.
"""

from __future__ import annotations

from typing import Callable

from classad import codegen, limits
from classad import nodes as e
from classad import operators as ops
from classad.functions import lookup as lookup_function
from classad.parser import parse_expression
from classad.values import ERROR, UNDEFINED

Compiled = Callable[["Context"], object]

_SCOPE_WORDS = ("my", "target", "parent", "self")


#: ``Context.active`` is one dict per top-level evaluation, shared by all its contexts:
#: the attributes being evaluated (to cut reference cycles) map to True, and these
#: reserved keys hold how many nested attribute evaluations it has made, the values
#: it remembered and the sizes of the lists it built. A plain dict keeps a top-level
#: evaluation as cheap to start as it was.
_CALLS, _MEMO, _LISTS = "calls", "memo", "lists"

#: Nested attribute evaluations within one top-level evaluation before values are
#: remembered; ordinary expressions (a match, a constraint) stay below it and pay nothing.
MEMO_AFTER = 32


def new_evaluation() -> dict:
    """The shared state of a fresh top-level evaluation (see ``_CALLS``)."""
    return {}


class Context:
    """Where an expression is being evaluated (see the module docstring)."""

    __slots__ = ("scope", "my_root", "target_root", "active")

    def __init__(self, scope, my_root, target_root, active: dict) -> None:
        self.scope = scope
        self.my_root = my_root
        self.target_root = target_root
        self.active = active

    def frame_for(self, ad) -> "Context":
        """The context for evaluating an attribute that lives in ``ad``."""
        if ad is self.scope:
            return self
        root = root_of(ad)
        if root is self.target_root and root is not self.my_root:
            return Context(ad, root, self.my_root, self.active)
        return Context(ad, self.my_root, self.target_root, self.active)


def root_of(ad):
    while ad.parent is not None:
        ad = ad.parent
    return ad


def context_for(scope, target=None) -> Context:
    """A fresh top-level context: evaluate in ``scope``, matching against ``target``."""
    return Context(scope, root_of(scope), target, {})


# --- attribute lookup -------------------------------------------------------

def evaluate_entry(entry, ctx: Context):
    """The value of one stored attribute, with ``ctx.scope`` the ad holding it.
    Re-entering an attribute that is already being evaluated gives UNDEFINED, as
    HTCondor 25 does for reference cycles. Past :data:`MEMO_AFTER` attribute
    evaluations, values are remembered for the rest of the top-level evaluation."""
    const = entry.const
    if const is not NOT_CONSTANT:
        return const
    active = ctx.active
    if entry in active:
        return UNDEFINED
    fn = entry.compiled
    if fn is None:
        fn = entry.compiled = compile_expr(entry.expr)
    if active:  # nested in another attribute's evaluation
        calls = active[_CALLS] = active.get(_CALLS, 0) + 1
        if calls > MEMO_AFTER:
            return _remembered(entry, fn, ctx, active)
    active[entry] = True
    try:
        return fn(ctx)
    finally:
        del active[entry]


def _remembered(entry, fn, ctx: Context, active: dict):
    """``fn(ctx)`` through the memo of values. A value computed while a reference
    cycle was cut is remembered too: not remembering it would let a cycle under a
    doubling chain take exponential time again."""
    memo = active.get(_MEMO)
    if memo is None:
        memo = active[_MEMO] = {}
    key = (id(entry), id(ctx.scope), id(ctx.my_root), id(ctx.target_root))
    hit = memo.get(key)
    if hit is not None:
        return hit[0]
    active[entry] = True
    try:
        value = fn(ctx)
    finally:
        del active[entry]
    # the ads are kept so that their ids cannot be reused within this evaluation
    memo[key] = (value, entry, ctx.scope, ctx.my_root, ctx.target_root)
    return value


def evaluate_key(ad, key: str, target=None):
    """The raw value of ``ad``'s attribute ``key`` (already lower-cased; UNDEFINED
    if absent) against ``target``: a top-level evaluation, as daemons make it."""
    entry = ad._attrs.get(key)
    if entry is None:
        return UNDEFINED
    if target is not None and target.parent is not None:
        target = root_of(target)
    ctx = Context(ad, ad if ad.parent is None else root_of(ad), target, {})
    try:
        return evaluate_entry(entry, ctx)
    except RecursionError:
        return ERROR


def find_entry(ad, key: str):
    """The entry for ``key`` in ``ad`` or its enclosing ads, with the ad holding it."""
    while ad is not None:
        entry = ad._attrs.get(key)
        if entry is not None:
            return entry, ad
        ad = ad.parent
    return None, None


def lookup(ctx: Context, key: str):
    """An unscoped reference: the scope ad and its enclosing ads, then the target."""
    ad = ctx.scope
    while ad is not None:
        entry = ad._attrs.get(key)
        if entry is not None:
            const = entry.const
            if const is not NOT_CONSTANT:
                return const
            return evaluate_entry(entry, ctx if ad is ctx.scope else ctx.frame_for(ad))
        ad = ad.parent
    target = ctx.target_root
    if target is not None:
        entry = target._attrs.get(key)
        if entry is not None:
            const = entry.const
            if const is not NOT_CONSTANT:
                return const
            return evaluate_entry(entry, Context(target, target, ctx.my_root, ctx.active))
    return UNDEFINED


def select_from(ctx: Context, ad, key: str):
    """``ad.key``: the attribute in ``ad`` or, failing that, its enclosing ads."""
    entry, holder = find_entry(ad, key)
    if entry is None:
        if key in _SCOPE_WORDS:
            return scope_word(ctx.frame_for(ad), key)
        return UNDEFINED
    const = entry.const
    if const is not NOT_CONSTANT:
        return const
    return evaluate_entry(entry, ctx.frame_for(holder))


def scope_word(ctx: Context, key: str):
    """The ad that ``MY``, ``TARGET``, ``PARENT`` or ``SELF`` names in ``ctx``; ``SELF``,
    like ``MY``, is the ad the expression is evaluated in (attrrefs.cpp)."""
    if key == "my" or key == "self":
        return ctx.scope
    if key == "target":
        return UNDEFINED if ctx.target_root is None else ctx.target_root
    parent = ctx.scope.parent
    return UNDEFINED if parent is None else parent


def select_value(ctx: Context, base, key: str):
    """Select ``key`` from an evaluated base: an ad, or each ad of a list."""
    from classad.ad import ClassAd

    if isinstance(base, ClassAd):
        return select_from(ctx, base, key)
    if type(base) is list:
        return checked_list(ctx, [select_value(ctx, item, key) if isinstance(item, ClassAd)
                                  or item is UNDEFINED else ERROR for item in base])
    if base is UNDEFINED:
        return UNDEFINED
    return ERROR


def subscript_value(ctx: Context, base, index):
    from classad.ad import ClassAd

    if base is ERROR or index is ERROR:
        return ERROR
    if base is UNDEFINED or index is UNDEFINED:
        return UNDEFINED
    if type(base) is list:
        if type(index) is not int or not 0 <= index < len(base):
            return ERROR
        return base[index]
    if isinstance(base, ClassAd) and type(index) is str:
        # operators.cpp: a subscript looks in that ad alone, unlike ad.name, which
        # goes on to the ads enclosing it: a missing attribute is undefined
        entry = base._attrs.get(index.lower())
        if entry is None:
            return UNDEFINED
        const = entry.const
        if const is not NOT_CONSTANT:
            return const
        return evaluate_entry(entry, ctx.frame_for(base))
    return ERROR


# --- compilation ------------------------------------------------------------

class _NotConstant:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT = _NotConstant()

_GENERATED_RUNTIME = codegen.runtime_names(NOT_CONSTANT)

_COMPILED: dict[int, tuple[object, Compiled]] = {}
_COMPILED_LIMIT = 200_000


def compile_expr(node) -> Compiled:
    """The closure for ``node``; compiled once per tree and remembered."""
    hit = _COMPILED.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    compiler = _COMPILERS.get(type(node))
    if compiler is None:
        raise TypeError(f"cannot compile {node!r}")
    fn = compiler(node)
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    _COMPILED[id(node)] = (node, fn)
    return fn


def _constant(value) -> Compiled:
    return lambda ctx: value


def _compile_literal(node: e.Literal) -> Compiled:
    return _constant(node.value)


def _compile_attr(node: e.AttrRef) -> Compiled:
    key = node.name.lower()
    if node.absolute:
        def absolute(ctx):
            if ctx.target_root is not None:
                return UNDEFINED
            return select_from(ctx, ctx.my_root, key)
        return absolute
    if key in _SCOPE_WORDS:
        def word(ctx):
            if find_entry(ctx.scope, key)[0] is not None:  # an attribute named MY wins
                return lookup(ctx, key)
            return scope_word(ctx, key)
        return word
    return lambda ctx: lookup(ctx, key)


def _compile_select(node: e.Select) -> Compiled:
    key = node.name.lower()
    base = node.base
    base_fn = compile_expr(base)
    if type(base) is e.AttrRef and not base.absolute:
        word = base.name.lower()
        if word == "target":
            def target_attr(ctx):
                if word in ctx.scope._attrs:
                    return select_value(ctx, base_fn(ctx), key)
                target = ctx.target_root
                if target is None:
                    return UNDEFINED
                entry = target._attrs.get(key)
                if entry is None:
                    return select_from(ctx, target, key)
                const = entry.const
                if const is not NOT_CONSTANT:
                    return const
                return evaluate_entry(entry, Context(target, target, ctx.my_root, ctx.active))
            return target_attr
        if word == "my":
            def my_attr(ctx):
                if word in ctx.scope._attrs:
                    return select_value(ctx, base_fn(ctx), key)
                return select_from(ctx, ctx.scope, key)
            return my_attr
    return lambda ctx: select_value(ctx, base_fn(ctx), key)


def _compile_subscript(node: e.Subscript) -> Compiled:
    base_fn = compile_expr(node.base)
    index_fn = compile_expr(node.index)
    return lambda ctx: subscript_value(ctx, base_fn(ctx), index_fn(ctx))


_UNARY = {"-": ops.negate, "+": ops.plus, "!": ops.logical_not, "~": ops.invert}


def _compile_unary(node: e.Unary) -> Compiled:
    operand = compile_expr(node.operand)
    apply = _UNARY[node.op]
    return lambda ctx: apply(operand(ctx))


def _compile_binary(node: e.Binary) -> Compiled:
    generated = codegen.generate(node, compile_expr, _GENERATED_RUNTIME)
    if generated is not None:
        return generated
    return _compile_binary_closure(node)


def _compile_binary_closure(node: e.Binary) -> Compiled:
    if type(node.left) is e.Binary:
        return _compile_chain(node)
    op = node.op
    left = compile_expr(node.left)
    right = compile_expr(node.right)
    if op == "&&":
        return _compile_and(left, right)
    if op == "||":
        return _compile_or(left, right)
    if op == "=?=":
        return lambda ctx: ops.identical(left(ctx), right(ctx))
    if op == "=!=":
        return lambda ctx: ops.not_identical(left(ctx), right(ctx))
    if op in ops.COMPARISON:
        constant = node.right.value if type(node.right) is e.Literal else NOT_CONSTANT
        return _compile_comparison(op, left, right, constant)
    if op in ops.ARITHMETIC:
        return _compile_arithmetic(op, left, right)
    return lambda ctx: ops.bitwise(op, left(ctx), right(ctx))


def _compile_and(left: Compiled, right: Compiled) -> Compiled:
    def and_(ctx):
        a = left(ctx)
        if a is True:
            b = right(ctx)
            if type(b) is bool:
                return b
            return ops.logical_and(True, lambda: b)
        if a is False:
            return False
        return ops.logical_and(a, lambda: right(ctx))
    return and_


def _compile_or(left: Compiled, right: Compiled) -> Compiled:
    def or_(ctx):
        a = left(ctx)
        if a is False:
            b = right(ctx)
            if type(b) is bool:
                return b
            return ops.logical_or(False, lambda: b)
        if a is True:
            return True
        return ops.logical_or(a, lambda: right(ctx))
    return or_


def _compile_chain(node: e.Binary) -> Compiled:
    """A left-nested chain (``a || b || c``, ``x + 1 > y``) as one loop over its
    operands, so that neither compiling nor evaluating it recurses per operator."""
    first, rest = e.left_spine(node)
    first_fn = compile_expr(first)
    ops_used = {op for op, _ in rest}
    rights = list(map(compile_expr, (right for _, right in rest)))
    if ops_used == {"&&"}:
        return _compile_logic_chain(first_fn, rights, True, False, _and_step)
    if ops_used == {"||"}:
        return _compile_logic_chain(first_fn, rights, False, True, _or_step)
    steps = [(_STEPS.get(op) or _generic_step(op), fn) for (op, _), fn in zip(rest, rights)]

    def chain(ctx):
        a = first_fn(ctx)
        for step, right in steps:
            a = step(a, right, ctx)
        return a
    return chain


def _compile_logic_chain(first: Compiled, rights: list, neutral: bool, absorbing: bool, step) -> Compiled:
    """A chain of ``&&`` (neutral True, absorbing False) or of ``||`` (the reverse):
    booleans take the fast path, anything else goes through ``step``'s full rules."""
    def logic_chain(ctx):
        a = first(ctx)
        for right in rights:
            if a is neutral:
                a = right(ctx)
                if type(a) is not bool:
                    a = step(neutral, right, ctx, a)
            elif a is absorbing:
                return absorbing
            else:
                a = step(a, right, ctx)
        return a
    return logic_chain


def _and_step(a, right: Compiled, ctx, b=NOT_CONSTANT):
    """``a && right``, with ``a`` (and perhaps ``right``'s value ``b``) already
    evaluated, as :func:`_compile_and` does it."""
    if a is False:
        return False
    if a is True:
        if b is NOT_CONSTANT:
            b = right(ctx)
        return b if type(b) is bool else ops.logical_and(True, lambda: b)
    return ops.logical_and(a, lambda: right(ctx))


def _or_step(a, right: Compiled, ctx, b=NOT_CONSTANT):
    """``a || right``, the mirror image of :func:`_and_step`."""
    if a is True:
        return True
    if a is False:
        if b is NOT_CONSTANT:
            b = right(ctx)
        return b if type(b) is bool else ops.logical_or(False, lambda: b)
    return ops.logical_or(a, lambda: right(ctx))


def _generic_step(op: str):
    if op in ops.COMPARISON:
        fast = _FAST_COMPARE[op]
        fold = ops.fold_case

        def compare_step(a, right, ctx):
            b = right(ctx)
            ta = type(a)
            if ta is type(b):
                if ta is int or ta is float:
                    return fast(a, b)
                if ta is str:
                    return fast(fold(a), fold(b))
            return ops.compare(op, a, b)
        return compare_step
    if op in ops.ARITHMETIC:
        return lambda a, right, ctx: ops.arithmetic(op, a, right(ctx))
    return lambda a, right, ctx: ops.bitwise(op, a, right(ctx))


_STEPS = {
    "&&": _and_step,
    "||": _or_step,
    "=?=": lambda a, right, ctx: ops.identical(a, right(ctx)),
    "=!=": lambda a, right, ctx: ops.not_identical(a, right(ctx)),
}


_FAST_COMPARE = {
    "==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
    "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y,
}


def _compile_comparison(op: str, left: Compiled, right: Compiled, constant=NOT_CONSTANT) -> Compiled:
    fast = _FAST_COMPARE[op]
    fold = ops.fold_case
    slow = ops.compare
    if type(constant) is str:
        folded = fold(constant)

        def against_string(ctx):
            a = left(ctx)
            if type(a) is str:
                return fast(fold(a), folded)
            return slow(op, a, constant)
        return against_string
    if type(constant) is int or type(constant) is float:
        kind = type(constant)

        def against_number(ctx):
            a = left(ctx)
            if type(a) is kind:
                return fast(a, constant)
            return slow(op, a, constant)
        return against_number

    def comparison(ctx):
        a = left(ctx)
        b = right(ctx)
        ta = type(a)
        if ta is type(b):
            if ta is int or ta is float:
                return fast(a, b)
            if ta is str:
                return fast(fold(a), fold(b))
        return slow(op, a, b)
    return comparison


def _compile_arithmetic(op: str, left: Compiled, right: Compiled) -> Compiled:
    slow = ops.arithmetic
    if op == "+":
        def add(ctx):
            a = left(ctx)
            b = right(ctx)
            if type(a) is int and type(b) is int:
                s = a + b
                if -0x8000000000000000 <= s <= 0x7FFFFFFFFFFFFFFF:
                    return s
            return slow("+", a, b)
        return add
    if op == "*":
        def mul(ctx):
            a = left(ctx)
            b = right(ctx)
            if type(a) is int and type(b) is int:
                s = a * b
                if -0x8000000000000000 <= s <= 0x7FFFFFFFFFFFFFFF:
                    return s
            return slow("*", a, b)
        return mul
    return lambda ctx: slow(op, left(ctx), right(ctx))


def _compile_ternary(node: e.Ternary) -> Compiled:
    cond = compile_expr(node.cond)
    then = compile_expr(node.then)
    otherwise = compile_expr(node.otherwise)

    def ternary(ctx):
        c = ops.truth(cond(ctx))
        if c is True:
            return then(ctx)
        if c is False:
            return otherwise(ctx)
        return c
    return ternary


def _compile_elvis(node: e.Elvis) -> Compiled:
    left = compile_expr(node.left)
    right = compile_expr(node.right)

    def elvis(ctx):
        a = left(ctx)
        return right(ctx) if a is UNDEFINED else a
    return elvis


def _compile_paren(node: e.Paren) -> Compiled:
    return compile_expr(node.inner)


def _compile_list(node: e.ListExpr) -> Compiled:
    items = list(map(compile_expr, node.items))  # map: one frame less per level than a comprehension
    return lambda ctx: checked_list(ctx, [item(ctx) for item in items])


def checked_list(ctx: Context, value: list):
    """``value``, or ERROR when it holds, nested lists included, more than
    :data:`~classad.limits.MAX_LIST` elements or nests deeper than
    :data:`~classad.limits.MAX_DEPTH`: lists that share sublists (``l2 = {l1, l1}``)
    would otherwise grow exponentially along a chain of attributes."""
    if not any(type(item) is list for item in value):
        return value if len(value) <= limits.MAX_LIST else ERROR
    known = ctx.active.get(_LISTS)
    if known is None:
        known = ctx.active[_LISTS] = {}
    weight, depth = list_size(value, known)
    if weight > limits.MAX_LIST or depth > limits.MAX_DEPTH:
        return ERROR
    return value


def list_size(value: list, known: dict) -> tuple[int, int]:
    """``(elements, depth)`` of a list value, nested lists counted in full; ``known``
    remembers the sizes of lists already measured (by id, keeping them alive)."""
    hit = known.get(id(value))
    if hit is not None:
        return hit[1], hit[2]
    weight, depth = len(value), 1
    for item in value:
        if type(item) is list:
            w, d = list_size(item, known)
            weight += w
            depth = max(depth, d + 1)
            if weight > limits.MAX_LIST or depth > limits.MAX_DEPTH:
                break
    known[id(value)] = (value, weight, depth)
    return weight, depth


def _compile_record(node: e.RecordExpr) -> Compiled:
    from classad.ad import ClassAd

    entries = node.entries
    return lambda ctx: ClassAd.from_entries(entries, parent=ctx.scope)


def _compile_call(node: e.Call) -> Compiled:
    if node.is_folded:
        return _constant(node.folded)
    name = node.name
    thunks = list(map(compile_expr, node.args))
    for thunk, arg in zip(thunks, node.args):
        thunk.node = arg  # lazy builtins (unparse, unresolved) read the expressions
    count = len(thunks)

    def call(ctx):
        builtin = lookup_function(name)
        if builtin is None or not builtin.accepts(count):
            return ERROR
        try:
            if builtin.lazy:
                result = builtin.impl(ctx, thunks)
            else:
                result = builtin.impl(*[t(ctx) for t in thunks])
        except (RecursionError, limits.TooLarge, TimeoutError):
            return ERROR
        t = type(result)
        if t is str:
            return result if len(result) <= limits.MAX_STRING else ERROR
        if t is list:
            return checked_list(ctx, result)
        return result
    return call


_COMPILERS = {
    e.Literal: _compile_literal,
    e.AttrRef: _compile_attr,
    e.Select: _compile_select,
    e.Subscript: _compile_subscript,
    e.Unary: _compile_unary,
    e.Binary: _compile_binary,
    e.Ternary: _compile_ternary,
    e.Elvis: _compile_elvis,
    e.Paren: _compile_paren,
    e.ListExpr: _compile_list,
    e.RecordExpr: _compile_record,
    e.Call: _compile_call,
}


def evaluate(node, scope, target=None):
    """Evaluate ``node`` as if it were an attribute of ``scope``, matching against
    ``target``; runaway recursion gives ERROR rather than an exception."""
    fn = compile_expr(node)
    try:
        return fn(context_for(scope, target))
    except RecursionError:
        return ERROR


def compile_expression(expr) -> Callable:
    """A function ``f(scope, target=None)`` giving the raw value of ``expr`` (text, an
    ExprTree or a tree node) evaluated as an attribute of ``scope``: for daemons that
    evaluate one constraint against many ads, without the per-call wrapping."""
    from classad.exprtree import ExprTree

    node = expr._node if isinstance(expr, ExprTree) else parse_expression(expr) if isinstance(expr, str) else expr
    fn = compile_expr(node)

    def evaluate_in(scope, target=None):
        root = scope if scope.parent is None else root_of(scope)
        if target is not None and target.parent is not None:
            target = root_of(target)
        try:
            return fn(Context(scope, root, target, {}))
        except RecursionError:
            return ERROR
    return evaluate_in
