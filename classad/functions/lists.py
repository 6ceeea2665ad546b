"""List builtins: ``sum``, ``avg``, ``min``, ``max``, ``member``, ``identicalMember``,
``anyCompare``, ``allCompare``."""

from __future__ import annotations

from classad.functions import builtin
from classad.operators import arithmetic, identical, not_identical
from classad.operators import compare as ordered_compare
from classad.values import ERROR, UNDEFINED, is_classad

_NUMBER_TYPES = (int, float, bool)
_OPERATORS = ("<", "<=", "==", "!=", ">", ">=", "is", "isnt")


def compare(op: str, a: object, b: object) -> object:
    """``a op b`` for the operator names ``anyCompare`` accepts (``is``/``isnt`` included)."""
    if op == "is":
        return identical(a, b)
    if op == "isnt":
        return not_identical(a, b)
    return ordered_compare(op, a, b)


def _numbers(v: object) -> list | object:
    """The defined elements of a list argument if all are numbers; else the result to return."""
    if v is UNDEFINED:
        return UNDEFINED
    if type(v) is not list:
        return ERROR
    numbers = [e for e in v if e is not UNDEFINED]
    if any(type(e) not in _NUMBER_TYPES for e in numbers):
        return ERROR
    return numbers


def _total(numbers: list) -> object:
    total = numbers[0] if numbers else 0
    for n in numbers[1:]:
        total = arithmetic("+", total, n)
    return total


@builtin("sum", 1)
def list_sum(v: object) -> object:
    """The sum of the numbers in a list (undefined elements skipped; ``sum({})`` is 0)."""
    numbers = _numbers(v)
    return _total(numbers) if type(numbers) is list else numbers


@builtin("avg", 1)
def list_avg(v: object) -> object:
    """The real average of the numbers in a list; the integer 0 when there are none."""
    numbers = _numbers(v)
    if type(numbers) is not list:
        return numbers
    total = _total(numbers)
    if not numbers or total is ERROR:
        return total
    return arithmetic("/", total, float(len(numbers)))


def _bound(name: str, op: str) -> None:
    def impl(v: object) -> object:
        numbers = _numbers(v)
        if type(numbers) is not list:
            return numbers
        if not numbers:
            return UNDEFINED
        best = numbers[0]
        for n in numbers[1:]:
            if compare(op, n, best) is True:
                best = n
        return _promote(best, numbers)

    builtin(name, 1)(impl)


def _promote(best: object, numbers: list) -> object:
    """The bound in the widest type present: real if any element is real, integer if any is."""
    types = {type(n) for n in numbers}
    if float in types:
        return float(best)
    if int in types:
        return int(best)
    return best


_bound("min", "<")
_bound("max", ">")


def _membership(name: str, op: str, strict: bool) -> None:
    def impl(item: object, items: object) -> object:
        if items is UNDEFINED or (strict and item is UNDEFINED):
            return UNDEFINED
        if type(items) is not list or type(item) is list or is_classad(item):
            return ERROR
        if strict and item is ERROR:
            return ERROR
        return any(compare(op, element, item) is True for element in items)

    builtin(name, 2)(impl)


_membership("member", "==", strict=True)
_membership("identicalMember", "is", strict=False)


def _list_compare(name: str, need_all: bool) -> None:
    def impl(op: object, items: object, against: object) -> object:
        if op is UNDEFINED:
            return UNDEFINED
        if type(op) is not str or op not in _OPERATORS:
            return ERROR
        if items is UNDEFINED:
            return UNDEFINED
        if type(items) is not list:
            return ERROR
        return _scan(op, items, against, need_all)

    builtin(name, 3)(impl)


def _scan(op: str, items: list, against: object, need_all: bool) -> object:
    """Compare each element in turn; stop at the first decisive answer. An undefined
    comparison stops the scan with false (HTCondor's behaviour for both functions)."""
    for element in items:
        outcome = compare(op, element, against)
        if outcome is UNDEFINED:
            return False
        if type(outcome) is not bool:
            return ERROR
        if outcome != need_all:
            return outcome
    return need_all


_list_compare("anyCompare", need_all=False)
_list_compare("allCompare", need_all=True)
