"""Seed 000's role table through the API: every project role x every action, status and database.

Owner and Admin do everything; Editor reads all, creates, and edits or deletes only what it created;
Viewer reads. Only Owner/Admin manage members; a project never loses its last Owner. A member of the
org who is not in the project, and an account of another org, get 404 for the project's memories.
"""

import pytest
from guardian.shortcuts import get_perms

from memory.models import MemoryItem
from projects.access import actor_for_account
from projects.models import OrgRole, ProjectMembership, ProjectRole
from projects.services import org_membership_set, project_create, project_member_add, project_member_remove

from .conftest import client_for
from .factories import AccountFactory, MemoryItemFactory

ROLES = ["owner", "admin", "editor", "viewer", "nonmember", "outsider"]
ACTIONS = ["read", "create", "edit_own", "edit_other", "delete_own", "delete_other", "manage_members"]

# Expected status per role and action (seed 000's table, plus 404 for anyone outside the project).
EXPECTED = {
    "owner": {
        "read": 200,
        "create": 201,
        "edit_own": 200,
        "edit_other": 200,
        "delete_own": 204,
        "delete_other": 204,
        "manage_members": 201,
    },
    "admin": {
        "read": 200,
        "create": 201,
        "edit_own": 200,
        "edit_other": 200,
        "delete_own": 204,
        "delete_other": 204,
        "manage_members": 201,
    },
    "editor": {
        "read": 200,
        "create": 201,
        "edit_own": 200,
        "edit_other": 403,
        "delete_own": 204,
        "delete_other": 403,
        "manage_members": 403,
    },
    "viewer": {
        "read": 200,
        "create": 403,
        "edit_own": 403,
        "edit_other": 403,
        "delete_own": 403,
        "delete_other": 403,
        "manage_members": 403,
    },
    "nonmember": dict.fromkeys(ACTIONS, 404),
    "outsider": dict.fromkeys(ACTIONS, 404),
}


class Team:
    """Project 'roles' in org A with one account per role; every org role is plain member."""

    def __init__(self, org_a, org_b):
        self.org = org_a
        self.accounts = {}
        for name in ("olga", "adam", "erin", "vera", "nora", "newbie"):
            account = AccountFactory(username=name)
            org_membership_set(org=org_a, account=account, role=OrgRole.MEMBER)
            self.accounts[name] = account
        oscar = AccountFactory(username="oscar")
        org_membership_set(org=org_b, account=oscar, role=OrgRole.OWNER)
        self.accounts["oscar"] = oscar
        owner = actor_for_account(self.accounts["olga"], org_a)
        self.project = project_create(actor=owner, name="Roles", slug="roles")
        for name, role in (("adam", "admin"), ("erin", "editor"), ("vera", "editor"), ("nora", "editor")):
            project_member_add(actor=owner, project=self.project, account=self.accounts[name], role=role)
        self.by_role = {
            "owner": "olga",
            "admin": "adam",
            "editor": "erin",
            "viewer": "vera",
            "nonmember": "nora",
            "outsider": "oscar",
        }
        # The owner's memory: "other's" for everyone else.
        self.other = self.remember("olga", "The release train leaves every second Tuesday.")
        # Each role's own memory, written while it could write (vera and nora were editors then).
        self.own = {}
        for role, name in self.by_role.items():
            if role != "outsider":
                self.own[role] = self.remember(name, f"Note by {name}: staging runs PostgreSQL 16.")
        # Then vera becomes a viewer and nora leaves the project.
        vera = ProjectMembership.objects.get(project=self.project, account=self.accounts["vera"])
        from projects.services import project_member_change_role

        project_member_change_role(actor=owner, membership=vera, role=ProjectRole.VIEWER)
        nora = ProjectMembership.objects.get(project=self.project, account=self.accounts["nora"])
        project_member_remove(actor=owner, membership=nora)

    def remember(self, name, content, visibility="members"):
        """A project memory created by `name`."""
        account = self.accounts[name]
        return MemoryItemFactory(
            project=self.project, content=content, visibility=visibility, user_id=name, created_by=account
        )

    def client(self, role):
        return client_for(self.accounts[self.by_role[role]])


@pytest.fixture
def team(org_a, org_b):
    return Team(org_a, org_b)


def run_action(team, role, action):
    """Do one action as the role through the API; return (status, check) where check() asserts the DB."""
    client = team.client(role)
    own = team.own.get(role, team.other)
    if action == "read":
        response = client.get(f"/api/v1/memories/{team.other.pk}")

        def check():
            if response.status_code == 200:
                assert response.json()["content"] == team.other.content
            else:
                assert team.other.content not in response.content.decode()

        return response, check
    if action == "create":
        before = MemoryItem.objects.filter(project=team.project).count()
        response = client.post(
            "/api/v1/memories",
            {
                "content": f"{role} decided: deploy with blue-green.",
                "scope": "project",
                "project": team.project.pk,
            },
            format="json",
        )

        def check():
            after = MemoryItem.objects.filter(project=team.project).count()
            assert after == before + (1 if response.status_code == 201 else 0)
            if response.status_code == 201:
                row = MemoryItem.objects.get(pk=response.json()["id"])
                assert row.created_by == team.accounts[team.by_role[role]]

        return response, check
    if action in ("edit_own", "edit_other"):
        item = own if action == "edit_own" else team.other
        response = client.patch(
            f"/api/v1/memories/{item.pk}", {"content": f"Edited by {role}: new content."}, format="json"
        )

        def check():
            row = MemoryItem.objects.get(pk=item.pk)
            if response.status_code == 200:
                assert (row.content, row.version) == (f"Edited by {role}: new content.", item.version + 1)
            else:
                assert (row.content, row.version) == (item.content, item.version)

        return response, check
    if action in ("delete_own", "delete_other"):
        item = own if action == "delete_own" else team.other
        response = client.delete(f"/api/v1/memories/{item.pk}")

        def check():
            exists = MemoryItem.objects.filter(pk=item.pk).exists()
            assert exists == (response.status_code != 204)

        return response, check
    if action == "manage_members":
        newbie = team.accounts["newbie"]
        response = client.post(
            f"/api/v1/projects/{team.project.pk}/members",
            {"username": "newbie", "role": "viewer"},
            format="json",
        )

        def check():
            added = ProjectMembership.objects.filter(project=team.project, account=newbie)
            assert added.exists() == (response.status_code == 201)
            # guardian grants follow the membership (one writer: the membership service)
            assert ("read_memories" in get_perms(newbie, team.project)) == (response.status_code == 201)

        return response, check
    raise AssertionError(action)


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("role", ROLES)
def test_it_applies_the_role_table(team, role, action):
    # An outsider has no memory of its own in the project: its "own" actions use the owner's (404 too).
    response, check = run_action(team, role, action)
    expected = EXPECTED[role][action]
    assert response.status_code == expected, (role, action, response.status_code, response.content[:300])
    if response.status_code >= 400:
        assert set(response.json()["error"]) >= {"code", "message"}
        assert response.json()["error"]["code"] == {403: "permission_denied", 404: "not_found"}[expected]
    check()


def test_it_lists_only_what_each_role_may_read(team):
    visible = {}
    for role in ROLES:
        rows = team.client(role).get("/api/v1/memories", {"project": team.project.pk, "page_size": 500})
        visible[role] = {r["id"] for r in rows.json()["results"]} if rows.status_code == 200 else set()
    everything = set(MemoryItem.objects.filter(project=team.project).values_list("pk", flat=True))
    for role in ("owner", "admin", "editor", "viewer"):
        assert visible[role] == everything, role
    assert visible["nonmember"] == set() and visible["outsider"] == set()


def test_it_shows_public_project_memories_to_the_org_and_owner_only_ones_to_their_creator(team):
    public = team.remember("erin", "Public: the office is closed on Fridays.", visibility="public")
    private = team.remember(
        "erin", "Private draft: reorganise the team next quarter.", visibility="owner_only"
    )
    for role, can_public, can_private in (
        ("editor", 200, 200),
        ("owner", 200, 404),
        ("viewer", 200, 404),
        ("nonmember", 200, 404),
        ("outsider", 404, 404),
    ):
        client = team.client(role)
        assert client.get(f"/api/v1/memories/{public.pk}").status_code == can_public, role
        assert client.get(f"/api/v1/memories/{private.pk}").status_code == can_private, role
    # the owner may change every memory it can see, but an owner_only one of someone else is not visible
    response = team.client("owner").delete(f"/api/v1/memories/{private.pk}")
    assert response.status_code == 404
    assert MemoryItem.objects.filter(pk=private.pk).exists()


def test_it_never_lets_a_project_lose_its_last_owner(team):
    olga = ProjectMembership.objects.get(project=team.project, account=team.accounts["olga"])
    url = f"/api/v1/projects/{team.project.pk}/members/{olga.pk}"
    owner = team.client("owner")

    demote = owner.patch(url, {"role": "admin"}, format="json")
    assert demote.status_code == 400
    assert "Owner" in demote.json()["error"]["message"]
    removal = owner.delete(url)
    assert removal.status_code == 400
    olga.refresh_from_db()
    assert olga.role == ProjectRole.OWNER
    assert "manage_members" in get_perms(team.accounts["olga"], team.project)

    # an org owner cannot take it away either
    boss = AccountFactory(username="boss")
    org_membership_set(org=team.org, account=boss, role=OrgRole.OWNER)
    assert client_for(boss).delete(url).status_code == 400
    assert ProjectMembership.objects.filter(pk=olga.pk, role=ProjectRole.OWNER).exists()

    # with a second Owner, the first may step down
    adam = ProjectMembership.objects.get(project=team.project, account=team.accounts["adam"])
    promote = owner.patch(
        f"/api/v1/projects/{team.project.pk}/members/{adam.pk}", {"role": "owner"}, format="json"
    )
    assert promote.status_code == 200
    assert owner.patch(url, {"role": "editor"}, format="json").status_code == 200
    assert ProjectMembership.objects.filter(project=team.project, role=ProjectRole.OWNER).count() == 1
    assert set(get_perms(team.accounts["olga"], team.project)) == {"read_memories", "create_memories"}
    # and now adam is the last one
    adam_url = f"/api/v1/projects/{team.project.pk}/members/{adam.pk}"
    assert team.client("admin").delete(adam_url).status_code == 400
    assert ProjectMembership.objects.filter(pk=adam.pk, role=ProjectRole.OWNER).exists()


def test_it_lets_only_an_owner_grant_or_take_the_owner_role(team):
    erin = ProjectMembership.objects.get(project=team.project, account=team.accounts["erin"])
    admin = team.client("admin")
    response = admin.patch(
        f"/api/v1/projects/{team.project.pk}/members/{erin.pk}", {"role": "owner"}, format="json"
    )
    assert response.status_code == 403
    erin.refresh_from_db()
    assert erin.role == ProjectRole.EDITOR
    add = admin.post(
        f"/api/v1/projects/{team.project.pk}/members", {"username": "newbie", "role": "owner"}, format="json"
    )
    assert add.status_code == 403
    assert not ProjectMembership.objects.filter(
        project=team.project, account=team.accounts["newbie"]
    ).exists()
    olga = ProjectMembership.objects.get(project=team.project, account=team.accounts["olga"])
    assert admin.delete(f"/api/v1/projects/{team.project.pk}/members/{olga.pk}").status_code == 403
    assert ProjectMembership.objects.filter(pk=olga.pk).exists()
    # an admin may still manage non-owners
    change = admin.patch(
        f"/api/v1/projects/{team.project.pk}/members/{erin.pk}", {"role": "viewer"}, format="json"
    )
    assert change.status_code == 200
    erin.refresh_from_db()
    assert erin.role == ProjectRole.VIEWER


def test_it_takes_effect_at_once_when_a_role_changes(team):
    erin_membership = ProjectMembership.objects.get(project=team.project, account=team.accounts["erin"])
    owner = team.client("owner")
    url = f"/api/v1/projects/{team.project.pk}/members/{erin_membership.pk}"
    assert owner.patch(url, {"role": "viewer"}, format="json").status_code == 200
    assert get_perms(team.accounts["erin"], team.project) == ["read_memories"]
    erin = team.client("editor")
    create = erin.post(
        "/api/v1/memories",
        {"content": "Erin tries to add after demotion.", "scope": "project", "project": team.project.pk},
        format="json",
    )
    assert create.status_code == 403
    assert not MemoryItem.objects.filter(content__startswith="Erin tries").exists()
    # removed: the project and its members-only memories disappear for her (404, not 403)
    assert owner.delete(url).status_code == 204
    assert get_perms(team.accounts["erin"], team.project) == []
    assert erin.get(f"/api/v1/memories/{team.other.pk}").status_code == 404
    assert erin.get(f"/api/v1/projects/{team.project.pk}").status_code == 404
    assert erin.get(f"/api/v1/projects/{team.project.pk}/members").status_code == 404


def test_it_lists_members_to_every_member_but_not_to_others(team):
    for role in ("owner", "admin", "editor", "viewer"):
        response = team.client(role).get(f"/api/v1/projects/{team.project.pk}/members")
        assert response.status_code == 200, role
        assert {m["username"] for m in response.json()["results"]} == {"olga", "adam", "erin", "vera"}
    for role in ("nonmember", "outsider"):
        assert team.client(role).get(f"/api/v1/projects/{team.project.pk}/members").status_code == 404


@pytest.mark.parametrize(
    "role,update,delete",
    [
        ("owner", 200, 204),
        ("admin", 200, 403),
        ("editor", 403, 403),
        ("viewer", 403, 403),
        ("nonmember", 404, 404),
        ("outsider", 404, 404),
    ],
)
def test_it_lets_owners_and_admins_change_the_project_and_only_owners_delete_it(team, role, update, delete):
    client = team.client(role)
    url = f"/api/v1/projects/{team.project.pk}"
    response = client.patch(url, {"description": f"set by {role}"}, format="json")
    assert response.status_code == update
    team.project.refresh_from_db()
    assert (team.project.description == f"set by {role}") == (update == 200)
    response = client.delete(url)
    assert response.status_code == delete
    assert type(team.project).objects.filter(pk=team.project.pk).exists() == (delete != 204)


def test_it_makes_org_owners_act_as_project_admins(team, alice):
    """alice owns org A but is no member of 'roles': she still reads and edits (Admin), not 404."""
    client = client_for(alice)
    assert client.get(f"/api/v1/memories/{team.other.pk}").status_code == 200
    response = client.patch(
        f"/api/v1/memories/{team.other.pk}", {"content": "Corrected by the org owner."}, format="json"
    )
    assert response.status_code == 200
    assert MemoryItem.objects.get(pk=team.other.pk).content == "Corrected by the org owner."


def test_it_keeps_user_memories_to_their_subject(team, alice, bob):
    item = MemoryItemFactory(org=team.org, content="Alice is allergic to peanuts.", created_by=alice)
    bob_client = client_for(bob)
    assert bob_client.get(f"/api/v1/memories/{item.pk}").status_code == 404
    assert (
        bob_client.patch(
            f"/api/v1/memories/{item.pk}", {"content": "Bob was here."}, format="json"
        ).status_code
        == 404
    )
    assert bob_client.delete(f"/api/v1/memories/{item.pk}").status_code == 404
    wipe = bob_client.delete("/api/v1/memories?user_id=alice")
    assert wipe.status_code == 404
    assert MemoryItem.objects.filter(pk=item.pk, content="Alice is allergic to peanuts.").exists()
    # alice herself can
    assert client_for(alice).delete(f"/api/v1/memories/{item.pk}").status_code == 204
    assert not MemoryItem.objects.filter(pk=item.pk).exists()


def test_it_acts_in_the_org_the_header_names(alice, org_a, org_b, project, charlie):
    """An account in two orgs: X-Engram-Org (slug or id) picks one; without it, the first membership."""
    org_membership_set(org=org_b, account=alice, role=OrgRole.MEMBER)
    bravo = project_create(actor=actor_for_account(charlie, org_b), name="Bravo", slug="bravo")
    client = client_for(alice)
    assert [p["slug"] for p in client.get("/api/v1/projects").json()["results"]] == ["atlas"]
    in_b = client.get("/api/v1/projects", HTTP_X_ENGRAM_ORG="org-b").json()["results"]
    assert in_b == []  # a plain member of org B who is in none of its projects
    assert client.get(f"/api/v1/projects/{bravo.pk}", HTTP_X_ENGRAM_ORG=str(org_b.pk)).status_code == 404
    assert client.get(f"/api/v1/projects/{project.pk}", HTTP_X_ENGRAM_ORG="org-b").status_code == 404
    created = client.post(
        "/api/v1/projects", {"name": "Alpha in B"}, format="json", HTTP_X_ENGRAM_ORG="org-b"
    )
    assert created.status_code == 201
    assert type(project).objects.get(pk=created.json()["id"]).org == org_b


def test_it_holds_a_superuser_to_its_project_role(team):
    """guardian grants a superuser every object permission; the project role still decides."""
    vera = team.accounts["vera"]
    vera.is_superuser = True
    vera.save()
    response = team.client("viewer").patch(
        f"/api/v1/memories/{team.other.pk}", {"content": "A superuser viewer edits."}, format="json"
    )
    assert response.status_code == 403
    assert MemoryItem.objects.get(pk=team.other.pk).content == team.other.content
