"""Fixtures for the schedd: a Twisted clock, an in-memory reactor and a queue file in
tmp_path (shared with other folders through tests/support/schedd_queue.py)."""

from tests.support.schedd_queue import START, clock, cluster_ad, proc_ads, queue, reactor  # noqa: F401 (fixtures)
