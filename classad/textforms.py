"""The three text forms of an ad, both directions: new syntax (``[ a = 1 ]``), old
syntax (one ``Name = expr`` per line, as ``condor_q -l`` prints) and HTCondor's
JSON form (expressions as ``"\\/Expr(...)\\/"`` strings)."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator

from classad import nodes as e
from classad.errors import ClassAdParseError
from classad.jsonsource import literal, parse_json_ads
from classad.parser import parse_expression, parse_expression_prefix
from classad.transform import KEYWORDS
from classad.unparse import old_literal, unparse_expr
from classad.values import ERROR, UNDEFINED, AbsTime, RelTime


class ParserType(enum.Enum):
    """The text forms, named as in ``classad2``."""

    Auto = 0
    Old = 1
    New = 2
    JSON = 3


def _ad_from_record(node, text: str):
    from classad.ad import ClassAd

    if type(node) is not e.RecordExpr:
        raise ClassAdParseError(f"expected an ad in new syntax ('[ name = value; ... ]'), got {text[:60]!r}")
    return ClassAd.from_entries(node.entries)


def parse_new_ad(text: str):
    """One ad in new syntax. Ads of plain ``name = value;`` definitions are split here
    and each value parsed on its own (values recur across ads, and each distinct
    text is parsed once); anything else, errors included, goes to the grammar whole."""
    from classad.ad import ClassAd, Entry

    m = _PLAIN_AD.fullmatch(text)
    attrs = None if m is None else _plain_new_attrs(m.group(1), Entry)
    if attrs is not None:
        return _ad_of(ClassAd, attrs)
    return _ad_from_record(parse_expression(text.strip()), text)


#: The grammar's whitespace (``str.strip`` and ``\s`` would take more).
_WS_CHARS = " \t\r\n\f\v"
_WS = "[ \\t\\r\\n\\f\\v]"
_NAME = "[A-Za-z_][A-Za-z0-9_]*"
#: A value holding no nested ad, list, comment, escape, quoted name or ';': one the
#: grammar reads the same way in isolation as inside its ad.
_VALUE = r'''(?:[^;"'\[\]{}/\\]++|"[^"\\]*+"|/(?![/*]))*+'''
#: An ad of such ``name = value`` definitions separated by single semicolons; the
#: group is what lies between the brackets.
_PLAIN_AD = re.compile(rf"{_WS}*+\[((?:{_WS}*+{_NAME}{_WS}*+={_VALUE}(?:;{_WS}*+{_NAME}{_WS}*+={_VALUE})*+;?)?"
                       rf"{_WS}*+)\]{_WS}*+")
#: One definition of such an ad: ``(name, value text)``.
_PLAIN_DEF = re.compile(rf"({_NAME}){_WS}*+=({_VALUE})")

#: What each definition read before gave, by ``(name, value text)``:
#: ``(lower-cased name, entry, shared)``. An entry of a literal is shared by every ad
#: that has it, as evaluation never changes one; an expression's node is shared and
#: its entry copied, as evaluation tells attributes apart by their entries.
_NEW_DEFS: dict = {}
_DEFS_LIMIT = 100_000
#: Longer definitions are not remembered.
_CACHED_TEXT_MAX = 512


def _plain_new_attrs(body: str, entry_cls) -> dict | None:
    """The attribute mapping of a ``[ ... ]`` ad's ``body`` made only of plain
    definitions, or None when a name is a reserved word or a value does not parse
    (the grammar then reads the whole ad and reports the error where it is)."""
    attrs: dict = {}
    cache = _NEW_DEFS
    for pair in _PLAIN_DEF.findall(body):
        hit = cache.get(pair)
        if hit is None:
            hit = _new_def(pair, entry_cls)
            if hit is None:
                return None
        lower, entry, shared = hit
        if not shared:
            entry = entry_cls(entry.name, entry.expr)
        if lower in attrs:  # a later value wins; the first spelling stays
            entry = entry_cls(attrs[lower].name, entry.expr)
        attrs[lower] = entry
    return attrs


def _new_def(pair: tuple, entry_cls) -> tuple | None:
    """``(lower-cased name, entry, shared)`` of one plain definition, remembered when
    short; None when the grammar must judge it."""
    name, text = pair
    lower = name.lower()
    if lower in KEYWORDS:
        return None
    try:
        node = _plain_value(text.strip(_WS_CHARS))
    except ClassAdParseError:
        return None
    hit = (lower, entry_cls(name, node), type(node) is e.Literal)
    _remember(_NEW_DEFS, pair, hit, len(name) + len(text))
    return hit


def _remember(cache: dict, key, value, size: int) -> None:
    """Store ``value`` under ``key`` unless its text is long; a full cache is emptied."""
    if size > _CACHED_TEXT_MAX:
        return
    if len(cache) >= _DEFS_LIMIT:
        cache.clear()
    cache[key] = value


def _ad_of(cls, attrs: dict):
    """An ad of ``cls`` holding ``attrs`` (lower-cased name to entry) as they are."""
    ad = cls.__new__(cls)
    ad._attrs = attrs
    ad.parent = None
    return ad


def _plain_value(text: str):
    """A new-syntax value: unsigned integers and escape-free strings as literals
    (as the grammar reads them), the rest through the cached expression parser."""
    if _SIMPLE_INT.match(text) and text[0] != "-":
        return literal(int(text))
    m = _SIMPLE_STRING.match(text)
    if m is not None and text.isascii():
        return literal(m.group(1))
    return parse_expression(text)


# --- new syntax streams ------------------------------------------------------

def parse_new_ads(text: str) -> Iterator:
    """Successive ``[ ... ]`` ads: plain ones read by :data:`_PLAIN_AD` where they
    stand, any other through :func:`next_new_ad` and :func:`parse_new_ad`."""
    from classad.ad import ClassAd, Entry

    pos, n = 0, len(text)
    while pos < n:
        m = _PLAIN_AD.match(text, pos)
        if m is not None:
            attrs = _plain_new_attrs(m.group(1), Entry)
            if attrs is not None:
                pos = m.end()
                yield _ad_of(ClassAd, attrs)
                continue
        chunk, pos = next_new_ad(text, pos)
        if chunk is None:
            return
        yield parse_new_ad(chunk)


def split_new_ads(text: str) -> Iterator[str]:
    """The texts of successive ``[ ... ]`` ads, honouring strings and comments."""
    pos = 0
    while True:
        chunk, pos = next_new_ad(text, pos)
        if chunk is None:
            return
        yield chunk


#: Where the bracket depth can change inside an ad: a bracket, a quote, a comment.
_NEW_SPECIAL = re.compile(r"""["'\[\]/]""")


def next_new_ad(text: str, pos: int) -> tuple[str | None, int]:
    """``(text of the next ad, offset after it)`` from ``pos``, or ``(None, end)``
    when only whitespace and comments are left."""
    depth = 0
    start = None
    i, n = pos, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = _skip_quoted(text, i)
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if ch == "[":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return text[start:i + 1], i + 1
            if depth < 0:
                raise ClassAdParseError("unbalanced ']'")
        elif depth == 0 and not ch.isspace():
            raise ClassAdParseError(f"expected '[' to start an ad, found {text[i:i + 20]!r}")
        if depth > 0:  # nothing else inside an ad changes where it ends
            m = _NEW_SPECIAL.search(text, i + 1)
            i = n if m is None else m.start()
            continue
        i += 1
    if depth > 0:
        raise ClassAdParseError("unterminated ad: missing ']'")
    return None, n


def _skip_quoted(text: str, i: int) -> int:
    quote = text[i]
    i += 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return i


# --- old syntax --------------------------------------------------------------

_SIMPLE_INT = re.compile(r"-?(0|[1-9][0-9]{0,17})\Z")
_SIMPLE_STRING = re.compile(r'"([^"\\\x00-\x1f]*)"\Z')
_WORDS = {"true": True, "false": False}


def old_value_to_new(text: str) -> str:
    """Rewrite old-syntax string literals for the new-syntax parser. In the old syntax
    (lexer.cpp's old-ClassAd string rule) a backslash escapes only a double quote, and
    not even that when the quote is the last character of the line: ``"a\\"`` at the
    end of a line is the string ``a\\``."""
    if "\\" not in text:
        return text
    out = []
    in_string = False
    i = 0
    last = len(text) - 1
    while i < len(text):
        ch = text[i]
        if in_string and ch == "\\":
            if text[i + 1:i + 2] == '"' and i + 1 < last:
                out.append('\\"')
                i += 2
                continue
            out.append("\\\\")
        else:
            if ch == '"':
                in_string = not in_string
            out.append(ch)
        i += 1
    return "".join(out)


_OLD_VALUES: dict[str, object] = {}
_OLD_VALUES_LIMIT = 100_000


def parse_old_value(text: str):
    """The expression tree of one old-syntax value. Trees are remembered by text, and
    plain integers, strings and booleans skip the grammar."""
    node = _OLD_VALUES.get(text)
    if node is not None:
        return node
    node = _parse_old_value(text)
    if len(_OLD_VALUES) >= _OLD_VALUES_LIMIT:
        _OLD_VALUES.clear()
    _OLD_VALUES[text] = node
    return node


def _parse_old_value(raw: str):
    text = raw.strip()
    if _SIMPLE_INT.match(text):
        return e.Literal(int(text))
    m = _SIMPLE_STRING.match(text)
    if m is not None and text.isascii():
        return e.Literal(m.group(1))
    word = _WORDS.get(text.lower())
    if word is not None:
        return e.Literal(word)
    return parse_expression_prefix(old_value_to_new(raw).strip())


def parse_old_line(line: str, lineno: int = 1):
    """``(name, expr)`` of one old-syntax line ``Name = expr``."""
    name, sep, value = line.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ClassAdParseError(f"expected 'Name = value', got {line.strip()[:60]!r}", lineno, 1)
    try:
        return name, parse_old_value(value)
    except ClassAdParseError as err:
        column = line.index("=") + 1 + (err.column or 1)
        raise ClassAdParseError(f"attribute {name}: {err.reason}", lineno, column, err.context) from None


def parse_old_ads(text: str) -> Iterator:
    """Ads in old syntax, separated by blank lines; ``#`` lines are comments. A text
    holding only comments is one ad with no attributes."""
    from classad.ad import ClassAd, Entry

    attrs: dict = {}
    started = False
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            if started:
                yield _old_ad(ClassAd, attrs)
                attrs, started = {}, False
            continue
        started = True
        if stripped[0] == "#":
            continue
        name, node = parse_old_line(line, lineno)
        key = name.lower()
        old = attrs.get(key)
        attrs[key] = Entry(name if old is None else old.name, node)
    if started:
        yield _old_ad(ClassAd, attrs)


def _old_ad(cls, attrs: dict):
    ad = cls.__new__(cls)
    ad._attrs = attrs
    ad.parent = None
    return ad


def print_old(ad) -> str:
    return "".join(f"{entry.name} = {unparse_expr(entry.expr, old_literal)}\n"
                   for entry in ad._ordered())


# --- JSON ---------------------------------------------------------------------

def _json_string(s: str) -> str:
    import json
    return json.dumps(s, ensure_ascii=False).replace("/", "\\/")


def node_to_json(node, indent: int = 1) -> str:
    """The JSON text of one attribute's expression."""

    t = type(node)
    if t is e.Literal:
        v = node.value
        tv = type(v)
        if tv is bool:
            return "true" if v else "false"
        if tv is int:
            return str(v)
        if tv is float and v == v and v not in (float("inf"), float("-inf")):
            return repr(v)
        if tv is str:
            return _json_string(v)
        if v is UNDEFINED:
            return "null"
        if v is ERROR or tv in (AbsTime, RelTime, float):
            pass
    elif t is e.ListExpr:
        pad = "  " * (indent + 1)
        if not node.items:
            return "[\n" + "  " * indent + "]"
        body = ",\n".join(pad + node_to_json(i, indent + 1) for i in node.items)
        return "[\n" + body + "\n" + "  " * indent + "]"
    elif t is e.RecordExpr:
        return _json_object(node.entries, indent)
    return _json_string("/Expr(" + unparse_expr(node) + ")/")


def _json_object(entries, indent: int) -> str:
    pad = "  " * (indent + 1)
    if not entries:
        return "{\n" + "  " * indent + "}"
    parts = []  # a loop, not a generator: one frame less per level of nesting
    for n, x in entries:
        parts.append(f"{pad}{_json_string(n)}: {node_to_json(x, indent + 1)}")
    body = ",\n".join(parts)
    return "{\n" + body + "\n" + "  " * indent + "}"


def print_json(ad) -> str:
    return _json_object([(x.name, x.expr) for x in ad._ordered()], 0) + "\n"


# --- dispatch ------------------------------------------------------------------

def detect(text: str) -> ParserType:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return ParserType.New
    if stripped.startswith("{"):
        return ParserType.JSON
    return ParserType.Old


def parse_ads(text: str, parser: ParserType = ParserType.Auto) -> Iterator:
    """Every ad in ``text`` in the given (or detected) form."""
    if parser is ParserType.Auto:
        parser = detect(text)
    if parser is ParserType.New:
        return parse_new_ads(text)
    if parser is ParserType.JSON:
        return parse_json_ads(text)
    return parse_old_ads(text)
