"""How ads are stored: each attribute's expression as ClassAd text (via unparse) in
a JSON list of ``[name, text]`` pairs, ``[name, null]`` for an attribute a proc
removes from its cluster's; and how stored text becomes expression nodes again,
with plain literals decoded without the parser."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from classad import ClassAd
from classad.convert import python_to_node
from classad.nodes import Literal, is_node
from classad.parser import parse_expression
from classad.unparse import unparse_expr

_INT = re.compile(r"-?[0-9]{1,18}\Z")
_PLAIN_STRING = re.compile(r'"[^"\\]*"\Z')
_WORDS = {"true": True, "false": False}
#: The stored JSON form, compact; one encoder made once (json.dumps with separators makes one per call).
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_QUOTE = json.encoder.encode_basestring_ascii

Entries = dict[str, tuple[str, object]]  # lower-case name -> (name, node or None)


def encode_ad(ad: ClassAd, removed: tuple[str, ...] = ()) -> str:
    """The stored text of ``ad``'s attributes, plus removal marks for ``removed``."""
    pairs = [[name, unparse_expr(ad.expression(name))] for name in ad]
    pairs.extend([name, None] for name in removed)
    return _ENCODE(pairs)


#: Texts of the expressions of recently stored cluster ads, by node identity, each beside
#: its node (kept alive, so its id is not reused): a description submitted again shares
#: its expanded nodes (:mod:`schedd.intake_cache`), and its cluster ad is written without
#: unparsing them again. Expression nodes are frozen, so a node's text never changes.
_CLUSTER_TEXTS: dict[int, tuple[object, str]] = {}
#: Forget every remembered text when this many are held.
MAX_CLUSTER_TEXTS = 4096


#: The JSON text of attribute names met in cluster ads (the table starts over when full).
_NAME_JSON: dict[str, str] = {}
#: An ad's keys as its entries hold them -> the same keys in HTCondor's order (name length,
#: then name ignoring case, as ``ClassAd.__iter__``): a cluster submitted again has the same keys.
_KEY_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
#: Forget every remembered key order when this many are held.
MAX_KEY_ORDERS = 256


def encode_cluster_ad(ad: ClassAd) -> str:
    """:func:`encode_ad` of a cluster ad, each expression unparsed once while remembered."""
    return encode_cluster(ad)[0]


def encode_cluster(ad: ClassAd) -> tuple[str, dict[str, tuple[str, str]]]:
    """:func:`encode_cluster_ad`'s text, and its ``(name, text)`` pairs by lower-case name
    (what reading the text back gives). Each expression is unparsed and JSON-quoted once
    while remembered, and the text is joined from those pieces without a JSON encoder."""
    entries = ad.entries_by_key()
    keys = tuple(entries)
    order = _KEY_ORDERS.get(keys)
    if order is None:
        if len(_KEY_ORDERS) >= MAX_KEY_ORDERS:
            _KEY_ORDERS.clear()
        order = _KEY_ORDERS[keys] = tuple(sorted(keys, key=lambda key: (len(key), key)))
    pairs: dict[str, tuple[str, str]] = {}
    parts = []
    for key in order:
        entry = entries[key]
        node = entry.expr
        known = _CLUSTER_TEXTS.get(id(node))
        if known is None or known[0] is not node:
            if len(_CLUSTER_TEXTS) >= MAX_CLUSTER_TEXTS:
                _CLUSTER_TEXTS.clear()
            text = unparse_expr(node)
            known = _CLUSTER_TEXTS[id(node)] = (node, text, _QUOTE(text))
        name = entry.name
        quoted = _NAME_JSON.get(name)
        if quoted is None:
            if len(_NAME_JSON) >= MAX_CLUSTER_TEXTS:
                _NAME_JSON.clear()
            quoted = _NAME_JSON[name] = _QUOTE(name)
        pairs[key] = (name, known[1])
        parts.append(f"[{quoted},{known[2]}]")
    return "[" + ",".join(parts) + "]", pairs


def encode_new_proc(proc_id: int, global_job_id: str) -> str:
    """The stored text of a new proc with no differences of its own but the two the
    schedd sets: what :func:`encode_ad` makes of an ad holding just ProcId and
    GlobalJobId, written out."""
    return _ENCODE([["ProcId", unparse_expr(Literal(proc_id))], ["GlobalJobId", unparse_expr(Literal(global_job_id))]])


#: A proc id standing in for every proc's while a cluster's new-proc text is made once.
_MARK_PROC = 987654321


def new_proc_encoder(schedd_name: str, cluster_id: int, qdate: object):
    """``encode_new_proc`` for the procs of one cluster, as a function of the proc id:
    the text is made once with a stand-in proc id and the id written into its two
    places for each proc (a 100,000-proc cluster unparsed and JSON-encoded 200,000
    literals). Falls back to ``encode_new_proc`` when the stand-in shows up elsewhere."""
    def global_job_id(proc_id: int) -> str:
        return f"{schedd_name}#{cluster_id}.{proc_id}#{qdate}"

    parts = encode_new_proc(_MARK_PROC, global_job_id(_MARK_PROC)).split(str(_MARK_PROC))
    if len(parts) != 3:
        return lambda proc_id: encode_new_proc(proc_id, global_job_id(proc_id))
    first, middle, last = parts
    return lambda proc_id: f"{first}{proc_id}{middle}{proc_id}{last}"


def encode_entries(entries: Entries) -> str:
    """The stored text of already-decoded entries."""
    pairs = [[name, None if node is None else unparse_expr(node)] for name, node in entries.values()]
    return _ENCODE(pairs)


def literal_of(text: str) -> Literal | None:
    """The literal of stored text that is an integer, a plain string or a boolean,
    read without the parser; None for any other text."""
    if _INT.match(text):
        return Literal(int(text))
    if _PLAIN_STRING.match(text):
        return Literal(text[1:-1])
    word = _WORDS.get(text.lower())
    if word is not None:
        return Literal(word)
    return None


def decode_expression(text: str):
    """The expression node of stored text; integers, plain strings and booleans
    skip the parser."""
    node = literal_of(text)
    return parse_expression(text) if node is None else node


def decode_entries(text: str, only: frozenset[str] | None = None) -> Entries:
    """Stored text as entries keyed by lower-case name, optionally only some names."""
    entries: Entries = {}
    for name, expr_text in json.loads(text):
        key = name.lower()
        if only is not None and key not in only:
            continue
        entries[key] = (name, None if expr_text is None else decode_expression(expr_text))
    return entries


def pair_fragments(cluster: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Each of a cluster's stored pairs as its JSON text, by lower-case name, in order."""
    return {key: _pair_json(pair) for key, pair in cluster.items()}


def overlaid(cluster: dict[str, tuple[str, str]], proc: Iterable) -> dict[str, tuple[str, str]]:
    """A whole job's stored ``(name, text)`` pairs by lower-case name: its cluster's
    (``cluster``, by lower-case name) overlaid by its proc's ``(name, text)`` pairs, a
    None text removing the cluster's."""
    merged = dict(cluster)
    for name, text in proc:
        if text is None:
            merged.pop(name.lower(), None)
        else:
            merged[name.lower()] = (name, text)
    return merged


def history_text(cluster: dict[str, str], proc: Iterable[tuple[str, str | None]]) -> str:
    """The stored text of a whole job ad from its cluster's :func:`pair_fragments` and
    its proc's ``(name, text)`` pairs (None text: removed), without parsing or printing
    any expression: the cluster's attributes in order, overlaid by the proc's."""
    merged = dict(cluster)
    for name, text in proc:
        if text is None:
            merged.pop(name.lower(), None)
        else:
            merged[name.lower()] = _pair_json((name, text))
    return "[" + ",".join(merged.values()) + "]"


def _pair_json(pair: tuple[str, str]) -> str:
    """``_ENCODE(list(pair))`` for a name and a text, written out."""
    return f"[{_QUOTE(pair[0])},{_QUOTE(pair[1])}]"


#: Plain value types whose node and text :class:`ChangeTexts` remembers.
_PLAIN = frozenset((int, str, bool, float))
#: Distinct values :class:`ChangeTexts` remembers before starting afresh.
CHANGE_TEXTS_MAX = 1024


class ChangeTexts:
    """The expression node and stored text of each value a transition sets, each
    distinct plain value made once: the jobs of one batch mostly set the same values
    (JobStatus, the reason, the time), so a job costs a look-up per change instead of
    building and printing a literal each."""

    # mutable: it fills as values are met
    def __init__(self) -> None:
        self._known: dict[tuple[type, object], tuple[object, str]] = {}

    def of(self, value: object) -> tuple[object, str]:
        """``value`` (a node or a Python value) as a node and its stored text."""
        key = (type(value), value) if type(value) in _PLAIN else None
        if key is not None:
            known = self._known.get(key)
            if known is not None:
                return known
        node = value if is_node(value) else python_to_node(value)
        made = (node, unparse_expr(node))
        if key is not None:
            if len(self._known) >= CHANGE_TEXTS_MAX:
                self._known.clear()
            self._known[key] = made
        return made


def stored_texts(text: str) -> dict[str, list]:
    """A proc's stored text as its ``[name, text]`` pairs by lower-case name, in order:
    changed pairs replace these, and the rest are written back as they were stored."""
    return {pair[0].lower(): pair for pair in json.loads(text)}


def encode_texts(pairs: Iterable[list]) -> str:
    """The stored text of ``[name, text]`` pairs (None text: a removal mark)."""
    return _ENCODE(list(pairs))


def merge(cluster: Entries, proc: Entries) -> ClassAd:
    """The whole job ad: the cluster's attributes overlaid by the proc's."""
    merged = dict(cluster)
    for key, entry in proc.items():
        if entry[1] is None:
            merged.pop(key, None)
        else:
            merged[key] = entry
    return ClassAd.from_entries(merged.values())


def derive(cluster_ad: ClassAd, proc: Entries) -> ClassAd:
    """The whole job ad as :func:`merge` makes it, but derived from the cluster's
    ad: the cluster's attribute entries (and the closures compiled for them) are
    shared, so a job costs only its own differences."""
    changes = [(name, node) for name, node in proc.values() if node is not None]
    deleted = [key for key, (_, node) in proc.items() if node is None]
    ad = cluster_ad.derive(changes, deleted)
    entries = ad.entries_by_key()
    for name, node in changes:
        if entries[name.lower()].name != name:  # the proc spells it otherwise: its spelling wins
            del ad[name]
            ad.set_expr(name, node)
    return ad


def value_in(entries: Entries, key: str):
    """The literal value stored under ``key`` (lower case), or None."""
    entry = entries.get(key)
    if entry is None or type(entry[1]) is not Literal:
        return None
    return entry[1].value


#: An AccountingGroup usable as a submitter name: no '@', quote or space (HTCondor's
#: submit refuses those), so ``<name>@<UID_DOMAIN>`` reads back as the same name.
_SUBMITTER_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,256}\Z")


def submitter_in(cluster: Entries, proc: Entries) -> str | None:
    """The name the job is negotiated and charged under, without its domain: its
    ``AccountingGroup`` ("group_a.alice") when it has a usable one, else its ``Owner``
    (HTCondor's rule: the schedd's submitter is ``AccountingGroup`` or ``Owner``
    ``@UID_DOMAIN``); None when neither is a plain string."""
    for key in ("accountinggroup", "owner"):
        value = value_in(proc, key) if key in proc else value_in(cluster, key)
        if type(value) is str and (key == "owner" or _SUBMITTER_NAME.match(value)):
            return value
    return None
