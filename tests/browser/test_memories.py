"""A person signs in, adds memories, finds them by search in Chinese and English, pins, edits, deletes, undoes."""

from playwright.sync_api import expect

from memory.models import MemoryItem

from .conftest import PHONE, screenshot, sign_in

TEA = "我每天早上喝绿茶，从不喝咖啡。"
DARK = "Alice prefers dark mode in every code editor."
OTHER = "The quarterly report is due on the first Monday of April."


def add_memory(page, content, memory_type="preference"):
    form = page.locator("#add-form")
    form.locator("textarea[name=content]").fill(content)
    form.locator("select[name=memory_type]").select_option(memory_type)
    form.locator("button[type=submit]").click()
    expect(page.locator("[data-testid=memory]", has_text=content)).to_be_visible()


def search(page, query):
    page.fill("#q", query)
    page.locator("form[role=search] button[type=submit]").click()
    expect(page.locator("#results")).to_contain_text(query)


def test_it_signs_in_and_lands_on_the_start_page(open_page, alice):
    page = open_page()
    page.goto("/memories/")
    expect(page).to_have_url("/login/?next=/memories/")
    screenshot(page, "login")
    sign_in(page, "alice", "wrong-password")
    expect(page.locator(".error")).to_be_visible()
    sign_in(page, "alice")
    expect(page.locator("h1")).to_have_text("Welcome to Engram")
    expect(page.locator("nav.nav")).to_contain_text("My memories")
    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("main h1")).to_have_text("Sign in")
    page.goto("/memories/")
    expect(page).to_have_url("/login/?next=/memories/")


def test_it_adds_searches_pins_edits_deletes_and_undoes(open_page, alice):
    page = open_page(alice)
    page.goto("/memories/")
    add_memory(page, TEA)
    add_memory(page, DARK)
    add_memory(page, OTHER, "event")
    assert set(MemoryItem.objects.filter(user_id="alice").values_list("content", flat=True)) == {
        TEA,
        DARK,
        OTHER,
    }

    search(page, "绿茶")
    rows = page.locator("#results [data-testid=memory]")
    expect(rows.first).to_contain_text(TEA)
    search(page, "dark mode editor")
    expect(rows.first).to_contain_text(DARK)
    screenshot(page, "memories-search")

    page.goto("/memories/")
    row = page.locator("[data-testid=memory]", has_text=DARK)
    row.get_by_role("button", name="Pin").click()
    expect(page.locator("[data-testid=memory]", has_text=DARK).locator(".badge.pin")).to_be_visible()
    assert MemoryItem.objects.get(content=DARK).pinned

    page.locator("[data-testid=memory]", has_text=DARK).get_by_role("link", name="Edit").click()
    editor = page.locator("article.editing")
    editor.locator("textarea[name=content]").fill("Alice prefers dark mode in every editor and terminal.")
    editor.get_by_role("button", name="Save").click()
    expect(page.locator("[data-testid=memory]", has_text="editor and terminal")).to_be_visible()
    item = MemoryItem.objects.get(pk=MemoryItem.objects.get(content__contains="terminal").pk)
    assert (item.version, item.pinned) == (3, True)

    page.locator("[data-testid=memory]", has_text=TEA).get_by_role("button", name="Delete").click()
    deleted = page.locator("[data-testid=memory-deleted]")
    expect(deleted).to_be_visible()
    assert MemoryItem.objects.get(content=TEA).status == "archived"
    screenshot(page, "memories-deleted-undo")
    deleted.get_by_role("button", name="Undo").click()
    expect(page.locator("[data-testid=memory]", has_text=TEA)).to_be_visible()
    assert MemoryItem.objects.get(content=TEA).status == "active"
    screenshot(page, "memories")


def test_it_shows_the_gates_refusal_next_to_the_content_field(open_page, alice):
    page = open_page(alice)
    page.goto("/memories/")
    form = page.locator("#add-form")
    form.locator("textarea[name=content]").fill("Remember my OpenAI key sk-proj-abcdefghijklmnop1234567890")
    form.locator("button[type=submit]").click()
    error = page.locator("#add-form .field-error[data-field=content]")
    expect(error).to_contain_text("API key")
    assert not MemoryItem.objects.exists()
    screenshot(page, "memories-gate-refusal", full_page=False)


def test_it_shows_both_versions_after_a_stale_edit(open_page, alice, alice_actor):
    from memory.drafts import MemoryDraft
    from memory.services import memory_create, memory_update

    item = memory_create(
        actor=alice_actor,
        org=alice_actor.org,
        draft=MemoryDraft(content="Alice lives in Beijing.", user_id="alice"),
    ).item
    page = open_page(alice)
    page.goto("/memories/")
    page.locator("[data-testid=memory]", has_text="Beijing").get_by_role("link", name="Edit").click()
    memory_update(actor=alice_actor, item=item, content="Alice lives in Shanghai.")  # another tab, meanwhile
    editor = page.locator("article.editing")
    editor.locator("textarea[name=content]").fill("Alice lives in Hangzhou.")
    editor.get_by_role("button", name="Save").click()
    stale = page.locator("[data-testid=stale]")
    expect(stale).to_contain_text("Alice lives in Shanghai.")
    expect(stale).to_contain_text("Alice lives in Hangzhou.")
    item.refresh_from_db()
    assert item.content == "Alice lives in Shanghai."
    screenshot(page, "memories-stale-edit")
    page.locator("article.editing").get_by_role("button", name="Save").click()
    expect(page.locator("[data-testid=memory]", has_text="Hangzhou")).to_be_visible()
    item.refresh_from_db()
    assert item.content == "Alice lives in Hangzhou."


def test_it_works_at_phone_width(open_page, alice, alice_actor):
    from memory.drafts import MemoryDraft
    from memory.services import memory_create

    for text in (TEA, DARK, OTHER):
        memory_create(
            actor=alice_actor,
            org=alice_actor.org,
            draft=MemoryDraft(content=text, user_id="alice", tags=["demo"]),
        )
    page = open_page(alice, viewport=PHONE)
    for url, name in (
        ("/memories/", "phone-memories"),
        ("/usage/", "phone-usage"),
        ("/profile/", "phone-profile"),
    ):
        page.goto(url)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{url} scrolls sideways by {overflow}px at 375px"
        screenshot(page, name)
    page.goto("/memories/")
    page.locator("[data-testid=memory]", has_text=DARK).get_by_role("button", name="Pin").click()
    expect(page.locator("[data-testid=memory]", has_text=DARK).locator(".badge.pin")).to_be_visible()
