"""Gangs at submit and in the schedd's requests: `universe = parallel` with
`machine_count = N` is queued as N procs (one per node, $(Node) their number), a vanilla
`gang_size = N` cluster is one gang, every piece carries GangId and GangSize, and the
schedd asks the negotiator for a gang as one request of N, only while all N are idle."""

from __future__ import annotations

import socket

import pytest

from classad import ClassAd
from daemoncore.wire.adcodec import ad_from_json
from schedd.autocluster import build_autoclusters, resource_requests, significant_attributes
from tests.negotiator.pool_ads import static_slot
from tests.schedd.test_service import call, schedd, submit  # noqa: F401 (fixtures)

PARALLEL = ("universe = parallel\nexecutable = /bin/sleep\narguments = 30 $(Node)\n"
            "output = out.$(Node)\nmachine_count = 3\nqueue\n")


def _jobs(call):
    return sorted((ad_from_json(line, "$") for line in call("/v1/jobs/query", {}).lines()),
                  key=lambda ad: ad["ProcId"])


def test_parallel_machine_count_3_queues_three_node_procs(call, tmp_path):
    """One queue statement of machine_count = 3 makes procs 0, 1, 2 with $(Node) = proc number."""
    response = submit(call, tmp_path, PARALLEL)
    assert response.status == 200, response.json()
    assert response.json()["num_procs"] == 3
    jobs = _jobs(call)
    gang = f"{socket.gethostname()}#1"
    assert [(j["ProcId"], j["Args"], j["Out"]) for j in jobs] == [
        (0, "30 0", "out.0"), (1, "30 1", "out.1"), (2, "30 2", "out.2")]
    assert {(j["JobUniverse"], j["MinHosts"], j["MaxHosts"], j["GangSize"], j["GangId"]) for j in jobs} == {
        (11, 3, 3, 3, gang)}


def test_vanilla_gang_size_makes_the_cluster_one_gang(call, tmp_path):
    """gang_size = 2 with queue 2: both procs carry GangId and GangSize = 2."""
    response = submit(call, tmp_path, "executable = /bin/true\ngang_size = 2\nqueue 2\n")
    assert response.status == 200, response.json()
    assert {(j["GangSize"], j["GangId"]) for j in _jobs(call)} == {(2, f"{socket.gethostname()}#1")}


@pytest.mark.parametrize("text, needle", [
    ("executable = /bin/true\ngang_size = 3\nqueue 2\n", "gang_size = 3 but the description queues 2 jobs"),
    ("executable = /bin/true\ngang_size = many\nqueue\n", "gang_size must be a whole number"),
    ("executable = /bin/true\ngang_size = 0\nqueue\n", "between 1 and 4096"),
    ("universe = parallel\nexecutable = /bin/true\ngang_size = 2\nqueue\n", "machine_count"),
    ("universe = parallel\nexecutable = /bin/true\nmachine_count = 5000\nqueue\n", "between 1 and 4096"),
    ("universe = parallel\nexecutable = /bin/true\nmachine_count = 4000\nqueue 2\n", "more than the 4096"),
])
def test_bad_gang_commands_are_refused_and_nothing_is_queued(call, tmp_path, text, needle):
    """A gang the schedd cannot run is a 400 naming the command; the queue stays empty."""
    response = submit(call, tmp_path, text)
    assert response.status == 400, response.json()
    assert needle in response.json()["message"]
    assert call("/v1/jobs/query", {}).lines() == []


def _gang_job(proc, gang="s#4", size=3, cpus=1):
    return (f"4.{proc}", ClassAd(f'[ Requirements = TARGET.Cpus >= RequestCpus; RequestCpus = {cpus}; '
                                 f'GangId = "{gang}"; GangSize = {size}; Out = "out.{proc}" ]'))


def test_a_gang_is_one_request_for_all_its_procs():
    """Three idle pieces are one request of count 3 whose ad carries GangId and GangSize."""
    significant = significant_attributes([static_slot("s@h")], extra=["Out"])
    clusters = build_autoclusters([_gang_job(p) for p in range(3)], significant)
    [request] = resource_requests(clusters, "alice@d", "addr")
    assert (request.count, request.job_ids) == (3, ("4.0", "4.1", "4.2"))
    assert (request.ad["GangId"], request.ad["GangSize"]) == ("s#4", 3)


def test_a_gang_with_a_piece_not_idle_asks_for_nothing():
    """Two of three pieces idle (one runs or is held): no request, never a partial gang."""
    clusters = build_autoclusters([_gang_job(0), _gang_job(2)], significant_attributes([]))
    assert clusters == []


def test_two_gangs_and_plain_jobs_stay_apart():
    """Gangs are grouped by GangId; plain jobs keep their own autoclusters."""
    plain = ("5.0", ClassAd("[ Requirements = true; RequestCpus = 1 ]"))
    jobs = [_gang_job(0, "s#4", 2), plain, _gang_job(1, "s#4", 2), _gang_job(0, "s#6", 1)]
    clusters = build_autoclusters(jobs, significant_attributes([]))
    assert sorted(c.job_ids for c in clusters) == [("4.0",), ("4.0", "4.1"), ("5.0",)]
