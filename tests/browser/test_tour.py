"""A screenshot of every main page with realistic data (desktop, and Chinese for a few), for people to look at.

Each page must also render without a browser console error.
"""

from datetime import timedelta

from django.utils import timezone
from playwright.sync_api import expect

from memory.drafts import MemoryDraft
from memory.models import ExtractionJob, InjectionLog, MemoryItem, ReembedJob
from memory.services import memory_create, memory_update
from projects.access import actor_for_account
from projects.models import ProjectRole
from projects.services import api_key_create, org_membership_set, project_member_add

from ..factories import AccountFactory
from .conftest import PHONE, screenshot

USER_MEMORIES = [
    ("preference", "我喜欢简洁的回答，代码示例用 Python。", []),
    ("fact", "Alice is a backend engineer working on payment systems.", ["work"]),
    ("fact", "用户对花生过敏。", ["health"]),
    ("habit", "Uses VS Code and Git Flow every day.", ["tools"]),
    ("skill", "查询线上日志时优先用 event_time 分区字段。", ["sql"]),
]


def seed(alice_actor, project, org):
    items = []
    for memory_type, content, tags in USER_MEMORIES:
        skill = "online-mining" if memory_type == "skill" else ""
        items.append(
            memory_create(
                actor=alice_actor,
                org=org,
                draft=MemoryDraft(
                    content=content, memory_type=memory_type, user_id="alice", tags=tags, skill=skill
                ),
            ).item
        )
    memory_update(actor=alice_actor, item=items[1], pinned=True)
    memory_update(actor=alice_actor, item=items[3], content="Uses VS Code, Git Flow and pytest every day.")
    for memory_type, content, visibility in (
        ("constraint", "项目必须支持 PostgreSQL 16。", "members"),
        ("decision", "Chose Django REST framework over FastAPI for the admin tooling.", "public"),
        ("context", "EDU-2291 是登录页在 Safari 上白屏的问题，正在修复。", "owner_only"),
    ):
        memory_create(
            actor=alice_actor,
            org=org,
            draft=MemoryDraft(
                content=content,
                memory_type=memory_type,
                scope="project",
                project=project,
                visibility=visibility,
            ),
        )
    now = timezone.now()
    for days_ago in range(0, 12, 2):
        MemoryItem.objects.filter(pk=items[days_ago % len(items)].pk).update(
            created_at=now - timedelta(days=days_ago)
        )
        InjectionLog.objects.create(
            org=org,
            user_id="alice",
            kind="context",
            query="what does alice like",
            caller="key:eng_demo",
            memory_ids=[items[0].pk, items[1].pk],
        )
        log = InjectionLog.objects.create(
            org=org, user_id="alice", kind="search", query="花生", memory_ids=[items[2].pk]
        )
        InjectionLog.objects.filter(pk=log.pk).update(created_at=now - timedelta(days=days_ago))
    ExtractionJob.objects.create(
        org=org,
        user_id="alice",
        status="done",
        method="rules",
        attempts=1,
        result={
            "added": [{"id": items[0].pk, "content": USER_MEMORIES[0][1]}],
            "rejected": [{"content": "ok", "reason": "too short"}],
        },
        finished_at=now,
    )
    ExtractionJob.objects.create(
        org=org,
        user_id="alice",
        status="failed",
        attempts=3,
        error="LLM request timed out after 30 s",
        method="llm",
    )
    ExtractionJob.objects.create(org=org, user_id="alice", status="pending")
    ReembedJob.objects.create(
        org=org, model="text-embedding-3-small", status="processing", total=120, done=45
    )
    api_key_create(org=org, name="support-bot")
    from profiles.services import user_profile_aggregate_save, user_profile_update

    user_profile_aggregate_save(
        org=org,
        user_id="alice",
        values={"profession": "backend engineer", "programming_languages": ["Python", "Go"]},
    )
    user_profile_update(
        actor=alice_actor, org=org, user_id="alice", values={"communication_style": "concise"}
    )
    return items


def test_it_tours_every_main_page(open_page, alice, alice_actor, bob, project, org_a):
    items = seed(alice_actor, project, org_a)
    erin = AccountFactory(username="erin")
    org_membership_set(org=org_a, account=erin)
    project_member_add(
        actor=actor_for_account(alice, org_a), project=project, account=erin, role=ProjectRole.EDITOR
    )
    staff = AccountFactory(username="staff", is_staff=True, is_superuser=True)

    page = open_page(alice)
    errors = []
    page.on("console", lambda msg: errors.append((page.url, msg.text)) if msg.type == "error" else None)
    tour = [
        ("/", "home"),
        ("/memories/", "memories-list"),
        (f"/memories/{items[3].pk}/", "memory-detail"),
        ("/profile/", "profile"),
        ("/markdown/", "markdown-user"),
        ("/markdown/skills/online-mining/", "markdown-skill"),
        ("/projects/", "projects"),
        (f"/projects/{project.slug}/", "project-detail"),
        ("/queue/", "queue"),
        ("/usage/", "usage"),
        ("/keys/", "api-keys"),
    ]
    for url, name in tour:
        response = page.goto(url)
        assert response.status == 200, url
        expect(page.locator("main h1").first).to_be_visible()
        screenshot(page, name)
    page.select_option("#language", "zh-hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    for url, name in (
        ("/memories/", "zh-memories"),
        (f"/projects/{project.slug}/", "zh-project"),
        ("/usage/", "zh-usage"),
    ):
        page.goto(url)
        screenshot(page, name)
    assert errors == []

    phone = open_page(alice, viewport=PHONE)
    for url, name in tour:
        phone.goto(url)
        overflow = phone.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{url} scrolls sideways by {overflow}px at 375px"
        screenshot(phone, f"phone-{name}")

    admin = open_page(staff)
    for url, name in (
        ("/admin/", "admin-index"),
        ("/admin/projects/organization/statistics/", "admin-statistics"),
    ):
        assert admin.goto(url).status == 200
        screenshot(admin, name)
    assert "Lisbon" not in admin.content()
