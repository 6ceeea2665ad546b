"""A job query's answer as blocks of NDJSON lines built from the queue's stored text:
each attribute's wire value is read off its stored ClassAd text (an integer, a plain
string or a boolean is already its JSON; anything else is decoded once per distinct
text), so a projection of a few attributes never builds a ClassAd, and blocks end
every few milliseconds so the reactor gets control back however slow the constraint.

The lines are the ones :func:`daemoncore.wire.adcodec.ad_to_json` and
:func:`daemoncore.wire.ndjson.encode_line` make of the same job ad: attributes in
HTCondor's order (name length, then name ignoring case), each spelled as stored
(a proc's spelling over its cluster's), whatever case a projection names it in.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Iterator

from daemoncore.wire.adcodec import node_to_json
from schedd.queue.stored import decode_expression, overlaid

#: Longest the reactor is held building one block.
SLICE_SECONDS = 0.002
#: A block ends once it holds this many bytes.
BLOCK_BYTES = 256 * 1024
#: Distinct non-trivial texts whose JSON is kept; the table starts over when full.
MAX_CACHED_TEXTS = 4096

_JSON_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})\Z")
_JSON_SAFE_STRING = re.compile(r'"[^"\\\x00-\x1f]*"\Z')
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
#: Reads one stored text (a JSON list the queue wrote) without json.loads' per-call checks.
_SCAN = json.scanner.make_scanner(json.JSONDecoder())


def stored_pairs(text: str) -> list:
    """A proc's stored text as its ``[name, text]`` pairs."""
    return _SCAN(text, 0)[0]
_ABSENT = (None, None)



def wanted_order(projection: Iterable[str]) -> list[str]:
    """The projection's names, lower-cased, each once, in answer order."""
    return sorted({name.lower() for name in projection}, key=lambda key: (len(key), key))


class WireText:
    """Turns stored expression text into its JSON text, remembering the texts that
    need decoding (a cluster's shared attributes are met once per proc)."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def name(self, name: str) -> str:
        """The JSON text of an attribute name."""
        found = self._names.get(name)
        if found is None:
            if len(self._names) >= MAX_CACHED_TEXTS:
                self._names.clear()
            found = self._names[name] = _ENCODE(name)
        return found

    def value(self, text: str) -> str:
        """The JSON text of the wire value of stored expression ``text``."""
        if _JSON_INT.match(text) or _JSON_SAFE_STRING.match(text):
            return text
        lowered = text.lower()
        if lowered == "true" or lowered == "false":
            return lowered
        found = self._texts.get(text)
        if found is None:
            if len(self._texts) >= MAX_CACHED_TEXTS:
                self._texts.clear()
            found = self._texts[text] = _ENCODE(node_to_json(decode_expression(text)))
        return found


def cluster_parts(cluster: dict[str, tuple[str, str]], wanted: list[str], wire: WireText) -> list[tuple[str, str]]:
    """``(lower-case name, "name":value text)`` of each wanted attribute, in order,
    as the cluster's stored pairs give it (an empty text where it has none)."""
    parts = []
    for key in wanted:
        name, text = cluster.get(key, _ABSENT)
        parts.append((key, "" if text is None else f"{wire.name(name)}:{wire.value(text)}"))
    return parts


def job_line(cluster: dict[str, tuple[str, str]], proc: list, wanted: list[tuple[str, str]] | None,
             wire: WireText) -> bytes:
    """One job's NDJSON line from its cluster's stored pairs (lower-case name ->
    ``(name, text)``) and its proc's :func:`stored_pairs`, projected to ``wanted``
    (the cluster's :func:`cluster_parts`; None for every attribute)."""
    if wanted is not None:
        own = {name.lower(): (name, text) for name, text in proc}
        parts = []
        for key, part in wanted:
            if key in own:
                name, text = own[key]
                part = "" if text is None else f"{wire.name(name)}:{wire.value(text)}"
            if part:
                parts.append(part)
    else:
        ordered = sorted(overlaid(cluster, proc).values(), key=lambda pair: (len(pair[0]), pair[0].lower()))
        parts = [f"{wire.name(name)}:{wire.value(text)}" for name, text in ordered]
    return ("{" + ",".join(parts) + "}\n").encode("utf-8")


def answer_blocks(rows: Iterable, cluster_pairs: Callable[[int], dict[str, tuple[str, str]]],
                  matches: Callable[[tuple, list], bool] | None, wanted: list[str] | None,
                  limit: int = -1) -> Iterator[bytes | None]:
    """The NDJSON blocks of the ``rows`` (stored jobs as ``(cluster_id, proc_id,
    attrs)``, in order) that ``matches`` (None: every row), at most ``limit`` (-1:
    all); ``cluster_pairs(cluster_id)`` gives a cluster's stored pairs. A block ends after :data:`SLICE_SECONDS` or
    :data:`BLOCK_BYTES`; a slice that found nothing yields None, so a caller on the
    reactor can pause."""
    if limit == 0:
        return
    wire = WireText()
    clock = time.perf_counter
    lines: list[bytes] = []
    size = found = 0
    deadline = clock() + SLICE_SECONDS
    last_cluster, pairs, parts = None, {}, None
    for row in rows:
        proc = _SCAN(row[2], 0)[0]
        if matches is None or matches(row, proc):
            if row[0] != last_cluster:
                last_cluster, pairs = row[0], cluster_pairs(row[0])
                parts = None if wanted is None else cluster_parts(pairs, wanted, wire)
            line = job_line(pairs, proc, parts, wire)
            lines.append(line)
            size += len(line)
            found += 1
            if found == limit:
                break
        if size >= BLOCK_BYTES or clock() >= deadline:
            yield b"".join(lines) if lines else None
            lines, size = [], 0
            deadline = clock() + SLICE_SECONDS
    if lines:
        yield b"".join(lines)
