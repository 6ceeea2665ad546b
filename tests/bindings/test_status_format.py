"""The script-readable outputs of roost status: -af with its qualifiers, -format, -l and -json."""

import json

import pytest

import classad
from bindings.cli.status_format import (
    AutoformatOptions,
    FormatError,
    autoformat,
    custom_format,
    json_form,
    long_form,
    plain_value,
    quoted_value,
)

ADS = [classad.ClassAd({"Name": "slot1@a", "Memory": 512, "LoadAvg": 0.25, "State": "Claimed"}),
       classad.ClassAd({"Name": "slot2@a", "Memory": 2048, "LoadAvg": 1.0, "State": "Unclaimed"})]


def af(qualifiers, *expressions):
    return autoformat(ADS, list(expressions), AutoformatOptions.parse(qualifiers))


def test_default_autoformat_is_space_separated_one_ad_per_line():
    """Plain -af prints bare strings, numbers and a newline after each ad."""
    assert af("", "Name", "Memory", "LoadAvg") == "slot1@a 512 0.25\nslot2@a 2048 1.0\n"


def test_autoformat_evaluates_expressions_and_prints_undefined():
    """An expression is evaluated in the ad; a missing attribute prints undefined."""
    assert af("", "Memory * 2", "Missing") == "1024 undefined\n4096 undefined\n"


@pytest.mark.parametrize("qualifiers, expected", [
    (",", "slot1@a,512\nslot2@a,2048\n"),
    ("t", "slot1@a\t512\nslot2@a\t2048\n"),
    ("n", "slot1@a\n512\nslot2@a\n2048\n"),
    ("V", '"slot1@a" 512\n"slot2@a" 2048\n'),
    ("l", "Name = slot1@a Memory = 512\nName = slot2@a Memory = 2048\n"),
    ("g", "slot1@a 512\n\nslot2@a 2048\n\n"),
])
def test_autoformat_qualifiers(qualifiers, expected):
    """Each -af qualifier changes separators, quoting or labels as condor_status does."""
    assert af(qualifiers, "Name", "Memory") == expected


def test_autoformat_headings_align_columns():
    """-af:h prints attribute names as headings over left-aligned columns."""
    assert af("h", "Name", "Memory") == "Name    Memory\nslot1@a 512\nslot2@a 2048\n"


def test_raw_autoformat_prints_the_unevaluated_expression():
    """-af:r prints an attribute's expression as written, not its value."""
    ad = classad.ClassAd('[Double = Memory * 2; Memory = 3]')
    assert autoformat([ad], ["Double"], AutoformatOptions.parse("r")) == "Memory * 2\n"


@pytest.mark.parametrize("qualifiers", ["x", "n,", "lh"])
def test_bad_or_conflicting_qualifiers_are_refused(qualifiers):
    """Unknown qualifiers and the pairs HTCondor forbids are errors naming the option."""
    with pytest.raises(FormatError, match=f"-af:{qualifiers}"):
        AutoformatOptions.parse(qualifiers)


def test_an_unparsable_expression_names_itself():
    """-af with a broken expression reports the expression."""
    with pytest.raises(FormatError, match="'Memory >'"):
        af("", "Memory >")


def test_format_applies_printf_conversions_and_escapes():
    """-format pairs print with %s, %d and %.2f, and \\n becomes a newline."""
    out = custom_format(ADS, [("%s ", "Name"), ("%d ", "Memory"), ("%.2f\\n", "LoadAvg")])
    assert out == "slot1@a 512 0.25\nslot2@a 2048 1.00\n"


def test_format_skips_undefined_and_keeps_literal_percent():
    """An undefined attribute prints nothing under %d; %% stays a percent sign."""
    out = custom_format(ADS[:1], [("%d", "Missing"), ("100%% %s\\n", "State")])
    assert out == "100% Claimed\n"


def test_format_with_two_conversions_is_refused():
    """One conversion per -format, as condor_status requires."""
    with pytest.raises(FormatError, match="one conversion"):
        custom_format(ADS, [("%s %d", "Name")])


def test_value_forms():
    """%v leaves strings bare; %V quotes them; booleans and lists read as ClassAd text."""
    assert plain_value("a b") == "a b" and quoted_value("a b") == '"a b"'
    assert plain_value(True) == "true" and plain_value([1, "x"]) == '{ 1,"x" }'


def test_long_form_separates_ads_with_a_blank_line():
    """-l prints each ad in the old syntax followed by a blank line."""
    text = long_form(ADS)
    assert text.count("\n\n") == 2 and 'Name = "slot1@a"' in text and "Memory = 2048" in text


def test_json_form_is_a_json_array_of_ads():
    """-json prints a JSON array whose objects are the ads."""
    assert [ad["Name"] for ad in json.loads(json_form(ADS))] == ["slot1@a", "slot2@a"]
    assert json.loads(json_form([])) == []
