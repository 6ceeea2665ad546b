"""Tests for the submit language's integer expressions (``queue 2*3``, count commands)."""

import pytest

from schedd.submit.values import MAX_INTEGER_EXPRESSION, integer_expression


@pytest.mark.parametrize("text, value", [("2*3", 6), ("-7/2", -3), ("7 // 2", 3), (" 10 % 3 ", 1), ("+(1+2)*4", 12)])
def test_integer_expressions_evaluate_like_c(text, value):
    """Numbers, the four operations and parentheses; division rounds toward zero."""
    assert integer_expression(text) == value


@pytest.mark.parametrize("text", ["x", "2**3", "1/0", "1.5", "1+", "f(1)"])
def test_anything_else_is_not_an_integer_expression(text):
    """Names, powers, floats, calls and division by zero are refused."""
    with pytest.raises(ValueError):
        integer_expression(text)


def test_a_long_expression_is_refused_before_it_is_parsed():
    """A chain of thousands of operators cannot exhaust the stack of whoever reads it."""
    with pytest.raises(ValueError, match=f"at most {MAX_INTEGER_EXPRESSION} characters"):
        integer_expression("1+" * 5000 + "1")
