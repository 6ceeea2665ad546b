"""Replacing a description's queue statements: every queue statement (with its
inline items) gives way to one, and a macro named ``queue`` is kept."""

from __future__ import annotations

from schedd.submit.queue_args import is_queue_line, with_queue_args


def test_every_queue_statement_and_its_items_are_replaced_by_one():
    """Queue lines, item blocks included, are dropped and one queue line ends the text."""
    text = "executable = /bin/echo\nqueue 2\narguments = $(x)\nQueue x from (\n a\n b\n)\nlog = l\n"
    assert with_queue_args(text, "3") == "executable = /bin/echo\narguments = $(x)\nlog = l\nqueue 3\n"


def test_a_macro_named_queue_is_not_a_queue_statement():
    """``queue = 5`` sets a macro; ``QUEUE`` and ``queue 1`` are statements."""
    assert not is_queue_line("queue = 5")
    assert is_queue_line("  QUEUE")
    assert is_queue_line("queue 1 in (a)")
    assert with_queue_args("queue = 5\nqueue\n", "1") == "queue = 5\nqueue 1\n"
