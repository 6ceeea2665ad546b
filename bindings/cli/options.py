"""The one option reader of the command line tools: HTCondor's single-dash long
options (``-constraint X``, ``-af:h A B``, ``-format FMT ATTR``, ``-l``), their unique
abbreviations (``-const``), GNU spellings (``--pool X``, ``--pool=X``, ``--help``),
and the one usage error every command reports the same way: a line naming the
option, the command's usage, exit status 2.

A command declares its options in a :class:`CommandLine`; :meth:`CommandLine.read`
turns ``argv`` into a :class:`Reading` (the options in the order given, and the
operands), which the command folds into its own request. Pure: no I/O here except
in :func:`run_command`, which prints help and usage errors.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from attrs import field, frozen

#: exit status of every command for a command line it does not understand
USAGE_EXIT = 2
#: exit status when the reader of the output went away (``roost config -dump | head``):
#: a shell's status for a process ended by SIGPIPE, as an HTCondor tool's would be
CLOSED_OUTPUT_EXIT = 128 + 13
#: an option's arity meaning "every following word up to the next option, at least one"
WORDS = -1
HELP_NAMES = ("-help", "-h", "-?")


class UsageError(ValueError):
    """The command line is not one the command understands; the message names the option."""


@frozen
class Option:
    """One option: its HTCondor name (``-constraint``), other spellings, how many
    words it takes (0, N, or :data:`WORDS`), whether it takes ``:qualifiers``
    (``-af:h``), and what a missing value is called in the error."""

    name: str
    arity: int = 0
    aliases: tuple[str, ...] = ()
    qualified: bool = False
    needs: str = ""

    def spellings(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def missing(self, spelled: str, got: int = 0) -> str:
        """The error for this option given ``got`` of its values."""
        if self.needs:
            return f"{spelled} needs {self.needs}"
        if self.arity == WORDS:
            return f"{spelled} needs at least one attribute"
        return f"{spelled} needs an argument" + (f" ({got} of {self.arity} given)" if self.arity > 1 else "")


@frozen
class Given:
    """One option as given: its canonical name, its values, its ``:qualifiers`` and how it was spelled."""

    name: str
    values: tuple[str, ...] = ()
    qualifiers: str = ""
    spelled: str = ""

    @property
    def value(self) -> str:
        """The first (usually only) value."""
        return self.values[0]


@frozen
class Reading:
    """What a command line holds: options in order, operands, and whether help was asked for."""

    options: tuple[Given, ...] = ()
    operands: tuple[str, ...] = ()
    help: bool = False

    def given(self, name: str) -> bool:
        return any(item.name == name for item in self.options)

    def last(self, name: str, default: str | None = None) -> str | None:
        """The value of the last ``name`` given, else ``default``."""
        found = [item.value for item in self.options if item.name == name]
        return found[-1] if found else default


@frozen
class CommandLine:
    """A command's options and usage text.

    ``options_first`` stops reading options at the first operand (``roost qedit 12.0
    JobPrio -5``); ``--`` always does.
    """

    prog: str
    usage: str
    options: tuple[Option, ...] = field(converter=tuple, default=())
    options_first: bool = False

    def read(self, argv: list[str]) -> Reading:
        """The options and operands of ``argv``.

        Raises:
            UsageError: an unknown or ambiguous option, or one missing its values.
        """
        given: list[Given] = []
        operands: list[str] = []
        wants_help = False
        index = 0
        while index < len(argv):
            arg = argv[index]
            index += 1
            if arg == "--":
                operands += argv[index:]
                break
            if not _looks_like_option(arg) or (self.options_first and operands):
                operands.append(arg)
                continue
            word, qualifiers, inline = _split(arg)
            if word in HELP_NAMES or (word.startswith("-he") and "-help".startswith(word)):
                wants_help = True
                continue
            option = self.find(word, arg)
            if qualifiers and not option.qualified:
                raise UsageError(f"{arg}: {option.name} takes no :qualifiers")
            values, index = _values(option, arg, argv, index, inline)
            given.append(Given(option.name, values, qualifiers, arg))
        return Reading(tuple(given), tuple(operands), wants_help)

    def find(self, word: str, arg: str) -> Option:
        """The option ``word`` names: exactly, else by a unique prefix.

        Raises:
            UsageError: no option, or several, start with ``word``.
        """
        for option in self.options:
            if word in option.spellings():
                return option
        matches = {option.name: option for option in self.options
                   if any(spelling.startswith(word) for spelling in option.spellings()) and len(word) > 2}
        if len(matches) == 1:
            return next(iter(matches.values()))
        if matches:
            raise UsageError(f"ambiguous option {arg} (it could be {', '.join(sorted(matches))})")
        raise UsageError(f"unknown option {arg}")


def _looks_like_option(arg: str) -> bool:
    return arg.startswith("-") and arg != "-" and not _is_number(arg)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _split(arg: str) -> tuple[str, str, str | None]:
    """``arg`` as (lower-case ``-name``, qualifiers after ``:``, value after ``=`` for ``--name=value``)."""
    inline = None
    if arg.startswith("--"):
        arg = arg[1:]
        if "=" in arg:
            arg, inline = arg.split("=", 1)
    name, _, qualifiers = arg.partition(":")
    return name.lower(), qualifiers, inline


def _values(option: Option, arg: str, argv: list[str], index: int, inline: str | None) -> tuple[tuple[str, ...], int]:
    """The words ``option`` takes from ``argv[index:]`` and the index after them."""
    if inline is not None:
        if option.arity != 1:
            raise UsageError(f"{arg}: {option.name} takes {'no value' if option.arity == 0 else 'separate values'}")
        return (inline,), index
    if option.arity == WORDS:
        end = index
        while end < len(argv) and not _looks_like_option(argv[end]):
            end += 1
        if end == index:
            raise UsageError(option.missing(arg.split(":", 1)[0]))
        return tuple(argv[index:end]), end
    if index + option.arity > len(argv):
        raise UsageError(option.missing(arg, len(argv) - index))
    return tuple(argv[index:index + option.arity]), index + option.arity


def whole_number(given: Given) -> int:
    """The value of ``given`` as a whole number.

    Raises:
        UsageError: it is not one.
    """
    if not given.value.isdigit():
        raise UsageError(f"{given.spelled} needs a whole number, got {given.value!r}")
    return int(given.value)


def seconds(given: Given) -> float:
    """The value of ``given`` as a number of seconds.

    Raises:
        UsageError: it is not a number.
    """
    try:
        return float(given.value)
    except ValueError:
        raise UsageError(f"{given.spelled} needs a number of seconds, got {given.value!r}") from None


@frozen
class Subcommand:
    """One subcommand of a command such as ``roost pool``: its options, one-line help, and what runs it."""

    line: CommandLine
    summary: str
    work: Callable[[Reading], int]


def run_subcommands(prog: str, subcommands: dict[str, Subcommand], argv: list[str]) -> int:
    """Run the subcommand ``argv[0]`` names with the rest of ``argv``, as :func:`run_command`
    runs a command; ``prog -help`` lists the subcommands."""
    names = " | ".join(subcommands)
    usage = "\n".join([f"usage: {prog} ({names}) [options]", "", *(
        f"  {name:<10} {sub.summary}" for name, sub in subcommands.items()),
        f"(`{prog} SUBCOMMAND -help` lists its options)"])
    whole = CommandLine(prog, usage)
    if argv and argv[0] in subcommands:
        sub = subcommands[argv[0]]
        return run_command(sub.line, argv[1:], sub.work)
    if argv and _split(argv[0])[0] in HELP_NAMES:
        print(usage)
        return 0
    if not argv:
        return usage_failure(whole, UsageError(f"name one of {names}"))
    what = f"option {argv[0]}" if _looks_like_option(argv[0]) else f"subcommand {argv[0]!r}"
    return usage_failure(whole, UsageError(f"unknown {what}"))


def run_command(command: CommandLine, argv: list[str], work: Callable[[Reading], int]) -> int:
    """Read ``argv`` with ``command``; print the usage for help (0), the error line and
    the usage on stderr for a bad command line (2), else run ``work``; a reader of the
    output that goes away (``| head``) ends the command quietly (141), never with a traceback.

    ``work`` may raise :class:`UsageError` too (for a bad combination it finds).
    """
    try:
        reading = command.read(argv)
        if reading.help:
            print(command.usage.rstrip("\n"))
            return 0
        return work(reading)
    except UsageError as exc:
        return usage_failure(command, exc)
    except BrokenPipeError:
        return output_closed()


def output_closed() -> int:
    """End quietly once standard output's reader has gone (``| head``): what is still
    buffered goes to /dev/null instead of raising again when Python exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no real file (a test's capture): nothing to redirect
        pass
    return CLOSED_OUTPUT_EXIT


def usage_failure(command: CommandLine, error: UsageError) -> int:
    """Report ``error`` as every command does, on stderr: the line naming what is wrong,
    the usage line, and where the options are listed; 2."""
    usage_line = command.usage.strip().splitlines()[0]
    print(f"{command.prog}: {error}\n{usage_line}\n(`{command.prog} -help` says more)", file=sys.stderr)
    return USAGE_EXIT
