"""roost status's command line, read as condor_status reads it."""

import pytest

from bindings.cli.status import UsageError, parse_arguments
from bindings.enums import AdType


def test_defaults_query_slots_in_the_table_form():
    """With no options the request is for slots, shown as the default table."""
    request = parse_arguments([])
    assert request.ad_type is AdType.Startd and request.display == "table" and request.constraint() == "true"


def test_constraints_and_names_are_anded():
    """Repeated -constraint options and host names all have to hold."""
    request = parse_arguments(["-constraint", "Memory > 1", "-const", "Cpus > 1", "node1"])
    text = request.constraint()
    assert text.startswith("(Memory > 1) && (Cpus > 1) && (")
    assert 'Machine == "node1"' in text


def test_autoformat_takes_attributes_up_to_the_next_option():
    """-af:h reads attribute names until the next option, then the qualifiers apply."""
    request = parse_arguments(["-af:h", "Name", "Memory", "-schedd"])
    assert request.autoformat == ["Name", "Memory"] and request.autoformat_options.headings
    assert request.ad_type is AdType.Schedd and request.display == "autoformat"


def test_format_takes_a_format_and_an_attribute():
    """-format reads two arguments and may repeat."""
    request = parse_arguments(["-format", "%s ", "Name", "-format", "%d\\n", "Memory"])
    assert request.formats == [("%s ", "Name"), ("%d\\n", "Memory")]


@pytest.mark.parametrize("flag, ad_type", [("-submitters", AdType.Submitter), ("-negotiator", AdType.Negotiator),
                                           ("-master", AdType.Master), ("-collector", AdType.Collector),
                                           ("-any", AdType.Any), ("-SCHEDD", AdType.Schedd)])
def test_query_flags_choose_the_ad_type(flag, ad_type):
    """Each query option picks the ads condor_status would show."""
    assert parse_arguments([flag]).ad_type is ad_type


@pytest.mark.parametrize("argv, message", [(["-bogus"], "unknown option -bogus"),
                                           (["-constraint"], "-constraint needs an argument"),
                                           (["-af"], "-af needs at least one attribute"),
                                           (["-format", "%s"], "-format needs an argument")])
def test_bad_command_lines_say_what_is_wrong(argv, message):
    """Unknown options and missing arguments are usage errors naming the option."""
    with pytest.raises(UsageError, match=message):
        parse_arguments(argv)


def test_expressions_are_checked_before_the_pool_is_asked():
    """A broken -constraint is reported locally, with the expression and where it breaks."""
    from bindings.cli.status import check_expressions
    from bindings.cli.status_format import FormatError

    with pytest.raises(FormatError, match="-constraint: 'Memory >'"):
        check_expressions(parse_arguments(["-constraint", "Memory >"]))


def test_direct_is_refused_saying_why(capsys):
    """condor_status -direct NAME asks that daemon for its ad; Roost's daemons answer no such
    question, so the command says so (status 1) instead of quietly reading the collector."""
    from bindings.cli.status import main

    assert main(["-direct", "node1"]) == 1
    assert "-direct node1: Roost's daemons do not answer for their own ads" in capsys.readouterr().err
