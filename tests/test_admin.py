"""Staff admin: tenancy, keys (prefix only), jobs, statistics — and never the content of a person's memories."""

import pytest
from django.test import Client

from memory.drafts import MemoryDraft
from memory.models import ExtractionJob, MemoryItem
from memory.services import memory_create
from projects.models import ApiKey

from .factories import AccountFactory

SECRET_FACT = "Alice secretly plans to move to Lisbon next spring."
JOB_TEXT = "I told the assistant my sister's name is Mirabel."


@pytest.fixture
def staff_web(db):
    staff = AccountFactory(username="staff", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def data(alice_actor, org_a, key_a, project):
    item = memory_create(
        actor=alice_actor, org=org_a, draft=MemoryDraft(content=SECRET_FACT, user_id="alice")
    ).item
    job = ExtractionJob.objects.create(
        org=org_a,
        user_id="alice",
        messages=[{"role": "user", "content": JOB_TEXT}],
        status="failed",
        error="LLM timed out",
        result={"added": [{"id": item.pk, "content": SECRET_FACT}], "rejected": []},
    )
    return item, job, key_a[0]


@pytest.mark.parametrize(
    "url",
    [
        "/admin/",
        "/admin/projects/organization/",
        "/admin/projects/orgmembership/",
        "/admin/projects/project/",
        "/admin/projects/apikey/",
        "/admin/memory/memoryitem/",
        "/admin/memory/extractionjob/",
        "/admin/memory/reembedjob/",
        "/admin/projects/organization/statistics/",
    ],
)
def test_it_renders_admin_pages_without_memory_content(staff_web, data, url):
    response = staff_web.get(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert SECRET_FACT not in body, f"leaked memory content on {url}"
    assert JOB_TEXT not in body, f"leaked conversation on {url}"


def test_it_hides_content_on_the_detail_pages(staff_web, data):
    item, job, key = data
    for url in (
        f"/admin/memory/memoryitem/{item.pk}/change/",
        f"/admin/memory/extractionjob/{job.pk}/change/",
    ):
        body = staff_web.get(url).content.decode()
        assert SECRET_FACT not in body and JOB_TEXT not in body
    job_page = staff_web.get(f"/admin/memory/extractionjob/{job.pk}/change/").content.decode()
    assert "LLM timed out" in job_page


def test_it_shows_api_keys_by_prefix_never_the_hash(staff_web, data):
    _, _, key = data
    body = staff_web.get(f"/admin/projects/apikey/{key.pk}/change/").content.decode()
    assert key.prefix in body
    assert key.hashed_secret not in body


def test_it_revokes_keys_with_an_admin_action(staff_web, data):
    _, _, key = data
    staff_web.post("/admin/projects/apikey/", {"action": "revoke", "_selected_action": [key.pk]})
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_it_counts_memories_users_and_jobs_in_the_statistics(
    staff_web, data, charlie, org_b, alice_actor, project
):
    from projects.access import actor_for_account

    charlie_actor = actor_for_account(charlie, org_b)
    memory_create(
        actor=charlie_actor,
        org=org_b,
        draft=MemoryDraft(content="Charlie writes Go at work.", user_id="charlie"),
    )
    memory_create(
        actor=alice_actor,
        org=alice_actor.org,
        draft=MemoryDraft(content="Atlas uses PostgreSQL 16.", scope="project", project=project),
    )
    stats = staff_web.get("/admin/projects/organization/statistics/").context["stats"]
    assert stats["totals"]["memories"] == 3
    assert stats["totals"]["subjects"] == 2
    assert dict(stats["by_type"]) == {"fact": 3}
    assert dict(stats["by_scope"]) == {"user": 2, "project": 1}
    assert dict(stats["queue"]["by_status"]) == {"failed": 1}
    rows = {o["slug"]: o for o in stats["orgs"]}
    assert (rows["org-a"]["memories"], rows["org-a"]["failed"], rows["org-b"]["memories"]) == (2, 1, 1)
    assert rows["org-a"]["subjects"] == 1


def test_it_makes_memberships_and_memories_read_only(staff_web, data, alice):
    item, _, _ = data
    assert staff_web.get("/admin/projects/projectmembership/add/").status_code == 403
    assert staff_web.post(f"/admin/memory/memoryitem/{item.pk}/delete/", {"post": "yes"}).status_code == 403
    assert MemoryItem.objects.filter(pk=item.pk, content=SECRET_FACT).exists()


def test_it_keeps_non_staff_out(alice):
    client = Client()
    client.force_login(alice)
    response = client.get("/admin/projects/organization/statistics/")
    assert response.status_code == 302
    assert ApiKey.objects.count() == 0
