"""Fixtures for the schedd's data layer: a Twisted clock and a queue file in tmp_path
(shared with other folders through tests/support/schedd_queue.py)."""

from tests.support.schedd_queue import START, clock, cluster_ad, proc_ads, queue  # noqa: F401 (fixtures)
