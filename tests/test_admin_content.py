"""Staff never see content: every admin page (list, change, delete, history) of every registered model, with
content stored in every kind that holds a memory, message, checkpoint or profile, shows ids and counts only."""

import pytest
from django.contrib import admin
from django.test import Client, RequestFactory

from checkpoints.models import Checkpoint, Message, Session
from memory.drafts import MemoryDraft
from memory.models import ExtractionJob, InjectionLog, MemoryFeedback, MemoryItem, MemoryRevision
from memory.services import memory_create, memory_update
from profiles.models import ProfileRevision, ProjectProfile, UserProfile

from .factories import AccountFactory

SECRETS = {
    "memory": "用户对花生过敏。",
    "project memory": "Atlas launches the Lisbon office in March.",
    "edit": "Alice moved the appointment to the cardiologist.",
    "message": "My sister Mirabel is in hospital.",
    "checkpoint": "the tool state mentions Rosalind's diagnosis",
    "profile": "Works nights as a paramedic.",
    "project profile": "Win the Ostrava tender quietly.",
    "query": "what did I say about my divorce",
    "job": "I told the assistant my PIN is 4471.",
    "feedback": "Wrong: she stopped taking warfarin.",
}


@pytest.fixture
def staff_web(db):
    staff = AccountFactory(username="staff", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    return client, staff


@pytest.fixture
def content(alice_actor, org_a, project):
    item = memory_create(
        actor=alice_actor, org=org_a, draft=MemoryDraft(content=SECRETS["memory"], user_id="alice")
    ).item
    memory_update(actor=alice_actor, item=item, content=SECRETS["edit"], reason="edited")
    memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content=SECRETS["project memory"], scope="project", project=project, user_id=""),
    )
    session = Session.objects.create(org=org_a, session_id="s-1", user_id="alice", summary=SECRETS["message"])
    Message.objects.create(
        org=org_a, session=session, user_id="alice", role="human", content=SECRETS["message"]
    )
    Checkpoint.objects.create(
        org=org_a, session=session, user_id="alice", tool_states={"note": SECRETS["checkpoint"]}
    )
    UserProfile.objects.create(org=org_a, user_id="alice", background=SECRETS["profile"])
    ProjectProfile.objects.create(org=org_a, project=project, project_goal=SECRETS["project profile"])
    ProfileRevision.objects.create(
        org=org_a, user_id="alice", changes={"background": ["", SECRETS["profile"]]}
    )
    InjectionLog.objects.create(org=org_a, user_id="alice", query=SECRETS["query"], memory_ids=[item.pk])
    MemoryFeedback.objects.create(
        org=org_a, memory=item, subject="alice", value="wrong", note=SECRETS["feedback"]
    )
    ExtractionJob.objects.create(
        org=org_a,
        user_id="alice",
        messages=[{"role": "user", "content": SECRETS["job"]}],
        result={"added": [{"id": item.pk, "content": SECRETS["job"]}]},
    )
    return item


def _leaks(body: str) -> list[str]:
    return [name for name, text in SECRETS.items() if text in body or text[:20] in body]


CONTENT_MODELS = [
    MemoryItem,
    MemoryRevision,
    ExtractionJob,
    InjectionLog,
    MemoryFeedback,
    Session,
    Message,
    Checkpoint,
    UserProfile,
    ProjectProfile,
    ProfileRevision,
]


def test_no_model_holding_content_names_it_in_str(content):
    for model in CONTENT_MODELS:
        rows = list(model.objects.all())
        assert rows, f"no {model.__name__} stored"
        for row in rows:
            assert not _leaks(str(row)), f"{model.__name__}.__str__ shows content: {row}"


def test_every_admin_page_of_every_model_shows_ids_and_counts_only(staff_web, content):
    client, staff = staff_web
    # A log entry as an admin action would write one (its text is the object's __str__).
    model_admin = admin.site._registry[MemoryItem]
    request = RequestFactory().get("/admin/")
    request.user = staff
    model_admin.log_change(request, content, [{"changed": {"fields": ["pinned"]}}])
    visited = []
    for model, model_admin in admin.site._registry.items():
        opts = model._meta
        base = f"/admin/{opts.app_label}/{opts.model_name}/"
        pages = [base, f"{base}?q=Lisbon", f"{base}?q=%E8%8A%B1%E7%94%9F"]
        for pk in model_admin.get_queryset(request).values_list("pk", flat=True)[:5]:
            pages += [f"{base}{pk}/change/", f"{base}{pk}/delete/", f"{base}{pk}/history/"]
        for url in pages:
            response = client.get(url)
            assert response.status_code in (200, 403), f"{url}: {response.status_code}"
            leaks = _leaks(response.content.decode())
            assert not leaks, f"{url} shows {leaks}"
            visited.append(url)
    assert any("/memory/memoryitem/" in u and u.endswith("/history/") for u in visited)
    history = client.get(f"/admin/memory/memoryitem/{content.pk}/history/").content.decode()
    assert f"memory #{content.pk}" in history


def test_the_memory_change_page_is_titled_by_id(staff_web, content):
    client, _ = staff_web
    body = client.get(f"/admin/memory/memoryitem/{content.pk}/change/").content.decode()
    assert f"memory #{content.pk}" in body
    assert "fact:" not in body
