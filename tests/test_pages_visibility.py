"""The project page says who sees what: visibility named for its audience, a confirmation before a change
hides a memory from the person making it, and the roles panel read off projects.access."""

import pytest
from django.test import Client

from memory.models import MemoryItem
from projects import access
from projects.models import ProjectRole

from .factories import MemoryItemFactory

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def alice_web(alice):
    client = Client()
    client.force_login(alice)
    return client


def test_it_names_each_visibility_for_who_can_see_it(alice_web, alice, bob, project):
    MemoryItemFactory(project=project, content="Atlas deploys on Tuesdays.", created_by=alice)
    MemoryItemFactory(project=project, content="Atlas uses Postgres 16.", created_by=bob)
    body = alice_web.get(f"/projects/{project.slug}/").content.decode()
    assert "only me (the author)" in body
    assert "only its author (bob)" in body  # bob's memory: "owner" is its author, not the project Owner
    assert f"everyone in {project.org.name}" in body
    assert "project members" in body
    assert ">owner only<" not in body and ">public<" not in body


def test_it_asks_before_a_change_hides_a_memory_from_the_person_making_it(alice_web, bob, project):
    item = MemoryItemFactory(project=project, content="Atlas uses Postgres 16.", created_by=bob)
    url = f"/projects/{project.slug}/memories/{item.pk}/visibility/"
    response = alice_web.post(url, {"visibility": "owner_only"}, **HX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == f"#pm-{item.pk}"
    assert "This hides the memory from you." in response.content.decode()
    item.refresh_from_db()
    assert item.visibility == "members"  # nothing changed yet
    # Without HTMX, the same question as a page.
    page = alice_web.post(url, {"visibility": "owner_only"})
    assert page.status_code == 200 and 'name="confirm"' in page.content.decode()
    item.refresh_from_db()
    assert item.visibility == "members"
    # Confirmed: changed, and the table sent back no longer holds the row.
    done = alice_web.post(url, {"visibility": "owner_only", "confirm": "1"}, **HX)
    item.refresh_from_db()
    assert item.visibility == "owner_only"
    assert 'id="memories"' in done.content.decode()
    assert f'id="pm-{item.pk}"' not in done.content.decode()


def test_it_moves_a_changed_row_to_its_new_group_at_once(alice_web, alice, project):
    item = MemoryItemFactory(project=project, content="Atlas deploys on Tuesdays.", created_by=alice)
    other = MemoryItemFactory(project=project, content="Atlas uses Postgres 16.", created_by=alice)
    url = f"/projects/{project.slug}/memories/{item.pk}/visibility/"
    body = alice_web.post(url, {"visibility": "public"}, **HX).content.decode()
    assert MemoryItem.objects.get(pk=item.pk).visibility == "public"
    everyone = body.index(f"everyone in {project.org.name}</th>")
    members = body.index("project members</th>")
    assert everyone < body.index(f'id="pm-{item.pk}"') < members < body.index(f'id="pm-{other.pk}"')


def test_it_refuses_an_unknown_visibility_with_a_400(alice_web, alice, project):
    item = MemoryItemFactory(project=project, content="Atlas deploys on Tuesdays.", created_by=alice)
    response = alice_web.post(f"/projects/{project.slug}/memories/{item.pk}/visibility/", {"visibility": "x"})
    assert response.status_code == 400


def test_the_roles_panel_is_read_off_the_access_modules_table(alice_web, project, monkeypatch):
    body = alice_web.get(f"/projects/{project.slug}/").content.decode()
    panel = body[body.index('data-testid="roles-panel"') :]
    viewer = panel[panel.index('data-role="viewer"') :].split("</tr>")[0]
    assert viewer.count('class="yes"') == 1 and viewer.count('class="no"') == 5
    owner = panel[panel.index('data-role="owner"') :].split("</tr>")[0]
    assert owner.count('class="yes"') == 6
    assert "Organization owners and admins act as Admin in every project" in body
    # Change the module's table: the panel follows (it is generated, not a copy).
    perms = dict(access.ROLE_PERMS)
    perms[ProjectRole.VIEWER] = {"read_memories", "create_memories"}
    monkeypatch.setattr(access, "ROLE_PERMS", perms)
    body = alice_web.get(f"/projects/{project.slug}/").content.decode()
    panel = body[body.index('data-testid="roles-panel"') :]
    viewer = panel[panel.index('data-role="viewer"') :].split("</tr>")[0]
    assert viewer.count('class="yes"') == 3
