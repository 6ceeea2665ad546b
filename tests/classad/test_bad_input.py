"""Bad input never escapes as anything but ClassAdParseError, and pathological input
(deep nesting, huge literals, cycles) gives a clear error or ERROR, never a crash."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import classad
from classad.values import ERROR, UNDEFINED

SEEDS = [
    "a + b * 3", "[ a = 1; b = { 1, 2 }; c = [ d = a ] ]", 'strcat("x", y) =?= "xy"',
    "TARGET.Memory >= MY.RequestMemory && (Cpus > 1 || GPUs >= 1)", "x ? y : z ?: w",
    "{ [a = 1], [b = 2] }.a[0]", '"esc\\"aped\\101"', "-1e-5 / .5 % 3 >>> 2",
]
ALPHABET = string.ascii_letters + string.digits + " \t\n()[]{};,.=!<>+-*/%&|^~?:'\"\\#@$"


def _mutations():
    seed = st.sampled_from(SEEDS)
    edit = st.tuples(st.integers(0, 200), st.integers(0, 5), st.text(ALPHABET, max_size=5))

    def apply(text, edits):
        for pos, cut, insert in edits:
            pos %= len(text) + 1
            text = text[:pos] + insert + text[pos + cut:]
        return text
    return st.builds(apply, seed, st.lists(edit, max_size=4))


def _parses_or_refuses(text: str) -> None:
    try:
        tree = classad.ExprTree(text)
    except classad.ClassAdParseError as err:
        assert "line" in str(err) or err.line is None
        return
    tree.eval(classad.ClassAd("[ a = 1; b = a; x = x ]"))
    str(tree)


@settings(max_examples=400, deadline=None)
@given(st.text(ALPHABET, max_size=60))
def test_random_text_parses_or_raises_parse_error(text: str) -> None:
    """Arbitrary text either parses (and evaluates and prints) or raises ClassAdParseError."""
    _parses_or_refuses(text)


@settings(max_examples=400, deadline=None)
@given(_mutations())
def test_mutated_expressions_parse_or_raise_parse_error(text: str) -> None:
    """Near-valid expressions, mutated, never raise anything but ClassAdParseError."""
    _parses_or_refuses(text)


@settings(max_examples=200, deadline=None)
@given(st.text(ALPHABET, max_size=80))
def test_ad_text_in_every_form_parses_or_raises_parse_error(text: str) -> None:
    """The ad readers (new, old, JSON) refuse bad text only with ClassAdParseError."""
    for form in (classad.ParserType.New, classad.ParserType.Old, classad.ParserType.JSON):
        try:
            list(classad.parseAds(text, form))
        except classad.ClassAdParseError:
            pass


def test_parse_error_names_line_and_column_and_points_at_the_text() -> None:
    """The message gives the position and a caret under the offending character."""
    with pytest.raises(classad.ClassAdParseError) as caught:
        classad.ExprTree("a +\n\tb @ c")
    err = caught.value
    assert (err.line, err.column) == (2, 4)
    assert "line 2, column 4" in str(err)
    context_line, caret_line = err.context.splitlines()
    assert context_line.expandtabs()[caret_line.index("^")] == "@"


def test_parse_error_is_a_value_error() -> None:
    assert issubclass(classad.ClassAdParseError, ValueError)


@pytest.mark.parametrize("opener,closer", [("(", ")"), ("{", "}"), ("[a = ", "]")])
def test_ten_thousand_nested_levels_give_a_clear_error(opener: str, closer: str) -> None:
    """Deep nesting is refused with a message, not a RecursionError."""
    text = opener * 10_000 + "1" + closer * 10_000
    with pytest.raises(classad.ClassAdParseError, match="nested"):
        classad.ExprTree(text)


def test_long_chain_of_operators_evaluates() -> None:
    """A flat but long expression (hundreds of clauses) still evaluates."""
    text = " && ".join(f"(x{i} == {i} || true)" for i in range(300))
    assert classad.ExprTree(text).eval() is True


def test_very_long_string_and_list_literals() -> None:
    big = "y" * 200_000
    assert classad.ExprTree(f'size("{big}")').eval() == 200_000
    items = ", ".join(str(i) for i in range(20_000))
    assert classad.ExprTree(f"sum({{{items}}})").eval() == sum(range(20_000))


def test_reference_cycles_evaluate_to_undefined() -> None:
    ad = classad.ClassAd("[ a = b + 1; b = a * 2; self = self; ok = 3 ]")
    assert ad.eval("a") is UNDEFINED
    assert ad.eval("self") is UNDEFINED
    assert ad.eval("ok") == 3


def test_deep_chain_of_references_gives_error_not_a_crash() -> None:
    """5,000 attributes each referring to the next exhaust the stack: ERROR, not a crash."""
    ad = classad.ClassAd({f"a{i}": classad.ExprTree(f"a{i + 1} + 1") for i in range(5000)})
    ad["a5000"] = 0
    assert ad.evaluate("a0") in (ERROR, 5000)
