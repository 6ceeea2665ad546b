"""Tests for roost userprio -l (bindings.cli.userprio): each user's attributes and the
concurrency limits' use from the negotiator's ad."""

import json

import classad
from bindings.cli.userprio import concurrency_limits, parse_arguments, render_long

NOW = 1_700_000_000.0
ROWS = [{"Name": "alice@pool", "Priority": 0.5, "EffectivePriority": 500.0, "PriorityFactor": 1000.0,
         "ResourcesUsed": 1, "LastUsageTime": NOW, "BeginUsageTime": None}]


def test_limits_come_from_the_negotiator_ads_concurrency_limit_attributes():
    """Only ConcurrencyLimit_* numbers are read, sorted by name."""
    ad = classad.ClassAd({"Name": "negotiator@h", "ConcurrencyLimit_license": 2.0, "ConcurrencyLimit_db": 0,
                          "ConcurrencyLimitBogus": 3, "ConcurrencyLimit_text": "x"})
    assert concurrency_limits(ad) == {"ConcurrencyLimit_db": 0.0, "ConcurrencyLimit_license": 2.0}


def test_long_form_lists_each_users_attributes_and_the_limits():
    """-l prints Name = value lines per user (None left out) and each limit's use."""
    text = render_long(parse_arguments(["-l"]), ROWS, {"ConcurrencyLimit_license": 2.0}, NOW, NOW)
    assert 'Name = "alice@pool"' in text and "EffectivePriority = 500.0" in text
    assert "BeginUsageTime" not in text
    assert text.rstrip().endswith("ConcurrencyLimit_license = 2.000000")


def test_long_form_says_when_there_are_no_limits_and_json_carries_both():
    """Without limits -l says so; -l -json gives the rows and the limits."""
    assert "No concurrency limits" in render_long(parse_arguments(["-long"]), ROWS, {}, NOW)
    answer = json.loads(render_long(parse_arguments(["-l", "-json"]), ROWS, {"ConcurrencyLimit_a": 1.0}, NOW))
    assert answer["concurrency_limits"] == {"ConcurrencyLimit_a": 1.0}
    assert answer["priorities"][0]["Name"] == "alice@pool"
