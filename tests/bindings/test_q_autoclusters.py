"""roost q -autocluster, from condor_q.rst (-autocluster: for each auto cluster its
unique id and the number of jobs in it, the ads with -long) and queue.cpp
processCommandLineArguments ("-batch conflicts with -autocluster")."""

import pytest

import classad
from bindings.cli.options import UsageError
from bindings.cli.q import parse_arguments, render
from bindings.cli.q_autoclusters import autocluster_ads, autocluster_table, column_order


def job(proc, memory, **extra):
    ad = classad.ClassAd({"ClusterId": 7, "ProcId": proc, "Owner": "alice", "RequestCpus": 1,
                          "RequestMemory": memory, "Cmd": f"/bin/job{proc}", "JobStatus": 1, **extra})
    ad["Requirements"] = classad.ExprTree("TARGET.Memory >= RequestMemory")
    return ad


def test_jobs_alike_in_their_significant_attributes_are_one_autocluster():
    """Jobs differing only in attributes matching never reads (Cmd) share an autocluster;
    a different RequestMemory makes another; ids count from 1 in order of first job."""
    ads = autocluster_ads([job(0, 128), job(1, 256), job(2, 128)])
    assert [(ad["AutoClusterId"], ad["JobCount"], ad["RequestMemory"]) for ad in ads] == [(1, 2, 128), (2, 1, 256)]
    assert ads[0]["AutoClusterAttrs"] == "RequestCpus,RequestMemory,Requirements"
    assert str(ads[0]["Requirements"]) == "TARGET.Memory >= RequestMemory" and "Cmd" not in ads[0]


def test_added_significant_attributes_split_autoclusters():
    """ADD_SIGNIFICANT_ATTRIBUTES names more attributes to group by, as the schedd does."""
    jobs = [job(0, 128, Site="a"), job(1, 128, Site="b")]
    assert len(autocluster_ads(jobs)) == 1
    split = autocluster_ads(jobs, extra=["Site"])
    assert [ad["Site"] for ad in split] == ["a", "b"] and "Site" in split[0]["AutoClusterAttrs"].split(",")


def test_the_table_has_id_count_and_one_column_per_attribute():
    """One row per autocluster: ID and COUNT right-aligned in five columns, then the
    attributes (numbers to the right), Requirements last and whole."""
    lines = autocluster_table(autocluster_ads([job(0, 128), job(1, 2048), job(2, 128)]))
    assert lines == [
        "   ID COUNT RequestCpus RequestMemory Requirements",
        "    1     2           1           128 TARGET.Memory >= RequestMemory",
        "    2     1           1          2048 TARGET.Memory >= RequestMemory",
    ]


def test_columns_put_resource_requests_first_and_requirements_last():
    """Columns follow the schedd's resource requests, then other names, Rank and Requirements last."""
    assert column_order(["Requirements", "Site", "RequestMemory", "Rank", "RequestCpus"]) == \
        ["RequestCpus", "RequestMemory", "Site", "Rank", "Requirements"]


def test_render_prints_the_banner_and_the_table_without_job_totals():
    """The autocluster rows are no jobs, so no totals lines follow the table."""
    request = parse_arguments(["-autocluster"])
    text = render(request, autocluster_ads([job(0, 128)]), [], "alice", "-- Schedd: s : <a:1>", 0)
    assert text.splitlines() == ["", "", "-- Schedd: s : <a:1>", "   ID COUNT RequestCpus RequestMemory Requirements",
                                 "    1     1           1           128 TARGET.Memory >= RequestMemory"]


def test_autocluster_with_long_prints_the_autocluster_ads():
    """condor_q.rst: -autocluster is meant to be used with -long, printing the autocluster ads."""
    request = parse_arguments(["-autocluster", "-long"])
    text = render(request, autocluster_ads([job(0, 128)]), [], "alice", "banner", 0)
    ad = classad.parseOne(text, classad.ParserType.Old)
    assert ad["AutoClusterId"] == 1 and ad["JobCount"] == 1 and "banner" not in text


def test_batch_conflicts_with_autocluster():
    """queue.cpp: "-batch conflicts with -autocluster"."""
    with pytest.raises(UsageError, match="-batch conflicts with -autocluster"):
        parse_arguments(["-autocluster", "-batch"])
