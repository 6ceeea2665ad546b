"""String builtins: ``strcat``, ``join``, ``substr``, ``size``, case changes, ``strcmp``/``stricmp``,
``split``, ``splitUserName``, ``splitSlotName``. Lengths and offsets count UTF-8 bytes."""

from __future__ import annotations

from classad import limits
from classad.functions import builtin
from classad.functions.coercion import ascii_upper, from_utf8, to_string, utf8
from classad.operators import fold_case
from classad.values import ERROR, UNDEFINED, is_classad

C_SPACE = " \t\n\v\f\r"


@builtin("strcat", 0, None)
def strcat(*args: object) -> object:
    """Every argument through ``string()``, concatenated; the first undefined or error
    argument decides the result."""
    parts, size = [], 0
    for arg in args:
        text = to_string(arg)
        if type(text) is not str:
            return text
        size += len(text)
        limits.check_length(size)
        parts.append(text)
    return "".join(parts)


@builtin("join", 0, None)
def join(*args: object) -> object:
    """``join(sep, a, b, ...)``, ``join(sep, list)`` or ``join(list)``: the items as strings
    with the separator between them. Undefined items are left out and an undefined
    separator counts as empty; an error anywhere is error. A separator is written only
    once the result is not empty, so empty leading items leave none. Called with one or two
    arguments whose last is undefined (the list it would join), it is undefined."""
    if args and len(args) <= 2 and args[-1] is UNDEFINED:
        return UNDEFINED
    if args and len(args) <= 2 and type(args[-1]) is list:
        sep, items = (args[0] if len(args) == 2 else ""), args[-1]
    elif args:
        sep, items = args[0], args[1:]
    else:
        return ""
    sep = "" if sep is UNDEFINED else to_string(sep)
    if type(sep) is not str:
        return ERROR
    texts, size = [], 0
    for item in items:
        if item is UNDEFINED:
            continue
        text = to_string(item)
        if type(text) is not str:
            return ERROR
        if size and sep:  # fnCall.cpp strCat puts a separator only after some text
            texts.append(sep)
            size += len(sep)
        size += len(text)
        limits.check_length(size)
        texts.append(text)
    return "".join(texts)


@builtin("substr", 2, 3)
def substr(s: object, offset: object, length: object = None) -> object:
    """Perl-like substring by bytes: a negative offset counts from the end, a negative
    length stops that many bytes before the end; parts outside the string are dropped."""
    given = [s, offset] + ([] if length is None else [length])
    if any(v is UNDEFINED for v in given):
        return UNDEFINED
    if type(s) is not str or type(offset) is not int or (length is not None and type(length) is not int):
        return ERROR
    data = utf8(s)
    start, count = _substr_span(len(data), offset, 0 if length is None else length)
    if length == 0:
        count = 0
    return from_utf8(data[start:start + count])


def _substr_span(size: int, offset: int, length: int) -> tuple[int, int]:
    if offset < 0:
        offset = max(0, size + offset)
    elif offset >= size:
        offset = size
    if length <= 0:
        length = max(0, size - offset + length)
    else:
        length = min(length, size - offset)
    return offset, length


@builtin("size", 1)
def size(v: object) -> object:
    """Bytes of a string, elements of a list, attributes of an ad; else error."""
    if v is UNDEFINED:
        return UNDEFINED
    if type(v) is str:
        return len(utf8(v))
    if type(v) is list or is_classad(v):
        return len(v)
    return ERROR


def _changer(name: str, change) -> None:
    def impl(v: object) -> object:
        text = to_string(v)
        return change(text) if type(text) is str else text

    builtin(name, 1)(impl)


_changer("toUpper", ascii_upper)
_changer("toLower", fold_case)


def _comparer(name: str, fold) -> None:
    def impl(a: object, b: object) -> object:
        if a is UNDEFINED or b is UNDEFINED:
            return UNDEFINED
        sa, sb = to_string(a), to_string(b)
        if type(sa) is not str or type(sb) is not str:
            return ERROR
        ka, kb = utf8(fold(sa)), utf8(fold(sb))
        return (ka > kb) - (ka < kb)

    builtin(name, 2)(impl)


_comparer("strcmp", lambda s: s)
_comparer("stricmp", fold_case)


@builtin("split", 1, 2)
def split(s: object, separators: object = ", \t") -> object:
    """The pieces of ``s`` between separator characters (default comma and whitespace).
    Runs of whitespace and a separator next to whitespace count once, so only a
    repeated non-space separator (``"a,,b"``) yields an empty piece."""
    if type(s) is not str or type(separators) is not str:
        return ERROR
    pieces: list = []
    start, previous = 0, None
    for i, ch in enumerate(s):
        if ch not in separators:
            continue
        if i > start:
            pieces.append(s[start:i])
        elif ch not in C_SPACE and ch == previous:
            pieces.append("")
        if ch not in C_SPACE:
            previous = ch
        start = i + 1
    if len(s) > start:
        pieces.append(s[start:])
    return pieces


def _splitter(name: str, missing_first: bool) -> None:
    def impl(v: object) -> object:
        if type(v) is not str:
            return ERROR
        before, at, after = v.partition("@")
        if at:
            return [before, after]
        return ["", v] if missing_first else [v, ""]

    builtin(name, 1)(impl)


_splitter("splitUserName", missing_first=False)
_splitter("splitSlotName", missing_first=True)
