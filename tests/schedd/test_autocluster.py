"""Tests for schedd.autocluster: grouping idle jobs by significant attributes."""

from classad import ExprTree
from schedd.autocluster import (
    build_autoclusters,
    resource_requests,
    signature_of,
    significant_attributes,
)
from tests.negotiator.pool_ads import job, static_slot


def test_slot_references_become_significant():
    """Names a slot's START reads from the job (TARGET.x or names it lacks) are significant."""
    slot = static_slot("slot1@a", start='TARGET.Owner != "mallory" && Department == "physics"')
    names = significant_attributes([slot])
    assert {"owner", "department", "requirements", "requestmemory"} <= names
    assert "cpus" not in names  # the slot defines Cpus itself


def test_rank_expressions_add_their_target_references():
    """A PRE_JOB_RANK reading TARGET.JobPrio makes JobPrio significant."""
    names = significant_attributes([], [ExprTree("TARGET.JobPrio * 10 - Memory")])
    assert "jobprio" in names


def test_jobs_differing_only_in_insignificant_attributes_share_a_cluster():
    """ClusterId, ProcId and Cmd do not split jobs that match alike."""
    significant = significant_attributes([static_slot("slot1@a")])
    jobs = [(f"1.{i}", job(extra=f'ProcId = {i}; Cmd = "/bin/run{i}"')) for i in range(5)]
    clusters = build_autoclusters(jobs, significant)
    assert len(clusters) == 1
    assert clusters[0].count == 5 and clusters[0].job_ids == ("1.0", "1.1", "1.2", "1.3", "1.4")


def test_different_requests_or_owners_split_clusters():
    """Jobs asking for other memory, or of another owner the slot looks at, go apart."""
    significant = significant_attributes([static_slot("slot1@a", start='TARGET.Owner != "x"')])
    jobs = [("1.0", job()), ("1.1", job(memory=4096)), ("2.0", job(owner="bob")), ("1.2", job())]
    clusters = build_autoclusters(jobs, significant)
    assert [c.job_ids for c in clusters] == [("1.0", "1.2"), ("1.1",), ("2.0",)]


def test_attributes_the_job_requirements_use_are_followed():
    """An attribute the job's own Requirements reads (through another attribute) is part of the signature."""
    significant = significant_attributes([])
    a = job(requirements="TARGET.Memory >= NeedMemory", extra="NeedMemory = Base * 2; Base = 100")
    b = job(requirements="TARGET.Memory >= NeedMemory", extra="NeedMemory = Base * 2; Base = 200")
    assert signature_of(a, significant) != signature_of(b, significant)
    assert "base" in dict((k, v) for k, *v in signature_of(a, significant))


def test_resource_requests_carry_count_and_ids():
    """Each autocluster becomes one resource request with the submitter and schedd."""
    clusters = build_autoclusters({"1.0": job(), "1.1": job()}, significant_attributes([]))
    (request,) = resource_requests(clusters, "alice@example.org", "127.0.0.1:9618")
    assert request.count == 2 and request.submitter == "alice@example.org"
    assert request.job_ids == ("1.0", "1.1") and request.ad["Owner"] == "alice"
