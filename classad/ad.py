"""The ClassAd: a case-insensitive mapping of attribute names to expressions."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping

from classad import matching
from classad import nodes as e
from classad.convert import node_to_python, python_to_node, value_to_python
from classad.evaluate import NOT_CONSTANT, compile_expr, evaluate_key
from classad.exprtree import ExprTree
from classad.flatten import flatten
from classad.references import references
from classad.textforms import parse_new_ad, print_json, print_old
from classad.unparse import quote_name, unparse_expr, unparse_record


class Entry:
    """One attribute of an ad: ``name`` as first spelled, ``expr`` its expression tree
    node (:mod:`classad.nodes`), ``const`` its value when ``expr`` is a literal (else
    :data:`classad.NOT_CONSTANT`), and, each made on first use, ``compiled``, its
    closure, ``old_line``, its line of the old syntax, ``wire``, its value in the
    daemons' JSON form (:mod:`daemoncore.wire.adcodec`), and ``order``, its sort key. Entries are shared between ads
    derived from one another (and by ads read off the wire); never change one."""

    __slots__ = ("name", "expr", "const", "compiled", "old_line", "wire", "order")

    def __init__(self, name: str, expr) -> None:
        self.name = name
        self.expr = expr
        self.const = expr.value if type(expr) is e.Literal else NOT_CONSTANT
        self.compiled = None
        self.old_line = None
        self.wire = NO_WIRE
        self.order = None


#: ``Entry.wire`` before it is made (None is a value there: UNDEFINED's).
NO_WIRE = object()


def _order(entry: Entry) -> tuple[int, str]:
    """An entry's place in an ad's attribute order (by name length, then by name
    ignoring case), kept on the entry: ads sharing it are sorted again and again."""
    order = entry.order
    if order is None:
        order = entry.order = (len(entry.name), entry.name.lower())
    return order


class ClassAd(MutableMapping):
    """A ClassAd, with the interface of HTCondor's ``classad2.ClassAd``.

    Construct it from new-syntax text (``ClassAd('[ a = 1 ]')``) or a mapping.
    Reading a key returns the Python value of a literal, else an :class:`ExprTree`;
    :meth:`eval` evaluates. Attributes iterate in HTCondor's order: by name length,
    then by name ignoring case.
    """

    __slots__ = ("_attrs", "parent")

    def __init__(self, input: str | Mapping | None = None) -> None:
        self._attrs: dict[str, Entry] = {}
        self.parent: ClassAd | None = None
        if input is None:
            return
        if isinstance(input, str):
            parsed = parse_new_ad(input)
            self._attrs = parsed._attrs
        elif isinstance(input, Mapping):
            for key, value in input.items():
                self[key] = value
        else:
            raise TypeError(f"ClassAd() takes text or a mapping, not {type(input).__name__}")

    @classmethod
    def of_entries(cls, entries: "Mapping[str, Entry]") -> "ClassAd":
        """An ad holding these :class:`Entry` objects (shared, not copied), keyed by
        lower-cased name: for readers that keep entries to reuse across ads."""
        ad = cls.__new__(cls)
        ad._attrs = dict(entries)
        ad.parent = None
        return ad

    def ordered_entries(self) -> list[Entry]:
        """This ad's own entries in its attribute order (see :meth:`__iter__`)."""
        return self._ordered()

    @classmethod
    def from_entries(cls, entries, parent: "ClassAd | None" = None) -> "ClassAd":
        """An ad from ``(name, expr)`` pairs whose names are already distinct."""
        ad = cls.__new__(cls)
        ad._attrs = {name.lower(): Entry(name, x) for name, x in entries}
        ad.parent = parent
        return ad

    def entries_by_key(self) -> Mapping[str, Entry]:
        """This ad's own attributes keyed by lower-cased name, each an :class:`Entry`.

        For code that walks ads by their expression trees or checks literal values
        without evaluating (the negotiator's autoclusters and pre-filter): the live
        mapping, not a copy, so a check per slot costs one call. Read it; change the
        ad through the mapping protocol or :meth:`set_expr`.
        """
        return self._attrs

    def derive(self, changes, deleted=()) -> "ClassAd":
        """A new ad with this ad's attributes plus ``changes`` (``(name, expr)``
        pairs) and without ``deleted`` names. The unchanged attributes' entries are
        shared, so a proc ad derived from its cluster ad costs only its differences."""
        ad = ClassAd.__new__(ClassAd)
        attrs = dict(self._attrs)
        for name in deleted:
            attrs.pop(name.lower(), None)
        for name, node in changes:
            key = name.lower()
            old = attrs.get(key)
            attrs[key] = Entry(name if old is None else old.name, node)
        ad._attrs = attrs
        ad.parent = self.parent
        return ad

    # --- mapping protocol ---------------------------------------------------
    def __getitem__(self, key: str):
        entry = self._attrs[key.lower()]
        return node_to_python(entry.expr, self)

    def __setitem__(self, key: str, value) -> None:
        if not isinstance(key, str):
            raise TypeError("ClassAd attribute names are strings")
        self.set_expr(key, python_to_node(value))

    def set_expr(self, key: str, node) -> None:
        """Store an expression tree under ``key`` (the first spelling is kept)."""
        lkey = key.lower()
        old = self._attrs.get(lkey)
        self._attrs[lkey] = Entry(old.name if old is not None else key, node)

    def __delitem__(self, key: str) -> None:
        del self._attrs[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._attrs

    def __iter__(self) -> Iterator[str]:
        return (entry.name for entry in self._ordered())

    def __len__(self) -> int:
        return len(self._attrs)

    def _ordered(self) -> list[Entry]:
        return sorted(self._attrs.values(), key=_order)

    # --- evaluation ---------------------------------------------------------
    def eval(self, attr: str):
        """The value of attribute ``attr`` evaluated in this ad (KeyError if absent)."""
        if attr.lower() not in self._attrs:
            raise KeyError(attr)
        return value_to_python(self.evaluate(attr))

    def evaluate(self, attr: str, target: "ClassAd | None" = None):
        """The raw ClassAd value of ``attr`` (UNDEFINED if absent), optionally
        against a target ad; this is what daemons call."""
        return evaluate_key(self, attr.lower(), target)

    def lookup(self, attr: str):
        """The expression stored under ``attr`` as an :class:`ExprTree`."""
        return ExprTree.from_node(self._attrs[attr.lower()].expr)

    def expression(self, attr: str):
        """The stored expression tree node of ``attr``, or None."""
        entry = self._attrs.get(attr.lower())
        return None if entry is None else entry.expr

    def matches(self, other: "ClassAd") -> bool:
        """True when ``other``'s Requirements accept this ad."""
        return matching.requirements_accept(other, self)

    def symmetricMatch(self, other: "ClassAd") -> bool:
        """True when each ad's Requirements accept the other."""
        return matching.symmetric_match(self, other)

    def externalRefs(self, expr) -> list[str]:
        """Attributes ``expr`` refers to that this ad does not define."""
        return references(self, expr)[1]

    def internalRefs(self, expr) -> list[str]:
        """Attributes ``expr`` refers to that this ad defines."""
        return references(self, expr)[0]

    def flatten(self, expr):
        """``expr`` with every reference this ad resolves replaced by its value."""
        return flatten(self, expr)

    # --- text forms ---------------------------------------------------------
    def unparse(self) -> str:
        """The one-line new-syntax text, ``[ a = 1; b = 2 ]``."""
        return unparse_record([(entry.name, entry.expr) for entry in self._ordered()])

    def printOld(self) -> str:
        """The old syntax: one ``Name = expr`` line per attribute."""
        return print_old(self)

    def printJson(self) -> str:
        """HTCondor's JSON form, expressions as ``"\\/Expr(...)\\/"`` strings."""
        return print_json(self)

    def __str__(self) -> str:
        if not self._attrs:
            return "[\n]\n"
        body = ";\n".join(f"    {quote_name(x.name)} = {unparse_expr(x.expr)}" for x in self._ordered())
        return f"[\n{body}\n]\n"

    def __repr__(self) -> str:
        return f"ClassAd({self.unparse()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassAd):
            return NotImplemented
        return self.unparse_map() == other.unparse_map()

    __hash__ = None  # mutable

    def unparse_map(self) -> dict[str, str]:
        return {k: unparse_expr(x.expr) for k, x in self._attrs.items()}

    def copy(self) -> "ClassAd":
        """A new ad with the same attributes. The entries are shared, not copied (they
        never change; setting an attribute of either ad replaces its own entry)."""
        return ClassAd.of_entries(self._attrs)

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()


__all__ = ["ClassAd", "Entry", "NO_WIRE", "compile_expr"]
