"""condor_userprio's submitter-name arguments, by HTCondor's src/condor_tools/user_prio.cpp
main: ``user@domain`` (or ``<none>``) matches Name exactly, a bare name matches the part of
Name before the ``@``; named submitters show whatever their last usage; -setfactor wants
the full name and a factor of at least 1."""

from __future__ import annotations

import pytest

from bindings.cli.userprio import UsageError, parse_arguments, render

NOW = 1_700_000_000.0
ROWS = [
    {"Name": "alice@example.org", "Priority": 0.5, "PriorityFactor": 1000.0, "ResourcesUsed": 1,
     "AccumulatedUsage": 3600.0, "LastUsageTime": NOW},
    {"Name": "group_a.alice@example.org", "Priority": 0.5, "PriorityFactor": 1000.0, "ResourcesUsed": 0,
     "AccumulatedUsage": 0.0, "LastUsageTime": NOW - 5 * 86400},
    {"Name": "bob@example.org", "Priority": 0.5, "PriorityFactor": 1000.0, "ResourcesUsed": 0,
     "AccumulatedUsage": 0.0, "LastUsageTime": NOW - 5 * 86400},
]


def _names(argv: list[str]) -> list[str]:
    text = render(parse_arguments(argv), ROWS, NOW, NOW)
    return [line.split()[0] for line in text.splitlines()[4:-2]]


def test_a_full_name_shows_that_submitter_even_when_inactive():
    """user_prio.cpp: an argument with '@' adds Name =?= "it"; naming users lifts the one-day activity window."""
    assert _names(["bob@example.org"]) == ["bob@example.org"]


def test_a_bare_user_name_matches_the_part_before_the_at():
    """user_prio.cpp: StringListMember(splitusername(Name)[0], names) for names without '@'."""
    assert _names(["alice"]) == ["alice@example.org"]
    assert _names(["group_a.alice", "bob"]) == ["bob@example.org", "group_a.alice@example.org"]


def test_rows_are_named_user_at_uid_domain():
    """The default table names each submitter as the negotiator charges it (user@uid_domain)."""
    assert _names([]) == ["alice@example.org"]


@pytest.mark.parametrize("argv, message", [
    (["-setfactor", "bob", "2"], "full name"), (["-setfactor", "bob@example.org", "0.5"], "at least 1"),
    (["5"], "not a submitter name")])
def test_refused_arguments(argv, message):
    """user_prio.cpp: -setfactor needs user@uid.domain and a factor >= 1; an argument that
    starts with neither a letter nor '<none>' is a usage error."""
    with pytest.raises(UsageError, match=message):
        parse_arguments(argv)
