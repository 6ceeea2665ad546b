"""Indexes of one ad type's stored ads by the string value of the attributes queries
most often test for equality (``Machine == "node7"``, ``State == "Unclaimed"``), so
that such a query examines the ads that can match instead of every ad.

An ad whose attribute is a string literal is found under its value folded as ClassAd
``==`` folds it (ASCII case only); an ad whose attribute is an expression is a
candidate for every value, since only evaluating it can tell. Any other ad cannot
make ``Attr == "text"`` true (missing is undefined, another type is an error).
"""

from __future__ import annotations

from attrs import define, field

from classad.operators import fold_case

#: Attributes (lower case) indexed in every ad type: the names condor_status and the
#: daemons look ads up by, and the states that split a pool's slots.
INDEXED_ATTRIBUTES = ("name", "machine", "state", "activity", "slottype", "scheddname")


@define
class EqualityIndex:
    """Ads of one type by the folded string value of each indexed attribute, each held
    as its store key and stored order (strings and numbers only: dicts of them are no
    work for Python's garbage collector, one dict of ads per distinct Name would be).
    Mutable: it follows the store's updates."""

    _by_value: dict[str, dict[str, dict[str, int]]] = field(factory=dict)
    _expressions: dict[str, dict[str, int]] = field(factory=dict)

    def add(self, stored) -> None:
        """Index ``stored`` (a :class:`collector.store.StoredAd`) under its key."""
        for name in INDEXED_ATTRIBUTES:
            self._add_one(stored, name)

    def discard(self, stored) -> None:
        """Forget ``stored``'s key under its values (an emptied value is forgotten too,
        so ads that come and go leave nothing behind)."""
        for name in INDEXED_ATTRIBUTES:
            self._discard_one(stored, name)

    def replace(self, earlier, stored) -> None:
        """Index ``stored`` in place of ``earlier``: as :meth:`discard` then :meth:`add`,
        but an attribute held where it was (a slot re-advertised keeps its Name and
        Machine, mostly its State) is left alone."""
        same_place = earlier.key == stored.key and earlier.seq == stored.seq
        for name in INDEXED_ATTRIBUTES:
            if same_place and _place(earlier, name) == _place(stored, name):
                continue
            self._discard_one(earlier, name)
            self._add_one(stored, name)

    def _add_one(self, stored, name: str) -> None:
        holder = self._holder(stored, name)
        if holder is not None:
            holder[stored.key] = stored.seq

    def _discard_one(self, stored, name: str) -> None:
        value = stored.literals.get(name)
        if type(value) is str:
            by_value = self._by_value.get(name, {})
            _forget(by_value, fold_case(value), stored.key)
        else:
            _forget(self._expressions, name, stored.key)

    def candidates(self, name: str, value: str) -> dict[str, int] | None:
        """The keys (with their stored order) of the ads in which ``name == value`` can
        be true, or None when ``name`` is not indexed."""
        if name not in INDEXED_ATTRIBUTES:
            return None
        found = self._by_value.get(name, {}).get(fold_case(value), {})
        expressions = self._expressions.get(name)
        return {**found, **expressions} if expressions else found

    def _holder(self, stored, name: str) -> dict | None:
        value = stored.literals.get(name)
        if type(value) is str:
            return self._by_value.setdefault(name, {}).setdefault(fold_case(value), {})
        if name in stored.keys_by_lower and name not in stored.literals:
            return self._expressions.setdefault(name, {})
        return None


def _place(stored, name: str) -> tuple[bool, str] | None:
    """Where ``stored`` is indexed for ``name``: (True, folded value) for a string
    literal, (False, name) for an expression, None when it is not indexed for it."""
    value = stored.literals.get(name)
    if type(value) is str:
        return True, fold_case(value)
    if name in stored.keys_by_lower and name not in stored.literals:
        return False, name
    return None


def _forget(holders: dict[str, dict], which: str, key: str) -> None:
    holder = holders.get(which)
    if holder is not None and holder.pop(key, None) is not None and not holder:
        del holders[which]
