"""The one option reader of the command line tools: HTCondor's single-dash long
options, their abbreviations, GNU spellings, and the usage errors it raises."""

from __future__ import annotations

import pytest

from bindings.cli.options import WORDS, CommandLine, Option, UsageError
from bindings.cli.q import parse_arguments as q_arguments

LINE = CommandLine("roost test", "usage: roost test [options] NAME ...\n", [
    Option("-constraint", 1), Option("-compact"), Option("-long", aliases=("-l",)), Option("-limit", 1),
    Option("-format", 2), Option("-autoformat", WORDS, aliases=("-af",), qualified=True), Option("-json"),
])


def test_options_and_operands_are_read_in_order():
    """Each option keeps its values; words that are not options are operands."""
    reading = LINE.read(["-constraint", "Memory > 1", "node1", "-format", "%s\\n", "Name", "-l", "node2"])
    assert [(given.name, given.values) for given in reading.options] == [
        ("-constraint", ("Memory > 1",)), ("-format", ("%s\\n", "Name")), ("-long", ())]
    assert reading.operands == ("node1", "node2")


def test_autoformat_takes_qualifiers_and_every_word_up_to_the_next_option():
    """-af:h A B stops at the next option and keeps its qualifiers."""
    reading = LINE.read(["-af:h", "Name", "Memory * 2", "-json"])
    given = reading.options[0]
    assert (given.name, given.qualifiers, given.values) == ("-autoformat", "h", ("Name", "Memory * 2"))
    assert reading.options[1].name == "-json"


def test_a_unique_prefix_names_its_option_and_case_does_not_matter():
    """-const is -constraint and -LONG is -long, as HTCondor's tools read them."""
    reading = LINE.read(["-const", "true", "-LONG", "-autof", "A"])
    assert [given.name for given in reading.options] == ["-constraint", "-long", "-autoformat"]


def test_gnu_spellings_are_the_same_options():
    """--limit 3, --limit=3 and -limit 3 are one option; --help asks for help."""
    assert LINE.read(["--limit", "3"]).last("-limit") == "3"
    assert LINE.read(["--limit=3"]).last("-limit") == "3"
    assert LINE.read(["--help"]).help and LINE.read(["-help"]).help


def test_double_dash_ends_the_options():
    """Words after -- are operands even when they start with a dash."""
    assert LINE.read(["--", "-json"]).operands == ("-json",)


def test_numbers_are_operands_not_options():
    """-5 is a value (roost qedit 12.0 JobPrio -5), not an unknown option."""
    assert LINE.read(["-5"]).operands == ("-5",)


@pytest.mark.parametrize("argv, message", [
    (["-bogus"], "unknown option -bogus"),
    (["-co", "x"], r"ambiguous option -co \(it could be -compact, -constraint\)"),
    (["-constraint"], "-constraint needs an argument"),
    (["-format", "%s"], r"-format needs an argument \(1 of 2 given\)"),
    (["-af"], "-af needs at least one attribute"),
    (["-json:h"], "-json takes no :qualifiers"),
    (["--json=yes"], "-json takes no value"),
])
def test_bad_command_lines_name_the_option(argv, message):
    """Unknown, ambiguous and incomplete options are usage errors naming what is wrong."""
    with pytest.raises(UsageError, match=message):
        LINE.read(argv)


def test_options_first_stops_at_the_first_operand():
    """A command whose operands may start with a dash reads options only before them."""
    line = CommandLine("roost qedit", "usage\n", [Option("-pool", 1)], options_first=True)
    reading = line.read(["-pool", "cm", "12.0", "Args", "-v"])
    assert (reading.last("-pool"), reading.operands) == ("cm", ("12.0", "Args", "-v"))


def test_roost_q_reads_name_and_limit():
    """roost q keeps -name for locating the schedd, and -limit must be a whole number."""
    assert q_arguments(["-name", "schedd@h", "-lim", "4"]).name == "schedd@h"
    with pytest.raises(UsageError, match="-limit needs a whole number, got 'x'"):
        q_arguments(["-limit", "x"])
