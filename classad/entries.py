"""What the text readers remember of attribute definitions they have read, so that a
definition seen before (``MyType = "Machine"``, the same Requirements in every slot
ad) costs a dictionary lookup in the next ad.

A reader's cache maps a definition's text (or decoded JSON pair) to a *hit*:
``(lower-cased name, entry or None, name, expression node)``. The entry is there
when the value is a literal: such an entry is shared by every ad that has it, as
evaluation never changes one. For any other expression only the node is shared, and
each ad gets its own entry, as evaluation tells attributes apart by their entries
(a reference cycle is an entry met again).
"""

from __future__ import annotations

from classad import nodes as e

#: Entries a cache holds before it is emptied (a dictionary of this size empties in
#: a few milliseconds).
CACHE_LIMIT = 30_000
#: Longer definitions are not remembered.
TEXT_LIMIT = 512
#: Values remembered per attribute name (until the cache is emptied).
PER_NAME_LIMIT = 256

_new = object.__new__
_set_value = e.Literal.__dict__["value"].__set__
_set_depth = e.Literal.__dict__["depth"].__set__


def literal(value) -> e.Literal:
    """``Literal(value)``, built without the frozen class's checks on assignment:
    the readers make one for nearly every attribute they read."""
    node = _new(e.Literal)
    _set_value(node, value)
    _set_depth(node, 1)
    return node


def make_hit(name: str, node, entry_cls) -> tuple:
    """The hit of attribute ``name`` with expression ``node``."""
    shared = entry_cls(name, node) if type(node) is e.Literal else None
    return (name.lower(), shared, name, node)


def remember(cache: dict, key, value, size: int) -> None:
    """Store ``value`` under ``key`` in a plain cache unless its text is longer than
    :data:`TEXT_LIMIT`; a full cache is emptied first."""
    if size > TEXT_LIMIT:
        return
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    cache[key] = value


class Hits(dict):
    """One reader's cache: a dictionary of hits (its ``get`` is the plain one) that
    remembers at most :data:`PER_NAME_LIMIT` values per attribute name, so that
    names whose value differs in every ad (``Name``, ``Disk``) neither crowd out
    the values that recur nor make the cache fill and empty over and over."""

    __slots__ = ("per_name",)

    def __init__(self) -> None:
        super().__init__()
        self.per_name: dict[str, int] = {}

    def remember(self, key, hit: tuple, size: int) -> None:
        """Store ``hit`` under ``key`` unless its text is longer than
        :data:`TEXT_LIMIT` or its name has had its share; a full cache is emptied."""
        if size > TEXT_LIMIT:
            return
        per_name = self.per_name
        count = per_name.get(hit[0], 0)
        if count >= PER_NAME_LIMIT:
            return
        if len(self) >= CACHE_LIMIT:
            self.clear()
            per_name.clear()
            count = 0
        per_name[hit[0]] = count + 1
        self[key] = hit


def attrs_from_hits(hits: list, entry_cls) -> dict:
    """An ad's attribute mapping (lower-cased name to entry) from its definitions'
    hits in order: a later value wins, and the first spelling of a name stays."""
    attrs = {h[0]: h[1] or entry_cls(h[2], h[3]) for h in hits}
    if len(attrs) == len(hits):
        return attrs
    attrs = {}
    for lower, shared, name, node in hits:
        old = attrs.get(lower)
        if old is not None:
            name = old.name
        attrs[lower] = shared if shared is not None and shared.name == name else entry_cls(name, node)
    return attrs
