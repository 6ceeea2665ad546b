"""The WEB daemon on a real personal pool: `roost pool up` prints its URL, and every page
and its JSON twin answer with the pool's jobs (a held job with markup in its batch name,
an idle job no slot can run); a token the pool refuses gets the login page."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest

from tests.integration.conftest import personal_pool, roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

HOSTILE = '"><img src=x onerror=alert(1)><script>alert(2)</script>'


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with personal_pool(home, {"_ROOST_NUM_CPUS": "1"}) as pool:
        url = "http://" + (pool["dir"] / "log" / ".web_address").read_text().strip().strip("<>") + "/"
        (home / "held.sub").write_text(f"executable = /bin/sleep\narguments = 300\nbatch_name = {HOSTILE}\n"
                                       "request_memory = 99999999\nqueue\n")
        (home / "big.sub").write_text("executable = /bin/sleep\narguments = 1\nrequest_memory = 99999999\nqueue\n")
        env = pool["env"]
        roost(env, "submit", str(home / "held.sub"))
        roost(env, "submit", str(home / "big.sub"))
        roost(env, "hold", "1.0")
        yield {"url": url, **pool}


def get(url, headers=None):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode("utf-8")


def test_pool_up_prints_the_sites_url(tmp_path):
    with personal_pool(tmp_path) as pool:
        done = roost(pool["env"], "pool", "up", "--dir", str(pool["dir"]))  # already running: says so
        assert "already running" in done.stdout
        address = (pool["dir"] / "log" / ".web_address").read_text().strip().strip("<>")
        status, _, body = get(f"http://{address}/pool")
        assert status == 200 and 'id="slots-by-state"' in body


def test_every_page_and_its_json_answer(site):
    for page, marker in (("pool", 'id="slots-by-state"'), ("gpus", "<h1>GPUs</h1>"), ("queue", 'id="queue"'),
                         ("fairshare", 'id="users"'), ("flocking", 'id="flock-to"')):
        status, headers, body = get(site["url"] + page)
        assert status == 200 and marker in body, (page, status, body[:500])
        assert "script-src 'self'" in headers["Content-Security-Policy"] and "<script>" not in body
        status, headers, body = get(site["url"] + page + "?format=json")
        assert status == 200 and isinstance(json.loads(body), dict), page
        status, _, body = get(site["url"] + page, {"Accept": "application/json"})
        assert status == 200 and isinstance(json.loads(body), dict), page


def test_the_queue_and_a_held_jobs_page_show_markup_as_text(site):
    status, _, body = get(site["url"] + "queue")
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body and "<img" not in body
    status, _, body = get(site["url"] + "job/1.0")
    assert status == 200 and '<p id="hold-reason">' in body and 'id="events"' in body and 'id="job-ad"' in body
    assert "<script>alert" not in body


def test_an_idle_unmatchable_jobs_page_names_the_failing_clause(site):
    status, _, body = get(site["url"] + "job/2.0")
    analysis = re.search(r'<pre id="analysis">(.*?)</pre>', body, re.S)
    assert status == 200 and analysis, body[:800]
    assert "TARGET.Memory &gt;= RequestMemory" in analysis.group(1)
    status, _, body = get(site["url"] + "job/2.0?format=json")
    assert "no slot satisfies TARGET.Memory >= RequestMemory" in json.loads(body)["analysis"]


def test_the_pool_page_counts_slots_and_a_missing_job_is_404(site):
    data = wait_for(lambda: json.loads(get(site["url"] + "pool?format=json")[2]) or None, seconds=30)
    assert data["slot_count"] >= 1 and data["hosts"]
    status, _, body = get(site["url"] + "job/999.0")
    assert status == 404 and "999.0" in body


def test_a_token_the_pool_refuses_gets_the_login_page(site):
    status, _, body = get(site["url"] + "pool", {"Authorization": "Bearer not.a.token"})
    assert status == 401 and '<form id="login"' in body and 'id="slots-by-state"' not in body
    with open(site["facts"]["token_file"], encoding="utf-8") as handle:
        token = next(line.strip() for line in handle if line.strip() and not line.startswith("#"))
    status, _, body = get(site["url"] + "pool", {"Authorization": f"Bearer {token}"})
    assert status == 200 and 'id="slots-by-state"' in body
