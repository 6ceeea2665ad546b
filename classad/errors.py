"""The one exception type the ClassAd parser raises."""

from __future__ import annotations


class ClassAdParseError(ValueError):
    """Text that is not valid ClassAd syntax; ``line`` and ``column`` are 1-based."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 context: str = "") -> None:
        self.reason = message
        self.line = line
        self.column = column
        self.context = context
        where = f"line {line}, column {column}: " if line is not None else ""
        text = where + message
        if context:
            text += "\n" + context
        super().__init__(text)


def context_at(text: str, pos: int, span: int = 40) -> str:
    """The source line around ``pos`` with a caret under it (tabs expanded)."""
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    lo = max(start, pos - span)
    hi = min(end, pos + span)
    before = text[lo:pos].expandtabs()
    after = text[pos:hi].expandtabs()
    return f"{before}{after}\n{' ' * len(before)}^"


class ConstraintError(ValueError):
    """A constraint that cannot be used: too long, not valid ClassAd syntax, or
    nested too deeply; the message says which and quotes the parser's position."""
