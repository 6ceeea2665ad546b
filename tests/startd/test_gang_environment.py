"""Tests for startd.gang_environment: a gang's piece learns its node number, the
gang's size and every piece's place, in its environment and in its contact file."""

import os

import pytest

import classad
from startd.errors import StarterError
from startd.gang_environment import gang_environment, gang_places
from transfer.plan import CONTACT_NAME, STARTER_NAMES


def piece(proc, hosts="exec1:slot1,exec2:slot1_1,exec3:slot2", size=3):
    return classad.ClassAd({"ClusterId": 4, "ProcId": proc, "GangSize": size, "GangHosts": hosts})


def test_a_piece_gets_procno_nprocs_hosts_and_a_contact_file(tmp_path):
    env = gang_environment(piece(1), str(tmp_path))
    assert env == {"_CONDOR_PROCNO": "1", "_CONDOR_NPROCS": "3",
                   "ROOST_GANG_HOSTS": "exec1:slot1,exec2:slot1_1,exec3:slot2",
                   "_CONDOR_CONTACT_FILE": str(tmp_path / CONTACT_NAME)}
    assert (tmp_path / CONTACT_NAME).read_text() == "0 exec1 slot1\n1 exec2 slot1_1\n2 exec3 slot2\n"


def test_a_plain_job_gets_nothing_and_no_file(tmp_path):
    assert gang_environment(classad.ClassAd({"ProcId": 0}), str(tmp_path)) == {}
    assert os.listdir(tmp_path) == []


def test_malformed_places_are_no_gang():
    """Fewer places than GangSize, or an entry without host or slot: nothing is told."""
    assert gang_places(piece(0, hosts="exec1:slot1,exec2:slot1")) is None
    assert gang_places(piece(0, hosts="exec1:slot1,:slot2,exec3:slot1")) is None
    assert gang_places(piece(0, hosts="exec1:slot1,exec2,exec3:slot1")) is None


def test_the_contact_file_never_goes_back_as_output():
    assert CONTACT_NAME in STARTER_NAMES


def test_contact_file_is_not_written_through_a_symlink(tmp_path):
    """An input named like the contact file that is a symlink is refused, not followed."""
    target = tmp_path / "elsewhere"
    (tmp_path / CONTACT_NAME).symlink_to(target)
    with pytest.raises(StarterError, match="contact file"):
        gang_environment(piece(0), str(tmp_path))
    assert not target.exists()
