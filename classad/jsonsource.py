"""Reading HTCondor's JSON form of ads (jsonSource.cpp's rules): literal values as
JSON values, other expressions as strings ``"\\/Expr(<expression>)\\/"``.

Each ad is first read by the standard library's C decoder and its values mapped
straight to expression nodes; whenever that decoder refuses the text, or the text
holds anything it would read differently from HTCondor's reader (``\\u`` escapes,
unescaped ``/Expr(`` slashes, integers beyond 64 bits, empty names, deep nesting),
the ad is read again by :class:`_JsonReader`, the lenient reader written to
HTCondor's rules, which also reports the errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from classad import limits
from classad import nodes as e
from classad.entries import Hits, attrs_from_hits, literal
from classad.errors import ClassAdParseError, context_at
from classad.parser import parse_expression
from classad.transform import merge_entries, parse_integer
from classad.values import INT_MAX, INT_MIN, UNDEFINED


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

    #: Whitespace as ``str.isspace`` has it (``\\s`` in a str pattern is the same set).
    _SPACE = re.compile(r"\s*")

    def skip(self) -> None:
        """Step over whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            self.pos = self._SPACE.match(text, self.pos).end()
            if text.startswith("//", self.pos):
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



# --- the fast path ---------------------------------------------------------------

class _Refused(Exception):
    """The C decoder read an ad that HTCondor's reader might read differently."""


def _refuse_constant(word: str):
    """``NaN`` and ``Infinity`` are no JSON values to HTCondor."""
    raise _Refused(word)


#: Objects come out as tuples of pairs, so that they differ from lists (arrays) and
#: keep duplicate names for :func:`merge_entries`. Numbers come out as their text in
#: bytes, so that no two values of different types are equal (1, 1.0 and true are,
#: as are 0.0 and -0.0) and a decoded pair can be a key of :data:`_HITS` as it is.
_DECODER = json.JSONDecoder(object_pairs_hook=tuple, parse_constant=_refuse_constant,
                            parse_int=str.encode, parse_float=str.encode)

#: Hits (:mod:`classad.entries`) of attributes read before, by decoded pair.
_HITS = Hits()


def _fast_attrs(text: str, pos: int, entry_cls):
    """``(attrs, end)``: the ad at ``pos`` as an ad's attribute mapping and the
    offset after it; raises :class:`_Refused` (or ValueError) for the slow reader."""
    pairs, end = _DECODER.raw_decode(text, pos)
    if type(pairs) is not tuple or _ambiguous(text, pos, end):
        raise _Refused
    try:
        hits = list(map(_HITS.get, pairs))
    except TypeError:  # a list in a value: no key
        hits = [None] * len(pairs)
    k, unknown = -1, hits.count(None)
    for _ in range(unknown):
        k = hits.index(None, k + 1)
        hits[k] = _read_hit(pairs[k], entry_cls)
    return attrs_from_hits(hits, entry_cls), end


def _ambiguous(text: str, pos: int, end: int) -> bool:
    """Whether ``text[pos:end]`` holds what the C decoder reads otherwise than
    HTCondor: a ``\\u`` escape (NUL and lone surrogates are refused there), or a
    ``/Expr(`` or ``)/`` whose slash is not escaped (only ``"\\/Expr(...)\\/"`` is an
    expression)."""
    seg = text[pos:end]
    if "\\u" in seg or ')/"' in seg:
        return True
    if '"/' not in seg:
        return False
    at = seg.find('"/')
    while at >= 0:
        if seg[at + 2:at + 7].lower() == "expr(":
            return True
        at = seg.find('"/', at + 2)
    return False


def _read_hit(pair: tuple, entry_cls) -> tuple:
    """The hit of one decoded attribute, remembered when its value is a number, a
    boolean, null or a short string."""
    name, value = pair
    if not name:
        raise _Refused
    t = type(value)
    if t is bytes:
        node = literal(int(value) if value.isdigit() and len(value) < 19 else _number(value))
    elif t is str and value[:1] != "/":
        node = literal(value)
    else:
        node = _node(value, 1)
    if type(node) is e.Literal:
        hit = (name.lower(), entry_cls(name, node), name, node)
    else:
        hit = (name.lower(), None, name, node)
    if t is str or t is bytes or t is bool or value is None:
        _HITS.remember(pair, hit, len(name) + (len(value) if t is str or t is bytes else 0))
    return hit


def _number(text: bytes):
    """The value of a JSON number's text: a real with a fraction or an exponent, else
    an integer, which must fit in 64 bits (HTCondor reads a larger one as 0, or
    refuses it when very long: the slow reader does both)."""
    if text.isdigit():
        value = int(text)
    elif b"." in text or b"e" in text or b"E" in text:
        return float(text)
    else:
        value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise _Refused
    return value


def _node(value, depth: int):
    """The expression node of one decoded JSON value, as :class:`_JsonReader` makes it."""
    t = type(value)
    if t is str:
        if value[:6].lower() == "/expr(" and value.endswith(")/"):
            return parse_expression(value[6:-2])
        return literal(value)
    if t is bytes:
        return literal(_number(value))
    if t is bool:
        return literal(value)
    if value is None:
        return literal(UNDEFINED)
    if depth >= limits.MAX_DEPTH:
        raise _Refused  # the slow reader says where it nests too deeply
    if t is list:
        if not value:
            return e.ListExpr((), 0)  # as the slow reader makes it
        items = tuple([_node(item, depth + 1) for item in value])
        node = e.ListExpr(items, e.depth_of(*items))
    else:
        pairs = []
        for name, item in value:
            if not name:
                raise _Refused
            pairs.append((name, _node(item, depth + 1)))
        node = e.RecordExpr(merge_entries(pairs), e.depth_of(*(x for _, x in pairs)))
    if node.depth > limits.MAX_DEPTH:
        raise _Refused
    return node


def _read_ad(reader: _JsonReader, ClassAd, Entry):  # noqa: N803 - the classes, imported late
    """The next ad, or None for an empty object (which ends the ads); the reader
    stands at its first character (the caller has peeked)."""
    if reader.text.startswith("{", reader.pos):
        try:
            attrs, end = _fast_attrs(reader.text, reader.pos, Entry)
        except (_Refused, ValueError, ClassAdParseError, RecursionError):
            pass
        else:
            reader.pos = end
            if not attrs:
                return None
            ad = ClassAd.__new__(ClassAd)
            ad._attrs = attrs
            ad.parent = None
            return ad
    entries = reader.read_object().entries
    return ClassAd.from_entries(entries) if entries else None


def parse_json_ads(text: str) -> Iterator:
    """Ads in JSON: one object, or an array of objects. An empty object ends the ads,
    as in HTCondor's bindings (parseNext of ``{}`` finds no ad)."""
    from classad.ad import ClassAd, Entry

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
            ad = _read_ad(reader, ClassAd, Entry)
            if ad is None:
                return
            yield ad
        return
    text, space = reader.text, _JsonReader._SPACE.match
    while True:
        # the usual stream of objects one after another, without the reader's steps
        pos = space(text, reader.pos).end()
        if text.startswith("{", pos):
            try:
                attrs, end = _fast_attrs(text, pos, Entry)
            except (_Refused, ValueError, ClassAdParseError, RecursionError):
                pass
            else:
                if not attrs:
                    return
                reader.pos = end
                ad = ClassAd.__new__(ClassAd)
                ad._attrs = attrs
                ad.parent = None
                yield ad
                continue
        reader.pos = pos
        if reader.at_end():
            return
        ad = _read_ad(reader, ClassAd, Entry)
        if ad is None:
            return
        yield ad
