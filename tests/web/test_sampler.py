"""What the sampler and the snapshot make of the ads they read: pure parts."""

from __future__ import annotations

from web.sampler import group_sample, job_sample
from web.snapshot import Snapshot, job_links


def test_the_queue_counts_are_summed_from_the_submitter_ads():
    sample = job_sample(5.0, [{"RunningJobs": 2, "IdleJobs": 3, "HeldJobs": 1},
                              {"RunningJobs": 1, "IdleJobs": "lots"}, {}])
    assert (sample.time, sample.running, sample.idle, sample.held) == (5.0, 3, 3, 1)


def test_each_groups_use_and_quota_come_from_the_last_cycle():
    cycle = {"groups": [{"name": "group_a", "in_use": 1.5, "quota": 2}, {"name": "group_b", "in_use": 0},
                        {"in_use": 3}, "not a group"]}
    assert group_sample(cycle) == {"group_a": (1.5, 2.0), "group_b": (0.0, 0.0)}
    assert group_sample({}) == {}


def test_the_queue_links_at_most_the_first_jobs_and_an_empty_snapshot_renders():
    jobs = [{"ClusterId": n, "ProcId": 0, "Owner": "alice", "JobStatus": 1} for n in range(300)]
    links = job_links(jobs, count=200)
    assert len(links) == 200 and links[0] == {"id": "0.0", "owner": "alice", "batch": "", "status": 1}
    empty = Snapshot(0.0)
    assert empty.pool["slot_count"] == 0 and empty.queue["job_count"] == 0 and empty.gpus["cards"] == []
