"""Parsing ClassAd expressions: the grammar loaded once, errors turned into
:class:`ClassAdParseError`, and a cache so each distinct text is parsed once."""

from __future__ import annotations

import functools
import os
import stat
import sys

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from classad.errors import ClassAdParseError, context_at
from classad.transform import ExprBuilder


def _grammar_cache() -> str | bool:
    """Where Lark keeps the analysed grammar between processes (building it is most of
    the cost of starting a short command such as ``roost submit``), or False for no
    cache. Lark unpickles the file and rebuilds it when the grammar or Lark changes,
    so it lives only in a cache directory owned by this user and writable by no one
    else (``$XDG_CACHE_HOME/roost``, else ``~/.cache/roost``), never in a shared one."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "roost")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        info = os.stat(directory)
    except OSError:
        return False
    if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or not os.access(directory, os.W_OK):
        return False
    path = os.path.join(directory, "classad-grammar-py%d%d.lark-cache" % sys.version_info[:2])
    try:
        if os.lstat(path).st_uid != os.geteuid():
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return path


_PARSER = Lark.open("grammar.lark", rel_to=__file__, parser="lalr", lexer="contextual",
                    transformer=ExprBuilder(), maybe_placeholders=True, cache=_grammar_cache())

#: Longer texts are refused before parsing.
MAX_TEXT = 1 << 20

_TOKEN_NAMES = {
    "RPAR": "')'", "LPAR": "'('", "RSQB": "']'", "LSQB": "'['", "RBRACE": "'}'",
    "LBRACE": "'{'", "SEMICOLON": "';'", "COMMA": "','", "COLON": "':'", "EQUAL": "'='",
    "$END": "end of text",
}


def _describe_expected(expected) -> str:
    names = sorted(_TOKEN_NAMES.get(e, e.lower()) for e in expected)
    if len(names) > 6:
        return ""
    return "; expected " + ", ".join(names)


def _convert(err: UnexpectedInput, text: str) -> ClassAdParseError:
    pos = getattr(err, "pos_in_stream", None)
    if pos is None:
        pos = len(text)
    context = context_at(text, min(pos, len(text)))
    if isinstance(err, UnexpectedCharacters):
        what = f"unexpected character {text[pos]!r}" if pos < len(text) else "unexpected end of text"
        reason = what + _describe_expected(err.allowed or ())
    elif isinstance(err, UnexpectedEOF):
        reason = "unexpected end of text" + _describe_expected(err.expected)
    elif isinstance(err, UnexpectedToken):
        if err.token.type == "$END":
            reason = "unexpected end of text"
        else:
            reason = f"unexpected {err.token!s}"
        reason += _describe_expected(err.expected)
    else:  # pragma: no cover - lark has no other kinds
        reason = str(err)
    line = getattr(err, "line", None)
    column = getattr(err, "column", None)
    if line in (None, -1):
        line = text.count("\n", 0, pos) + 1
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return ClassAdParseError(reason, line, column, context)


def _parse_uncached(text: str):
    if len(text) > MAX_TEXT:
        raise ClassAdParseError(f"expression text is {len(text)} characters long; the limit is {MAX_TEXT}")
    try:
        return _PARSER.parse(text)
    except ClassAdParseError:
        raise
    except VisitError as err:
        if isinstance(err.orig_exc, ClassAdParseError):
            raise err.orig_exc from None
        raise ClassAdParseError(str(err.orig_exc)) from None
    except UnexpectedInput as err:
        raise _convert(err, text) from None
    except RecursionError:
        raise ClassAdParseError("expression nested too deeply") from None


#: Longer texts are parsed each time rather than remembered: the cache's 65,536
#: texts would otherwise be bounded only by :data:`MAX_TEXT` each.
CACHED_TEXT_MAX = 4096


def parse_expression(text: str):
    """The expression tree of ``text``; raises :class:`ClassAdParseError`. Trees of
    texts up to :data:`CACHED_TEXT_MAX` characters are remembered."""
    if not isinstance(text, str):
        raise TypeError(f"expected expression text, got {type(text).__name__}")
    if len(text) > CACHED_TEXT_MAX:
        return _parse_uncached(text)
    return _parse_cached(text)


@functools.lru_cache(maxsize=65536)
def _parse_cached(text: str):
    return _parse_uncached(text)


def parse_expression_prefix(text: str):
    """The expression at the start of one line of text, ignoring whatever follows it:
    how HTCondor reads the value of an old-syntax ``Name = value`` line (the parser
    stops at the first token that cannot continue the expression, so ``1; b = 2``
    and ``1 2`` are both 1). Text that does not start with a whole expression is
    refused with the error at its first bad token."""
    try:
        return parse_expression(text)
    except ClassAdParseError as err:
        stop = _error_offset(err, text)
        if stop is None or not text[:stop].strip():
            raise
        try:
            return parse_expression(text[:stop])
        except ClassAdParseError:
            raise err from None


def _error_offset(err: ClassAdParseError, text: str) -> int | None:
    """Where in ``text`` the parser met a token (or character) that cannot continue
    the expression; None when it ran out of text or refused a token's content."""
    del err  # the converted error has lost the kind of failure: parse again for it
    try:
        _PARSER.parse(text)
    except UnexpectedToken as lark_err:
        token = lark_err.token
        return None if token.type == "$END" else token.start_pos
    except UnexpectedCharacters as lark_err:
        return lark_err.pos_in_stream
    except Exception:  # noqa: BLE001 - any other failure is not a stopping point
        return None
    return None
