"""The Lark Transformer that turns the grammar's rules into expression nodes."""

from __future__ import annotations

from lark import Token, Transformer, v_args

from classad.errors import ClassAdParseError
from classad.functions.time_text import parse_abstime_text, parse_reltime_text
from classad.limits import MAX_DEPTH, MAX_INT_DIGITS
from classad.nodes import (
    AttrRef,
    Binary,
    Call,
    Elvis,
    ListExpr,
    Literal,
    Paren,
    RecordExpr,
    Select,
    Subscript,
    Ternary,
    Unary,
    binary_depth,
    depth_of,
)
from classad.values import ERROR, UNDEFINED, wrap_int

_SIMPLE_ESCAPES = {
    "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "a": "\a", "v": "\v",
    "\\": "\\", '"': '"', "'": "'", "?": "?",
}
_OCTAL = "01234567"

#: Words HTCondor's lexer always reads as keywords (lexer.cpp tokenizeAlphaHead), so
#: they never name an attribute unless quoted.
KEYWORDS = frozenset({"true", "false", "undefined", "error", "is", "isnt"})


def decode_escapes(body: str, token: Token | None = None) -> str:
    """Resolve C-style escapes as HTCondor does: octal escapes give bytes, an
    unknown escape drops its backslash, and ``\\0`` (a NUL) is refused."""
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 >= n:
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _OCTAL:
            j = i + 1
            limit = i + (4 if nxt in "0123" else 3)
            while j < min(limit, n) and body[j] in _OCTAL:
                j += 1
            code = int(body[i + 1:j], 8)
            if code == 0:
                raise _token_error("a string may not contain a NUL character (\\0)", token)
            out.append(code)
            i = j
            continue
        out += _SIMPLE_ESCAPES.get(nxt, nxt).encode("utf-8", "surrogateescape")
        i += 2
    return out.decode("utf-8", "surrogateescape")


def _token_error(message: str, token: Token | None) -> ClassAdParseError:
    if token is None:
        return ClassAdParseError(message)
    return ClassAdParseError(message, token.line, token.column)


def _checked(node, limit: int = MAX_DEPTH):
    if node.depth > limit:
        raise ClassAdParseError(f"expression nested more than {MAX_DEPTH} levels deep")
    return node


def _binary(op: str):
    def build(self, left, right):
        return _checked(Binary(op, left, right, binary_depth(left, right)))
    return v_args(inline=True)(build)


def _unary(op: str):
    def build(self, operand):
        return _checked(Unary(op, operand, depth_of(operand)))
    return v_args(inline=True)(build)


def parse_integer(text: str) -> int:
    """An integer literal; one too large for 64 bits becomes 0, as in HTCondor. One
    of more than :data:`~classad.limits.MAX_INT_DIGITS` digits is refused."""
    digits = len(text) - (text[:1] in "+-")
    if digits > MAX_INT_DIGITS:
        raise ClassAdParseError(f"integer literal of {digits} digits; at most {MAX_INT_DIGITS} are allowed")
    value = int(text)
    return value if wrap_int(value) == value else 0


def parse_real(text: str) -> float:
    return float(text)


class ExprBuilder(Transformer):
    """Builds :mod:`classad.nodes` nodes while the LALR parser reduces."""

    or_ = _binary("||")
    and_ = _binary("&&")
    bit_or = _binary("|")
    bit_xor = _binary("^")
    bit_and = _binary("&")
    eq = _binary("==")
    ne = _binary("!=")
    lt = _binary("<")
    le = _binary("<=")
    gt = _binary(">")
    ge = _binary(">=")
    lshift = _binary("<<")
    rshift = _binary(">>")
    urshift = _binary(">>>")
    add = _binary("+")
    sub = _binary("-")
    mul = _binary("*")
    div = _binary("/")
    mod = _binary("%")
    neg = _unary("-")
    pos = _unary("+")
    not_ = _unary("!")
    invert = _unary("~")

    @v_args(inline=True)
    def same(self, left, *rest):
        right = rest[-1]
        return _checked(Binary("=?=", left, right, binary_depth(left, right)))

    @v_args(inline=True)
    def not_same(self, left, *rest):
        right = rest[-1]
        return _checked(Binary("=!=", left, right, binary_depth(left, right)))

    @v_args(inline=True)
    def ternary(self, cond, then, otherwise):
        return _checked(Ternary(cond, then, otherwise, depth_of(cond, then, otherwise)))

    @v_args(inline=True)
    def elvis(self, left, right):
        return _checked(Elvis(left, right, depth_of(left, right)))

    @v_args(inline=True)
    def select(self, base, name):
        return _checked(Select(base, name, depth_of(base)))

    @v_args(inline=True)
    def subscript(self, base, index):
        return _checked(Subscript(base, index, depth_of(base, index)))

    @v_args(inline=True)
    def integer(self, token):
        return Literal(parse_integer(token))

    @v_args(inline=True)
    def real(self, token):
        return Literal(parse_real(token))

    def string(self, tokens):
        return Literal("".join(decode_escapes(t[1:-1], t) for t in tokens))

    def true(self, _):
        return Literal(True)

    def false(self, _):
        return Literal(False)

    def undefined(self, _):
        return Literal(UNDEFINED)

    def error(self, _):
        return Literal(ERROR)

    @v_args(inline=True)
    def name(self, token):
        if token.type == "QUOTED_NAME":
            return decode_escapes(token[1:-1], token)
        if token.lower() in KEYWORDS:
            raise _token_error(f"{token!s} is a reserved word, not an attribute name; "
                               f"write '{token!s}' to use it as one", token)
        return str(token)

    @v_args(inline=True)
    def attr(self, name):
        return AttrRef(name)

    @v_args(inline=True)
    def absolute(self, name):
        return AttrRef(name, absolute=True)

    @v_args(inline=True)
    def paren(self, inner):
        return _checked(Paren(inner, depth_of(inner)))

    def list(self, items):
        items = tuple(i for i in items if i is not None)
        return _checked(ListExpr(items, depth_of(*items)))

    def record(self, defs):
        entries = merge_entries(d for d in defs if d is not None)
        # one level more: an ad whose attributes are as deep as allowed is itself a record
        return _checked(RecordExpr(entries, depth_of(*(e for _, e in entries))), MAX_DEPTH + 1)

    @v_args(inline=True)
    def attr_def(self, name, expr):
        return (name, expr)

    def call(self, children):
        name_token, *args = children
        if name_token.lower() in KEYWORDS:
            raise _token_error(f"{name_token!s} is a reserved word, not a function name", name_token)
        args = tuple(a for a in args if a is not None)
        return _checked(fold_call(Call(str(name_token), args, depth=depth_of(*args)), name_token))


def merge_entries(pairs) -> tuple:
    """Resolve duplicate names (later value wins, first spelling kept) and order the
    attributes as HTCondor does: by name length, then by name ignoring case."""
    merged: dict[str, tuple[str, object]] = {}
    for name, expr in pairs:
        key = name.lower()
        spelling = merged[key][0] if key in merged else name
        merged[key] = (spelling, expr)
    return tuple(sorted(merged.values(), key=lambda e: (len(e[0]), e[0].lower())))


_FOLDED_AT_PARSE = ("abstime", "reltime")


def fold_call(call: Call, token: Token) -> Call:
    """``absTime``/``relTime`` of one literal string are evaluated while parsing, as
    HTCondor does: a malformed literal is a syntax error."""
    lname = call.name.lower()
    if lname not in _FOLDED_AT_PARSE or len(call.args) != 1:
        return call
    arg = call.args[0]
    if type(arg) is not Literal or type(arg.value) is not str:
        return call

    if lname == "abstime":
        value = parse_abstime_text(arg.value)
    else:
        seconds = parse_reltime_text(arg.value)
        value = None if seconds is None else float(seconds)
    if value is None:
        raise _token_error(f"{call.name}({arg.value!r}) is not a valid time", token)
    return Call(call.name, call.args, folded=value, is_folded=True, depth=call.depth)
