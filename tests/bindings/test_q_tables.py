"""Tests of bindings/cli/q_tables.py: the -run table names the pool of a flocked job."""

import classad
from bindings.cli.q_tables import TABLE_ATTRIBUTES, run_table


def running(**extra):
    return classad.ClassAd({"ClusterId": 3, "ProcId": 0, "Owner": "alice", "QDate": 0, "JobStatus": 2,
                            "RemoteWallClockTime": 0, "RemoteHost": "slot1@exec-b", **extra})


def test_a_flocked_job_shows_its_pool_beside_the_host():
    """roost q -run: slot1@exec-b (poolB) for a job running in pool B."""
    [_, line] = run_table([running(RemotePool="poolB")], now=60)
    assert line.endswith("slot1@exec-b (poolB)")


def test_a_job_at_home_shows_the_host_alone():
    """A job without RemotePool shows its RemoteHost as before."""
    [_, line] = run_table([running()], now=60)
    assert line.endswith(" slot1@exec-b")


def test_the_query_asks_for_remote_pool():
    """The CLI projects its query to RemotePool too, so the table can show it."""
    assert "RemotePool" in TABLE_ATTRIBUTES
