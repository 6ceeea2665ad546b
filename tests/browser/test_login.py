"""A site that does not let loopback in without a token (WEB_ALLOW_LOOPBACK_WITHOUT_TOKEN
= false, as on a pool that is not loopback-only): every page answers the login form and
no pool data, its JSON twin 401; the user's token, given in the form, opens the site and
is kept in an HttpOnly, SameSite=Strict cookie."""

from __future__ import annotations

import pytest

from tests.browser.conftest import require_the_site, save_screenshot
from tests.browser.pool_site import site_url
from tests.integration.conftest import personal_pool

pytestmark = pytest.mark.integration

PAGES = ("/pool", "/gpus", "/queue", "/job/1.0", "/fairshare", "/flocking")


@pytest.fixture(scope="module")
def locked_pool(tmp_path_factory):
    """A personal pool whose site asks everyone for a token."""
    require_the_site()
    with personal_pool(tmp_path_factory.mktemp("home"), {"_ROOST_WEB_ALLOW_LOOPBACK_WITHOUT_TOKEN": "false",
                                                         "_ROOST_NUM_CPUS": "2"}) as running:
        running["url"] = site_url(running["dir"])
        running["token"] = (running["dir"] / "tokens" / "user").read_text().strip()
        yield running


def shows_no_pool_data(page) -> None:
    """The page is the login form and holds none of the tables or charts of the pages."""
    assert page.locator("form#login input[name=token]").count() == 1, f"{page.url} is not the login form: " \
        + page.locator("main").inner_text()[:300]
    for data in ("#slots-by-state", "#hosts", "#jobs-chart", "div.card", "#queue", "#job-ad", "#users", "#flock-to"):
        assert page.locator(data).count() == 0, f"the login page shows {data}"


def log_in(page, token: str) -> None:
    """Give ``token`` in the login form and wait for the page the site answers with."""
    page.fill("form#login input[name=token]", token)
    with page.expect_navigation():
        page.locator("form#login").evaluate("form => form.requestSubmit()")


def test_without_a_token_every_page_answers_the_login_form_and_no_data(locked_pool, page):
    """Each page, asked without a token, is the login form; its JSON twin answers 401 with no ads."""
    for path in PAGES:
        page.goto(locked_pool["url"] + path)
        shows_no_pool_data(page)
        assert "slot1@" not in page.content()
        answer = page.request.get(locked_pool["url"] + path + "?format=json")
        assert answer.status == 401, f"{path}?format=json answered {answer.status} without a token"
        assert "slot1@" not in answer.text()
    save_screenshot(page, "login")


def test_a_wrong_token_is_refused_and_the_right_one_opens_the_site(locked_pool, page):
    """A made-up token leaves the browser on the login form with no cookie that opens anything;
    the user's own token brings the pool page, and its cookie is HttpOnly and SameSite=Strict."""
    page.goto(locked_pool["url"] + "/pool")
    log_in(page, "not-a-token")
    shows_no_pool_data(page)
    page.goto(locked_pool["url"] + "/pool")
    shows_no_pool_data(page)
    log_in(page, locked_pool["token"])
    assert page.url.endswith("/pool"), f"logging in went to {page.url}, not back to /pool"
    page.locator("#slots-by-state").wait_for()
    cookie = next(c for c in page.context.cookies() if c["name"] == "roost_token")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
