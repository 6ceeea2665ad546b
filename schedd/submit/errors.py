"""The one error a bad submit description raises, and the warnings it may give."""

from __future__ import annotations


class SubmitError(ValueError):
    """A submit description HTCondor would refuse: says which file, line and command,
    and what was expected instead."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 command: str | None = None) -> None:
        self.reason = message
        self.file = file
        self.line = line
        self.command = command
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.file or "<submit description>"
        if self.line is not None:
            where += f", line {self.line}"
        what = f"{self.command}: " if self.command else ""
        return f"{where}: {what}{self.reason}"

    def located(self, *, file: str | None = None, line: int | None = None,
                command: str | None = None) -> "SubmitError":
        """The same error with any missing location filled in."""
        return SubmitError(self.reason, file=self.file or file,
                           line=self.line if self.line is not None else line,
                           command=self.command or command)


#: What a refusal of a client-only form tells the user to do instead.
EXPAND_ON_CLIENT = ("the schedd does not read files, run commands or look at its environment for clients; "
                    "submit with roost submit or bindings.Submit, which expand it on your machine")


def client_only(form: str, effect: str) -> SubmitError:
    """The refusal of a form only the submitting machine may expand, such as
    ``client_only("queue ... from items.txt", "reads a file")``."""
    return SubmitError(f"{form!r} {effect}; {EXPAND_ON_CLIENT}")


class SubmitWarning(UserWarning):
    """Something probably wrong that HTCondor accepts, such as a misspelled command."""
