"""Tests for collector.adtypes."""

import pytest

from collector.adtypes import Command, canonical_ad_type, parse_command


@pytest.mark.parametrize(
    "name, stored",
    [("Startd", "Machine"), ("machine", "Machine"), ("Schedd", "Scheduler"), ("Master", "DaemonMaster"),
     ("Submitter", "Submitter"), ("Any", "Any"), ("MyGizmo", "MyGizmo")],
)
def test_ad_type_spellings(name, stored):
    """AdType spellings map to HTCondor's MyType names; user types stay as written."""
    assert canonical_ad_type(name) == stored


def test_ad_type_must_be_a_name():
    """A type with punctuation is refused."""
    with pytest.raises(ValueError, match="not a name"):
        canonical_ad_type("../etc")


@pytest.mark.parametrize(
    "command, expected",
    [("UPDATE_STARTD_AD", Command("update", "Machine")),
     ("UPDATE_SCHEDD_AD", Command("update", "Scheduler")),
     ("update_submittor_ad", Command("update", "Submitter")),
     ("UPDATE_MASTER_AD_WITH_ACK", Command("update", "DaemonMaster")),
     ("UPDATE_AD_GENERIC", Command("update", None)),
     ("INVALIDATE_STARTD_ADS", Command("invalidate", "Machine")),
     ("INVALIDATE_ADS_GENERIC", Command("invalidate", None))],
)
def test_commands_name_ad_types(command, expected):
    """HTCondor's collector commands map to an action and an ad type."""
    assert parse_command(command) == expected


def test_unknown_command_suggests_real_ones():
    """An unknown command is refused with examples of real ones."""
    with pytest.raises(ValueError, match="UPDATE_STARTD_AD"):
        parse_command("UPDATE_TOASTER_AD")
