"""The script-readable outputs that ``roost status``, ``roost q`` and ``roost history``
share: ``-autoformat`` with its ``:jlhVr,tng`` qualifiers, printf-style ``-format``,
``-long`` and ``-json``, as pure functions from ClassAds to text; and
:func:`chosen_display`, which picks among them for a command's request. The tables
of each command live beside it (``status_tables``, ``q_tables``)."""

from __future__ import annotations

import re

from attrs import frozen

import classad
from bindings.cli.options import Given, UsageError
from classad.unparse import quote_string, unparse_value
from classad.values import Value

_CONVERSION = re.compile(r"%(?P<flags>[-+ 0#]*)(?P<width>\d*)(?:\.(?P<precision>\d+))?(?P<kind>[sdifgeExXoucvVr])")
_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\\\": "\\"}


class FormatError(ValueError):
    """An ``-af``/``-format`` argument is not an expression or not a usable format."""


@frozen
class AutoformatOptions:
    """The qualifiers after ``-af:``: job id first, label, headings, %V, raw, comma, tab,
    newline, gap (the man pages of condor_q, condor_status and condor_history)."""

    job_id: bool = False
    label: bool = False
    headings: bool = False
    quoted: bool = False
    raw: bool = False
    comma: bool = False
    tab: bool = False
    newline: bool = False
    gap: bool = False

    @classmethod
    def parse(cls, qualifiers: str) -> AutoformatOptions:
        """The options spelled ``qualifiers`` (the text after ``-af:``).

        Raises:
            FormatError: an unknown qualifier, or one of the pairs HTCondor forbids (``n`` with ``,``, ``l`` with ``h``).
        """
        letters = {"j": "job_id", "l": "label", "h": "headings", "V": "quoted", "r": "raw", ",": "comma", "t": "tab",
                   "n": "newline", "g": "gap"}
        chosen = {}
        for letter in qualifiers:
            if letter not in letters:
                raise FormatError(f"-af:{qualifiers}: unknown qualifier {letter!r} (expected some of jlhVr,tng)")
            chosen[letters[letter]] = True
        options = cls(**chosen)
        if options.newline and options.comma:
            raise FormatError(f"-af:{qualifiers}: the n and , qualifiers cannot be used together")
        if options.label and options.headings:
            raise FormatError(f"-af:{qualifiers}: the l and h qualifiers cannot be used together")
        return options


def compile_expression(text: str, option: str) -> classad.ExprTree:
    """``text`` as an expression, for ``option`` (``-af``) errors.

    Raises:
        FormatError: ``text`` does not parse.
    """
    try:
        return classad.ExprTree(text)
    except Exception as exc:
        raise FormatError(f"{option}: {text!r} is not an attribute or expression: {exc}") from None


def plain_value(value: object) -> str:
    """A value as ``%v`` prints it: strings bare, reals shortest, the rest as ClassAd text."""
    if value is Value.Undefined:
        return "undefined"
    if value is Value.Error:
        return "error"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return _classad_text(value)


def quoted_value(value: object) -> str:
    """A value as ``%V`` (and ``-long``) prints it: strings quoted."""
    if isinstance(value, str):
        return quote_string(value)
    return plain_value(value)


def _classad_text(value: object) -> str:
    try:
        return unparse_value(value)
    except Exception:
        return str(value)


def autoformat(ads: list, expressions: list[str], options: AutoformatOptions) -> str:
    """The ``-af`` output of ``expressions`` over ``ads``.

    Raises:
        FormatError: an expression does not parse.
    """
    trees = [compile_expression(text, "-af") for text in expressions]
    rows = [[_cell(ad, text, tree, options) for text, tree in zip(expressions, trees)] for ad in ads]
    if options.job_id:
        expressions = [JOB_ID_HEADING, *expressions]
        rows = [[job_id(ad), *row] for ad, row in zip(ads, rows)]
    if options.headings:
        return _tabular(expressions, rows)
    if options.tab:
        separator = "\t"
    elif options.newline:
        separator = "\n"
    elif options.comma:
        separator = ","
    else:
        separator = " "
    out = []
    for row in rows:
        cells = [f"{name} = {cell}" for name, cell in zip(expressions, row)] if options.label else row
        line = separator.join(cells)
        out.append(line + "\n" + ("\n" if options.gap else ""))
    return "".join(out)


#: the heading (and -af:l label) of the job id column that ``-af:j`` puts first
JOB_ID_HEADING = "ID"


def job_id(ad) -> str:
    """``ClusterId.ProcId`` of a job ad, as ``-af:j`` prints it before the other columns."""
    return f"{plain_value(ad.eval('ClusterId'))}.{plain_value(ad.eval('ProcId'))}"


def _cell(ad, text: str, tree, options: AutoformatOptions) -> str:
    if options.raw:
        found = ad.lookup(text) if text in ad else None
        return str(found) if found is not None else str(tree)
    value = tree.eval(ad)
    return quoted_value(value) if options.quoted else plain_value(value)


def _tabular(headings: list[str], rows: list[list[str]]) -> str:
    widths = [max([len(heading)] + [len(row[index]) for row in rows]) for index, heading in enumerate(headings)]
    lines = [" ".join(heading.ljust(width) for heading, width in zip(headings, widths)).rstrip()]
    lines += [" ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def custom_format(ads: list, pairs: list[tuple[str, str]]) -> str:
    """The ``-format fmt attr`` output: each pair printed for each ad, in order.

    Raises:
        FormatError: an expression does not parse, or a format has more than one conversion.
    """
    compiled = [(_format_string(fmt), compile_expression(expr, "-format"), expr) for fmt, expr in pairs]
    out = []
    for ad in ads:
        for fmt, tree, expr in compiled:
            out.append(_apply_format(fmt, ad, tree, expr))
    return "".join(out)


def _format_string(fmt: str) -> str:
    for escape, char in _ESCAPES.items():
        fmt = fmt.replace(escape, char)
    if len(_CONVERSION.findall(fmt.replace("%%", ""))) > 1:
        raise FormatError(f"-format {fmt!r}: use one conversion (like %s or %d) per -format")
    return fmt


def _apply_format(fmt: str, ad, tree, expr: str) -> str:
    match = _CONVERSION.search(fmt.replace("%%", "\0\0"))
    if match is None:
        return fmt.replace("%%", "%")
    kind = match.group("kind")
    if kind == "r":
        found = ad.lookup(expr) if expr in ad else tree
        text = str(found)
    else:
        value = tree.eval(ad)
        if value is Value.Undefined and kind not in "vV":
            return ""
        text = _converted(match, kind, value)
        if text is None:
            return ""
    start, end = match.span()
    return (fmt[:start] + text + fmt[end:]).replace("%%", "%")


def _converted(match: re.Match, kind: str, value: object) -> str | None:
    spec = match.group(0)
    try:
        if kind in "vV":
            text = quoted_value(value) if kind == "V" else plain_value(value)
            return ("%" + spec[1:-1] + "s") % text
        if kind == "s":
            return spec % (plain_value(value),)
        if kind in "dixXouc":
            number = int(value) if not isinstance(value, str) else int(float(value))
            return spec.replace("i", "d") % number
        return spec % float(value)
    except (TypeError, ValueError):
        return None


def attribute_list(text: str) -> list[str]:
    """The names of ``-attributes A,B`` (commas or spaces between them).

    Raises:
        UsageError: no name is given.
    """
    names = [name for name in re.split(r"[,\s]+", text) if name]
    if not names:
        raise UsageError("-attributes needs attribute names, such as -attributes Owner,JobStatus")
    return names


def projected(ads: list, names: list[str]) -> list:
    """``ads`` cut to the attributes ``names`` (any case), as ``-long``/``-json -attributes`` show them."""
    wanted = {name.lower() for name in names}
    out = []
    for ad in ads:
        cut = classad.ClassAd()
        for key in ad.keys():
            if key.lower() in wanted:
                cut[key] = ad.lookup(key)
        out.append(cut)
    return out


def long_form(ads: list) -> str:
    """``-long``: each ad in the old syntax, ads separated by a blank line."""
    return "".join(ad.printOld().strip("\n") + "\n\n" for ad in ads)


def json_form(ads: list) -> str:
    """``-json``: a JSON array of the ads in HTCondor's JSON form."""
    if not ads:
        return "[\n]\n"
    return "[\n" + ",\n".join(ad.printJson().strip() for ad in ads) + "\n]\n"


def autoformat_options(given: Given) -> AutoformatOptions:
    """The options of an ``-af[:qualifiers]`` as read from a command line.

    Raises:
        UsageError: unknown qualifiers, or a pair HTCondor forbids.
    """
    try:
        return AutoformatOptions.parse(given.qualifiers)
    except FormatError as exc:
        raise UsageError(str(exc)) from None


def chosen_display(request, ads: list) -> str | None:
    """The text of the display forms every query command shares (``-l``, ``-json``,
    ``-af``, ``-format``) for a request with ``display``, ``autoformat``,
    ``autoformat_options`` and ``formats``; None for the command's own table."""
    if request.display == "long":
        return long_form(ads)
    if request.display == "json":
        return json_form(ads)
    if request.display == "autoformat":
        return autoformat(ads, request.autoformat, request.autoformat_options)
    if request.display == "format":
        return custom_format(ads, request.formats)
    return None
