"""My data: export as a download, forget everything (typed confirmation, receipt), pause memory for oneself
and for one conversation (adds and extraction store nothing; a real worker extracts the rest), and
useful / wrong / outdated on what agents were given. Screenshots of each page at 1280 and 375 px in
English and Chinese."""

import json
import time

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings
from playwright.sync_api import expect

from config.celery import app
from memory.models import ExtractionJob, InjectionLog, MemoryFeedback, MemoryItem, MemoryPause

from ..factories import MemoryItemFactory
from .conftest import DESKTOP, PHONE, csrf_token, screenshot

PEANUTS = "用户对花生过敏"
TEA = "Alice drinks green tea every morning"
LISBON = "Alice lives in Lisbon"
EDITOR = "Alice prefers dark mode in every editor"


def shots(open_page, account, path: str, name: str, ready=None) -> None:
    """The page at 1280 and 375 px, in English and in Chinese: test-output/screenshots/<name>-<lang>-<w>.png."""
    for locale, lang in (("en-US", "en"), ("zh-CN", "zh")):
        for viewport in (DESKTOP, PHONE):
            page = open_page(account, locale=locale, viewport=viewport)
            page.goto(path)
            if ready:
                expect(page.locator(ready).first).to_be_visible()
            screenshot(page, f"{name}-{lang}-{viewport['width']}")
            page.context.close()


def shots_here(page, name: str, ready: str) -> None:
    """The same page (same session) at 1280 and 375 px, in English and then Chinese (the top bar's switch)."""
    for lang in ("en", "zh-hans"):
        page.select_option("#language", lang)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        expect(page.locator(ready).first).to_be_visible()
        for viewport in (DESKTOP, PHONE):
            page.set_viewport_size(viewport)
            screenshot(page, f"{name}-{lang[:2]}-{viewport['width']}")
    page.select_option("#language", "en")


def api(page, method: str, path: str, body=None):
    """The JSON API as the signed-in person (session cookie and CSRF token)."""
    response = page.request.fetch(
        path,
        method=method,
        data=json.dumps(body) if body is not None else None,
        headers={"X-CSRFToken": csrf_token(page), "Content-Type": "application/json"},
    )
    return response.status, response.json() if response.text() else None


def seed(org) -> dict:
    items = {}
    for text, kind in ((TEA, "habit"), (LISBON, "fact"), (EDITOR, "preference"), (PEANUTS, "constraint")):
        items[text] = MemoryItemFactory(org=org, user_id="alice", content=text, memory_type=kind)
    return items


def test_it_downloads_an_export_of_what_the_person_may_read_about_themself(open_page, alice, bob, org_a):
    seed(org_a)
    MemoryItemFactory(org=org_a, user_id="bob", content="Bob's own memory, not Alice's")
    page = open_page(alice)
    page.goto("/my-data/")
    expect(page.locator("h1")).to_have_text("My data")
    expect(page.get_by_test_id("my-data-summary")).to_contain_text("4")
    with page.expect_download() as info:
        page.get_by_test_id("export").click()
    download = info.value
    assert download.suggested_filename.startswith(
        "engram-org-a-alice-"
    ) and download.suggested_filename.endswith(".json")
    data = json.loads(open(download.path(), encoding="utf-8").read())
    assert data["format"] == "engram-subject-export" and data["user_id"] == "alice"
    assert {m["content"] for m in data["memories"]} == {TEA, LISBON, EDITOR, PEANUTS}
    assert "Bob's own memory" not in json.dumps(data, ensure_ascii=False)
    shots(open_page, alice, "/my-data/", "my-data", ready="[data-testid=pause-card]")


def test_it_forgets_everything_after_a_typed_confirmation_and_shows_a_receipt(open_page, alice, org_a):
    items = seed(org_a)
    page = open_page(alice)
    page.goto("/my-data/")
    page.get_by_test_id("forget-confirm").fill("yes please")
    page.get_by_test_id("forget").click()
    expect(page.locator(".messages")).to_contain_text("Nothing was deleted: type alice exactly to confirm.")
    assert MemoryItem.objects.filter(org=org_a, user_id="alice").count() == 4

    api(page, "POST", f"/api/v1/memories/{items[TEA].pk}/feedback", {"value": "useful"})
    page.get_by_test_id("forget-confirm").fill("alice")
    page.get_by_test_id("forget").click()
    expect(page.locator("h1")).to_have_text("Everything about you was forgotten")
    receipt = page.get_by_test_id("receipt")
    expect(receipt.get_by_test_id("receipt-row").filter(has_text="Memories").first).to_contain_text("4")
    expect(receipt.get_by_test_id("receipt-row").filter(has_text="Feedback you gave")).to_contain_text("1")
    assert not MemoryItem.objects.filter(org=org_a, user_id="alice").exists()
    assert not MemoryFeedback.objects.filter(org=org_a).exists()
    page.goto("/memories/")
    expect(page.locator("[data-testid=memory]")).to_have_count(0)
    page.go_back()
    page.goto("/my-data/forgotten/")
    shots_here(page, "forgotten", "[data-testid=receipt]")


@pytest.fixture
def worker(transactional_db):
    app.conf.task_default_queue = settings.CELERY_TASK_DEFAULT_QUEUE
    app.loader.import_default_modules()
    with start_worker(
        app,
        pool="threads",
        concurrency=1,
        perform_ping_check=False,
        shutdown_timeout=30,
        loglevel="WARNING",
        queues=[settings.CELERY_TASK_DEFAULT_QUEUE],
    ) as w:
        yield w


def wait_done(job_id: int, timeout: float = 90.0) -> ExtractionJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ExtractionJob.objects.get(pk=job_id)
        if job.status in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} not done after {timeout}s")


def test_pausing_memory_stops_adds_and_extraction_while_search_works(open_page, alice, org_a, worker):
    MemoryItemFactory(org=org_a, user_id="alice", content=TEA, memory_type="habit")
    page = open_page(alice)
    page.goto("/my-data/")
    expect(page.get_by_test_id("pause-state")).to_have_text("On")
    page.get_by_role("button", name="Pause memory").click()
    expect(page.get_by_test_id("pause-state")).to_have_text("Paused")
    expect(page.locator(".messages")).to_contain_text("Memory is paused")

    turn = {"messages": [{"role": "human", "content": "记住：我对花生过敏，以后推荐菜的时候注意"}]}
    status, body = api(page, "POST", "/api/v1/sessions/chat-1/messages", turn)
    assert status == 201 and body["memory_paused"] == "subject" and body["extraction_job"] is None
    status, body = api(page, "POST", "/api/v1/memories", {"content": LISBON})
    assert status == 200 and body["status"] == "paused"
    status, body = api(page, "POST", "/api/v1/memories/search", {"query": "green tea", "user_id": "alice"})
    assert status == 200 and body["results"][0]["content"] == TEA
    page.goto("/memories/")
    page.locator("#add-form textarea[name=content]").fill(EDITOR)
    page.locator("#add-form button[type=submit]").click()
    expect(page.locator("#add-form")).to_contain_text("Memory is paused for this person")
    assert list(MemoryItem.objects.filter(org=org_a).values_list("content", flat=True)) == [TEA]

    # Memory back on, but one conversation marked "don't remember this" before it starts.
    page.goto("/my-data/")
    page.get_by_role("button", name="Turn memory back on").click()
    expect(page.get_by_test_id("pause-state")).to_have_text("On")
    page.fill("#new-session", "temp-chat")
    page.get_by_role("button", name="Don't remember it").click()
    row = page.locator("[data-testid=conversation][data-session=temp-chat]")
    expect(row.get_by_role("button")).to_have_attribute("aria-pressed", "true")
    status, body = api(page, "POST", "/api/v1/sessions/temp-chat/messages", turn)
    assert body["memory_paused"] == "session" and body["extraction_job"] is None
    status, body = api(page, "POST", "/api/v1/sessions/chat-2/messages", turn)
    assert body["memory_paused"] is None
    job = wait_done(body["extraction_job"]["id"])  # the real worker extracts from the other conversation
    assert job.status == "done" and job.result["added"], job.result
    assert MemoryItem.objects.filter(org=org_a, user_id="alice", content__contains="花生").count() == 1
    assert not MemoryItem.objects.filter(org=org_a, session_id="temp-chat").exists()
    page.goto("/my-data/")
    expect(page.locator("[data-testid=conversation][data-session=chat-2]")).to_contain_text("chat-2")
    assert MemoryPause.objects.filter(org=org_a, user_id="alice", session_id="temp-chat").exists()
    MemoryPause.objects.create(org=org_a, user_id="alice")
    shots(open_page, alice, "/my-data/#conversations", "my-data-paused", ready="[data-testid=conversation]")


def test_feedback_buttons_record_and_offer_edit_delete_or_supersede(open_page, alice, org_a):
    items = seed(org_a)
    page = open_page(alice)
    page.goto("/my-data/")
    status, context = api(
        page,
        "POST",
        "/api/v1/context",
        {"query": "green tea, lives in Lisbon, dark mode editor", "user_id": "alice", "top_k": 10},
    )
    assert status == 200
    injection = InjectionLog.objects.get(pk=context["injection_id"])
    given = set(injection.memory_ids)
    assert {items[TEA].pk, items[LISBON].pk, items[EDITOR].pk} <= given

    page.goto("/my-data/given/")
    expect(page.locator("h1")).to_have_text("What agents were given")
    tea = page.locator(f"[data-testid=given-memory][data-memory='{items[TEA].pk}']")
    tea.get_by_role("button", name="Useful").click()
    expect(tea.get_by_role("button", name="Useful")).to_have_attribute("aria-pressed", "true")
    expect(tea).to_contain_text("agents will prefer it a little")
    row = MemoryFeedback.objects.get(memory=items[TEA])
    assert (row.value, row.injection_id, row.subject) == ("useful", injection.pk, "alice")
    items[TEA].refresh_from_db()
    assert items[TEA].feedback == 0.5

    lisbon = page.locator(f"[data-testid=given-memory][data-memory='{items[LISBON].pk}']")
    lisbon.get_by_role("button", name="Outdated").click()
    offer = lisbon.get_by_test_id("offer-outdated")
    expect(offer).to_be_visible()
    shots_page = page  # the offers, as a person sees them
    editor = page.locator(f"[data-testid=given-memory][data-memory='{items[EDITOR].pk}']")
    editor.get_by_role("button", name="Wrong").click()
    expect(editor.get_by_test_id("offer-wrong")).to_be_visible()
    expect(editor.get_by_role("link", name="Edit it")).to_have_attribute(
        "href", f"/memories/{items[EDITOR].pk}/edit/"
    )
    screenshot(shots_page, "given-offers-en-1280")

    offer.locator("textarea").fill("Alice lives in Porto now")
    offer.get_by_role("button", name="Replace it").click()
    expect(page.locator(".messages")).to_contain_text(f"#{items[LISBON].pk} is kept as superseded")
    items[LISBON].refresh_from_db()
    assert items[LISBON].status == "superseded"
    new = MemoryItem.objects.get(org=org_a, content="Alice lives in Porto now")
    assert items[LISBON].superseded_by_id == new.pk and new.memory_type == "fact"

    page.goto("/my-data/given/")
    editor = page.locator(f"[data-testid=given-memory][data-memory='{items[EDITOR].pk}']")
    expect(editor.get_by_role("button", name="Wrong")).to_have_attribute("aria-pressed", "true")
    editor.get_by_role("button", name="Delete it").click()
    expect(page.locator(".messages")).to_contain_text("Memory deleted")
    items[EDITOR].refresh_from_db()
    assert items[EDITOR].status == "archived"

    # The memory's own page: its hand-overs, each with the same buttons.
    page.goto(f"/memories/{items[TEA].pk}/")
    hand_over = page.get_by_test_id("injection").first
    expect(hand_over.get_by_role("button", name="Useful")).to_have_attribute("aria-pressed", "true")
    hand_over.get_by_role("button", name="Wrong").click()
    expect(hand_over.get_by_role("button", name="Wrong")).to_have_attribute("aria-pressed", "true")
    expect(hand_over.get_by_test_id("offer-wrong")).to_be_visible()
    assert MemoryFeedback.objects.filter(memory=items[TEA], value="wrong", injection=injection).exists()
    items[TEA].refresh_from_db()
    assert items[TEA].feedback == -0.5  # her latest word counts, once
    shots(open_page, alice, "/my-data/given/", "given", ready="[data-testid=handover]")
    shots(open_page, alice, f"/memories/{items[TEA].pk}/", "memory-feedback", ready="[data-testid=injection]")
