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
    assert panel.count('data-role="viewer" class="yes"') == 1
    assert panel.count('data-role="viewer" class="no"') == 5
    assert panel.count('data-role="owner" class="yes"') == 6
    assert panel.count('data-role="editor" class="yes"') == 3
    assert "Organization owners and admins act as Admin in every project" in body
    # Change the module's table: the panel follows (it is generated, not a copy).
    perms = dict(access.ROLE_PERMS)
    perms[ProjectRole.VIEWER] = {"read_memories", "create_memories"}
    monkeypatch.setattr(access, "ROLE_PERMS", perms)
    body = alice_web.get(f"/projects/{project.slug}/").content.decode()
    panel = body[body.index('data-testid="roles-panel"') :]
    assert panel.count('data-role="viewer" class="yes"') == 3


def test_my_memories_holds_the_subjects_own_and_project_memories_in_their_own_tab(alice_web, alice, project):
    MemoryItemFactory(org=project.org, content="Alice drinks green tea.")  # alice's user memory
    MemoryItemFactory(project=project, content="Atlas deploys on Tuesdays.", created_by=alice)
    mine = alice_web.get("/memories/").content.decode()
    assert "green tea" in mine and "Tuesdays" not in mine
    assert 'data-tab="mine"' in mine and 'aria-current="page" data-tab="mine"' in mine
    projects = alice_web.get("/memories/?tab=projects").content.decode()
    assert "Tuesdays" in projects and "green tea" not in projects
    searched = alice_web.get("/memories/?tab=projects&q=Tuesdays").content.decode()
    assert "Tuesdays" in searched


def test_the_add_form_shows_visibility_for_project_memories_only(alice_web, alice, project):
    body = alice_web.get("/memories/").content.decode()
    box = body[body.index('data-shown-by="id_project"') :][:80]
    assert "hidden" in box  # "about me" is chosen: who-can-see-it does not apply
    response = alice_web.post(
        "/memories/add/", {"content": "I am allergic to peanuts.", "project": "", "visibility": "owner_only"}
    )
    assert response.status_code == 302
    item = MemoryItem.objects.get(content="I am allergic to peanuts.")
    assert item.scope == "user" and item.visibility == "members"


@pytest.mark.parametrize(
    "content, expected",
    [
        ("我喜欢用 Python 写脚本。", "preference"),
        ("Never deploy on Fridays.", "constraint"),
        ("I usually run in the morning.", "habit"),
    ],
)
def test_the_add_form_suggests_a_type_from_the_text(alice_web, content, expected):
    hint = alice_web.get("/memories/suggest-type/", {"content": content}, **HX).content.decode()
    assert f'data-type="{expected}"' in hint
    alice_web.post("/memories/add/", {"content": content, "memory_type": "", "project": ""})
    assert MemoryItem.objects.get(content=content).memory_type == expected


def test_a_chosen_type_wins_over_the_suggestion(alice_web):
    alice_web.post("/memories/add/", {"content": "Never deploy on Fridays.", "memory_type": "fact"})
    assert MemoryItem.objects.get(content="Never deploy on Fridays.").memory_type == "fact"


def test_every_page_has_a_skip_link_to_the_content(alice_web):
    body = alice_web.get("/memories/").content.decode()
    assert 'class="skip-link" href="#main"' in body and 'id="main"' in body


def test_the_edit_form_asks_before_hiding_a_memory_from_the_editor(alice_web, bob, project):
    item = MemoryItemFactory(project=project, content="Atlas uses Postgres 16.", created_by=bob)
    url = f"/memories/{item.pk}/edit/"
    data = {
        "content": item.content,
        "memory_type": "fact",
        "tags": "",
        "skill": "",
        "visibility": "owner_only",
    }
    response = alice_web.post(url, {**data, "version": item.version}, **HX)
    assert "This hides the memory from you" in response.content.decode()
    assert 'name="confirm_hide"' in response.content.decode()
    item.refresh_from_db()
    assert item.visibility == "members"
    alice_web.post(url, {**data, "version": item.version, "confirm_hide": "on"}, **HX)
    item.refresh_from_db()
    assert item.visibility == "owner_only"
