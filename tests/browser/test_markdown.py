"""The Markdown editor: preview while typing, save through the Markdown service, skill documents."""

from playwright.sync_api import expect

from memory.drafts import MemoryDraft
from memory.models import MemoryItem
from memory.services import memory_create

from .conftest import screenshot


def test_it_previews_and_saves_the_users_document(open_page, alice, alice_actor):
    item = memory_create(
        actor=alice_actor,
        org=alice_actor.org,
        draft=MemoryDraft(content="Alice is a backend engineer.", user_id="alice"),
    ).item
    page = open_page(alice)
    page.goto("/markdown/")
    editor = page.locator("textarea[name=document]")
    expect(editor).to_contain_text(f"<!-- m:{item.pk} -->")
    text = editor.input_value()
    text = text.replace("Alice is a backend engineer.", "Alice is a backend engineer working on payments.")
    text += "\n## Notes\n\n- 周五前要提交周报。\n"
    editor.fill(text)
    expect(page.locator("[data-testid=preview]")).to_contain_text("周五前要提交周报。")
    expect(page.locator("[data-testid=preview] h2", has_text="Notes")).to_be_visible()
    screenshot(page, "markdown")
    page.get_by_role("button", name="Save document").click()
    expect(page.locator(".messages")).to_contain_text("1 added, 1 changed, 0 removed")
    item.refresh_from_db()
    assert item.content == "Alice is a backend engineer working on payments."
    note = MemoryItem.objects.get(content="周五前要提交周报。")
    assert (note.memory_type, note.user_id, note.skill) == ("note", "alice", "")


def test_it_saves_a_skill_document_and_shows_line_errors(open_page, alice):
    page = open_page(alice)
    page.goto("/markdown/")
    page.fill("input[name=new_skill]", "sql-helper")
    page.get_by_role("button", name="Open").click()
    expect(page).to_have_url("/markdown/skills/sql-helper/")
    editor = page.locator("textarea[name=document]")
    editor.fill(
        editor.input_value()
        + "\n## Skills\n\n- 查询日志时优先用 event_time 分区字段。\n- token: sk-abcdefghijklmnopqrstuvwxyz\n"
    )
    page.get_by_role("button", name="Save document").click()
    expect(page.locator(".field-error[data-field=document]")).to_contain_text("Line")
    assert not MemoryItem.objects.exists()
    editor = page.locator("textarea[name=document]")
    editor.fill(editor.input_value().replace("- token: sk-abcdefghijklmnopqrstuvwxyz\n", ""))
    page.get_by_role("button", name="Save document").click()
    expect(page.locator(".messages")).to_contain_text("1 added")
    item = MemoryItem.objects.get()
    assert (item.skill, item.memory_type) == ("sql-helper", "skill")
    expect(page.locator("nav.tabs")).to_contain_text("skills/sql-helper.md")
