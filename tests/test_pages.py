"""HTML pages: every page renders for its audience, HTMX fragments, access refusals as 403/404 pages."""

import pytest
from django.test import Client

from memory.drafts import MemoryDraft
from memory.models import MemoryItem, MemoryRevision
from memory.services import memory_create
from projects.models import ProjectMembership, ProjectRole

from .factories import MemoryItemFactory


def web_client(account) -> Client:
    client = Client()
    client.force_login(account)
    return client


@pytest.fixture
def alice_web(alice):
    return web_client(alice)


@pytest.fixture
def bob_web(bob):
    return web_client(bob)


@pytest.fixture
def charlie_web(charlie):
    return web_client(charlie)


def write(actor, content):
    """Through the service, for tests that need the item's revisions."""
    return memory_create(
        actor=actor, org=actor.org, draft=MemoryDraft(content=content, user_id=actor.user_id)
    ).item


HX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.parametrize(
    "url", ["/", "/memories/", "/profile/", "/markdown/", "/projects/", "/queue/", "/usage/", "/keys/"]
)
def test_it_renders_every_main_page(alice_web, project, url):
    response = alice_web.get(url)
    assert response.status_code == 200, response.content[:500]


def test_it_sends_anonymous_visitors_to_sign_in(client):
    response = client.get("/memories/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_it_lists_only_the_subjects_own_memories(alice_web, bob, org_a):
    mine = MemoryItemFactory(org=org_a, content="Alice prefers green tea in the morning.")
    theirs = MemoryItemFactory(org=org_a, content="Bob likes strong black coffee.", user_id="bob")
    body = alice_web.get("/memories/").content.decode()
    assert mine.content in body
    assert theirs.content not in body


def test_it_adds_a_memory_from_the_page(alice_web, alice):
    response = alice_web.post(
        "/memories/add/",
        {"content": "我喜欢用 Python 写脚本。", "memory_type": "preference", "visibility": "members"},
    )
    assert response.status_code == 302
    item = MemoryItem.objects.get(content="我喜欢用 Python 写脚本。")
    assert (item.user_id, item.scope, item.source, item.created_by) == ("alice", "user", "user", alice)


def test_it_shows_the_gates_refusal_next_to_the_field(alice_web):
    response = alice_web.post(
        "/memories/add/",
        {
            "content": "my key is sk-proj-abcdefghijklmnopqrstuvwx",
            "memory_type": "fact",
            "visibility": "members",
        },
        **HX,
    )
    body = response.content.decode()
    assert 'data-field="content"' in body
    assert "API key" in body
    assert not MemoryItem.objects.exists()


def test_it_pins_in_place_with_a_fragment(alice_web, alice_actor):
    item = MemoryItemFactory(org=alice_actor.org, content="Alice works on the payments team.")
    response = alice_web.post(f"/memories/{item.pk}/pin/", **HX)
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith(f'<article class="mem card pinned" id="mem-{item.pk}"')
    assert "<html" not in body
    item.refresh_from_db()
    assert item.pinned


def test_it_edits_and_reports_a_stale_edit_with_both_versions(alice_web, alice_actor):
    item = MemoryItemFactory(org=alice_actor.org, content="Alice lives in Beijing.")
    response = alice_web.post(
        f"/memories/{item.pk}/edit/",
        {"content": "Alice lives in Shanghai.", "memory_type": "fact", "version": 1},
        **HX,
    )
    assert response.status_code == 200
    item.refresh_from_db()
    assert (item.content, item.version) == ("Alice lives in Shanghai.", 2)
    # Another tab still holds version 1.
    response = alice_web.post(
        f"/memories/{item.pk}/edit/",
        {"content": "Alice lives in Hangzhou.", "memory_type": "fact", "version": 1},
        **HX,
    )
    body = response.content.decode()
    assert 'data-testid="stale"' in body
    assert "Alice lives in Shanghai." in body and "Alice lives in Hangzhou." in body
    item.refresh_from_db()
    assert item.content == "Alice lives in Shanghai."


def test_it_deletes_and_undoes(alice_web, alice_actor):
    item = write(alice_actor, "Alice is allergic to peanuts.")
    response = alice_web.post(f"/memories/{item.pk}/delete/", **HX)
    assert 'data-testid="memory-deleted"' in response.content.decode()
    item.refresh_from_db()
    assert item.status == "archived"
    assert alice_web.post(f"/memories/{item.pk}/undo/", **HX).status_code == 200
    item.refresh_from_db()
    assert (item.status, item.content) == ("active", "Alice is allergic to peanuts.")
    assert list(MemoryRevision.objects.filter(item_ref=item.pk).values_list("action", flat=True)) == [
        "add",
        "archive",
        "restore",
    ]


def test_it_restores_an_older_revision_from_the_detail_page(alice_web, alice_actor):
    from memory.services import memory_update

    item = write(alice_actor, "Alice drives a red car.")
    memory_update(actor=alice_actor, item=item, content="Alice drives a blue car.")
    body = alice_web.get(f"/memories/{item.pk}/").content.decode()
    assert body.count('data-testid="revision"') == 2
    alice_web.post(f"/memories/{item.pk}/revisions/1/restore/")
    item.refresh_from_db()
    assert item.content == "Alice drives a red car."


def test_it_hides_other_orgs_memories_as_404(charlie_web, alice_actor):
    item = MemoryItemFactory(org=alice_actor.org, content="Alice's private note about the roadmap.")
    assert charlie_web.get(f"/memories/{item.pk}/").status_code == 404
    assert charlie_web.post(f"/memories/{item.pk}/delete/").status_code == 404
    item.refresh_from_db()
    assert item.status == "active"


def test_it_refuses_a_viewer_with_a_403_page(bob_web, alice_actor, project):
    item = MemoryItemFactory(
        project=project, content="Atlas must support PostgreSQL 16.", created_by=alice_actor.account
    )
    page = bob_web.get(f"/projects/{project.slug}/").content.decode()
    assert item.content[:20] in page
    assert f"/memories/{item.pk}/edit/" not in page
    response = bob_web.post(f"/memories/{item.pk}/delete/")
    assert response.status_code == 403
    assert b"Not allowed" in response.content
    item.refresh_from_db()
    assert item.status == "active"


def test_it_lets_an_owner_change_roles_but_keeps_the_last_owner(alice_web, alice, bob, project):
    bob_row = ProjectMembership.objects.get(project=project, account=bob)
    alice_row = ProjectMembership.objects.get(project=project, account=alice)
    alice_web.post(f"/projects/{project.slug}/members/{bob_row.pk}/role/", {"role": "editor"}, **HX)
    bob_row.refresh_from_db()
    assert bob_row.role == ProjectRole.EDITOR
    response = alice_web.post(
        f"/projects/{project.slug}/members/{alice_row.pk}/role/", {"role": "viewer"}, **HX
    )
    assert "at least one Owner" in response.content.decode()
    alice_row.refresh_from_db()
    assert alice_row.role == ProjectRole.OWNER


def test_it_refuses_a_viewer_changing_roles(bob_web, alice, project):
    alice_row = ProjectMembership.objects.get(project=project, account=alice)
    response = bob_web.post(f"/projects/{project.slug}/members/{alice_row.pk}/role/", {"role": "viewer"})
    assert response.status_code == 403
    alice_row.refresh_from_db()
    assert alice_row.role == ProjectRole.OWNER


def test_it_shows_an_api_key_secret_once_and_stores_only_its_hash(alice_web, org_a):
    from projects.models import ApiKey, hash_secret

    body = alice_web.post("/keys/", {"name": "my agent"}).content.decode()
    key = ApiKey.objects.get(org=org_a, name="my agent")
    start = body.index("<code>", body.index('data-testid="secret"')) + len("<code>")
    secret = body[start : body.index("</code>", start)]
    assert secret.startswith(key.prefix) and key.hashed_secret == hash_secret(secret)
    assert secret not in alice_web.get("/keys/").content.decode()
    alice_web.post(f"/keys/{key.pk}/revoke/")
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_it_refuses_api_keys_to_plain_members(bob_web, org_a):
    assert bob_web.get("/keys/").status_code == 403
    assert bob_web.post("/keys/", {"name": "sneaky"}).status_code == 403
    from projects.models import ApiKey

    assert not ApiKey.objects.filter(org=org_a).exists()


@pytest.mark.parametrize(
    "url, heading",
    [
        ("/", "欢迎使用 Engram"),
        ("/memories/", "我的记忆"),
        ("/profile/", "我的画像"),
        ("/markdown/", "Markdown 记忆文档"),
        ("/projects/", "项目"),
        ("/queue/", "提取队列"),
        ("/usage/", "用量"),
        ("/keys/", "API 密钥"),
    ],
)
def test_it_speaks_the_browsers_language(alice_web, project, url, heading):
    body = alice_web.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert f"<h1>{heading}</h1>" in body or f"<h1>{heading} </h1>" in body, body[:300]
    assert '<html lang="zh-hans">' in body


def test_it_serves_the_results_fragment_to_htmx(alice_web, alice_actor):
    MemoryItemFactory(org=alice_actor.org, content="Alice reads science fiction on weekends.", embedded=True)
    body = alice_web.get("/memories/?q=science+fiction", **HX).content.decode()
    assert body.lstrip().startswith('<section id="results"')
    assert "Alice reads science fiction on weekends." in body


def test_it_paginates_long_lists(alice_web, alice_actor):
    for i in range(25):
        MemoryItemFactory(org=alice_actor.org, content=f"Numbered fact {i:02d} about the orbit of moon {i}.")
    first = alice_web.get("/memories/").content.decode()
    second = alice_web.get("/memories/?page=2").content.decode()
    assert first.count('data-testid="memory"') == 20
    assert second.count('data-testid="memory"') == 5
    assert "Page 1 of 2" in first


def test_it_retries_a_failed_job_and_hides_other_peoples_jobs(alice_web, bob_web, org_a):
    from memory.models import ExtractionJob

    job = ExtractionJob.objects.create(org=org_a, user_id="alice", status="failed", error="LLM timed out")
    assert "LLM timed out" in alice_web.get("/queue/").content.decode()
    assert bob_web.get(f"/queue/{job.pk}/").status_code == 404
    assert bob_web.post(f"/queue/{job.pk}/retry/").status_code == 404
    job.refresh_from_db()
    assert job.status == "failed"
    alice_web.post(f"/queue/{job.pk}/retry/")
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("pending", 0)


def test_it_switches_the_organization(alice, org_a, org_b):
    from projects.services import org_membership_set

    org_membership_set(org=org_b, account=alice, role="member", user_id="alice-b")
    MemoryItemFactory(org=org_a, content="Alice's note that lives in org A only.")
    web = web_client(alice)
    assert "lives in org A" in web.get("/memories/").content.decode()
    response = web.post("/org/switch/", {"org": org_b.pk, "next": "/memories/5/"})
    assert response["Location"] == "/memories/"
    body = web.get("/memories/").content.decode()
    assert "lives in org A" not in body
    assert "Org B" in body
    # An org the account is not in is ignored.
    from .factories import OrgFactory

    other = OrgFactory(slug="org-c")
    web.post("/org/switch/", {"org": other.pk})
    assert web.session["org_id"] == org_b.pk


def test_it_marks_profile_fields_edited_by_the_person(alice_web, org_a):
    from profiles.models import UserProfile
    from profiles.services import user_profile_aggregate_save

    user_profile_aggregate_save(org=org_a, user_id="alice", values={"profession": "engineer"})
    body = alice_web.get("/profile/").content.decode()
    assert "mark-aggregated" in body and "mark-edited" not in body
    alice_web.post("/profile/", {"u-profession": "engineer", "u-programming_languages": "Python\nGo"})
    profile = UserProfile.objects.get(org=org_a, user_id="alice")
    assert profile.programming_languages == ["Python", "Go"]
    assert profile.edited_fields == ["programming_languages"]
    body = alice_web.get("/profile/").content.decode()
    assert body.count("mark-edited") == 1 and body.count("mark-aggregated") == 1


def test_it_changes_a_memorys_visibility_on_the_project_page(alice_web, bob_web, alice_actor, project):
    item = MemoryItemFactory(
        project=project, content="Atlas ships every second Tuesday.", created_by=alice_actor.account
    )
    response = alice_web.post(
        f"/projects/{project.slug}/memories/{item.pk}/visibility/", {"visibility": "owner_only"}, **HX
    )
    assert 'value="owner_only" selected' in response.content.decode()
    item.refresh_from_db()
    assert item.visibility == "owner_only"
    assert "second Tuesday" not in bob_web.get(f"/projects/{project.slug}/").content.decode()
    assert (
        bob_web.post(
            f"/projects/{project.slug}/memories/{item.pk}/visibility/", {"visibility": "public"}
        ).status_code
        == 404
    )


def test_it_edits_the_project_profile_for_editors_only(alice_web, bob_web, project):
    from profiles.models import ProjectProfile

    assert bob_web.post(f"/projects/{project.slug}/profile/", {"p-current_phase": "beta"}).status_code == 403
    assert not ProjectProfile.objects.filter(project=project).exists()
    alice_web.post(
        f"/projects/{project.slug}/profile/",
        {"p-current_phase": "beta", "p-key_decisions": "Use Django | admin tooling | 2026-01-05"},
    )
    profile = ProjectProfile.objects.get(project=project)
    assert profile.current_phase == "beta"
    assert profile.key_decisions == [
        {"decision": "Use Django", "reason": "admin tooling", "date": "2026-01-05"}
    ]


def test_it_adds_and_removes_project_members(alice_web, alice, charlie, org_a, project):
    from projects.services import org_membership_set

    from .factories import AccountFactory

    erin = AccountFactory(username="erin")
    org_membership_set(org=org_a, account=erin)
    alice_web.post(f"/projects/{project.slug}/members/add/", {"username": "erin", "role": "editor"}, **HX)
    row = ProjectMembership.objects.get(project=project, account=erin)
    assert row.role == "editor"
    response = alice_web.post(
        f"/projects/{project.slug}/members/add/", {"username": "charlie", "role": "viewer"}, **HX
    )
    assert "No such account in this organization." in response.content.decode()
    alice_web.post(f"/projects/{project.slug}/members/{row.pk}/remove/", **HX)
    assert not ProjectMembership.objects.filter(pk=row.pk).exists()
    owner = ProjectMembership.objects.get(project=project, account=alice)
    page = alice_web.get(f"/projects/{project.slug}/").content.decode()
    assert f"/members/{owner.pk}/remove/" not in page
    response = alice_web.post(f"/projects/{project.slug}/members/{owner.pk}/remove/", **HX)
    assert "at least one Owner" in response.content.decode()
    assert ProjectMembership.objects.filter(pk=owner.pk).exists()


def test_it_shows_where_a_memory_came_from_and_when_it_was_injected(alice_web, alice_actor, org_a):
    from memory.models import ExtractionJob, InjectionLog

    job = ExtractionJob.objects.create(
        org=org_a,
        user_id="alice",
        status="done",
        messages=[{"role": "user", "content": "记住：我对花生过敏。", "message_id": "msg-7"}],
    )
    item = MemoryItemFactory(
        org=org_a,
        content="用户对花生过敏。",
        source="auto",
        source_id=f"extraction-job:{job.pk}",
        source_message_id="msg-7",
        confidence=0.9,
    )
    InjectionLog.objects.create(
        org=org_a, user_id="alice", kind="context", query="午饭吃什么", memory_ids=[item.pk]
    )
    InjectionLog.objects.create(
        org=org_a, user_id="bob", kind="context", query="bob's question", memory_ids=[item.pk]
    )
    body = alice_web.get(f"/memories/{item.pk}/").content.decode()
    assert f'href="/queue/{job.pk}/"' in body
    assert "记住：我对花生过敏。" in body
    assert "午饭吃什么" in body
    assert "bob&#x27;s question" not in body and "bob's question" not in body


def test_it_undo_leaves_an_active_memory_alone(alice_web, alice_actor):
    item = write(alice_actor, "Alice commutes by bicycle.")
    response = alice_web.post(f"/memories/{item.pk}/undo/", **HX)
    assert response.status_code == 200
    body = response.content.decode()
    # The row comes back as it was: active, with its usual actions and no restore button.
    assert body.lstrip().startswith(f'<article class="mem card" id="mem-{item.pk}"')
    assert f"/memories/{item.pk}/delete/" in body and f"/memories/{item.pk}/undo/" not in body
    item.refresh_from_db()
    assert (item.status, item.version, item.content) == ("active", 1, "Alice commutes by bicycle.")
    assert MemoryRevision.objects.filter(item_ref=item.pk).count() == 1


def test_it_polls_re_embedding_progress_while_it_runs(alice_web, org_a):
    from memory.models import ReembedJob

    job = ReembedJob.objects.create(
        org=org_a, model="text-embedding-3-small", status="processing", total=120, done=45
    )
    page = alice_web.get("/queue/").content.decode()
    assert 'hx-trigger="every 5s"' in page and 'value="45"' in page
    job.done, job.status = 120, "done"
    job.save()
    fragment = alice_web.get("/queue/?part=reembed", **HX).content.decode()
    assert fragment.lstrip().startswith('<section class="card" id="reembed"')
    assert 'value="120"' in fragment and "every 5s" not in fragment
