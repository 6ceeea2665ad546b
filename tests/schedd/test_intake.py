"""A submit description expanded for the queue: procs carry only their own differences."""

from __future__ import annotations

from schedd.intake import expand_description


def test_procs_carry_no_schedd_set_attributes():
    """`queue 3` then a changed statement: no proc ad holds ProcId or ClusterId, only real differences."""
    text = "executable = /bin/sleep\narguments = 1\nqueue 3\narguments = 2\nqueue 2\n"
    cluster = expand_description(text, cluster_id=7, owner="alice", iwd="/tmp", now=1796212800, environ={})
    assert cluster.cluster_ad["ClusterId"] == 7
    assert [dict(proc) for proc in cluster.proc_ads] == [{}, {}, {}, {"Args": "2"}, {"Args": "2"}]
