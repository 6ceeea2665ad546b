"""What a batched action writes for a job's changes (schedd.queue.stored.ChangeTexts,
stored_texts, encode_texts): the same nodes and texts as printing each value anew."""

from __future__ import annotations

from classad import ClassAd
from classad.convert import python_to_node
from classad.nodes import Literal
from classad.unparse import unparse_expr
from schedd.queue import stored
from schedd.queue.stored import ChangeTexts, encode_entries, encode_texts, stored_texts


def test_each_value_gets_the_node_and_text_made_fresh():
    """Integers, booleans, strings, floats, a ClassAd value and a node each read as when made anew."""
    values = ChangeTexts()
    counts = ClassAd()
    counts["UserRequest"] = 2
    for value in (3, 1700000000, True, 1, "via roost rm", 'quote " and \\', 2.5, counts, Literal(7)):
        for _ in range(2):  # the second time from memory
            node, text = values.of(value)
            fresh = value if isinstance(value, Literal) else python_to_node(value)
            assert node == fresh
            assert text == unparse_expr(fresh)


def test_true_and_one_are_told_apart():
    """True and 1 (equal in Python) keep their own nodes and texts."""
    values = ChangeTexts()
    assert values.of(1)[1] == "1"
    assert values.of(True)[1] == "true"
    assert values.of(1)[1] == "1"


def test_the_memory_starts_afresh_when_full(monkeypatch):
    """Past CHANGE_TEXTS_MAX distinct values the memory is cleared, and values still read right."""
    monkeypatch.setattr(stored, "CHANGE_TEXTS_MAX", 4)
    values = ChangeTexts()
    for number in range(10):
        assert values.of(number)[1] == str(number)
    assert len(values._known) <= 4


def test_stored_pairs_written_back_are_the_stored_text():
    """A proc's stored text read as pairs by name and written back unchanged is the same text."""
    text = encode_entries({"procid": ("ProcId", Literal(0)), "args": ("Args", Literal("0")),
                           "requirements": ("Requirements", None)})
    pairs = stored_texts(text)
    assert list(pairs) == ["procid", "args", "requirements"]
    assert encode_texts(pairs.values()) == text
