"""Roles in the browser: a viewer sees no edit controls and a forged POST is refused; an admin changes a role."""

from playwright.sync_api import expect

from memory.drafts import MemoryDraft
from memory.models import MemoryItem
from memory.services import memory_create
from projects.models import ProjectMembership, ProjectRole

from .conftest import csrf_token, screenshot


def test_it_shows_a_viewer_no_edit_controls_and_refuses_a_forged_post(open_page, bob, alice_actor, project):
    item = memory_create(
        actor=alice_actor,
        org=alice_actor.org,
        draft=MemoryDraft(content="Atlas must support PostgreSQL 16.", scope="project", project=project),
    ).item
    page = open_page(bob)
    page.goto(f"/projects/{project.slug}/")
    row = page.locator("[data-testid=project-memory]", has_text="PostgreSQL 16")
    expect(row).to_be_visible()
    expect(row.locator("select")).to_have_count(0)
    expect(page.locator("#members select")).to_have_count(0)
    expect(page.get_by_role("button", name="Add member")).to_have_count(0)
    screenshot(page, "project-as-viewer")

    page.goto("/memories/?scope=project")
    card = page.locator("[data-testid=memory]", has_text="PostgreSQL 16")
    expect(card).to_be_visible()
    for name in ("Edit", "Delete", "Pin"):
        expect(card.get_by_text(name, exact=True)).to_have_count(0)

    response = page.request.post(f"/memories/{item.pk}/delete/", headers={"X-CSRFToken": csrf_token(page)})
    assert response.status == 403
    assert "Not allowed" in response.text()
    page.set_content(response.text())
    screenshot(page, "forbidden-403")
    item.refresh_from_db()
    assert item.status == "active"
    assert MemoryItem.objects.filter(pk=item.pk).exists()


def test_it_lets_an_admin_change_a_members_role(open_page, alice, bob, project):
    page = open_page(alice)
    page.goto(f"/projects/{project.slug}/")
    row = page.locator("[data-testid=member][data-username=bob]")
    row.locator("select[name=role]").select_option("editor")
    with page.expect_response(lambda r: "/members/" in r.url and r.request.method == "POST"):
        row.get_by_role("button", name="Change").click()
    expect(page.locator("[data-testid=member][data-username=bob] select[name=role]")).to_have_value("editor")
    assert ProjectMembership.objects.get(project=project, account=bob).role == ProjectRole.EDITOR

    # The last Owner cannot step down: the refusal shows next to the role.
    me = page.locator("[data-testid=member][data-username=alice]")
    me.locator("select[name=role]").select_option("viewer")
    with page.expect_response(lambda r: "/members/" in r.url and r.request.method == "POST"):
        me.get_by_role("button", name="Change").click()
    expect(page.locator("[data-testid=member][data-username=alice] .field-error")).to_contain_text("Owner")
    assert ProjectMembership.objects.get(project=project, account=alice).role == ProjectRole.OWNER
    screenshot(page, "project")
