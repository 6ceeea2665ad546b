"""Tests for negotiator.concurrency: parsing limits, their maxima, pool-wide use, and
the cycle never matching past a limit."""

import pytest
from twisted.internet.task import Clock

from daemoncore.config import Config, ConfigError
from daemoncore.wire.resource_request import ResourceRequest
from negotiator.accountant import Accountant
from negotiator.concurrency import (
    DEFAULT_MAXIMUM,
    ConcurrencySettings,
    ad_attribute_name,
    limits_ad,
    usage_from_slots,
)
from negotiator.cycle import CycleSettings, Submitter, negotiate
from negotiator.db import AccountantDatabase
from negotiator.settings import NegotiatorSettings
from tests.negotiator.pool_ads import job, static_slot


@pytest.fixture
def accountant(tmp_path):
    return Accountant(AccountantDatabase(str(tmp_path / "acct.db")), Clock())


def submitter(name, count, extra, rid=None):
    ad = job(owner=name.split("@")[0], extra=extra)
    ids = tuple(f"1.{i}" for i in range(count))
    rid = rid or f"{name}#1"
    return Submitter(name, f"schedd-of-{name}", (ResourceRequest(rid, name, "s", count, ad, ids),))


def settings_of(text):
    return NegotiatorSettings.from_config(Config.from_text(text)).cycle


def claimed_slot(name, limits):
    ad = static_slot(name, extra=f'ConcurrencyLimits = "{limits}"')
    ad["State"] = "Claimed"
    ad["Activity"] = "Busy"
    return ad


def test_maxima_come_from_name_limit_then_set_default_then_default():
    """`A.B_LIMIT` beats `CONCURRENCY_LIMIT_DEFAULT_A`, which beats `CONCURRENCY_LIMIT_DEFAULT`."""
    settings = settings_of("LICENSE_LIMIT = 3\nSW.MATLAB_LIMIT = 2\nCONCURRENCY_LIMIT_DEFAULT_SW = 5\n"
                           "CONCURRENCY_LIMIT_DEFAULT = 7\nSOME_OTHER_LIMIT = words\n").concurrency
    assert settings.maximum("license") == 3
    assert settings.maximum("sw.matlab") == 2
    assert settings.maximum("sw.other") == 5
    assert settings.maximum("other") == 7
    assert "some_other" not in settings.limits
    assert ConcurrencySettings().maximum("anything") == DEFAULT_MAXIMUM


def test_a_default_that_is_not_a_number_stops_the_negotiator_naming_it():
    """CONCURRENCY_LIMIT_DEFAULT = lots is a ConfigError naming the knob."""
    with pytest.raises(ConfigError, match="CONCURRENCY_LIMIT_DEFAULT_SW"):
        settings_of("CONCURRENCY_LIMIT_DEFAULT_SW = lots\n")


def test_use_is_counted_from_claimed_slots_only():
    """Claimed slots' ConcurrencyLimits add up by weight; an unclaimed slot's are not counted."""
    slots = [claimed_slot("s1@h", "license:2"), claimed_slot("s2@h", "license,db"),
             static_slot("s3@h", extra='ConcurrencyLimits = "license"')]
    assert usage_from_slots(slots) == {"license": 3.0, "db": 1.0}


def test_a_cycle_never_matches_past_a_limit(accountant):
    """LICENSE_LIMIT = 3 and jobs taking 2 each: four free slots, one match, and the reason names the limit."""
    settings = settings_of("LICENSE_LIMIT = 3\n")
    slots = [static_slot(f"slot{i}@h") for i in range(4)]
    result = negotiate(slots, [submitter("a@x", 4, 'ConcurrencyLimits = "license:2"')], accountant, settings)
    assert len(result.matches) == 1
    assert result.concurrency_in_use == {"license": 2.0}
    reason = result.unmatched_reasons[("a@x", "a@x#1")]
    assert reason == "concurrency limit license is used up: 2 of 3 in use and the job needs 2"


def test_running_jobs_count_against_the_limit(accountant):
    """A claimed slot already holding license:2 leaves no room for another license:2 job."""
    settings = settings_of("LICENSE_LIMIT = 3\n")
    slots = [claimed_slot("busy@h", "license:2"), static_slot("free@h")]
    result = negotiate(slots, [submitter("a@x", 1, 'ConcurrencyLimits = "license:2"')], accountant, settings)
    assert result.matches == ()
    assert "2 of 3 in use" in result.unmatched_reasons[("a@x", "a@x#1")]


def test_limits_are_shared_between_submitters(accountant):
    """Two users' jobs with the same limit together stay within it."""
    settings = settings_of("DB_LIMIT = 3\n")
    slots = [static_slot(f"slot{i}@h") for i in range(6)]
    users = [submitter("a@x", 5, 'ConcurrencyLimits = "db"'), submitter("b@x", 5, 'ConcurrencyLimits = "db"')]
    result = negotiate(slots, users, accountant, settings)
    assert len(result.matches) == 3


def test_jobs_without_limits_are_unaffected(accountant):
    """A job with no ConcurrencyLimits matches as before even when a limit is used up."""
    settings = settings_of("LICENSE_LIMIT = 0\n")
    slots = [static_slot(f"slot{i}@h") for i in range(3)]
    users = [submitter("a@x", 3, 'ConcurrencyLimits = "license"'), submitter("b@x", 3, "")]
    result = negotiate(slots, users, accountant, settings)
    assert {m.submitter for m in result.matches} == {"b@x"}
    assert len(result.matches) == 3


def test_a_limits_expression_is_evaluated_against_each_slot(accountant):
    """ConcurrencyLimits = strcat("lic_", TARGET.Site) takes the limit of the slot's site."""
    settings = settings_of("LIC_A_LIMIT = 1\nLIC_B_LIMIT = 2\n")
    slots = [static_slot(f"slot{i}@{site}", extra=f'Site = "{site}"') for i in range(3) for site in "ab"]
    result = negotiate(slots, [submitter("a@x", 6, 'ConcurrencyLimits = strcat("lic_", TARGET.Site)')],
                       accountant, settings)
    sites = sorted(m.slot_name.split("@")[1] for m in result.matches)
    assert sites == ["a", "b", "b"]
    assert result.concurrency_in_use == {"lic_a": 1.0, "lic_b": 2.0}
    assert "lic_" in result.unmatched_reasons[("a@x", "a@x#1")]


def test_a_malformed_limits_string_matches_nothing_and_says_why(accountant):
    """A job whose ConcurrencyLimits does not parse gets no match and the reason quotes it."""
    slots = [static_slot("slot1@h")]
    result = negotiate(slots, [submitter("a@x", 1, 'ConcurrencyLimits = "a.b.c"')], accountant, CycleSettings())
    assert result.matches == ()
    assert "'a.b.c'" in result.unmatched_reasons[("a@x", "a@x#1")]


def test_negotiator_ad_attribute_names_replace_dots():
    """The negotiator ad's attribute for sw.matlab is ConcurrencyLimit_sw_matlab."""
    assert ad_attribute_name("sw.matlab") == "ConcurrencyLimit_sw_matlab"


def test_the_negotiator_ad_shows_every_limit_in_use_or_configured():
    """ConcurrencyLimit_<name> is the use, 0 for a configured limit nobody uses."""
    settings = settings_of("LICENSE_LIMIT = 3\n").concurrency
    assert limits_ad(settings, {"sw.matlab": 2.0}) == {"ConcurrencyLimit_license": 0.0,
                                                       "ConcurrencyLimit_sw_matlab": 2.0}
