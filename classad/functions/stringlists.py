"""Builtins on delimited string lists (``"a, b, c"``): ``stringListSize``, ``stringListSum``,
``stringListAvg``, ``stringListMin``, ``stringListMax``, ``stringListMember``,
``stringListIMember``, ``stringListsIntersect``, ``stringListSubsetMatch``,
``stringListISubsetMatch``.

An item is the text between delimiter characters (default comma and space) with
surrounding whitespace removed; empty items do not count.
"""

from __future__ import annotations

from classad.functions import builtin
from classad.functions.coercion import real_to_int, strtod
from classad.operators import fold_case
from classad.values import ERROR, UNDEFINED

DEFAULT_DELIMITERS = ", "
FLT_MAX = 3.4028234663852886e38
FLT_MIN = 1.1754943508222875e-38
_INTEGER_CHARS = set("+-0123456789")


def string_list_items(text: str, delimiters: str = DEFAULT_DELIMITERS) -> list[str]:
    """The non-empty, whitespace-trimmed items of a delimited string."""
    if not delimiters:
        delimiters = DEFAULT_DELIMITERS
    pieces, start = [], 0
    for i, ch in enumerate(text):
        if ch in delimiters:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return [p.strip(" \t\n\v\f\r") for p in pieces if p.strip(" \t\n\v\f\r")]


def _all_strings(*values: object) -> bool:
    return all(type(v) is str for v in values)


@builtin("stringListSize", 1, 2)
def string_list_size(text: object, delimiters: object = DEFAULT_DELIMITERS) -> object:
    if not _all_strings(text, delimiters):
        return ERROR
    return len(string_list_items(text, delimiters))


def _summary(name: str, combine, start: float, empty: object, average: bool = False) -> None:
    """Register a numeric summary. HTCondor folds the items into a C double that starts
    at ``start`` (so ``stringListMax`` of negative numbers is FLT_MIN), and answers an
    integer unless some item is not written with digits and signs only."""

    def impl(text: object, delimiters: object = DEFAULT_DELIMITERS) -> object:
        if not _all_strings(text, delimiters):
            return ERROR
        items = string_list_items(text, delimiters)
        if not items:
            return empty
        total, is_real = start, False
        for item in items:
            parsed = strtod(item)
            if parsed is None:
                return ERROR
            is_real = is_real or not set(item) <= _INTEGER_CHARS
            total = combine(parsed[0], total)
        if average:
            total /= len(items)
        return total if is_real else real_to_int(total)

    builtin(name, 1, 2)(impl)


_summary("stringListSum", lambda x, acc: x + acc, 0.0, 0.0)
_summary("stringListAvg", lambda x, acc: x + acc, 0.0, 0.0, average=True)
_summary("stringListMin", lambda x, acc: x if x < acc else acc, FLT_MAX, UNDEFINED)
_summary("stringListMax", lambda x, acc: x if x > acc else acc, FLT_MIN, UNDEFINED)


#: The delimiters of the member and subset functions when none (or undefined) is given.
MEMBER_DELIMITERS = ", \t\r\n"


def _member_args(item: object, text: object, delimiters: object) -> tuple | object:
    """HTCondor's argument rule for the member and subset functions (compat_classad.cpp,
    stringListMember_func): an argument neither a string nor undefined is error; both
    lists undefined is undefined; otherwise undefined counts as an empty string and an
    undefined delimiter set as the default one."""
    if any(v is not UNDEFINED and type(v) is not str for v in (item, text, delimiters)):
        return ERROR
    if item is UNDEFINED and text is UNDEFINED:
        return UNDEFINED
    return ("" if item is UNDEFINED else item, "" if text is UNDEFINED else text,
            MEMBER_DELIMITERS if delimiters is UNDEFINED else delimiters)


def _member(name: str, fold) -> None:
    def impl(item: object, text: object, delimiters: object = UNDEFINED) -> object:
        args = _member_args(item, text, delimiters)
        if type(args) is not tuple:
            return args
        item, text, delimiters = args
        wanted = fold(item)
        return any(fold(entry) == wanted for entry in string_list_items(text, delimiters))

    builtin(name, 2, 3)(impl)


_member("stringListMember", lambda s: s)
_member("stringListIMember", fold_case)


@builtin("stringListsIntersect", 2, 3)
def string_lists_intersect(first: object, second: object, delimiters: object = None) -> object:
    """True when the two lists share an item (case-sensitive)."""
    given = [first, second] + ([] if delimiters is None else [delimiters])
    if any(v is ERROR for v in given):
        return ERROR
    if any(v is UNDEFINED for v in given):
        return UNDEFINED
    delimiters = DEFAULT_DELIMITERS if delimiters is None else delimiters
    if not _all_strings(first, second, delimiters):
        return ERROR
    others = set(string_list_items(second, delimiters))
    return any(item in others for item in string_list_items(first, delimiters))


def _subset(name: str, fold) -> None:
    def impl(subset: object, superset: object, delimiters: object = UNDEFINED) -> object:
        args = _member_args(subset, superset, delimiters)
        if type(args) is not tuple:
            return args
        subset, superset, delimiters = args
        if not subset:
            return True  # the empty string is a subset of anything
        wanted = string_list_items(subset, delimiters)
        available = {fold(s) for s in string_list_items(superset, delimiters)}
        # a text of delimiters only has no item to find, and HTCondor answers false
        return bool(wanted) and all(fold(s) in available for s in wanted)

    builtin(name, 2, 3)(impl)


_subset("stringListSubsetMatch", lambda s: s)
_subset("stringListISubsetMatch", fold_case)
