"""Tests for negotiator.accountant and negotiator.db: priorities decaying with the half-life, factors, persistence."""

import pytest
from twisted.internet.task import Clock

from daemoncore.config import Config
from negotiator.accountant import Accountant, AccountantSettings, group_of
from negotiator.db import AccountantDatabase
from negotiator.errors import AccountantError

DAY = 86400.0


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def accountant(tmp_path, clock):
    return Accountant(AccountantDatabase(str(tmp_path / "accountant.db")), clock)


def test_new_user_starts_at_the_minimum_priority(accountant):
    """An unknown user has real priority 0.5 and effective 0.5 x 1000."""
    assert accountant.real_priority("alice@example.org") == 0.5
    assert accountant.effective_priority("alice@example.org") == 500.0


def test_priority_moves_halfway_to_usage_per_halflife(accountant, clock):
    """A user running 10 cores goes 0.5 -> 5.25 after one half-life, and back down when idle."""
    accountant.update_priorities({"alice@example.org": 10})
    clock.advance(DAY)
    accountant.update_priorities({"alice@example.org": 0})
    assert accountant.real_priority("alice@example.org") == pytest.approx(5.25)
    clock.advance(DAY)
    accountant.update_priorities({})
    assert accountant.real_priority("alice@example.org") == pytest.approx(2.625)


def test_uneven_steps_give_the_same_priority(tmp_path, clock):
    """Updating every hour or once a day ends at the same priority (the formula is step-independent)."""
    coarse = Accountant(AccountantDatabase(str(tmp_path / "a.db")), Clock())
    coarse.update_priorities({"u": 8})
    coarse.clock.advance(DAY)
    coarse.update_priorities({"u": 8})
    fine = Accountant(AccountantDatabase(str(tmp_path / "b.db")), Clock())
    for _ in range(24):
        fine.update_priorities({"u": 8})
        fine.clock.advance(3600)
    fine.update_priorities({"u": 8})
    assert fine.real_priority("u") == pytest.approx(coarse.real_priority("u"))


def test_priority_never_drops_below_half(accountant, clock):
    """An idle user stays at 0.5, the lowest priority."""
    accountant.update_priorities({"bob": 0})
    clock.advance(10 * DAY)
    accountant.update_priorities({"bob": 0})
    assert accountant.real_priority("bob") == 0.5


def test_accumulated_usage_counts_core_seconds(accountant, clock):
    """Four cores for an hour accumulate 14400 core-seconds."""
    accountant.update_priorities({"alice": 4})
    clock.advance(3600)
    accountant.update_priorities({"alice": 4})
    (record,) = accountant.priorities()
    assert record.accumulated_usage == 14400 and record.resources_in_use == 4


def test_factor_multiplies_the_effective_priority(accountant):
    """setFactor changes the effective priority, not the real one; factors below 1 are refused."""
    accountant.set_factor("alice@example.org", 2000)
    assert accountant.effective_priority("alice@example.org") == 1000.0
    with pytest.raises(AccountantError, match="at least 1"):
        accountant.set_factor("alice@example.org", 0.5)


def test_nice_remote_and_group_default_factors(tmp_path, clock):
    """nice-user submitters get 1e10, users outside the local domain 1e7, group members their group's factor."""
    settings = AccountantSettings(local_domain="example.org", group_names=("group_physics",),
                                  group_factors={"group_physics": 50.0})
    acct = Accountant(AccountantDatabase(str(tmp_path / "f.db")), clock, settings)
    assert acct.factor("nice-user.alice@example.org") == 1e10
    assert acct.factor("eve@elsewhere.net") == 1e7
    assert acct.factor("group_physics.alice@example.org") == 50.0
    assert acct.factor("alice@example.org") == 1000.0


def test_reset_usage_returns_to_the_best_priority(accountant, clock):
    """resetUsage puts the real priority back to 0.5 and clears accumulated usage."""
    accountant.update_priorities({"alice": 20})
    clock.advance(DAY)
    accountant.update_priorities({"alice": 20})
    accountant.reset_usage("alice")
    (record,) = accountant.priorities()
    assert record.real_priority == 0.5 and record.accumulated_usage == 0


def test_state_survives_a_restart(tmp_path, clock):
    """Priorities, factors and the last update time are read back from the SQLite file."""
    path = str(tmp_path / "persist.db")
    first = Accountant(AccountantDatabase(path), clock)
    first.update_priorities({"alice": 10})
    first.set_factor("alice", 3)
    clock.advance(DAY)
    first.update_priorities({"alice": 10})
    first.database.close()
    again = Accountant(AccountantDatabase(path), clock)
    assert again.real_priority("alice") == pytest.approx(5.25)
    assert again.factor("alice") == 3
    clock.advance(DAY)
    again.update_priorities({"alice": 10})
    assert again.real_priority("alice") == pytest.approx(0.5 * 5.25 + 5)


def test_groups_are_charged_their_members_usage(tmp_path, clock):
    """A group customer's priority follows the sum of its members' (and subgroups') usage."""
    settings = AccountantSettings(group_names=("group_a", "group_a.b"))
    acct = Accountant(AccountantDatabase(str(tmp_path / "g.db")), clock, settings)
    acct.update_priorities({"group_a.b.alice@x": 2, "group_a.bob@x": 4})
    assert acct.resources_in_use("group_a") == 6 and acct.resources_in_use("group_a.b") == 2
    assert group_of("group_a.b.alice@x", settings.group_names) == "group_a.b"
    assert group_of("alice@x", settings.group_names) == "<none>"


def test_settings_from_config():
    """PRIORITY_HALFLIFE and the factor knobs are read from HTCondor-style config."""
    config = Config.from_text("PRIORITY_HALFLIFE = 3600\nDEFAULT_PRIO_FACTOR = 10\n"
                              "GROUP_NAMES = group_x\nGROUP_PRIO_FACTOR_group_x = 5\n")
    settings = AccountantSettings.from_config(config)
    assert settings.halflife == 3600 and settings.default_factor == 10
    assert settings.group_factors == {"group_x": 5.0}


def test_users_flocked_in_get_the_remote_factor_and_keep_it(tmp_path, clock):
    """Without ACCOUNTANT_LOCAL_DOMAIN, users of the domains that flocked in are remote
    (REMOTE_PRIO_FACTOR, 1e7 by default), remembered across a restart; this pool's own
    users, whatever host's domain they carry, keep the default factor."""
    path = str(tmp_path / "accountant.db")
    accountant = Accountant(AccountantDatabase(path), clock)
    assert accountant.factor("alice@submit-a") == 1000.0
    accountant.note_remote_users(["alice@Submit-A", "group_x.carol@submit-a"])
    assert accountant.factor("alice@submit-a") == 1e7
    assert accountant.factor("bob@submit-a") == 1e7
    assert accountant.factor("dave@submit-b") == 1000.0
    accountant.update_priorities({"alice@submit-a": 2})
    [record] = [r for r in accountant.priorities() if r.name == "alice@submit-a"]
    assert (record.factor, record.effective_priority) == (1e7, 0.5 * 1e7)
    accountant.database.close()
    again = Accountant(AccountantDatabase(path), clock)
    assert again.factor("alice@submit-a") == 1e7 and again.factor("dave@submit-b") == 1000.0


def test_local_domain_set_makes_every_other_domain_remote(tmp_path, clock):
    """With ACCOUNTANT_LOCAL_DOMAIN, HTCondor's rule: any other domain is remote, flocked or not."""
    settings = AccountantSettings(local_domain="Pool-B", remote_factor=50.0)
    accountant = Accountant(AccountantDatabase(str(tmp_path / "a.db")), clock, settings)
    assert accountant.factor("alice@pool-b") == 1000.0
    assert accountant.factor("alice@elsewhere") == 50.0
    assert accountant.factor("group_physics") == 1000.0


def test_explicit_factor_and_group_factor_win_over_remote(tmp_path, clock):
    """As in HTCondor: a factor set with -setfactor, then a group's factor, come before the remote one."""
    settings = AccountantSettings(group_names=("group_physics",), group_factors={"group_physics": 20.0})
    accountant = Accountant(AccountantDatabase(str(tmp_path / "a.db")), clock, settings)
    accountant.note_remote_users(["alice@submit-a"])
    assert accountant.factor("group_physics.alice@submit-a") == 20.0
    accountant.set_factor("alice@submit-a", 3.0)
    assert accountant.factor("alice@submit-a") == 3.0


def test_remote_users_are_charged_to_their_groups_like_anyone(tmp_path, clock):
    """A flocked group member's usage counts toward its group (so its quota) as a home user's does."""
    settings = AccountantSettings(group_names=("group_physics",))
    accountant = Accountant(AccountantDatabase(str(tmp_path / "a.db")), clock, settings)
    accountant.note_remote_users(["group_physics.alice@submit-a"])
    accountant.update_priorities({"group_physics.alice@submit-a": 2, "group_physics.bob@home": 1})
    assert accountant.resources_in_use("group_physics") == 3
    assert accountant.resources_in_use("group_physics.alice@submit-a") == 2
