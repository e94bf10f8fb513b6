"""Demo data: one org, two projects, an account for each role, a few memories. Safe to run twice."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from memory.drafts import MemoryDraft
from memory.models import MemoryItem
from memory.services import memory_create
from projects.access import actor_for_account
from projects.models import Organization, OrgRole, Project, ProjectRole
from projects.services import org_membership_set, project_member_set

PASSWORD = "engram-demo"
ACCOUNTS = [
    # username, org role, {project slug: role}
    ("alice", OrgRole.OWNER, {"atlas": ProjectRole.OWNER, "beacon": ProjectRole.OWNER}),
    ("adam", OrgRole.ADMIN, {"atlas": ProjectRole.ADMIN}),
    ("erin", OrgRole.MEMBER, {"atlas": ProjectRole.EDITOR, "beacon": ProjectRole.EDITOR}),
    ("victor", OrgRole.MEMBER, {"atlas": ProjectRole.VIEWER}),
]
USER_MEMORIES = {
    "alice": [
        ("preference", "我喜欢简洁的回答，代码示例用 Python。"),
        ("fact", "Alice is a backend engineer working on payment systems."),
        ("fact", "用户对花生过敏。"),
        ("habit", "Uses VS Code and Git Flow every day."),
    ],
    "erin": [("preference", "Prefers detailed explanations with diagrams.")],
}
PROJECT_MEMORIES = {
    "atlas": [
        ("constraint", "项目必须支持 PostgreSQL 16。", "members"),
        ("decision", "Chose Django REST framework over FastAPI for the admin tooling.", "public"),
        ("context", "EDU-2291 是登录页在 Safari 上白屏的问题，正在修复。", "members"),
    ],
    "beacon": [("context", "Beacon is the mobile client; current phase: beta.", "members")],
}


class Command(BaseCommand):
    help = "Load demo data (idempotent): org 'demo', projects atlas and beacon, accounts for every role."

    @transaction.atomic
    def handle(self, *args, **options):
        User = get_user_model()
        org, _ = Organization.objects.get_or_create(slug="demo", defaults={"name": "Demo Co."})
        projects = {}
        for slug, name in (("atlas", "Atlas"), ("beacon", "Beacon")):
            projects[slug], _ = Project.objects.get_or_create(org=org, slug=slug, defaults={"name": name})
        for username, org_role, roles in ACCOUNTS:
            account, created = User.objects.get_or_create(username=username)
            if created:
                account.set_password(PASSWORD)
                account.save()
            org_membership_set(org=org, account=account, role=org_role)
            for slug, role in roles.items():
                project_member_set(project=projects[slug], account=account, role=role)
        staff, created = User.objects.get_or_create(
            username="staff", defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            staff.set_password(PASSWORD)
            staff.save()
        self._memories(org, projects)
        self.stdout.write(
            "demo data ready: org 'demo'; logins alice, adam, erin, victor, staff / " + PASSWORD
        )

    def _memories(self, org, projects):
        if MemoryItem.objects.filter(org=org).exists():
            return
        User = get_user_model()
        for username, items in USER_MEMORIES.items():
            actor = actor_for_account(User.objects.get(username=username), org)
            for memory_type, content in items:
                draft = MemoryDraft(content=content, memory_type=memory_type, user_id=actor.user_id)
                memory_create(actor=actor, org=org, draft=draft)
        alice = actor_for_account(User.objects.get(username="alice"), org)
        for slug, items in PROJECT_MEMORIES.items():
            for memory_type, content, visibility in items:
                draft = MemoryDraft(
                    content=content,
                    memory_type=memory_type,
                    scope="project",
                    project=projects[slug],
                    visibility=visibility,
                    user_id=alice.user_id,
                )
                memory_create(actor=alice, org=org, draft=draft)
