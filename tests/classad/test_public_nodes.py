"""Tests for the public way to work with a ClassAd's expression trees
(``ExprTree.node``, ``ExprTree.from_node``, ``ClassAd.entries_by_key``), and that no
code outside the classad package reaches into its private attributes instead."""

import pathlib
import re

import classad
from classad import NOT_CONSTANT, ClassAd, Entry, ExprTree

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRIVATE = re.compile(r"(?<!self)\._attrs\b|\._node\b|ExprTree\._wrap\b")


def test_node_and_from_node_round_trip():
    """A tree's node wraps back into an equal tree without re-parsing."""
    tree = ExprTree("TARGET.Memory >= 2 * RequestMemory")
    again = ExprTree.from_node(tree.node)
    assert again == tree and again.node is tree.node


def test_entries_by_key_gives_spelling_node_and_literal_value():
    """Each attribute's entry has its first spelling, its node, and its value when literal."""
    ad = ClassAd({"Cpus": 4})
    ad["Double"] = ExprTree("Cpus * 2")
    entries = ad.entries_by_key()
    assert set(entries) == {"cpus", "double"}
    assert all(isinstance(entry, Entry) for entry in entries.values())
    assert (entries["cpus"].name, entries["cpus"].const) == ("Cpus", 4)
    assert entries["double"].const is NOT_CONSTANT
    assert ExprTree.from_node(entries["double"].expr) == ExprTree("Cpus * 2")
    assert ad.expression("Double") is entries["double"].expr


def test_no_code_outside_classad_uses_its_private_attributes():
    """Daemons, bindings, benchmarks and tests use the public names only."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("classad", ".git", "build") or "site-packages" in relative.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if PRIVATE.search(line) and path != pathlib.Path(__file__).resolve():
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == [], "\n".join(offenders)


def test_public_names_are_exported():
    """The node-level names are part of the package's public list."""
    assert {"Entry", "NOT_CONSTANT", "compile_constraint", "ConstraintError"} <= set(classad.__all__)


def test_is_node_tells_a_tree_node_from_a_python_value():
    """Parsed and converted nodes are nodes; the Python values and trees they come from are not."""
    from classad.nodes import is_node

    assert is_node(ExprTree("a + 1").node) and is_node(classad.convert.python_to_node([1, "x"]))
    assert not any(is_node(value) for value in (1, "x", [1], None, ExprTree("a")))
