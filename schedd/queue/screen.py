"""Deciding a query's constraint on a job's literal attributes alone: when every
attribute the constraint can read is, in the job, a plain literal (an integer, a
plain string, a boolean) or absent, an ad of just those attributes gives the same
answer as the whole job ad, and costs a few entries instead of decoding and merging
the job's every attribute. Anything else (an attribute that is an expression, a
constraint calling a function that reads the ad by name, such as ``eval``) goes to
the whole ad."""

from __future__ import annotations

import functools
import re

from classad import ClassAd, ExprTree
from classad import nodes as e
from schedd.queue.stored import literal_of

#: Builtins that read attributes the constraint's text does not name.
_READS_AD = frozenset({"debug", "eval", "evalineachcontext", "countmatches", "unparse", "unresolved"})

#: Marks a cluster attribute the screen cannot use (its text is not a plain literal).
NOT_LITERAL = object()


def screened_names(text: str) -> frozenset[str] | None:
    """The lower-case names of the attributes constraint ``text`` can read, or None
    when it can read others too (or its text does not parse)."""
    return _screened(text)[0]


def has_no_call(text: str) -> bool:
    """Whether screenable constraint ``text`` calls no function (``time()``,
    ``random()`` ...): its value then depends on nothing but the attributes it
    reads, so jobs with the same values of those get the same answer."""
    names, calls = _screened(text)
    return names is not None and not calls


@functools.lru_cache(maxsize=256)
def _screened(text: str) -> tuple[frozenset[str] | None, bool]:
    """:func:`screened_names` of ``text``, and whether it calls a function."""
    try:
        node = ExprTree(text).node
    except (ValueError, RecursionError):
        return None, True
    names: set[str] = set()
    calls = False
    stack = [node]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is e.Literal:
            continue
        if kind is e.AttrRef:
            names.add(node.name.lower())
        elif kind is e.Select:
            names.add(node.name.lower())
            stack.append(node.base)
        elif kind is e.Call:
            if node.name.lower() in _READS_AD:
                return None, True
            calls = True
            stack.extend(node.args)
        elif kind is e.Subscript:
            stack.extend((node.base, node.index))
        elif kind is e.Unary:
            stack.append(node.operand)
        elif kind is e.Binary or kind is e.Elvis:
            stack.extend((node.left, node.right))
        elif kind is e.Ternary:
            stack.extend((node.cond, node.then, node.otherwise))
        elif kind is e.Paren:
            stack.append(node.inner)
        elif kind is e.ListExpr:
            stack.extend(node.items)
        elif kind is e.RecordExpr:
            stack.extend(value for _, value in node.entries)
        else:
            return None, True
    return frozenset(names), calls


def mentions(proc_text: str, names: re.Pattern) -> bool:
    """Whether a proc's stored text may hold one of the attributes :func:`quoted` made
    ``names`` of: a name is stored quoted, so a proc that does not mention one certainly
    lacks it (a value holding the text can only make this say yes needlessly)."""
    return names.search(proc_text.lower()) is not None


def quoted(keys) -> re.Pattern:
    """``keys`` (lower-case attribute names) as :func:`mentions` looks for them: one
    pattern of every name quoted (``"owner"``), a single search of the lowered text."""
    return re.compile("|".join(re.escape(f'"{key}"') for key in sorted(keys)))


def cluster_literals(pairs: dict[str, tuple[str, str]], names: frozenset[str]) -> dict[str, tuple[str, object]]:
    """The cluster's entries for ``names`` from its stored pairs: ``(name, Literal)``,
    or ``(name, NOT_LITERAL)`` where its text is anything else."""
    found = {}
    for key in names:
        pair = pairs.get(key)
        if pair is not None and pair[1] is not None:
            node = literal_of(pair[1])
            found[key] = (pair[0], NOT_LITERAL if node is None else node)
    return found


def screened_ad(cluster: dict[str, tuple[str, object]], proc_pairs: list, names: frozenset[str]) -> ClassAd | None:
    """The ad of the job's ``names`` (its cluster's :func:`cluster_literals` overlaid
    by its proc's stored pairs), or None when one of them is not a plain literal."""
    entries = dict(cluster)
    for name, text in proc_pairs:
        key = name.lower()
        if key in names:
            if text is None:
                entries.pop(key, None)
                continue
            node = literal_of(text)
            if node is None:
                return None
            entries[key] = (name, node)
    for _, node in entries.values():
        if node is NOT_LITERAL:
            return None
    return ClassAd.from_entries(entries.values())
