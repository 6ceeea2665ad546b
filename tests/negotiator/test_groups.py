"""Tests for negotiator.groups: static and dynamic quotas, scaling and surplus."""

import pytest

from daemoncore.config import Config
from negotiator.accountant import NO_GROUP
from negotiator.errors import SettingsError
from negotiator.groups import GroupSettings, allocations, quotas


def test_static_quota_wins_over_dynamic():
    """A group with both quotas gets the static one; dynamic quotas share what is left."""
    settings = GroupSettings(("group_a", "group_b"), {"group_a": 30}, {"group_a": 0.9, "group_b": 0.5})
    q = quotas(settings, 100)
    assert q["group_a"] == 30 and q["group_b"] == pytest.approx(35)


def test_children_over_their_parent_are_scaled_down():
    """Static quotas adding to more than the pool are scaled in proportion."""
    settings = GroupSettings(("group_a", "group_b"), {"group_a": 150, "group_b": 50})
    q = quotas(settings, 100)
    assert q["group_a"] == pytest.approx(75) and q["group_b"] == pytest.approx(25)
    over = GroupSettings(("group_a", "group_b"), {"group_a": 150, "group_b": 50}, allow_oversubscription=True)
    assert quotas(over, 100)["group_a"] == 150


def test_hierarchical_dynamic_quota_is_a_fraction_of_the_parent():
    """group_a.b with dynamic 0.5 of group_a's 40 cores has 20."""
    settings = GroupSettings(("group_a", "group_a.b"), {"group_a": 40}, {"group_a.b": 0.5})
    assert quotas(settings, 100)["group_a.b"] == 20


def test_without_surplus_a_group_is_capped_at_its_quota():
    """A group wanting 80 of a 100-core pool gets its quota of 30; <none> gets the rest it wants."""
    settings = GroupSettings(("group_a",), {"group_a": 30})
    out = allocations(settings, 100, {"group_a": 80, "<none>": 10})
    assert out["group_a"] == 30 and out["<none>"] == 10


def test_surplus_flows_to_groups_that_accept_it():
    """Unused quota goes to a group accepting surplus, in proportion to quota, up to its demand."""
    settings = GroupSettings(("group_a", "group_b", "group_c"), {"group_a": 30, "group_b": 30, "group_c": 40},
                             accept_surplus={"group_a": True, "group_b": True})
    out = allocations(settings, 100, {"group_a": 100, "group_b": 45, "group_c": 0})
    assert out["group_b"] == pytest.approx(45)
    assert out["group_a"] == pytest.approx(55)
    assert out["group_c"] == 0


def test_group_settings_from_config():
    """GROUP_NAMES, GROUP_QUOTA_*, GROUP_QUOTA_DYNAMIC_* and GROUP_ACCEPT_SURPLUS are read from config."""
    config = Config.from_text("GROUP_NAMES = group_a, group_b, group_none\nGROUP_QUOTA_group_a = 10\n"
                              "GROUP_QUOTA_DYNAMIC_group_b = 0.25\nGROUP_ACCEPT_SURPLUS = true\n")
    settings = GroupSettings.from_config(config)
    assert settings.active == ("group_a", "group_b")
    assert settings.accepts_surplus("group_b")


def test_bad_dynamic_quota_is_refused():
    """A dynamic quota above 1 names the knob."""
    with pytest.raises(SettingsError, match="GROUP_QUOTA_DYNAMIC_group_a"):
        GroupSettings(("group_a",), dynamic_quotas={"group_a": 1.5})


def test_group_limit_caps_an_allocation_even_with_surplus():
    """GROUP_LIMIT_group_a = 1 keeps a group accepting surplus at 1 core in an idle pool."""
    settings = GroupSettings(("group_a",), {"group_a": 2}, accept_surplus_default=True, limits={"group_a": 1})
    out = allocations(settings, 4, {"group_a": 10})
    assert out["group_a"] == pytest.approx(1)


def test_surplus_is_split_by_surplus_weight():
    """GROUP_SURPLUS_WEIGHT 3 against 1 splits 40 surplus cores 30/10, whatever the quotas."""
    settings = GroupSettings(("group_a", "group_b", "group_c"), {"group_a": 10, "group_b": 10, "group_c": 40},
                             accept_surplus_default=True, surplus_weights={"group_a": 3, "group_b": 1})
    out = allocations(settings, 60, {"group_a": 100, "group_b": 100, "group_c": 0})
    assert out["group_a"] == pytest.approx(40) and out["group_b"] == pytest.approx(20)


def test_surplus_weight_defaults_to_the_quota():
    """Without GROUP_SURPLUS_WEIGHT, surplus follows the quotas (HTCondor's rule)."""
    settings = GroupSettings(("group_a", "group_b", "group_c"), {"group_a": 10, "group_b": 30, "group_c": 40},
                             accept_surplus_default=True)
    out = allocations(settings, 80, {"group_a": 100, "group_b": 100, "group_c": 0})
    assert out["group_a"] == pytest.approx(20) and out["group_b"] == pytest.approx(60)


def test_limit_and_weight_from_config_and_checked():
    """GROUP_LIMIT_<g> and GROUP_SURPLUS_WEIGHT_<g> are read; a negative one names the knob."""
    config = Config.from_text("GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 2\nGROUP_LIMIT_group_a = 3\n"
                              "GROUP_SURPLUS_WEIGHT_group_a = 5\n")
    settings = GroupSettings.from_config(config)
    assert settings.limit("group_a") == 3 and settings.surplus_weight("group_a", 2) == 5
    assert settings.limit("group_b") == float("inf")
    with pytest.raises(SettingsError, match="GROUP_LIMIT_group_a"):
        GroupSettings(("group_a",), {"group_a": 1}, limits={"group_a": -1})


def test_autoregroup_from_config_per_group_over_the_default():
    """GROUP_AUTOREGROUP sets the default and GROUP_AUTOREGROUP_<g> overrides it; users in
    no group never 'regroup'."""
    config = Config.from_text("GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = 1\nGROUP_QUOTA_group_b = 1\n"
                              "GROUP_AUTOREGROUP = True\nGROUP_AUTOREGROUP_group_b = False\n")
    settings = GroupSettings.from_config(config)
    assert settings.autoregroups("group_a") and not settings.autoregroups("group_b")
    assert not settings.autoregroups(NO_GROUP)
    assert not GroupSettings.from_config(Config.from_text("GROUP_NAMES = group_a\n")).autoregroups("group_a")
