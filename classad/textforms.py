"""The three text forms of an ad, both directions: new syntax (``[ a = 1 ]``), old
syntax (one ``Name = expr`` per line, as ``condor_q -l`` prints) and HTCondor's
JSON form (expressions as ``"\\/Expr(...)\\/"`` strings)."""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator

from classad import limits
from classad import nodes as e
from classad.errors import ClassAdParseError, context_at
from classad.parser import parse_expression, parse_expression_prefix
from classad.transform import KEYWORDS, merge_entries, parse_integer
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
    entries = _plain_new_entries(text)
    if entries is not None:
        from classad.ad import ClassAd

        return ClassAd.from_entries(entries)
    return _ad_from_record(parse_expression(text.strip()), text)


#: One ``name = value`` definition whose value holds no nested ad, list, comment,
#: escape or quoted name: those that the grammar would read the same way in isolation.
_PLAIN_DEF = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=((?:[^;"\'\[\]{}/\\]|"[^"\\]*"|/(?![/*]))*);?')


def _plain_new_entries(text: str) -> tuple | None:
    """The merged entries of a ``[ ... ]`` ad made only of plain definitions, or None
    when the ad has any other shape or a value does not parse (the grammar then
    reads the whole ad and reports the error where it is)."""
    body = text.strip()
    if body[:1] != "[" or body[-1:] != "]":
        return None
    body = body[1:-1]
    pairs = []
    pos, end = 0, len(body)
    while pos < end:
        m = _PLAIN_DEF.match(body, pos)
        if m is None or m.group(1).lower() in KEYWORDS:
            return None if body[pos:].strip() else _merged(pairs)
        try:
            pairs.append((m.group(1), _plain_value(m.group(2).strip())))
        except ClassAdParseError:
            return None
        pos = m.end()
    return _merged(pairs)


def _merged(pairs: list) -> tuple | None:
    return merge_entries(pairs) if pairs else None


def _plain_value(text: str):
    """A new-syntax value: unsigned integers and escape-free strings as literals
    (as the grammar reads them), the rest through the cached expression parser."""
    if _SIMPLE_INT.match(text) and text[0] != "-":
        return e.Literal(int(text))
    m = _SIMPLE_STRING.match(text)
    if m is not None and text.isascii():
        return e.Literal(m.group(1))
    return parse_expression(text)


# --- new syntax streams ------------------------------------------------------

def split_new_ads(text: str) -> Iterator[str]:
    """The texts of successive ``[ ... ]`` ads, honouring strings and comments."""
    depth = 0
    start = None
    i, n = 0, len(text)
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
                yield text[start:i + 1]
                start = None
            elif depth < 0:
                raise ClassAdParseError("unbalanced ']'")
        elif depth == 0 and not ch.isspace():
            raise ClassAdParseError(f"expected '[' to start an ad, found {text[i:i + 20]!r}")
        i += 1
    if depth > 0:
        raise ClassAdParseError("unterminated ad: missing ']'")


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


# --- JSON ----------------------------------------------------------------------

class _JsonReader:
    """A reader for HTCondor's JSON ads, as lenient as HTCondor's: trailing commas,
    C comments, ``true``/``false``/``null`` in any case and ``.5`` are accepted."""

    MAX_DEPTH = limits.MAX_DEPTH
    _NUMBER = re.compile(r"-?([0-9]+|(?=\.[0-9]))(\.[0-9]+)?([eE][+-]?[0-9]+)?(?![.\w])")
    _WORD = re.compile(r"[A-Za-z]+")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, message: str) -> ClassAdParseError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return ClassAdParseError(message, line, column, context_at(self.text, self.pos))

    def skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch.isspace():
                self.pos += 1
            elif text.startswith("//", self.pos):
                j = text.find("\n", self.pos)
                self.pos = n if j < 0 else j
            elif text.startswith("/*", self.pos):
                j = text.find("*/", self.pos + 2)
                if j < 0:
                    raise self.error("unterminated comment")
                self.pos = j + 2
            else:
                return

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos:self.pos + 1]

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            found = self.text[self.pos:self.pos + 10] or "end of text"
            raise self.error(f"expected {ch!r}, found {found!r}")
        self.pos += 1

    def at_end(self) -> bool:
        return self.peek() == ""

    def read_object(self, depth: int = 0):
        if depth > self.MAX_DEPTH:
            raise self.error("JSON nested too deeply")
        self.expect("{")
        pairs = []
        while True:
            ch = self.peek()
            if ch == "}":
                self.pos += 1
                return self.shallow(e.RecordExpr(merge_entries(pairs), e.depth_of(*(x for _, x in pairs))))
            if ch == ",":
                self.pos += 1
                continue
            if ch != '"':
                raise self.error("expected an attribute name in double quotes")
            name, _ = self.read_string()
            if not name:
                raise self.error("an attribute name may not be empty")
            self.expect(":")
            pairs.append((name, self.read_value(depth + 1)))
            if self.peek() not in (",", "}"):
                raise self.error("expected ',' or '}' after a value")

    def shallow(self, node):
        """``node``, unless with the expressions inside it it nests too deeply."""
        if node.depth > self.MAX_DEPTH + (type(node) is e.RecordExpr):
            raise self.error(f"JSON nested more than {self.MAX_DEPTH} levels deep")
        return node

    def read_array(self, depth: int):
        if depth > self.MAX_DEPTH:
            raise self.error("JSON nested too deeply")
        self.expect("[")
        items = []
        if self.peek() == "]":
            self.pos += 1
            return e.ListExpr((), 0)
        while True:  # unlike an object's, an array's commas separate exactly two values
            items.append(self.read_value(depth + 1))
            ch = self.peek()
            if ch == "]":
                self.pos += 1
                return self.shallow(e.ListExpr(tuple(items), e.depth_of(*items)))
            if ch != ",":
                raise self.error("expected ',' or ']' after a value")
            self.pos += 1

    def read_value(self, depth: int):
        ch = self.peek()
        if ch == "{":
            return self.read_object(depth)
        if ch == "[":
            return self.read_array(depth)
        if ch == '"':
            return self.read_string_value()
        m = self._NUMBER.match(self.text, self.pos)
        if m and m.group(0) and m.group(0) != "-":
            self.pos = m.end()
            return self.number(m.group(0))
        m = self._WORD.match(self.text, self.pos)
        if m:
            word = m.group(0).lower()
            literal = {"true": True, "false": False, "null": None}
            if word in literal:
                self.pos = m.end()
                value = literal[word]
                return e.Literal(UNDEFINED if value is None else value)
        raise self.error(f"expected a JSON value, found {self.text[self.pos:self.pos + 10]!r}")

    def number(self, text: str):
        if "." in text or "e" in text or "E" in text:
            return e.Literal(float(text))
        if len(text) > 1 and text[0] == "0":
            # jsonSource.cpp: a bare integer may not start with 0 (01, 00), though
            # after a minus sign leading zeros are read (-012 is -12)
            raise self.error(f"integer {text} has a leading zero")
        try:
            return e.Literal(parse_integer(text))
        except ClassAdParseError as err:
            raise self.error(err.reason) from None

    _ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

    def read_string(self) -> tuple[str, str]:
        """The decoded string and its raw text between the quotes."""
        self.expect('"')
        start = self.pos
        out = []
        text = self.text
        while True:
            if self.pos >= len(text):
                raise self.error("unterminated string")
            ch = text[self.pos]
            if ch == '"':
                raw = text[start:self.pos]
                self.pos += 1
                return "".join(out), raw
            if ch == "\\":
                esc = text[self.pos + 1:self.pos + 2]
                if esc == "u":
                    out.append(self.read_unicode_escape())
                    continue
                if not esc:
                    raise self.error("unterminated string")
                # jsonSource.cpp drops the backslash of an escape JSON does not define
                out.append(self._ESCAPES.get(esc, esc))
                self.pos += 2
                continue
            out.append(ch)
            self.pos += 1

    def _hex4(self, at: int) -> int | None:
        digits = self.text[at:at + 4]
        return int(digits, 16) if re.fullmatch(r"[0-9A-Fa-f]{4}", digits) else None

    def read_unicode_escape(self) -> str:
        """The character of a ``\\uXXXX`` escape (a UTF-16 surrogate pair taken
        together); a lone surrogate is refused, as it is no character at all."""
        code = self._hex4(self.pos + 2)
        if code is None:
            raise self.error("\\u must be followed by four hex digits")
        if code == 0:
            raise self.error("a string may not contain a NUL character (\\u0000)")
        self.pos += 6
        if 0xDC00 <= code <= 0xDFFF:
            raise self.error("\\u%04x is a lone UTF-16 surrogate, not a character" % code)
        if 0xD800 <= code <= 0xDBFF:
            low = self._hex4(self.pos + 2) if self.text.startswith("\\u", self.pos) else None
            if low is None or not 0xDC00 <= low <= 0xDFFF:
                raise self.error("\\u%04x is a lone UTF-16 surrogate, not a character" % code)
            self.pos += 6
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        return chr(code)

    def read_string_value(self):
        value, raw = self.read_string()
        if raw[:7].lower() == "\\/expr(" and raw.endswith(")\\/"):
            inner = value[len("/Expr("):-len(")/")]
            return parse_expression(inner)
        return e.Literal(value)


def parse_json_ads(text: str) -> Iterator:
    """Ads in JSON: one object, or an array of objects. An empty object ends the ads,
    as in HTCondor's bindings (parseNext of ``{}`` finds no ad)."""
    reader = _JsonReader(text)
    if reader.peek() == "[":
        reader.pos += 1
        while True:
            ch = reader.peek()
            if ch == "]":
                reader.pos += 1
                break
            if ch == ",":
                reader.pos += 1
                continue
            if ch == "":
                raise reader.error("unterminated list of ads")
            entries = reader.read_object().entries
            if not entries:
                return
            yield _json_ad(entries)
        return
    while not reader.at_end():
        entries = reader.read_object().entries
        if not entries:
            return
        yield _json_ad(entries)


def _json_ad(entries):
    from classad.ad import ClassAd

    return ClassAd.from_entries(entries)


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
        return (parse_new_ad(chunk) for chunk in split_new_ads(text))
    if parser is ParserType.JSON:
        return parse_json_ads(text)
    return parse_old_ads(text)
