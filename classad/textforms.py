"""The three text forms of an ad, both directions: new syntax (``[ a = 1 ]``), old
syntax (one ``Name = expr`` per line, as ``condor_q -l`` prints) and HTCondor's
JSON form (expressions as ``"\\/Expr(...)\\/"`` strings; read by
:mod:`classad.jsonsource`).

Reading is built for streams of machine and job ads, where most definitions recur
from ad to ad: plain ads are split with string methods (or two regular expressions),
each definition's text is looked up among those read before (:mod:`classad.entries`),
and only new values are parsed, each on its own; any other shape, errors included,
goes to the grammar whole, so results and error positions are the grammar's."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator

from classad import nodes as e
from classad.entries import Hits, attrs_from_hits, literal, make_hit, remember
from classad.errors import ClassAdParseError
from classad.jsonsource import parse_json_ads
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

    found = _split_plain_ad(text, 0, Entry)
    if found is not None and (found[1] == len(text) or text[found[1]:].isspace()):
        return _ad_of(ClassAd, found[0])
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

#: Hits (:mod:`classad.entries`) of plain definitions: by their text, and by
#: ``(name, value text)`` as :data:`_PLAIN_DEF` finds them.
_NEW_DEFS = Hits()


#: ``(name, lower-cased name)`` by the text before a plain definition's ``=``, for
#: the names that are no reserved word.
_NAME_PARTS: dict = {}


def _split_plain_ad(text: str, pos: int, entry_cls) -> tuple[dict, int] | None:
    """``(attrs, end)`` of a plain ad starting at ``pos`` (after whitespace), split
    with string methods alone: taken only when no character could make a ``;`` or
    ``]`` mean anything but the end of a definition or of the ad (no quoted name,
    escape, comment, nested ad or list, and no ``;`` or ``]`` in a string);
    otherwise None."""
    start = text.find("[", pos)
    if start < 0 or (start > pos and not text[pos:start].isspace()):
        return None
    end = text.find("]", start)
    if end < 0:
        return None
    body = text[start + 1:end]
    if ("'" in body or "\\" in body or "[" in body or "{" in body or "}" in body
            or "//" in body or "/*" in body):
        return None
    if '"' in body:
        parts = body.split('"')
        # an odd count of quotes means the ']' found is inside a string
        if not len(parts) & 1 or ";" in "".join(parts[1::2]):
            return None
    defs = body.split(";")
    if not defs[-1].strip(_WS_CHARS):
        defs.pop()  # after the last definition's ';', or an empty ad
    hits = list(map(_NEW_DEFS.get, defs))
    k, unknown = -1, hits.count(None)
    for _ in range(unknown):
        k = hits.index(None, k + 1)
        name_part, sep, value = defs[k].partition("=")
        known = _NAME_PARTS.get(name_part)
        if known is None:
            name = name_part.strip(_WS_CHARS)
            if not sep or not name.isidentifier() or not name.isascii():
                return None
            lower = name.lower()
            if lower not in KEYWORDS:
                remember(_NAME_PARTS, name_part, (name, lower), len(name_part))
        else:
            name, lower = known
        node = _quick_literal(value.strip(_WS_CHARS))
        if node is not None and lower not in KEYWORDS:
            hit = (lower, entry_cls(name, node), name, node)
        else:
            hit = _new_def(name, value, entry_cls)
            if hit is None:
                return None
        _NEW_DEFS.remember(defs[k], hit, len(defs[k]))
        hits[k] = hit
    return attrs_from_hits(hits, entry_cls), end + 1


def _plain_new_attrs(body: str, entry_cls) -> dict | None:
    """The attribute mapping of a ``[ ... ]`` ad's ``body`` made only of plain
    definitions, or None when a name is a reserved word or a value does not parse
    (the grammar then reads the whole ad and reports the error where it is)."""
    pairs = _PLAIN_DEF.findall(body)
    hits = list(map(_NEW_DEFS.get, pairs))
    k, unknown = -1, hits.count(None)
    for _ in range(unknown):
        k = hits.index(None, k + 1)
        hit = _new_def(*pairs[k], entry_cls)
        if hit is None:
            return None
        _NEW_DEFS.remember(pairs[k], hit, len(pairs[k][0]) + len(pairs[k][1]))
        hits[k] = hit
    return attrs_from_hits(hits, entry_cls)


def _new_def(name: str, text: str, entry_cls) -> tuple | None:
    """The hit of one plain definition, or None when the grammar must judge it."""
    if name.lower() in KEYWORDS:
        return None
    try:
        node = _plain_value(text.strip(_WS_CHARS))
    except ClassAdParseError:
        return None
    return make_hit(name, node, entry_cls)


def _ad_of(cls, attrs: dict):
    """An ad of ``cls`` holding ``attrs`` (lower-cased name to entry) as they are."""
    ad = cls.__new__(cls)
    ad._attrs = attrs
    ad.parent = None
    return ad


def _plain_value(text: str):
    """A new-syntax value: unsigned integers and escape-free strings as literals
    (as the grammar reads them), the rest through the cached expression parser."""
    quick = _quick_literal(text)
    return parse_expression(text) if quick is None else quick


def _quick_literal(text: str):
    """The literal node of ``text`` (stripped) when it is a plain decimal integer of
    at most 18 digits or a double-quoted string of printable ASCII without escapes;
    else None. Both the old and the new syntax read these texts the same way."""
    if text[:1] == '"':
        inner = text[1:-1]
        if (text[-1] == '"' and len(text) > 1 and inner.isascii() and inner.isprintable()
                and '"' not in inner and "\\" not in inner):
            return literal(inner)
        return None
    if text.isdigit() and text.isascii() and len(text) <= 18 and (text[0] != "0" or len(text) == 1):
        return literal(int(text))
    return None


# --- new syntax streams ------------------------------------------------------

def parse_new_ads(text: str) -> Iterator:
    """Successive ``[ ... ]`` ads: plain ones where they stand (split by
    :func:`_split_plain_ad`, else matched by :data:`_PLAIN_AD`), any other through
    :func:`next_new_ad` and :func:`parse_new_ad`."""
    from classad.ad import ClassAd, Entry

    new = ClassAd.__new__
    pos, n = 0, len(text)
    while pos < n:
        found = _split_plain_ad(text, pos, Entry)
        if found is not None:
            ad = new(ClassAd)
            ad._attrs, pos = found
            ad.parent = None
            yield ad
            continue
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


#: Expression trees of old-syntax values other than plain literals, by text.
_OLD_VALUES: dict[str, object] = {}


def parse_old_value(text: str):
    """The expression tree of one old-syntax value. Plain integers, strings and
    booleans skip the grammar, and other trees are remembered by text."""
    node = _OLD_VALUES.get(text)
    if node is not None:
        return node
    node = _parse_old_value(text)
    if type(node) is not e.Literal:
        remember(_OLD_VALUES, text, node, len(text))
    return node


def _parse_old_value(raw: str):
    text = raw.strip()
    if _SIMPLE_INT.match(text):
        return literal(int(text))
    m = _SIMPLE_STRING.match(text)
    if m is not None and text.isascii():
        return literal(m.group(1))
    word = _WORDS.get(text.lower())
    if word is not None:
        return literal(word)
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


#: Hits (:mod:`classad.entries`) of old-syntax lines, by the line's text.
_OLD_LINES = Hits()


def parse_old_ads(text: str) -> Iterator:
    """Ads in old syntax, separated by blank lines; ``#`` lines are comments. A text
    holding only comments is one ad with no attributes."""
    from classad.ad import ClassAd, Entry

    lines = text.splitlines()
    i, n = 0, len(lines)
    while i < n:
        j = _next_empty(lines, i)
        if j > i:
            attrs = _old_chunk_attrs(lines, i, j, Entry)
            if attrs is None:
                yield from _old_ads_by_line(lines, i, j, ClassAd, Entry)
            else:
                yield _ad_of(ClassAd, attrs)
        i = j + 1


def _next_empty(lines: list, i: int) -> int:
    """The index of the first empty line from ``i`` on, or the number of lines."""
    try:
        return lines.index("", i)
    except ValueError:
        return len(lines)


def _old_chunk_attrs(lines: list, i: int, j: int, entry_cls) -> dict | None:
    """The attribute mapping of the ad on ``lines[i:j]``, or None when they hold a
    comment or a line of whitespace (for :func:`_old_ads_by_line`)."""
    chunk = lines[i:j]
    hits = list(map(_OLD_LINES.get, chunk))
    k, unknown = -1, hits.count(None)
    for _ in range(unknown):
        k = hits.index(None, k + 1)
        line = chunk[k]
        stripped = line.strip()
        if not stripped or stripped[0] == "#":
            return None
        hits[k] = _old_hit(line, i + k + 1, entry_cls)
    return attrs_from_hits(hits, entry_cls)


def _old_hit(line: str, lineno: int, entry_cls) -> tuple:
    """The hit of one definition line, remembered by its text. A plain integer or
    string value is read here (as :func:`_parse_old_value` would read it)."""
    name, sep, value = line.partition("=")
    name = name.strip()
    node = _quick_literal(value.strip()) if sep and name else None
    if node is None:
        name, node = parse_old_line(line, lineno)
        hit = make_hit(name, node, entry_cls)
    else:
        hit = (name.lower(), entry_cls(name, node), name, node)
    _OLD_LINES.remember(line, hit, len(line))
    return hit


def _old_ads_by_line(lines: list, i: int, j: int, cls, entry_cls) -> Iterator:
    """The ads on ``lines[i:j]`` (no empty line among them) read line by line: lines
    of whitespace separate ads too, and comment lines start one."""
    hits: list = []
    started = False
    for lineno in range(i + 1, j + 1):
        line = lines[lineno - 1]
        stripped = line.strip()
        if not stripped:
            if started:
                yield _ad_of(cls, attrs_from_hits(hits, entry_cls))
                hits, started = [], False
            continue
        started = True
        if stripped[0] != "#":
            hits.append(_OLD_LINES.get(line) or _old_hit(line, lineno, entry_cls))
    if started:
        yield _ad_of(cls, attrs_from_hits(hits, entry_cls))


def old_line(entry) -> str:
    """An entry's ``Name = expr`` line of the old syntax (with its newline), printed once
    and kept on the entry (entries are shared by the ads derived from one another, and
    never change)."""
    line = entry.old_line
    if line is None:
        line = entry.old_line = f"{entry.name} = {unparse_expr(entry.expr, old_literal)}\n"
    return line


def print_old(ad) -> str:
    """The ad in the old syntax."""
    return "".join([old_line(entry) for entry in ad._ordered()])


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
