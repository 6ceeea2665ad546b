"""Match-time ``$$()`` substitution: a job ad's ``$$(Attr)``, ``$$(Attr:default)`` and
``$$([ expression ])`` replaced from the machine ad of the slot it is about to start on.

HTCondor does this in the schedd when it activates a claim (qmgmt.cpp,
``dollarDollarExpand``): every job attribute but the ``MATCH_*`` ones is printed as
expression text, each macro in that text is replaced, and the text is read back as the
attribute's new expression. What it used is kept in the job ad - ``MATCH_<Attr>`` the
machine attribute's expression, ``MATCH_EXP_<JobAttr>`` the expanded attribute - and a
macro that cannot be resolved holds the job with ``Cannot expand $$ expression (name).``

Pure code: no queue, no I/O. The schedd applies :class:`Expansion` to its queue.
"""

from __future__ import annotations

import attrs

from classad import NOT_CONSTANT, ClassAd, ClassAdParseError, ExprTree
from classad.textforms import old_line

#: Prefix of the attributes that keep what an expansion used (never expanded themselves).
MATCH_PREFIX = "MATCH_"
#: Prefix of the attributes that keep an expanded job attribute.
MATCH_EXP_PREFIX = "MATCH_EXP_"
#: Machine attributes the negotiator adds for the job, copied into the job ad at match.
NEGOTIATOR_MATCH_EXPR = "NegotiatorMatchExpr"
#: The hold reason of an unresolvable macro; ``name`` is the macro's body without its default.
HOLD_REASON = "Cannot expand $$ expression ({name})."
#: HTCondor's holdJob() default code: the hold is the system's, with no code of its own.
HOLD_CODE = 0
#: The longest expanded attribute text kept; beyond it the macro counts as unresolvable.
MAX_EXPANDED_CHARS = 1 << 20

_AFTER_COLON_EXTRA = "$ ,\\"


@attrs.frozen
class Macro:
    """One ``$$(...)`` found in a text: ``text[start:end]`` is the whole macro, ``body`` what its parentheses hold."""

    start: int
    end: int
    body: str


@attrs.frozen
class Expansion:
    """What expanding one job ad against one machine ad gives.

    ``ad`` is the expanded copy to run (the job's own ad when it had nothing to expand;
    None when the job must be held), ``recorded``
    the ``MATCH_*`` attributes to store in the queued job as expression texts, and
    ``hold_reason`` why the job is held (None when it runs).
    """

    ad: ClassAd | None
    recorded: dict[str, str]
    hold_reason: str | None = None


def _is_id_char(char: str) -> bool:
    return char.isalnum() or char in "_."


def _plain_body_end(text: str, start: int) -> int:
    """The index of the ``)`` closing a ``$$(name)`` or ``$$(name:default)`` body that starts
    at ``start``, or -1 when the body holds a character a macro name cannot (as
    next_config_macro scans MACRO_BODY_IDCHAR_COLON)."""
    after_colon = False
    i = start
    while i < len(text) and text[i] != ")":
        char = text[i]
        i += 1
        if char == ":" and not after_colon:
            after_colon = True
            continue
        if after_colon and char in _AFTER_COLON_EXTRA:
            continue
        if not _is_id_char(char):
            return -1
    return i if i < len(text) else -1


def next_macro(text: str, pos: int) -> Macro | None:
    """The first ``$$(...)`` at or after ``pos``, as HTCondor's next_dollardollar_macro finds it:
    exactly two dollars then ``(``; a body starting with ``[`` runs to the first ``])``,
    any other is a name (letters, digits, ``_``, ``.``) with an optional ``:default``.
    A ``$$(`` whose body does not close is not a macro and scanning goes on after it."""
    search = pos
    while True:
        start = text.find("$", search)
        if start < 0:
            return None
        p = start + 1
        if p < len(text) and text[p] == "$":
            p += 1
        while p < len(text) and (text[p].isalnum() or text[p] == "_"):
            p += 1
        if p >= len(text) or text[p] != "(" or p - start != 2 or text[start + 1] != "$":
            search = p if p > start else start + 1
            continue
        body_start = p + 1
        if text.startswith("[", body_start):
            marker = text.find("])", body_start)
            close = marker + 1 if marker >= 0 else -1
        else:
            close = _plain_body_end(text, body_start)
        if close < 0:
            search = body_start
            continue
        return Macro(start, close + 1, text[body_start:close])


def _strip_quotes(text: str) -> str:
    """A value's text without the quotes around a string (HTCondor strips a leading ``"`` and a final one)."""
    if text.startswith('"'):
        text = text[1:]
        if text.endswith('"'):
            text = text[:-1]
    return text


def _unbackwhack(text: str) -> str:
    """``\\"`` and ``\\\\`` inside a ``$$([...])`` read as ``"`` and ``\\``: the expression sits in a string's printed form."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in '"\\':
            i += 1
        out.append(text[i])
        i += 1
    return "".join(out)


def _expression_value(body: str, job: ClassAd, machine: ClassAd) -> str | None:
    """The text a ``$$([ expr ])`` becomes: ``string(expr)`` evaluated in the job against the
    machine; None when that is not a string (undefined, error, or the expression does not parse)."""
    scratch = job.copy()
    try:
        scratch["InternalDDExpr"] = ExprTree(f"string({_unbackwhack(body[1:-1])})")
    except ClassAdParseError:
        return None
    value = scratch.evaluate("InternalDDExpr", machine)
    return value if isinstance(value, str) else None


def _attribute_value(body: str, machine: ClassAd, recorded: dict[str, str]) -> tuple[str, str | None]:
    """For a ``$$(name)`` or ``$$(name:default)``: the macro's name and its replacement text
    (None when it cannot be resolved). The machine attribute's expression (or the default,
    as a string) is recorded as ``MATCH_<name>``."""
    name, colon, default = body.partition(":")
    if "." in name:
        return name, None
    if name.upper() == "DOLLARDOLLAR":
        return name, "$$"
    if name in machine:
        text = str(machine.lookup(name))
    elif colon:
        text = '"' + default + '"'
    else:
        return name, None
    recorded[MATCH_PREFIX + name] = text
    return name, _strip_quotes(text)


def expand_text(text: str, job: ClassAd, machine: ClassAd, recorded: dict[str, str]) -> tuple[str, str | None]:
    """``text`` with every ``$$`` macro replaced, scanning on after each replacement (a value
    is never expanded again); the second item names the first macro that could not be
    resolved (the text is then only partly expanded)."""
    pos = 0
    while (macro := next_macro(text, pos)) is not None:
        if macro.body.startswith("[") and macro.body.endswith("]"):
            name, value = macro.body, _expression_value(macro.body, job, machine)
        else:
            name, value = _attribute_value(macro.body, machine, recorded)
        if value is None:
            return text, name
        text = text[:macro.start] + value + text[macro.end:]
        if len(text) > MAX_EXPANDED_CHARS:
            return text, name
        pos = macro.start + len(value)
    return text, None


def _names_to_expand(job: ClassAd) -> list[str]:
    """``Cmd`` first, then every other attribute in the ad's order, leaving out ``MATCH_*``;
    none when no attribute's text can hold a macro."""
    if not _may_hold_macros(job):
        return []
    rest = [name for name in job if not name.upper().startswith(MATCH_PREFIX) and name.lower() != "cmd"]
    return (["Cmd"] if "Cmd" in job else []) + rest


def _may_hold_macros(job: ClassAd) -> bool:
    """Whether some attribute's text may hold ``$$``: a number, or a string without it,
    cannot (printing a string escapes no ``$``), so only other expressions are printed
    to look (a job ad without macros was printed whole at every start)."""
    for entry in job.entries_by_key().values():
        if type(entry.const) is str:
            if "$$" in entry.const:
                return True
        elif entry.const is NOT_CONSTANT and "$$" in old_line(entry):  # printed once per shared entry
            return True
    return False


def expand_match_macros(job: ClassAd, machine: ClassAd) -> Expansion:
    """Expand ``job``'s ``$$`` macros from ``machine`` (see the module's docstring).

    Attributes are expanded in turn and the first macro that cannot be resolved stops
    it: the job is to be held, keeping the ``MATCH_<name>`` values found before it.
    """
    expanded = None
    recorded: dict[str, str] = {}
    for name in _names_to_expand(job):
        original = str(job.lookup(name))
        first = next_macro(original, 0)
        if first is None:
            continue
        text, failed = expand_text(original, job, machine, recorded)
        if failed is None:
            try:
                expanded = job.copy() if expanded is None else expanded
                expanded[name] = ExprTree(text)
            except ClassAdParseError:  # the replacement broke the expression's text
                failed = first.body
        if failed is not None:
            return Expansion(None, recorded, HOLD_REASON.format(name=failed))
        recorded[MATCH_EXP_PREFIX + name] = text
    for name in machine:
        if name.startswith(NEGOTIATOR_MATCH_EXPR):
            text = str(machine.lookup(name))
            expanded = job.copy() if expanded is None else expanded
            expanded[name] = ExprTree(text)
            recorded[MATCH_EXP_PREFIX + name] = text
    return Expansion(job if expanded is None else expanded, recorded)


def recorded_changes(recorded: dict[str, str]) -> dict[str, ExprTree]:
    """The recorded texts as expressions for the queue (a text that does not parse, which a
    machine ad cannot give, is left out)."""
    changes: dict[str, ExprTree] = {}
    for name, text in recorded.items():
        try:
            changes[name] = ExprTree(text)
        except ClassAdParseError:
            continue
    return changes


__all__ = ["Expansion", "Macro", "expand_match_macros", "expand_text", "next_macro", "recorded_changes",
           "HOLD_REASON", "HOLD_CODE"]
