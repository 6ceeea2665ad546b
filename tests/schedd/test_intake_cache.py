"""Expansions kept between submits of one description: reused only once shown steady,
never when they depend on the cluster id, the date or a random draw, never across
owners, and errors never kept."""

from __future__ import annotations

import pytest

from schedd.intake import expand_description
from schedd.intake_cache import MAX_KEPT_CHARS, MAX_KEPT_PROCS, ExpansionCache, description_key
from tests.schedd.test_service import call, schedd, submit  # noqa: F401 (fixtures)

PLAIN = "executable = /bin/sleep\narguments = 60\nrequest_memory = 64M\nqueue 1\n"


def _counted(text: str, calls: list):
    def expand(cluster_id: int, now: int):
        calls.append((cluster_id, now))
        return expand_description(text, cluster_id=cluster_id, owner="alice", iwd="/tmp", now=now, environ={})
    return expand


def _key(text: str, owner: str = "alice"):
    return description_key(text, owner, "/tmp", {}, {})


def test_a_steady_description_is_expanded_on_its_first_two_submits_only():
    """First sighting: one expansion; second: the real one and a probe; later: none."""
    cache, calls = ExpansionCache(), []
    results = [cache.expansion(_key(PLAIN), cluster, 1796212800 + cluster, _counted(PLAIN, calls))
               for cluster in range(1, 6)]
    assert len(calls) == 3
    assert calls[:2] == [(1, 1796212801), (2, 1796212802)]
    assert results[2] is results[3] is results[4] is results[1]


@pytest.mark.parametrize("line", ["output = out.$(Cluster)", "output = out.$(YEAR)$(MONTH)$(DAY)",
                                  "output = out.$(SUBMIT_TIME)", "arguments = $RANDOM_INTEGER(1, 1)",
                                  "arguments = $RANDOM_CHOICE(a, a)"])
def test_a_description_depending_on_cluster_date_or_chance_is_always_expanded(line):
    """$(Cluster), the date macros and $RANDOM_* (even with one possible value) are never reused."""
    text = f"executable = /bin/sleep\n{line}\nqueue 1\n"
    cache, calls = ExpansionCache(), []
    for cluster in range(1, 5):
        cache.expansion(_key(text), cluster, 1796212800, _counted(text, calls))
    assert [c for c, _ in calls].count(4) == 1


def test_big_clusters_are_not_kept():
    """A cluster of more than MAX_KEPT_PROCS procs is expanded every time."""
    text = f"executable = /bin/sleep\nqueue {MAX_KEPT_PROCS + 1}\n"
    cache, calls = ExpansionCache(), []
    for cluster in range(1, 4):
        cache.expansion(_key(text), cluster, 1796212800, _counted(text, calls))
    assert len(calls) == 3


def test_long_descriptions_are_not_kept():
    """A description (with its environment) longer than MAX_KEPT_CHARS is expanded every time."""
    text = f"executable = /bin/sleep\narguments = {'x' * MAX_KEPT_CHARS}\nqueue 1\n"
    cache, calls = ExpansionCache(), []
    for cluster in range(1, 4):
        cache.expansion(_key(text), cluster, 1796212800, _counted(text, calls))
    assert len(calls) == 3


def test_the_least_recently_used_description_is_forgotten():
    """With room for one description, a second one makes the first a first sighting again."""
    cache, calls = ExpansionCache(kept=1), []
    other = PLAIN.replace("60", "61")
    for text in (PLAIN, PLAIN, other, PLAIN, PLAIN):
        cache.expansion(_key(text), 1, 1796212800, _counted(text, calls))
    assert len(calls) == 7  # PLAIN 1+2, other 1, PLAIN again 1+2


def test_keys_differ_by_owner_directory_environment_and_sizes():
    """Each input of an expansion is part of the key."""
    keys = {description_key(PLAIN, "alice", "/a", {}, {}), description_key(PLAIN, "bob", "/a", {}, {}),
            description_key(PLAIN, "alice", "/b", {}, {}), description_key(PLAIN, "alice", "/a", {"X": "1"}, {}),
            description_key(PLAIN, "alice", "/a", {}, {"/a/x": 1})}
    assert len(keys) == 5


def test_repeated_submits_through_the_route_store_each_cluster_as_its_own(call, tmp_path):
    """Five submits of one description: five clusters, each job with its own ids, Owner and QDate."""
    for who in ("alice", "bob"):
        for _ in range(5):
            assert submit(call, tmp_path, PLAIN, who).status == 200
    ads = call("/v1/jobs/query", {"projection": ["ClusterId", "ProcId", "Owner", "GlobalJobId", "Args"]}).lines()
    assert [(ad["ClusterId"], ad["Owner"]) for ad in ads] == [(c, "alice") for c in range(1, 6)] + [
        (c, "bob") for c in range(6, 11)]
    assert all(ad["GlobalJobId"].split("#")[1] == f"{ad['ClusterId']}.0" and ad["Args"] == "60" for ad in ads)


def test_a_cluster_macro_through_the_route_names_each_cluster(call, tmp_path):
    """`output = out.$(Cluster)` submitted four times writes each cluster's own file name."""
    text = "executable = /bin/sleep\noutput = out.$(Cluster)\nqueue 1\n"
    for _ in range(4):
        assert submit(call, tmp_path, text).status == 200
    ads = call("/v1/jobs/query", {"projection": ["ClusterId", "Out"]}).lines()
    assert [ad["Out"] for ad in ads] == [f"out.{ad['ClusterId']}" for ad in ads]


def test_a_wrong_description_is_refused_alike_every_time(call, tmp_path):
    """Errors are not kept: the same 400 and message on each try."""
    text = "executable = /bin/sleep\nhold = maybe\nqueue 1\n"
    answers = [submit(call, tmp_path, text) for _ in range(3)]
    assert [a.status for a in answers] == [400] * 3
    assert len({a.json()["message"] for a in answers}) == 1
