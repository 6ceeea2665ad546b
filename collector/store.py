"""The collector's store: ads by type, keyed by ``Name``, with private ads kept
apart. Updates replace, invalidations delete by name or predicate, and an ad is
gone once its ``ClassAdLifetime`` has passed on the injected clock.

Nothing here does I/O; constraints arrive as predicates over the parsed ad.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

from attrs import define, field, frozen

from collector.adtypes import ANY
from collector.errors import AdRejected
from collector.index import EqualityIndex
from collector.screening import Screen, literal_values
from collector.segments import Segments
from daemoncore.wire.adcodec import ad_from_json
from daemoncore.wire.ndjson import encode_line

DEFAULT_LIFETIME_SECONDS = 900

#: Distinct projections whose answer line each ad keeps ready.
CACHED_PROJECTIONS = 8
#: Distinct constraints whose screening verdict each ad keeps.
CACHED_VERDICTS = 8

_UNKNOWN = object()

Predicate = Callable[[object], bool]


@frozen
class StoredAd:
    """One ad as the collector holds it: its JSON form for answers (also as an NDJSON
    line once asked for, and its attribute names by lower case for projections), its literal
    values by lower-case name to screen constraints, the parsed ad for the constraints
    screening cannot decide (parsed when first needed), and when it expires."""

    ad_type: str
    name: str
    #: The parsed ad, or None to parse ``wire`` when a constraint first needs it.
    _ad: object = field(repr=False)
    wire: dict = field(repr=False)
    expires_at: float
    keys_by_lower: dict[str, str] = field(repr=False)
    #: What the ad is stored under: its Name, and for a Submitter ad also its ScheddName
    #: (one user of several schedds, or of another pool flocking here, is several ads).
    key: str = ""
    literals: dict[str, object] = field(factory=dict, repr=False)
    #: When the ad's key was first stored (kept by replacements): answers come in this order.
    seq: int = 0
    #: The NDJSON lines of the first few projections asked for, by :func:`projection_key`.
    _projected_lines: dict[str, bytes] = field(factory=dict, repr=False, eq=False)
    #: What the first few constraints' screens told of this ad, by constraint text.
    _verdicts: dict[str, bool | None] = field(factory=dict, repr=False, eq=False)
    #: The ad parsed from ``wire`` once a constraint needed it (set once, in place: a
    #: list or dict here would be one more object for the garbage collector per ad).
    _parsed: object = field(default=None, init=False, repr=False, eq=False)
    #: The whole ad's NDJSON line, encoded when first asked for (set once, in place).
    _line: bytes | None = field(default=None, init=False, repr=False, eq=False)

    @property
    def line(self) -> bytes:
        """The whole ad as an NDJSON line, encoded on first use: an ad replaced before
        any query asks for it whole (a slot re-advertised every few minutes, most
        queries projected) costs no encoding, and 500 slots stored at once cost 500 fewer."""
        if self._line is None:
            object.__setattr__(self, "_line", encode_line(self.wire))
        return self._line

    @property
    def ad(self) -> object:
        """The parsed ad, for evaluating constraints (parsed from ``wire`` on first use:
        most queries are decided on the literal values, and an ad not parsed holds a
        handful of objects instead of one per attribute)."""
        if self._ad is not None:
            return self._ad
        if self._parsed is None:
            object.__setattr__(self, "_parsed", ad_from_json(self.wire, f"the {self.ad_type} ad {self.name!r}"))
        return self._parsed

    def verdict(self, screen: Screen) -> bool | None:
        """``screen.screened`` of this ad's literal values, kept for the next query with
        the same constraint (ads are replaced, never changed, so it cannot go stale)."""
        verdicts = self._verdicts
        verdict = verdicts.get(screen.text, _UNKNOWN)
        if verdict is _UNKNOWN:
            verdict = screen.screened(self.literals)
            if len(verdicts) < CACHED_VERDICTS:
                verdicts[screen.text] = verdict
        return verdict

    def project(self, lowered_names: "list[str] | tuple[str, ...]") -> dict:
        """The ad's JSON form cut down to the named attributes (names in lower case)."""
        keys = self.keys_by_lower
        return {keys[name]: self.wire[keys[name]] for name in lowered_names if name in keys}

    def projected_line(self, lowered_names: tuple[str, ...], key: str | None = None) -> bytes:
        """:meth:`project` as an NDJSON line, kept for the next query of the same
        projection (ads are replaced, never changed, so it cannot go stale); ``key`` is
        :func:`projection_key` of the names, worked out once by a caller asking many ads."""
        if key is None:
            key = projection_key(lowered_names)
        line = self._projected_lines.get(key)
        if line is None:
            line = encode_line(self.project(lowered_names))
            if len(self._projected_lines) < CACHED_PROJECTIONS:
                self._projected_lines[key] = line
        return line


def projection_key(lowered_names: tuple[str, ...]) -> str:
    """What an ad keeps a projection's line under: one string, whose hash Python keeps,
    so looking it up in 100,000 ads does not hash every name again in each."""
    return "\x00".join(lowered_names)


def wire_attribute(wire: dict, name: str, keys_by_lower: dict | set | None = None) -> object:
    """The value of attribute ``name`` in a JSON ad, names compared without case;
    ``keys_by_lower``, the ad's names in lower case (a set, or a dict keyed by them)
    when the caller has them, answers at once for a name the ad does not hold
    (instead of comparing every name)."""
    if name in wire:
        return wire[name]
    lowered = name.lower()
    if keys_by_lower is not None and lowered not in keys_by_lower:
        return None
    for key, value in wire.items():
        if key.lower() == lowered:
            return value
    return None


def ad_name(wire: dict, keys_by_lower: dict | set | None = None) -> str:
    """The ``Name`` an ad is keyed by (``keys_by_lower`` as for :func:`wire_attribute`).

    Raises:
        AdRejected: the ad has no ``Name`` or it is not a string literal.
    """
    name = wire_attribute(wire, "Name", keys_by_lower)
    if not isinstance(name, str) or not name or name.startswith("\\/Expr(") or name.startswith("/Expr("):
        raise AdRejected(f"ad has no Name string attribute (found {name!r}); the collector keys ads by Name")
    return name


def ad_key(ad_type: str, name: str, wire: dict, keys_by_lower: dict | None = None) -> str:
    """The key ``wire`` (whose Name is ``name``) is stored under, as HTCondor's collector
    keys them: by Name, and a Submitter ad by Name and ScheddName."""
    if ad_type.lower() != "submitter":
        return name
    schedd = wire_attribute(wire, "ScheddName", keys_by_lower)
    return f"{name}\x00{schedd}" if isinstance(schedd, str) else name


def ad_lifetime(wire: dict, default: float, keys_by_lower: dict | set | None = None) -> float:
    """The ad's ``ClassAdLifetime`` in seconds, or ``default`` when it has none
    (``keys_by_lower`` as for :func:`wire_attribute`).

    Raises:
        AdRejected: ``ClassAdLifetime`` is not a positive number.
    """
    lifetime = wire_attribute(wire, "ClassAdLifetime", keys_by_lower)
    if lifetime is None:
        return default
    if isinstance(lifetime, bool) or not isinstance(lifetime, (int, float)) or lifetime <= 0:
        raise AdRejected(f"ClassAdLifetime must be a positive number of seconds, got {lifetime!r}")
    return float(lifetime)


@define
class AdStore:
    """The live table of ads. Mutable by nature: daemons keep re-sending their ads."""

    clock: object
    default_lifetime: float = DEFAULT_LIFETIME_SECONDS
    _public: dict[str, dict[str, StoredAd]] = field(factory=dict)
    _private: dict[str, dict[str, StoredAd]] = field(factory=dict)
    _indexes: dict[tuple[bool, str], EqualityIndex] = field(factory=dict)
    _segments: dict[tuple[bool, str], Segments] = field(factory=dict)
    _sequence: Iterator[int] = field(factory=itertools.count)

    def update(self, ad_type: str, ad: object, wire: dict, private: bool = False) -> StoredAd:
        """Store ``ad`` under its type and Name, replacing any earlier one; ``ad`` may
        be None to parse ``wire`` (whose values must be valid ClassAd JSON) when needed.

        Raises:
            AdRejected: the ad has no string Name or a bad ClassAdLifetime.
        """
        if ad_type == ANY:
            raise AdRejected("ads cannot be advertised as type Any; name their type")
        keys_by_lower = {spelled.lower(): spelled for spelled in wire}
        name = ad_name(wire, keys_by_lower)
        key = ad_key(ad_type, name, wire, keys_by_lower)
        expires_at = self.clock.seconds() + ad_lifetime(wire, self.default_lifetime, keys_by_lower)
        of_type = self._table(private).setdefault(ad_type, {})
        earlier = of_type.get(key)
        stored = StoredAd(
            ad_type=ad_type,
            name=name,
            ad=ad,
            wire=wire,
            expires_at=expires_at,
            keys_by_lower=keys_by_lower,
            key=key,
            literals=literal_values(wire),
            seq=next(self._sequence) if earlier is None else earlier.seq,
        )
        index = self._indexes.setdefault((private, ad_type), EqualityIndex())
        of_type[key] = stored
        if earlier is None:
            index.add(stored)
        else:
            index.replace(earlier, stored)
        self._segments.setdefault((private, ad_type), Segments()).put(stored)
        return stored

    def invalidate_names(self, ad_type: str, names: list[str]) -> int:
        """Delete the ads of ``ad_type`` with these Names, public and private; the count."""
        return self.remove(self.named(ad_type, names))

    def remove(self, ads: list[StoredAd]) -> int:
        """Delete these stored ads (as :meth:`named` found them); the count deleted."""
        removed = 0
        for stored in ads:
            for private, table in ((False, self._public), (True, self._private)):
                if table.get(stored.ad_type, {}).get(stored.key) is stored:
                    del table[stored.ad_type][stored.key]
                    self._indexes[(private, stored.ad_type)].discard(stored)
                    self._segments[(private, stored.ad_type)].drop(stored)
                    removed += 1
        return removed

    def named(self, ad_type: str, names: list[str]) -> list[StoredAd]:
        """The stored ads of ``ad_type`` (every type for Any) with these Names, public and
        private (a Submitter Name may be held by several schedds' ads)."""
        found = []
        wanted = set(names)
        for table in (self._public, self._private):
            for kind in (list(table) if ad_type == ANY else [ad_type]):
                of_type = table.get(kind, {})
                if kind.lower() == "submitter":
                    found += [stored for stored in of_type.values() if stored.name in wanted]
                else:
                    found += [of_type[name] for name in names if name in of_type]
        return found

    def invalidate_matching(self, ad_type: str, predicate: Predicate) -> int:
        """Delete the public ads of ``ad_type`` (every type for Any) that match, with
        their private ads; the count of ads deleted."""
        doomed = list(self.query(ad_type, predicate))
        for stored in doomed:
            private = self._private.get(stored.ad_type, {}).get(stored.key)
            self.remove([stored] if private is None else [stored, private])
        return len(doomed)

    def query(
        self, ad_type: str, predicate: Predicate | None = None, limit: int | None = None, private: bool = False
    ) -> Iterator[StoredAd]:
        """The live ads of ``ad_type`` (every type for Any) that match ``predicate``,
        at most ``limit`` of them, lazily over a snapshot taken now."""
        return (stored for stored in self.scan(ad_type, predicate, limit, private) if stored is not None)

    def scan(
        self, ad_type: str, predicate: Predicate | None = None, limit: int | None = None, private: bool = False
    ) -> Iterator[StoredAd | None]:
        """As :meth:`query`, but ``None`` for every live ad that does not match, so a
        caller on the reactor can pause between any two evaluations of ``predicate``."""
        if limit is not None and limit <= 0:
            return
        snapshot = self.snapshot(ad_type, private)
        now = self.clock.seconds()
        found = 0
        for stored in snapshot:
            if stored.expires_at <= now:
                continue
            if predicate is not None and not predicate(stored.ad):
                yield None
                continue
            yield stored
            found += 1
            if limit is not None and found >= limit:
                return

    def snapshot(self, ad_type: str, private: bool = False) -> list[StoredAd]:
        """Every ad of ``ad_type`` (every type for Any) held now, expired or not, in
        the order they were first stored."""
        table = self._table(private)
        kinds = list(table) if ad_type == ANY else [ad_type]
        return [stored for kind in kinds for stored in table.get(kind, {}).values()]

    def candidates(self, ad_type: str, tests: tuple, private: bool = False) -> list[StoredAd]:
        """The ads of ``ad_type`` that a constraint with these screening tests
        (``(name, op, value)``, see :mod:`collector.screening`) can match, in stored
        order: fewer than every ad when an index narrows an ``==`` test."""
        narrowed = self.narrowed(ad_type, tests, private)
        return self.snapshot(ad_type, private) if narrowed is None else narrowed

    def narrowed(self, ad_type: str, tests: tuple, private: bool = False,
                 at_most: int | None = None) -> list[StoredAd] | None:
        """As :meth:`candidates` when an index narrows them (to ``at_most`` ads or
        fewer, when given), else None."""
        index = self._indexes.get((private, ad_type))
        narrowest = None
        for name, op, value in tests if index is not None else ():
            if op == "==" and type(value) is str:
                found = index.candidates(name, value)
                if found is not None and (narrowest is None or len(found) < len(narrowest)):
                    narrowest = found
        if narrowest is None or (at_most is not None and len(narrowest) > at_most):
            return None
        of_type = self._table(private).get(ad_type, {})
        return [of_type[key] for key in sorted(narrowest, key=narrowest.__getitem__)]

    def expire(self) -> int:
        """Drop every ad whose lifetime has passed; the count dropped."""
        now = self.clock.seconds()
        dropped = 0
        for private, table in ((False, self._public), (True, self._private)):
            for kind, of_type in list(table.items()):
                for name in [name for name, stored in of_type.items() if stored.expires_at <= now]:
                    stored = of_type.pop(name)
                    self._indexes[(private, kind)].discard(stored)
                    self._segments[(private, kind)].drop(stored)
                    dropped += 1
                if not of_type:
                    del table[kind]
        return dropped

    def segments(self, ad_type: str, private: bool = False) -> list[tuple[int, int, Iterable[StoredAd]]]:
        """The ads of ``ad_type`` (one type, not Any) now, by segment: (id, version, ads
        in stored order), see :mod:`collector.segments`."""
        held = self._segments.get((private, ad_type))
        return [] if held is None else held.snapshot()

    def watch(self, ad_type: str, watcher, private: bool = False) -> None:
        """Tell ``watcher`` (``added(stored)``, ``dropped(stored)``) of every ad of
        ``ad_type`` held now and of every one stored, replaced or removed from now on."""
        segments = self._segments.setdefault((private, ad_type), Segments())
        for _, _, ads in segments.snapshot():
            for stored in ads:
                watcher.added(stored)
        segments.watchers.append(watcher)

    def counts(self, private: bool = False) -> dict[str, int]:
        """How many ads of each type the store holds (expired ones not yet swept included)."""
        return {kind: len(of_type) for kind, of_type in self._table(private).items() if of_type}

    def _table(self, private: bool) -> dict[str, dict[str, StoredAd]]:
        return self._private if private else self._public
