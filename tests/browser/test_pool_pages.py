"""The pool and GPU pages in a real browser, on a personal pool with a simulated 40 GB
card and real jobs: the slot counts while 4 jobs run and after they end (the page
refreshing itself), and the card split into the shares of the jobs on it."""

from __future__ import annotations

import collections
import time

import pytest

from tests.browser.conftest import save_screenshot
from tests.browser.pool_site import Gate, remove, submit, wait_running
from tests.integration.conftest import roost

pytestmark = pytest.mark.integration

#: What the A100:40G simulated card has, in MiB (RequestGPUMemory's unit).
CARD_MIB = 40 * 1024


def slot_counts(page) -> dict[str, int]:
    """Slots by state as the pool page shows them now ({} while it shows no table), read
    in one step so a refresh swapping the table in between cannot split the reading."""
    return page.evaluate("""() => Object.fromEntries(
        [...document.querySelectorAll('#slots-by-state tr[data-state]')].map(
            row => [row.dataset.state, Number(row.querySelector('td.count').textContent.trim())]))""")


def collector_counts(pool) -> dict[str, int]:
    """Slots by state as roost status reads them from the collector."""
    return dict(collections.Counter(roost(pool["env"], "status", "-af", "State").stdout.split()))


def page_shows(page, wanted, seconds: float = 90):
    """Read the open page (never reloading it) until ``wanted(counts)`` holds; those counts."""
    deadline = time.monotonic() + seconds
    counts = {}
    while time.monotonic() < deadline:
        counts = slot_counts(page)
        if wanted(counts):
            return counts
        page.wait_for_timeout(500)
    raise AssertionError(f"after {seconds} s without a reload the pool page still shows {counts}")


def test_the_pool_page_counts_slots_while_jobs_run_and_again_after_without_a_reload(gpu_pool, page):
    """4 running jobs show as 4 Claimed slots, the page's counts agreeing with the collector's;
    once the jobs end the Claimed count drops on the same page, which never navigated again."""
    gate = Gate()
    cluster = submit(gpu_pool, "four", gate.job(gpu_pool, 4))
    try:
        wait_running(gpu_pool, cluster, 4)
        page.goto(gpu_pool["url"] + "/")
        assert page.url.endswith("/pool"), f"/ went to {page.url}, not /pool"
        counts = page_shows(page, lambda shown: shown.get("Claimed") == 4)
        assert counts == collector_counts(gpu_pool)
        assert page.locator("#hosts").count() == 1 and page.locator("svg#jobs-chart").count() == 1
        save_screenshot(page, "pool")
        page.evaluate("window.roostSamePage = true")
        visits = len(page.watch.navigations)
        gate.open()
        page_shows(page, lambda shown: shown.get("Claimed", 0) == 0)
        assert page.evaluate("window.roostSamePage") is True, "the page was reloaded to show the new counts"
        assert len(page.watch.navigations) == visits
        assert not page.watch.console_errors and not page.watch.script_errors and not page.watch.failed_responses
    finally:
        gate.open()
        remove(gpu_pool, cluster)
        gate.close()


def test_the_gpu_page_splits_the_40_gb_card_into_the_shares_of_its_jobs(gpu_pool, page):
    """Two share jobs of 10000 and 20000 MiB on the one A100: its card shows 40960 MiB in
    all and one share per job, each with its job id and its memory."""
    gate = Gate()
    small = submit(gpu_pool, "small", gate.job(gpu_pool, 1, "request_gpu_memory = 10000\n"))
    large = submit(gpu_pool, "large", gate.job(gpu_pool, 1, "request_gpu_memory = 20000\n"))
    try:
        wait_running(gpu_pool, small, 1)
        wait_running(gpu_pool, large, 1)
        page.goto(gpu_pool["url"] + "/gpus")
        card = page.locator("div.card[data-card-id]")
        assert card.count() == 1
        assert card.get_attribute("data-card-id").startswith("GPU-")
        assert int(card.get_attribute("data-memory-total")) == CARD_MIB
        assert "A100" in card.inner_text()
        page.wait_for_function("document.querySelectorAll('div.card div.share[data-job-id]').length == 2",
                               timeout=30_000)
        memory = page.evaluate("""() => Object.fromEntries(
            [...document.querySelectorAll('div.card div.share[data-job-id]')].map(
                share => [share.dataset.jobId, Number(share.dataset.memory)]))""")
        for job in memory:
            assert job in card.inner_text(), f"the card does not show job {job}'s id"
        save_screenshot(page, "gpus")
    finally:
        gate.open()
        remove(gpu_pool, small)
        remove(gpu_pool, large)
        gate.close()
