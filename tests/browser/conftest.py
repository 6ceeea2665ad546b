"""Headless Chromium for the browser tests, driven by Playwright pointed at the
system's Chromium (Debian's ``chromium``; ``ROOST_CHROMIUM`` names another): one
browser per session, a fresh page per test that records every dialog, console error
and uncaught script error, so a test can say that a page ran no script it should not.
The tests skip, saying what to install, where Chromium or Playwright is missing."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil

import attrs
import pytest

#: Where each page's screenshot is saved on every run (git-ignored).
ARTIFACTS = pathlib.Path(__file__).with_name("artifacts")

#: Where Chromium is looked for when ROOST_CHROMIUM names none.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_executable() -> str | None:
    """The Chromium to drive: ROOST_CHROMIUM, else the first of CHROMIUM_NAMES on PATH."""
    named = os.environ.get("ROOST_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    return next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)


@attrs.define
class PageWatch:
    """What a page did that a person would not see in its tables: the dialogs it
    opened (dismissed at once), its console errors, its uncaught script errors, its
    main-frame navigations and the requests answered with an error (with their URLs,
    which the console's "Failed to load resource" leaves out)."""

    dialogs: list[str] = attrs.Factory(list)
    console_errors: list[str] = attrs.Factory(list)
    script_errors: list[str] = attrs.Factory(list)
    navigations: list[str] = attrs.Factory(list)
    failed_responses: list[str] = attrs.Factory(list)

    def attach(self, page) -> None:
        """Start recording ``page``'s events."""
        page.on("dialog", lambda dialog: self._dialog(dialog))
        page.on("console", lambda message: message.type == "error" and self.console_errors.append(message.text))
        page.on("pageerror", lambda error: self.script_errors.append(str(error)))
        page.on("framenavigated", lambda frame: frame == page.main_frame and self.navigations.append(frame.url))
        page.on("response", lambda response: response.status >= 400
                and self.failed_responses.append(f"HTTP {response.status} for {response.url}"))

    def _dialog(self, dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium for the whole session; skips naming what is missing."""
    executable = chromium_executable()
    if executable is None:
        pytest.skip("no Chromium to drive: install Debian's chromium (apt-get install chromium) "
                    "or name one in ROOST_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright is not installed: pip install -e '.[test]'")
    with sync_playwright() as playwright:
        # root (as CI runs) cannot use Chromium's sandbox; the pages are our own
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser):
    """A new page in its own context (no cookies from other tests), with ``page.watch``
    recording what it did."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    opened.watch = PageWatch()
    opened.watch.attach(opened)
    try:
        yield opened
    finally:
        context.close()


def save_screenshot(page, name: str) -> pathlib.Path:
    """Save the whole of ``page`` as artifacts/<name>.png, for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def require_the_site() -> None:
    """Skip where this tree has no web package (the site is issue 16's other half)."""
    if importlib.util.find_spec("web") is None:
        pytest.skip("this tree has no web package: the site the browser tests look at is not there")


@pytest.fixture(scope="session")
def gpu_pool(tmp_path_factory):
    """A personal pool of 8 cores and one simulated 40 GB A100, its site's URL under ``url``."""
    require_the_site()
    from tests.browser.pool_site import site_url
    from tests.integration.conftest import personal_pool

    settings = {"_ROOST_GPU_DISCOVERY": "simulated:1xA100:40G", "_ROOST_NUM_CPUS": "8"}
    with personal_pool(tmp_path_factory.mktemp("home"), settings) as running:
        running["url"] = site_url(running["dir"])
        yield running
