"""Swagger UI (/api/docs/) and Redoc (/api/redoc/) render from the app's own static files on a machine
without internet: every request that is not for the live server is aborted (and counted), and the
operations list must still show, with no Content-Security-Policy violation."""

from urllib.parse import urlsplit

from playwright.sync_api import expect

from .conftest import screenshot

# Redoc's side menu always shows Redocly's logo from its CDN; the docs policy (img-src 'self' data:) refuses
# it in the browser, so it never leaves the machine, and the link beside it keeps its text.
REDOCLY_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
OPERATION = "/api/v1/memories/search"
SUMMARY = "Search memories"  # that operation's summary


def _offline(page, live_server) -> tuple[list[str], list[str]]:
    """Abort every request that would leave the machine; return (left, violations)."""
    origin = urlsplit(live_server.url)
    left: list[str] = []
    violations: list[str] = []

    def route(route):
        url = urlsplit(route.request.url)
        if url.scheme in ("data", "blob") or (url.hostname, url.port) == (origin.hostname, origin.port):
            route.continue_()
        else:
            left.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda error: violations.append(str(error)))
    return left, violations


def test_it_renders_swagger_ui_offline(open_page, live_server):
    page = open_page()
    left, violations = _offline(page, live_server)
    page.goto("/api/docs/")
    operation = page.locator(".opblock", has=page.locator(".opblock-summary-path", has_text=OPERATION)).first
    expect(operation.locator(".opblock-summary-description")).to_have_text(SUMMARY, timeout=30_000)
    expect(page.locator(".opblock-tag", has_text="memories").first).to_be_visible()
    operation.locator(
        ".opblock-summary"
    ).click()  # expands: the request body's example and the typed responses are drawn
    expect(page.get_by_text("which language should I answer in?").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    screenshot(page, "api-docs-swagger", full_page=False)
    assert not left, left
    assert not violations, violations


def test_it_renders_redoc_offline(open_page, live_server):
    page = open_page()
    left, violations = _offline(page, live_server)
    page.goto("/api/redoc/")
    # Redoc lays out all operations before it shows anything: seconds on a busy machine.
    expect(page.get_by_role("heading", name="Engram API", level=1)).to_be_visible(timeout=60_000)
    expect(page.get_by_role("heading", name=SUMMARY, level=2)).to_be_attached()
    expect(page.get_by_role("menuitem", name="search")).to_be_visible()
    page.wait_for_load_state("networkidle")
    screenshot(page, "api-docs-redoc", full_page=False)
    assert not left, left
    assert not [v for v in violations if REDOCLY_LOGO not in v], violations
