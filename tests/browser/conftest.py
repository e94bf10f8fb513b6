"""Headless Chromium (Debian's) driven by Playwright against pytest-django's live server.

One browser per test session; each test gets fresh contexts (cookies, locale, viewport). Playwright's
sync API runs an event loop in this thread, so Django's async-safety check is relaxed for the test
process (the ORM calls here are ordinary blocking calls made by the test, not inside that loop).
"""

import os
from pathlib import Path

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
PASSWORD = "pw-engram"  # tests.factories.AccountFactory's password
PHONE = {"width": 375, "height": 812}
DESKTOP = {"width": 1280, "height": 900}


def pytest_collection_modifyitems(items):
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium fonts-wqy-microhei)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser, live_server):
    """open_page(account=None, locale="en-US", viewport=DESKTOP) → a Page, signed in when account is given."""
    contexts = []

    def make(account=None, *, locale="en-US", viewport=None):
        context = browser.new_context(locale=locale, viewport=viewport or DESKTOP, base_url=live_server.url)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        if account is not None:
            sign_in(page, account.username)
        return page

    yield make
    for context in contexts:
        context.close()


def sign_in(page, username: str, password: str = PASSWORD):
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit].primary")
    page.wait_for_load_state()


def screenshot(page, name: str, full_page: bool = True):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def csrf_token(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
