"""Tests for negotiator.settings: the preemption and group knobs read from config."""

import pytest

from classad import ClassAd
from daemoncore.config import Config, ConfigError
from negotiator.preemption import DEFAULT_PREEMPTION_RANK
from negotiator.settings import NegotiatorSettings


def test_preemption_defaults_are_htcondors():
    """Without knobs: consider preemption, PREEMPTION_REQUIREMENTS false, HTCondor's PREEMPTION_RANK, reclaim on."""
    p = NegotiatorSettings.from_config(Config.from_text("")).cycle.preemption
    assert p.consider and p.reclaim and not p.allow_pslot and p.min_runtime == 0
    assert p.requirements.evaluate(ClassAd(), ClassAd()) is False
    assert str(p.rank) == str(type(p.rank)(DEFAULT_PREEMPTION_RANK))


def test_preemption_knobs_are_read():
    """Every preemption knob, PREEMPTION_MIN_RUNTIME_<group> and GROUP_LIMIT_<group> among them, is read."""
    config = Config.from_text(
        "GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 2\nGROUP_LIMIT_group_a = 3\n"
        "NEGOTIATOR_CONSIDER_PREEMPTION = false\nPREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio\n"
        "PREEMPTION_RANK = 0 - TotalJobRuntime\nPREEMPTION_MIN_RUNTIME = 10m\nPREEMPTION_MIN_RUNTIME_group_a = 3600\n"
        "ALLOW_PSLOT_PREEMPTION = true\nNEGOTIATOR_RECLAIM = false\n")
    cycle = NegotiatorSettings.from_config(config).cycle
    p = cycle.preemption
    assert not p.consider and not p.reclaim and p.allow_pslot
    assert p.min_runtime == 600 and p.min_runtime_for("group_a") == 3600 and p.min_runtime_for("x") == 600
    assert p.requirements.evaluate(ClassAd("[RemoteUserPrio = 5]"), ClassAd("[SubmitterUserPrio = 1]")) is True
    assert cycle.groups.limit("group_a") == 3


@pytest.mark.parametrize("line, knob", [("PREEMPTION_REQUIREMENTS = (((", "PREEMPTION_REQUIREMENTS"),
                                        ("PREEMPTION_MIN_RUNTIME = -5", "PREEMPTION_MIN_RUNTIME")])
def test_bad_preemption_knobs_name_themselves(line, knob):
    """A preemption knob that does not parse or is negative stops the negotiator naming the knob."""
    with pytest.raises(ConfigError, match=knob):
        NegotiatorSettings.from_config(Config.from_text(line + "\n"))
