"""A person finds the candidates the session's cap held back on the queue page and keeps one in one click;
the profile page links each aggregated field to the memories it came from."""

from playwright.sync_api import expect

from checkpoints.services import messages_append
from memory.extraction.services import extraction_job_run
from memory.models import MemoryItem
from profiles.aggregation import user_profile_rebuild

from ..factories import MemoryItemFactory
from .conftest import screenshot

HELD_BACK = "The user has a border collie called Max"


def test_it_accepts_a_deferred_candidate_from_the_queue_page(open_page, alice, org_a):
    _, _, job = messages_append(
        org=org_a,
        session_id="busy",
        user_id="alice",
        messages=[
            {"role": "human", "content": "我住在成都，平时骑电动车上班。"},
            {"role": "human", "content": "I'm vegetarian and I have a border collie called Max."},
        ],
    )
    assert extraction_job_run(job_id=job.pk) == "done"
    page = open_page(alice)
    page.goto("/queue/")
    item = page.locator("[data-testid=deferred-item]", has_text=HELD_BACK)
    expect(item).to_be_visible()
    screenshot(page, "queue-deferred")
    item.get_by_role("button", name="Accept").click()
    expect(page.locator("[data-testid=deferred-item]", has_text=HELD_BACK)).to_have_count(0)
    assert MemoryItem.objects.filter(user_id="alice", content=HELD_BACK, status="active").exists()
    page.goto(f"/queue/{job.pk}/")
    expect(page.locator("[data-testid=deferred-item]", has_text=HELD_BACK)).to_contain_text("accepted")


def test_the_profile_page_links_fields_to_their_memories(open_page, alice, org_a):
    source = MemoryItemFactory(
        org=org_a, user_id="alice", content="The user uses Neovim daily", memory_type="habit"
    )
    user_profile_rebuild(org=org_a, user_id="alice")
    page = open_page(alice)
    page.goto("/profile/")
    link = page.locator("[data-testid=sources] a", has_text=f"#{source.pk}")
    expect(link).to_be_visible()
    link.click()
    expect(page).to_have_url(f"/memories/{source.pk}/")
