"""The schedd's query and history streams can mark each job that did not match, so a
stream on the reactor pauses between any two evaluations of a slow constraint."""

from tests.schedd.conftest import cluster_ad, proc_ads
from tests.schedd.test_history import finished  # noqa: F401 (fixture)


def test_queue_query_with_misses_yields_none_for_each_job_that_does_not_match(queue):
    """Four jobs, one matching: three ``None`` and the match, in id order."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(4))
    found = list(queue.query("ProcId == 2", ["ProcId"], misses=True))
    assert [None if ad is None else ad["ProcId"] for ad in found] == [None, None, 2, None]


def test_queue_query_without_misses_yields_only_matches(queue):
    """The default stream (used inside the schedd) carries matches only."""
    queue.submit_cluster(cluster_ad("alice"), proc_ads(4))
    assert [ad["ProcId"] for ad in queue.query("ProcId >= 2", ["ProcId"])] == [2, 3]


def test_history_query_with_misses_marks_each_miss(finished):  # noqa: F811
    """History streams the same way: bob's two jobs match, alice's three are ``None``."""
    found = list(finished.history.query('Owner == "bob"', ["Owner"], misses=True))
    assert [None if ad is None else ad["Owner"] for ad in found] == ["bob", "bob", None, None, None]
