"""Unit tests for bindings.cli.userprio: argument parsing and the tables it prints."""

import json

import pytest

from bindings.cli.userprio import UsageError, parse_arguments, render, render_quotas, since

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
    """Users in use now or within a day, by effective priority, with usage in hours and time
    since last use (user_prio.cpp PrintInfo, DetailMost columns; <now> while in use; the
    footer's time since is that of the oldest usage shown, a day)."""
    text = render(parse_arguments([]), ROWS, NOW, NOW)
    lines = text.splitlines()
    assert lines[1].split() == ["Group", "Effective", "Priority", "Wghted", "Total", "Usage", "Time", "Since",
                                "Submitter", "Submitter"]
    assert lines[2].split() == ["User", "Name", "Priority", "Factor", "In", "Use", "(wghted-hrs)", "Last", "Usage",
                                "Floor", "Ceiling"]
    assert [line.split() for line in body_lines(text)] == [
        ["carol@pool", "600.00", "1000.00", "0", "1.00", "0+01:30"],
        ["alice@pool", "750.00", "1000.00", "2", "1.50", "<now>"],
    ]
    assert lines[-1].split() == ["Number", "of", "users:", "2", "2", "2.50", "1+00:00"]


def test_allusers_includes_users_idle_for_days():
    """-allusers shows bob, whose last usage was three days ago."""
    text = render(parse_arguments(["-allusers"]), ROWS, NOW, NOW)
    assert [line.split()[0] for line in body_lines(text)] == ["bob@pool", "carol@pool", "alice@pool"]
    assert body_lines(text)[0].split()[-1] == "3+00:00"


def test_all_shows_real_priorities_and_times():
    """-all is the wide table with the real priority beside the effective one."""
    text = render(parse_arguments(["-all"]), ROWS, NOW, NOW)
    assert "Real" in text.splitlines()[1]
    alice = next(line for line in body_lines(text) if line.strip().startswith("alice"))
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


GROUPS = [
    {"name": "group_a", "config_quota": 2.0, "quota": 2.0, "limit": 3.0, "surplus_weight": 2.0, "accept_surplus": True,
     "in_use": 1.0, "matched": 2.0},
    {"name": "group_b", "config_quota": None, "quota": 1.5, "limit": None, "surplus_weight": None,
     "accept_surplus": False, "in_use": 1.0, "matched": 0.0},
]
GROUP_ROWS = [*ROWS, {"Name": "group_a", "IsAccountingGroup": True, "ResourcesUsed": 3, "EffectivePriority": 1.0}]


def test_quotas_shows_each_groups_quota_limit_weight_use_and_surplus():
    """-quotas lists each group with effective and configured quota, limit, surplus weight, in use and surplus;
    in use comes from the group's priority row when there is one, '-' marks what is not configured."""
    text = render_quotas(parse_arguments(["-quotas"]), GROUPS, GROUP_ROWS, NOW)
    lines = text.splitlines()
    assert lines[1].split() == ["Effective", "Config", "Surplus", "Use", "In"]
    assert lines[2].split() == ["Group", "Quota", "Quota", "Limit", "Weight", "Surplus", "Use", "Surplus"]
    assert body_lines(text)[0].split() == ["group_a", "2.00", "2.00", "3.00", "2.00", "yes", "3", "1"]
    assert body_lines(text)[1].split() == ["group_b", "1.50", "-", "-", "-", "no", "1", "0"]
    assert lines[-1].split() == ["Number", "of", "groups:", "2", "4", "1"]


def test_quotas_json_and_no_groups():
    """-quotas -json prints the groups with their surplus; a pool without groups says how to configure them."""
    shown = json.loads(render_quotas(parse_arguments(["-quotas", "-json"]), GROUPS, GROUP_ROWS))
    assert [(g["name"], g["in_use"], g["surplus"]) for g in shown] == [("group_a", 3, 1), ("group_b", 1.0, 0)]
    assert "GROUP_QUOTA_<group>" in render_quotas(parse_arguments(["--quotas"]), [], ROWS)


def test_columns_have_condor_userprios_widths_and_centred_headings():
    """user_prio.cpp aCols and PrintInfo: the name column at least 10 (and the footer) wide
    plus 2, then Effective Priority 12, Priority Factor 9, Wghted In Use 6, Total Usage 12,
    Time Since 10, Submitter Floor and Ceiling 9, each heading centred, numbers right."""
    lines = render(parse_arguments([]), ROWS, NOW, NOW).splitlines()
    assert lines[1] == "Group                 Effective   Priority  Wghted Total Usage  Time Since Submitter Submitter"
    assert lines[3] == "-------------------- ------------ --------- ------ ------------ ---------- --------- ---------"
    assert lines[4].rstrip() == "  carol@pool               600.00   1000.00      0         1.00    0+01:30"


def test_users_sit_under_their_group_without_its_prefix():
    """The default hierarchical display: a group row, then its users indented two and named
    without the group prefix; users of no group come after the groups."""
    rows = [*ROWS, {"Name": "group_a", "IsAccountingGroup": True, "ResourcesUsed": 3, "EffectivePriority": 1.0,
                    "LastUsageTime": NOW},
            {"Name": "group_a.dave@pool", "AccountingGroup": "group_a", "EffectivePriority": 2.0,
             "PriorityFactor": 1.0, "ResourcesUsed": 1, "LastUsageTime": NOW, "Floor": 2.0}]
    names = [line[:20].rstrip() for line in body_lines(render(parse_arguments([]), rows, NOW, NOW))]
    assert names == ["group_a", "  dave@pool", "  carol@pool", "  alice@pool"]
