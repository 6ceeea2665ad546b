"""The per-pool counts `roost q -better-analyze` adds for a schedd that flocks: each
flock pool's slots counted against the job as the home pool's are, and a pool that
could not be asked named with the reason."""

from __future__ import annotations

import classad
from bindings.analyze import PoolCount, analyze_job, count_pool, render_pool_counts
from bindings.cli.analyze import pool_slots

JOB = ('[ClusterId = 3; ProcId = 0; JobStatus = 1; RequestMemory = 2048;'
       ' Requirements = TARGET.Memory >= RequestMemory]')


def slot(memory: int, start: str = "true") -> classad.ClassAd:
    return classad.ClassAd(f"[Memory = {memory}; Start = {start}; Requirements = START]")


def test_a_flock_pool_is_counted_both_ways_like_home():
    job = classad.ClassAd(JOB)
    found = count_pool(job, "B", "198.18.1.2:9618", [slot(4096), slot(1024), slot(4096, start="false"), slot(8192)])
    assert found == PoolCount("B", "198.18.1.2:9618", slots=4, matching=2)


def test_the_report_lists_home_then_each_pool_with_its_count_or_why_not():
    job = classad.ClassAd(JOB)
    home = analyze_job(job, [slot(1024)])
    text = render_pool_counts(home, "198.18.0.2:9618", [
        count_pool(job, "B", "198.18.1.2:9618", [slot(4096), slot(4096)]),
        PoolCount("198.18.2.2:9618", "198.18.2.2:9618", problem="this pool does not trust it")])
    lines = text.splitlines()
    assert lines[0] == "Slots that can run job 3.0, at home and in each pool it may flock to (FLOCK_TO):"
    assert lines[2].split() == ["198.18.0.2:9618", "(home)", "0", "of", "1"]
    assert lines[3].split() == ["B", "(198.18.1.2:9618)", "2", "of", "2"]
    assert lines[4].split()[:4] == ["198.18.2.2:9618", "cannot", "be", "asked:"]
    assert lines[4].endswith("this pool does not trust it")


def test_nothing_is_added_without_flock_pools_or_for_a_job_not_idle():
    job = classad.ClassAd(JOB)
    pools = [count_pool(job, "B", "b:9618", [slot(4096)])]
    assert render_pool_counts(analyze_job(job, [slot(4096)]), "home:9618", []) == ""
    running = classad.ClassAd(JOB)
    running["JobStatus"] = 2
    assert render_pool_counts(analyze_job(running, [slot(4096)]), "home:9618", pools) == ""


def test_an_untrusted_flock_collector_is_not_asked_and_says_why():
    assert pool_slots("198.18.9.2:9618", {}, None) == (
        "198.18.9.2:9618", None, "this pool does not trust it (run roost pool trust on both central managers)")
    assert pool_slots("198.18.9.2:9618", {}, "no daemon token")[2] == "no daemon token"
