"""The Content-Security-Policy forbids inline script and style: every main page loads without a single
violation, and what used to be inline handlers (revoke's confirmation, the language switch) still works."""

from playwright.sync_api import expect

from projects.models import ApiKey
from projects.services import api_key_create

from ..factories import MemoryItemFactory

# (/api/docs/ and /api/redoc/ have their own policy and test: tests/browser/test_api_docs.py and
# tests/test_security_settings.py.)
PAGES = ["/", "/memories/", "/projects/", "/projects/atlas/", "/queue/", "/usage/", "/keys/", "/profile/"]
PAGES += ["/markdown/"]


def _violations(page) -> list[str]:
    seen = []
    page.on("console", lambda m: seen.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda error: seen.append(str(error)))
    return seen


def test_it_loads_every_main_page_without_a_policy_violation(open_page, alice, project):
    MemoryItemFactory(org=project.org, content="Alice drinks green tea every morning")
    page = open_page(alice)
    seen = _violations(page)
    for path in PAGES:
        page.goto(path)
        page.wait_for_load_state("networkidle")
        assert page.locator("h1").count() >= 1, path
    page.select_option("#language", "zh-hans")  # data-autosubmit, from static/js/engram.js
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert not seen, seen


def test_it_asks_before_revoking_a_key(open_page, alice, org_a):
    key, _ = api_key_create(org=org_a, name="agent-x")
    page = open_page(alice)
    page.goto("/keys/")
    row = page.locator("[data-testid=key]", has_text="agent-x")
    page.once("dialog", lambda dialog: dialog.dismiss())
    row.get_by_role("button", name="Revoke").click()
    page.wait_for_load_state()
    key.refresh_from_db()
    assert key.revoked_at is None  # dismissed: nothing happened
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Revoke").click()
    expect(row.locator(".badge")).to_have_text("revoked")
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
