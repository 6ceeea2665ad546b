"""The pages' data and HTML from fixed ads: the ids the browser tests rely on, the
counts, and every hostile value from an ad shown as text."""

from __future__ import annotations

import re

from daemoncore.wire.adcodec import ad_to_json
from tests.support import gpu_slot_ads
from web import pages
from web.charts import line_chart
from web.render import render_page

HOSTILE = '"><img src=x onerror=alert(1)><script>alert(2)</script>'


def slot(name, machine, state, activity="Idle", cpus=1, memory=1024, **more):
    return {"Name": name, "Machine": machine, "State": state, "Activity": activity, "Cpus": cpus,
            "Memory": memory, **more}


def render(name, data, **extra):
    return render_page(name, here=f"/{name}", collector="127.0.0.1:9618", data=data, refresh=f"/{name}?fragment=1",
                       **extra)


def test_pool_page_counts_slots_by_state_and_host():
    slots = [slot("slot1@a", "a", "Claimed", "Busy"), slot("slot2@a", "a", "Claimed", "Busy"),
             slot("slot3@a", "a", "Unclaimed"), slot("slot1@b", "b", "Owner", cpus=4)]
    data = pages.pool_page(slots)
    assert {row["state"]: row["count"] for row in data["slots_by_state"]} == {"Claimed": 2, "Unclaimed": 1, "Owner": 1}
    host_a = next(host for host in data["hosts"] if host["host"] == "a")
    assert (host_a["cpus_used"], host_a["cpus_free"]) == (2, 1)
    html = render("pool", data, chart=line_chart([], 1000.0, 100.0))
    assert re.search(r'<tr data-state="Claimed"><td class="state">Claimed</td><td class="count">2</td>', html)
    assert 'id="hosts"' in html and 'id="jobs-chart"' in html and 'data-refresh="/pool?fragment=1"' in html


def test_a_fragment_is_mains_content_only():
    html = render_page("pool", here="/pool", collector="c", fragment=True, data=pages.pool_page([]),
                       chart=line_chart([], 1000.0, 100.0))
    assert "<html" not in html and "<main" not in html and 'id="slots-by-state"' in html


def test_gpu_page_splits_a_card_into_its_jobs_shares():
    data = pages.gpus_page([ad_to_json(ad) for ad in gpu_slot_ads.pool()])
    html = render("gpus", data)
    shared = html[html.index('data-card-id="GPU-aaaa0001"'):html.index('data-card-id="GPU-aaaa0002"')]
    assert 'data-memory-total="40960"' in shared
    assert re.findall(r'data-job-id="([^"]+)" data-memory="(\d+)" data-cores="(\d+)"', shared) == [
        ("12.0", "10240", "30"), ("12.1", "10240", "30")]
    assert "NVIDIA A100-SXM4-40GB" in shared and "node1" in shared


def test_queue_page_counts_per_user_and_batch_and_escapes_a_batch_name():
    jobs = [{"ClusterId": 1, "ProcId": 0, "Owner": "alice", "JobStatus": 1, "JobBatchName": HOSTILE},
            {"ClusterId": 1, "ProcId": 1, "Owner": "alice", "JobStatus": 2, "JobBatchName": HOSTILE},
            {"ClusterId": 2, "ProcId": 0, "Owner": "bob", "JobStatus": 5},
            {"ClusterId": 3, "ProcId": 0, "Owner": "bob", "JobStatus": 4}]
    data = pages.queue_page(jobs)
    assert data["users"] == [{"owner": "alice", "idle": 1, "running": 1, "held": 0},
                             {"owner": "bob", "idle": 0, "running": 0, "held": 1}]
    html = render("queue", data, jobs=[])
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html and 'id="queue"' in html


def test_job_page_shows_the_hold_reason_timeline_and_ad_as_text():
    ad = {"ClusterId": 7, "ProcId": 0, "Owner": "alice", "JobStatus": 5, "HoldReason": HOSTILE,
          "Arguments": HOSTILE, "QDate": 100, "EnteredCurrentStatus": 200, "JobCurrentStartDate": 150}
    data = pages.job_page(ad, None)
    assert [event["attribute"] for event in data["events"]] == ["QDate", "JobCurrentStartDate",
                                                                "EnteredCurrentStatus"]
    html = render("job", data, status_word="Held")
    assert '<p id="hold-reason">&#34;&gt;&lt;img' in html
    assert 'id="events"' in html and 'id="job-ad"' in html and 'id="analysis"' not in html
    assert "<script>" not in html and "<img" not in html


def test_an_idle_jobs_analysis_is_the_better_analyze_text():
    job = {"ClusterId": 2, "ProcId": 0, "Owner": "alice", "JobStatus": 1, "RequestMemory": 99999999,
           "Requirements": "/Expr(TARGET.Memory >= RequestMemory)/"}
    text = pages.better_analyze(job, [slot("slot1@a", "a", "Unclaimed", Requirements=True)], {})
    assert "no slot satisfies TARGET.Memory >= RequestMemory" in text
    html = render("job", pages.job_page(job, text), status_word="Idle")
    assert '<pre id="analysis">' in html and "TARGET.Memory &gt;= RequestMemory" in html


def test_fairshare_and_flocking_tables():
    data = pages.fairshare_page([{"Name": "alice@pool", "EffectivePriority": 0.5, "PriorityFactor": 1.0,
                                  "ResourcesUsed": 2, "AccumulatedUsage": 10.0},
                                 {"Name": "group_a", "IsAccountingGroup": True}],
                                {"groups": [{"name": "group_a", "quota": 2.0, "limit": None, "surplus_weight": 2.0,
                                             "in_use": 1.0, "config_quota": 2.0, "accept_surplus": False}]})
    assert [user["name"] for user in data["users"]] == ["alice@pool"]
    html = render("fairshare", data, chart=line_chart([("group_a in use", "in-use", [(50.0, 1.0)])], 100.0, 100.0))
    assert 'data-user="alice@pool"' in html and 'data-group="group_a"' in html and 'id="group-share-chart"' in html
    flocking = pages.flocking_page([{"Name": "schedd@here", "EffectiveFlockList": "other:9618"}],
                                   [{"ScheddName": "schedd@there", "RunningJobs": 3, "IdleJobs": 1},
                                    {"ScheddName": "schedd@here", "RunningJobs": 9}],
                                   [{"RemotePool": "other:9618", "JobStatus": 2}])
    assert flocking["flock_to"] == [{"pool": "other:9618", "running": 1, "schedds": 1}]
    assert flocking["flock_from"] == [{"schedd": "schedd@there", "running": 3, "idle": 1}]
    html = render("flocking", flocking)
    assert 'id="flock-to"' in html and 'id="flock-from"' in html


def test_a_chart_holds_only_numbers_in_its_view_box():
    chart = line_chart([("running", "running", [(0.0, 0.0), (50.0, 4.0), (100.0, 2.0)])], 100.0, 100.0)
    assert chart.series[0].points == "0,200 300,0 600,100" and chart.top == 4.0
    assert line_chart([("x", "x", [(float(t), 1.0) for t in range(10_000)])], 10_000.0, 10_000.0).series[0] \
        .points.count(" ") <= 601
