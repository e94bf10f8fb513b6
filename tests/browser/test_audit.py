"""The audit log page in the browser: an org owner pins a memory, finds the event by filtering, and a
member has no link to the page."""

from playwright.sync_api import expect

from memory.drafts import MemoryDraft
from memory.services import memory_create

from .conftest import PHONE, screenshot


def test_an_owner_filters_the_audit_log_and_a_member_has_no_link(open_page, alice, bob, alice_actor, project):
    memory_create(
        actor=alice_actor,
        org=alice_actor.org,
        draft=MemoryDraft(content="Alice drinks green tea.", user_id="alice"),
    )
    page = open_page(alice)
    page.goto("/memories/")
    card = page.locator("[data-testid=memory]", has_text="green tea")
    with page.expect_response(lambda r: "/pin/" in r.url):
        card.get_by_role("button", name="Pin").click()

    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    rows = page.locator("[data-testid=audit-event]")
    expect(rows.first).to_contain_text("Memory pinned or unpinned")
    expect(rows.first).to_contain_text("127.0.0.1")
    page.select_option("select[name=action]", "project.create")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Project created")
    assert "action=project.create" in page.url
    expect(page.locator("main")).not_to_contain_text("green tea")
    screenshot(page, "audit-log")

    phone = open_page(alice, viewport=PHONE, locale="zh-CN")
    phone.goto("/audit/")
    expect(phone.get_by_role("heading", name="审计日志")).to_be_visible()
    screenshot(phone, "audit-log-phone-zh")

    member = open_page(bob)
    member.goto("/memories/")
    expect(member.get_by_role("link", name="Audit log")).to_have_count(0)
