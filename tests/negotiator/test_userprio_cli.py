"""Unit tests for bindings.cli.userprio: argument parsing and the tables it prints."""

import json

import pytest

from bindings.cli.userprio import UsageError, parse_arguments, render, since

NOW = 1_700_000_000.0
ROWS = [
    {"Name": "alice@pool", "Priority": 0.75, "EffectivePriority": 750.0, "PriorityFactor": 1000.0,
     "ResourcesUsed": 2, "AccumulatedUsage": 5400.0, "BeginUsageTime": NOW - 7200, "LastUsageTime": NOW},
    {"Name": "bob@pool", "Priority": 0.5, "EffectivePriority": 5.0, "PriorityFactor": 10.0, "ResourcesUsed": 0,
     "AccumulatedUsage": 0.0, "BeginUsageTime": None, "LastUsageTime": NOW - 3 * 86400},
    {"Name": "carol@pool", "Priority": 0.6, "EffectivePriority": 600.0, "PriorityFactor": 1000.0,
     "ResourcesUsed": 0, "AccumulatedUsage": 3600.0, "BeginUsageTime": NOW - 9000, "LastUsageTime": NOW - 5400},
]


def body_lines(text):
    lines = text.splitlines()
    return lines[4:-2]


def test_default_table_lists_active_users_best_first():
    """Users in use now or within a day, by effective priority, with usage in hours and time since last use."""
    text = render(parse_arguments([]), ROWS, NOW, NOW)
    lines = text.splitlines()
    assert lines[1].split() == ["Effective", "Priority", "In", "Usage", "Last"]
    assert lines[2].split() == ["User", "Name", "Priority", "Factor", "Use", "(wghted-hrs)", "Usage"]
    assert [line.split() for line in body_lines(text)] == [
        ["carol@pool", "600.00", "1000.00", "0", "1.00", "0+01:30"],
        ["alice@pool", "750.00", "1000.00", "2", "1.50", "<now"],
    ]
    assert lines[-1].split() == ["Number", "of", "users:", "2", "2", "2.50"]


def test_allusers_includes_users_idle_for_days():
    """-allusers shows bob, whose last usage was three days ago."""
    text = render(parse_arguments(["-allusers"]), ROWS, NOW, NOW)
    assert [line.split()[0] for line in body_lines(text)] == ["bob@pool", "carol@pool", "alice@pool"]
    assert body_lines(text)[0].split()[-1] == "3+00:00"


def test_all_shows_real_priorities_and_times():
    """-all is the wide table with the real priority beside the effective one."""
    text = render(parse_arguments(["-all"]), ROWS, NOW, NOW)
    assert "Real" in text.splitlines()[1]
    alice = next(line for line in body_lines(text) if line.startswith("alice"))
    assert alice.split()[1:6] == ["750.00", "0.75", "1000.00", "2", "1.50"]


def test_json_prints_the_rows():
    """-json prints the shown rows as a JSON list."""
    rows = json.loads(render(parse_arguments(["-json", "-allusers"]), ROWS, NOW, NOW))
    assert [r["Name"] for r in rows] == ["bob@pool", "carol@pool", "alice@pool"]


def test_edit_flags_parse_with_one_or_two_dashes():
    """-setfactor USER FACTOR, --resetusage USER and -pool HOST are read as condor_userprio reads them."""
    request = parse_arguments(["-setfactor", "bob@pool", "2.5", "--pool", "cm:9618"])
    assert (request.set_factor, request.pool) == (("bob@pool", 2.5), "cm:9618")
    assert parse_arguments(["--resetusage", "bob@pool"]).reset_usage == "bob@pool"


@pytest.mark.parametrize("argv, message", [
    (["-setfactor", "bob@pool"], "-setfactor needs USER FACTOR"),
    (["-setfactor", "bob@pool", "lots"], "must be a number"),
    (["-resetusage"], "-resetusage needs USER"),
    (["-frobnicate"], "unknown option"),
])
def test_bad_command_lines_say_what_is_wrong(argv, message):
    """Each mistake gets a message naming the flag and what it needs."""
    with pytest.raises(UsageError, match=message):
        parse_arguments(argv)


def test_since_reads_days_hours_minutes():
    """Time since last usage is d+hh:mm; N/A when never used."""
    assert since({"LastUsageTime": NOW - (86400 + 3 * 3600 + 7 * 60)}, NOW) == "1+03:07"
    assert since({}, NOW) == "N/A"
