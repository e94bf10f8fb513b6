"""A merge on the memory page: what came in is shown, and Split makes it its own memory again; a viewer
sees what came in but no Split button, and a forged split is refused."""

import re
from datetime import UTC, datetime

from playwright.sync_api import expect

from memory.drafts import MemoryDraft
from memory.models import MemoryItem, MemoryRevision
from memory.services import memory_create

from .conftest import csrf_token, screenshot

TEXT = "Atlas deploys to production on Fridays."


def merged_pair(actor, project) -> MemoryItem:
    """A project memory and a second add of the same text that was merged into it (a decision, from an
    agent, with its own date and tags)."""
    first = memory_create(
        actor=actor, org=actor.org, draft=MemoryDraft(content=TEXT, scope="project", project=project)
    ).item
    second = MemoryDraft(
        content=TEXT,
        scope="project",
        project=project,
        memory_type="decision",
        source="agent",
        source_id="standup-42",
        tags=["release"],
        metadata={"meeting": "standup"},
        occurred_at=datetime(2024, 3, 1, 9, 30, tzinfo=UTC),
    )
    result = memory_create(actor=actor, org=actor.org, draft=second)
    assert not result.created and result.item.pk == first.pk
    return first


def test_it_splits_a_merge_from_the_memory_page(open_page, alice, bob, alice_actor, project):
    item = merged_pair(alice_actor, project)

    viewer = open_page(bob)
    viewer.goto(f"/memories/{item.pk}/")
    incoming = viewer.locator("[data-testid=incoming]")
    expect(incoming).to_contain_text(TEXT)
    expect(incoming).to_contain_text("standup-42")
    expect(incoming.get_by_role("button", name="Split")).to_have_count(0)
    forged = viewer.request.post(
        f"/memories/{item.pk}/revisions/2/split/", headers={"X-CSRFToken": csrf_token(viewer)}
    )
    assert forged.status == 403
    assert MemoryItem.objects.count() == 1

    page = open_page(alice)
    page.goto(f"/projects/{project.slug}/")
    expect(page.locator("[data-testid=project-memory]", has_text=TEXT)).to_contain_text("confirmed ×1")
    page.goto(f"/memories/{item.pk}/")
    expect(page.locator("[data-testid=confirmations]")).to_contain_text("1")
    incoming = page.locator("[data-testid=incoming]")
    expect(incoming).to_contain_text("decision")
    expect(incoming).to_contain_text("2024-03-01")
    screenshot(page, "memory-merge")
    incoming.get_by_role("button", name="Split").click()

    new = MemoryItem.objects.exclude(pk=item.pk).get()
    expect(page).to_have_url(re.compile(rf"/memories/{new.pk}/$"))
    expect(page.locator(".messages")).to_contain_text(f"#{item.pk}")
    expect(page.locator("h1")).to_have_text(f"Memory #{new.pk}")
    expect(page.locator("[data-testid=revision]")).to_contain_text(f"split from #{item.pk} revision 2")
    assert (new.memory_type, new.source_id, new.tags, new.metadata) == (
        "decision",
        "standup-42",
        ["release"],
        {"meeting": "standup"},
    )
    assert new.occurred_at == datetime(2024, 3, 1, 9, 30, tzinfo=UTC)

    page.goto(f"/memories/{item.pk}/")
    expect(page.locator("[data-testid=confirmations]")).to_contain_text("0")
    done = page.locator("[data-testid=split-into]")
    expect(done).to_contain_text(f"#{new.pk}")
    expect(page.locator("[data-testid=incoming]").get_by_role("button", name="Split")).to_have_count(0)
    assert MemoryRevision.objects.get(item_ref=item.pk, number=2).split_into == new.pk
    done.get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"/memories/{new.pk}/$"))


def test_it_shows_the_merge_in_chinese(open_page, alice, alice_actor, project):
    item = merged_pair(alice_actor, project)
    page = open_page(alice, locale="zh-CN")
    page.goto(f"/memories/{item.pk}/")
    incoming = page.locator("[data-testid=incoming]")
    expect(incoming).to_contain_text("传入的内容")
    incoming.get_by_role("button", name="拆分").click()
    expect(page.locator(".messages")).to_contain_text("拆分")
    page.goto(f"/memories/{item.pk}/")
    expect(page.locator("[data-testid=split-into]")).to_contain_text("已拆分为")
    screenshot(page, "memory-merge-split-zh")
