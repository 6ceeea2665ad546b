"""Regular-expression builtins: ``regexp``, ``regexpMember``, ``regexps``, ``replace``,
``replaceAll`` and ``stringList_regexpMember``.

Options are letters in a string: ``i`` ignore case, ``m`` multi-line anchors, ``s`` dot
matches newline, ``x`` extended syntax, and for substitution ``f`` (return the whole
target with the replacement made) and ``g`` (replace every match). Like HTCondor 25,
the language builtins honour only lower-case letters; other letters are ignored.
Case folding and ``\\w``/``\\d`` are ASCII-only, as in PCRE without UTF mode.

Matching runs under a time budget (:data:`classad.limits.REGEX_TIMEOUT` for all the
matches of one call): a pattern that backtracks without end, such as ``^(a|aa)+$``
against a long non-matching string, evaluates to ERROR, as HTCondor's PCRE does when
it gives up, instead of freezing the daemon evaluating it.
"""

from __future__ import annotations

import functools
import time

import regex

from classad import limits
from classad.functions import builtin
from classad.functions.stringlists import DEFAULT_DELIMITERS, string_list_items
from classad.values import ERROR, UNDEFINED

_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}


class TimedPattern:
    """A compiled pattern whose matches together may take at most the regex budget;
    past it a match raises :class:`TimeoutError`, which evaluation turns into ERROR."""

    __slots__ = ("rx", "deadline")

    def __init__(self, rx: regex.Pattern) -> None:
        self.rx = rx
        self.deadline = time.monotonic() + limits.REGEX_TIMEOUT

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("regular expression over its time budget")
        return left

    def search(self, target: str, pos: int = 0):
        return self.rx.search(target, pos, timeout=self._left())

    def match(self, target: str, pos: int = 0):
        return self.rx.match(target, pos, timeout=self._left())


#: Patterns up to this long are kept compiled (1024 of them); longer ones are compiled
#: each time, so the cache stays small whatever patterns requests bring.
MAX_CACHED_PATTERN = 4096
#: A longer pattern is refused as invalid: compiling has no time budget of its own.
MAX_PATTERN = 65536


def _compiled(pattern: str, flags: int) -> regex.Pattern | None:
    if len(pattern) > MAX_PATTERN:
        return None
    if len(pattern) <= MAX_CACHED_PATTERN:
        return _cached(pattern, flags)
    return _compile(pattern, flags)


@functools.lru_cache(maxsize=1024)
def _cached(pattern: str, flags: int) -> regex.Pattern | None:
    return _compile(pattern, flags)


def _compile(pattern: str, flags: int) -> regex.Pattern | None:
    try:
        return regex.compile(pattern, flags)
    except (regex.error, OverflowError, RecursionError, ValueError):
        return None


def compile_pattern(pattern: str, options: str, any_case: bool = False) -> TimedPattern | None:
    """The pattern with the option letters applied, its time budget starting now, or
    None if it is invalid."""
    letters = options.lower() if any_case else options
    flags = regex.ASCII | regex.VERSION0
    for letter, flag in _FLAGS.items():
        if letter in letters:
            flags |= flag
    rx = _compiled(pattern, flags)
    return None if rx is None else TimedPattern(rx)


def _check_args(strings: list, options: object) -> object | None:
    """The result for special or mistyped arguments, in HTCondor's order; None if all fine."""
    given = strings + ([] if options is None else [options])
    if any(v is ERROR for v in given):
        return ERROR
    if any(v is UNDEFINED for v in given):
        return UNDEFINED
    if options is not None and type(options) is not str:
        return ERROR
    if any(type(v) is not str for v in strings):
        return ERROR
    return None


@builtin("regexp", 2, 3)
def regexp(pattern: object, target: object, options: object = None) -> object:
    """True when ``target`` contains a match for ``pattern``."""
    bad = _check_args([pattern, target], options)
    if bad is not None:
        return bad
    rx = compile_pattern(pattern, options or "")
    return ERROR if rx is None else rx.search(target) is not None


@builtin("regexpMember", 2, 3)
def regexp_member(pattern: object, targets: object, options: object = None) -> object:
    """True when some string in the list matches; undefined when none does but an
    element was undefined; error for a non-string element reached before a match.
    An invalid pattern matches no element (fnCall.cpp matchPatternMember counts an
    element whose match failed as not matching), so it is false, not error."""
    # fnCall.cpp matchPatternMember: error, then undefined, then the argument types
    special = targets if targets is ERROR or targets is UNDEFINED else ""
    bad = _check_args([pattern, special], options)
    if bad is not None:
        return bad
    if type(targets) is not list:
        return ERROR
    rx = compile_pattern(pattern, options or "")
    saw_undefined = False
    for target in targets:
        if target is UNDEFINED:
            saw_undefined = True
        elif type(target) is not str:
            return ERROR
        elif rx is not None and rx.search(target):
            return True
    return UNDEFINED if saw_undefined else False


def _substituter(name: str, forced: str) -> None:
    def impl(pattern: object, target: object, replacement: object, options: object = None) -> object:
        bad = _check_args([pattern, target, replacement], options)
        if bad is not None:
            return bad
        letters = (options or "") + forced
        rx = compile_pattern(pattern, letters)
        if rx is None:
            return ERROR
        return substitute(rx, target, replacement, "f" in letters, "g" in letters)

    builtin(name, 3, 4)(impl)


_substituter("regexps", "")
_substituter("replace", "f")
_substituter("replaceAll", "fg")


def substitute(rx: TimedPattern, target: str, replacement: str, full: bool, every: bool) -> object:
    """Replace the first (or every) match, as HTCondor's PCRE loop does: without ``full``
    only the expanded replacements are returned; an empty match at the very end of
    the target in ``every`` mode is error (HTCondor runs off the string there)."""
    out: list[str] = []
    index, after_empty = 0, False
    size = len(target) if full else 0
    while True:
        if after_empty:
            m = rx.match(target, index)
            if m is None or m.end() == index:
                if index >= len(target):
                    return ERROR
                out.append(target[index])
                index, after_empty = index + 1, False
                continue
        else:
            m = rx.search(target, index)
            if m is None:
                break
        if full:
            out.append(target[index:m.start()])
        expanded = expand_replacement(m, replacement)
        if expanded is None:
            return ERROR
        out.append(expanded)
        size += len(expanded)
        limits.check_length(size)
        index, after_empty = m.end(), m.start() == m.end()
        if not every:
            break
    if full:
        out.append(target[index:])
    return "".join(out)


def expand_replacement(m: regex.Match, replacement: str) -> str | None:
    """``\\0``..``\\9`` replaced by the groups of ``m``; None for a group beyond the
    highest one that took part in the match."""
    groups = 1 + max((i for i in range(1, (m.re.groups or 0) + 1) if m.start(i) != -1), default=0)
    out, i, size = [], 0, 0
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\" and i + 1 < len(replacement) and replacement[i + 1].isdigit() and replacement[i + 1].isascii():
            n = int(replacement[i + 1])
            if n >= groups:
                return None
            group = m.group(n) or ""
            size += len(group)
            limits.check_length(size)
            out.append(group)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


@builtin("stringList_regexpMember", 2, 4)
def string_list_regexp_member(pattern: object, items: object, delimiters: object = DEFAULT_DELIMITERS,
                              options: object = "") -> object:
    """True when an item of the delimited string list matches; undefined for an empty list."""
    if any(type(v) is not str for v in (pattern, items, delimiters, options)):
        return ERROR
    entries = string_list_items(items, delimiters)
    if not entries:
        return UNDEFINED
    rx = compile_pattern(pattern, options, any_case=True)
    if rx is None:
        return ERROR
    return any(rx.search(entry) for entry in entries)
