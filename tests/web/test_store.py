"""The history store stays within its bounds: a week, and a fixed number of samples."""

from __future__ import annotations

import pytest

from web.store import MAX_GROUPS, HistoryStore, JobSample, rows_for_age


def test_samples_older_than_the_age_bound_are_dropped():
    store = HistoryStore(":memory:", max_rows=1000, max_age=100)
    for t in range(0, 300, 10):
        store.record(JobSample(float(t), 1, 2, 3), {"group_a": (1.0, 2.0)})
    assert [s.time for s in store.jobs_since(0)] == [float(t) for t in range(190, 300, 10)]
    assert min(s.time for s in store.groups_since(0)) == 190.0


def test_the_row_bound_holds_whatever_the_clock_says():
    store = HistoryStore(":memory:", max_rows=5)
    for t in range(50):
        store.record(JobSample(float(t), t, 0, 0))
    assert store.count() == 5 and [s.running for s in store.jobs_since(0)] == [45, 46, 47, 48, 49]


def test_a_sample_keeps_the_largest_groups_only_and_cuts_long_names():
    store = HistoryStore(":memory:", max_rows=10)
    groups = {f"g{i}" * (1 if i else 500): (float(i), 1.0) for i in range(MAX_GROUPS + 20)}
    store.record(JobSample(1.0, 0, 0, 0), groups)
    kept = store.groups_since(0)
    assert len(kept) == MAX_GROUPS and all(len(s.group) <= 200 for s in kept)
    assert min(s.in_use for s in kept) == 20.0


def test_bounds_are_checked():
    assert rows_for_age(60) == 7 * 24 * 60 + 1
    with pytest.raises(ValueError, match="at least one sample"):
        HistoryStore(":memory:", max_rows=0)
