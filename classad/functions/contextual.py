"""Builtins that need more than their arguments' values: the scope they are
evaluated in, or the unevaluated argument expressions (``ifThenElse`` must not
evaluate the branch it does not take; ``unparse`` prints an attribute's expression).
"""

from __future__ import annotations

from classad import nodes as e
from classad import operators as ops
from classad.errors import ClassAdParseError
from classad.functions import builtin
from classad.functions.coercion import to_string
from classad.functions.regex import compile_pattern
from classad.parser import parse_expression
from classad.unparse import unparse_pretty
from classad.values import ERROR, UNDEFINED


@builtin("ifThenElse", 3, lazy=True)
def if_then_else(ctx, args):
    cond = ops.truth(args[0](ctx))
    if cond is True:
        return args[1](ctx)
    if cond is False:
        return args[2](ctx)
    return cond


@builtin("debug", 1, lazy=True)
def debug(ctx, args):
    return args[0](ctx)


@builtin("eval", 1, lazy=True)
def eval_(ctx, args):
    """Parse a string as an expression and evaluate it where ``eval`` was called."""
    from classad.evaluate import compile_expr

    text = args[0](ctx)
    if text is UNDEFINED or text is ERROR:
        return ERROR
    # fnCall.cpp eval: the argument is converted to a string first, so a time is
    # parsed from its printed form (and is not an expression: error)
    text = to_string(text)
    if type(text) is not str:
        return ERROR
    try:
        node = parse_expression(text)
    except ClassAdParseError:
        return ERROR
    return compile_expr(node)(ctx)


def _ads_in(value):
    from classad.ad import ClassAd

    return isinstance(value, ClassAd)


def _each_ad(ctx, args):
    """The contexts of the ads in the second argument's list (None for an element
    that is not an ad), or the UNDEFINED/ERROR value the whole call gives."""
    ads = args[1](ctx)
    if ads is UNDEFINED:
        return UNDEFINED
    if type(ads) is not list:
        return ERROR
    return [(ctx.frame_for(ad) if _ads_in(ad) else None, ad) for ad in ads]


def _per_ad_expression(ctx, thunk):
    """What to evaluate in each ad: when the first argument names an attribute of the
    calling ad (``MY.RequireGPUs``), that attribute's expression, else the argument."""
    from classad.evaluate import compile_expr, find_entry

    node = thunk.node
    if type(node) is e.Select and type(node.base) is e.AttrRef and node.base.name.lower() == "my":
        name = node.name
    elif type(node) is e.AttrRef and not node.absolute:
        name = node.name
    else:
        return thunk
    entry, _ = find_entry(ctx.scope, name.lower())
    return thunk if entry is None else compile_expr(entry.expr)


@builtin("evalInEachContext", 2, lazy=True)
def eval_in_each_context(ctx, args):
    """The first argument evaluated with each ad of the list as its scope."""
    frames = _each_ad(ctx, args)
    if type(frames) is not list:
        return frames
    expr = _per_ad_expression(ctx, args[0])
    return [expr(frame) if frame is not None else (UNDEFINED if ad is UNDEFINED else ERROR)
            for frame, ad in frames]


@builtin("countMatches", 2, lazy=True)
def count_matches(ctx, args):
    """How many ads of the list the first argument is true in; an undefined list holds
    none, so the count is 0 (HTCondor's countMatches, unlike evalInEachContext)."""
    frames = _each_ad(ctx, args)
    if frames is UNDEFINED:
        return 0
    if type(frames) is not list:
        return frames
    expr = _per_ad_expression(ctx, args[0])
    return sum(1 for frame, _ in frames if frame is not None and ops.truth(expr(frame)) is True)


def _referenced_expression(ctx, node):
    """The expression an attribute-reference argument names, or None."""
    from classad.evaluate import find_entry

    entry, _ = find_entry(ctx.scope, node.name.lower())
    if entry is None and ctx.target_root is not None:
        entry = ctx.target_root._attrs.get(node.name.lower())
    return None if entry is None else entry.expr


@builtin("unparse", 1, lazy=True)
def unparse(ctx, args):
    """The text of the expression of the attribute named by the argument."""

    node = args[0].node
    if type(node) is e.Select:
        return ""
    if type(node) is not e.AttrRef or node.absolute:
        return ERROR
    found = _referenced_expression(ctx, node)
    if found is None:
        return ""
    return unparse_pretty(found)


@builtin("unresolved", 1, 2, lazy=True)
def unresolved(ctx, args):
    """The attributes the named attribute's expression refers to that neither this ad
    nor its enclosing ads define (comma-joined), or with a regex whether any match."""
    from classad.references import unresolved_names

    node = args[0].node
    if type(node) is not e.AttrRef or node.absolute:
        return ERROR
    from classad.evaluate import find_entry

    entry, holder = find_entry(ctx.scope, node.name.lower())
    if entry is None:
        return UNDEFINED
    names = unresolved_names(holder, entry.expr)
    if len(args) == 1:
        return ",".join(names)
    pattern = args[1](ctx)
    if type(pattern) is not str:
        return ERROR
    rx = compile_pattern(pattern, "i")
    if rx is None:
        return ERROR
    return any(rx.search(n) for n in names)
