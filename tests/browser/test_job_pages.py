"""A job's page and the queue page in a real browser: a held job shows its hold reason,
an idle job no slot can hold shows the -better-analyze text naming the failing clause,
and a batch name holding markup shows as text and runs no script."""

from __future__ import annotations

import pytest

from tests.browser.conftest import save_screenshot
from tests.browser.pool_site import remove, submit
from tests.integration.conftest import roost

pytestmark = pytest.mark.integration

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed: pip install -e '.[test]'").expect

#: A job no slot of the pool can hold.
TOO_BIG = "executable = /bin/true\nrequest_memory = 900000G\n"

#: Batch names that would run a script if a page put them in its markup unescaped.
HOSTILE_NAMES = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>')


def test_a_held_jobs_page_shows_its_hold_reason(gpu_pool, page):
    """roost hold -reason '...' puts the reason on the job's page, in #hold-reason."""
    cluster = submit(gpu_pool, "held", TOO_BIG + "queue\n")
    try:
        roost(gpu_pool["env"], "hold", f"{cluster}.0", "-reason", "the input tape is not mounted")
        page.goto(f"{gpu_pool['url']}/job/{cluster}.0")
        expect(page.locator("#hold-reason")).to_contain_text("the input tape is not mounted")
        expect(page.locator("#job-ad")).to_contain_text("HoldReason")
        save_screenshot(page, "job-held")
    finally:
        remove(gpu_pool, cluster)


def test_an_idle_jobs_page_names_the_clause_no_slot_satisfies(gpu_pool, page):
    """A job asking 900000G of memory waits; its page's analysis names TARGET.Memory >= RequestMemory."""
    cluster = submit(gpu_pool, "huge", TOO_BIG + "queue\n")
    try:
        page.goto(f"{gpu_pool['url']}/job/{cluster}.0")
        expect(page.locator("#analysis")).to_contain_text("TARGET.Memory >= RequestMemory", timeout=30_000)
        assert page.locator("#hold-reason").count() == 0
        save_screenshot(page, "job-idle")
    finally:
        remove(gpu_pool, cluster)


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=["script-element", "img-onerror"])
def test_markup_in_a_batch_name_shows_as_text_and_runs_nothing(gpu_pool, page, name):
    """The queue page and the job's page show the batch name as the characters it is made
    of; no dialog opens, no element it names appears, and no console or script error
    (a blocked inline script or a missing image would log one) is seen."""
    cluster = submit(gpu_pool, f"hostile-{HOSTILE_NAMES.index(name)}", f"batch_name = {name}\n" + TOO_BIG + "queue\n")
    try:
        page.goto(f"{gpu_pool['url']}/queue")
        expect(page.locator("#queue")).to_contain_text(name)
        page.goto(f"{gpu_pool['url']}/job/{cluster}.0")
        expect(page.locator("#job-ad")).to_contain_text(name.replace('"', '\\"'))
        page.wait_for_timeout(6_000)  # one refresh of the page's fragment, which must be as harmless
        assert page.locator('img[src="x"]').count() == 0
        assert page.evaluate("[...document.scripts].filter(s => s.textContent.includes('alert')).length") == 0
        assert page.watch.dialogs == []
        assert page.watch.console_errors == [] and page.watch.script_errors == [] and page.watch.failed_responses == []
        save_screenshot(page, f"job-markup-{HOSTILE_NAMES.index(name)}")
    finally:
        remove(gpu_pool, cluster)
