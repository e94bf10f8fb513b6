"""Every user-facing string is translated: each web page (every GET route outside the API and the admin),
rendered in zh-Hans for a signed-in account with data on every page, shows no English word but the
product's names and what people stored themselves; the catalogue has no untranslated or fuzzy entry."""

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from audit.models import AuditEvent
from memory.drafts import MemoryDraft
from memory.models import ExtractionJob, InjectionLog
from memory.services import memory_archive, memory_create, memory_restore, memory_update
from profiles.services import user_profile_update
from projects.access import actor_for_account
from projects.models import ProjectRole
from projects.services import api_key_create, org_membership_set, project_create, project_member_add
from webhooks.services import endpoint_create

from .factories import AccountFactory, OrgFactory

PO = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"

# Words a Chinese page may show in Latin letters: names of products, formats and protocols.
NAMES = {
    "engram",
    "english",
    "javascript",
    "standard",
    "webhooks",
    "markdown",
    "api",
    "mcp",
    "python",
    "curl",
    "json",
    "htmx",
    "svg",
    "id",
    "url",
    "urls",
    "llm",
    "utc",
    "http",
    "https",
    "sha",
    "hmac",
    "langgraph",
    "mem",
    "openai",
    "svix",
    "webhook",
    "ip",
    "csv",
    "post",
    "get",
    "bearer",
    "authorization",
    "redoc",
    "swagger",
    "openapi",
    "cjk",
    "ok",
    "vs",
    "code",
    "git",
    "postgresql",
    "django",
    "sdk",
}
SKIP_TAGS = {"script", "style", "code", "pre", "svg"}
ATTRIBUTES = {
    "title",
    "placeholder",
    "aria-label",
    "alt",
    "data-confirm",
    "hx-confirm",
    "data-forbidden",
    "data-notfound",
    "data-failed",
    "data-copied",
    "data-copy-label",
}


class VisibleText(HTMLParser):
    """The text a person reads: text nodes outside code and scripts, plus the attributes shown as text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in SKIP_TAGS:
            self.skipping += 1
        for name, value in attrs:
            if value and (
                name in ATTRIBUTES or (tag == "input" and name == "value" and ("type", "submit") in attrs)
            ):
                self.parts.append(value)

    def handle_endtag(self, tag):
        if tag in SKIP_TAGS and self.skipping:
            self.skipping -= 1

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def english_left(html: str, own: set[str]) -> list[str]:
    """The English words in a page, each with a little of the text around it."""
    parser = VisibleText()
    parser.feed(html)
    found = []
    for part in parser.parts:
        text = re.sub(r"\S*/\S*", " ", part)  # addresses and paths (skills/写作.md)
        text = re.sub(r"\b[A-Za-z]+-\d+\b", " ", text)  # identifiers such as a session id "chat-42"
        text = re.sub(r"[\w.-]+\.(md|\w+\.\w+)\b|\b[a-z_]+\.[a-z_]+\b", " ", text)  # user.md, memory.created
        for match in re.finditer(r"[A-Za-z][A-Za-z'’]+", text):
            word = match.group(0)
            if word.lower() in NAMES or word in own:
                continue
            found.append(text[max(0, match.start() - 30) : match.end() + 30].strip())
    return found


@pytest.fixture
def world(db):
    """An org whose every page has something on it, all of it written in Chinese."""
    org = OrgFactory(slug="zh-org", name="示例公司")
    alice = AccountFactory(username="alice")
    bob = AccountFactory(username="bob")
    org_membership_set(org=org, account=alice, role="owner")
    org_membership_set(org=org, account=bob, role="member")
    actor = actor_for_account(alice, org)
    project = project_create(actor=actor, name="北极星", slug="atlas", description="内部工具")
    project_member_add(actor=actor, project=project, account=bob, role=ProjectRole.VIEWER)

    def add(content, **kw):
        return memory_create(actor=actor, org=org, draft=MemoryDraft(content=content, **kw)).item

    pinned = add("我喜欢简洁的回答。", user_id="alice", memory_type="preference", tags=["风格"])
    memory_update(actor=actor, item=pinned, pinned=True, reason="pinned")
    edited = add("用户对花生过敏。", user_id="alice")
    memory_update(actor=actor, item=edited, content="用户对花生和芝麻过敏。", reason="edited on the web page")
    deleted = add("用户住在杭州。", user_id="alice")
    memory_archive(actor=actor, item=deleted, reason="deleted on the web page")
    memory_restore(actor=actor, item=deleted, number=2, reason="undo delete")
    add("写作时先列提纲。", user_id="alice", memory_type="skill", skill="写作")
    memory_create(
        actor=actor,
        org=org,
        draft=MemoryDraft(
            content="项目必须支持 PostgreSQL 16。", scope="project", project=project, user_id=""
        ),
        reason="added on the web page",
    )
    InjectionLog.objects.create(
        org=org, user_id="alice", kind="context", query="过敏", caller=actor.label, memory_ids=[edited.pk]
    )
    ExtractionJob.objects.create(
        org=org,
        user_id="alice",
        status="done",
        attempts=1,
        result={"added": [{"id": edited.pk}], "merged": []},
    )
    ExtractionJob.objects.create(org=org, user_id="alice", status="failed", attempts=2, error="")
    user_profile_update(actor=actor, org=org, user_id="alice", values={"profession": "后端工程师"})
    api_key_create(
        org=org, name="助手密钥", read_only=False, projects=[project], created_by=alice, actor=actor
    )
    endpoint, _secret = endpoint_create(actor=actor, url="http://127.0.0.1:9/engram", description="通知")
    assert AuditEvent.objects.filter(org=org).exists()
    return {"alice": alice, "bob": bob, "project": project, "memory": edited, "org": org, "webhook": endpoint}


def _routes(patterns, prefix=""):
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), p.name


def web_routes():
    """Every route of the web pages: not the API, the admin, sign-in or the language switch."""
    for route, name in _routes(get_resolver().url_patterns):
        if route.startswith(("admin/", "api/", "i18n/", "login/", "logout/", "v1/", "mcp")):
            continue
        yield route, name


def fill(route: str, world) -> str:
    """A route with its parameters filled in from the seeded world."""
    ids = {
        "memories": world["memory"].pk,
        "queue": ExtractionJob.objects.filter(org=world["org"]).order_by("id").first().pk,
        "webhooks": world["webhook"].pk,
    }
    section = route.split("/")[0]
    url = re.sub(r"<slug:\w+>", world["project"].slug, route)
    url = re.sub(r"<str:skill>", "写作", url)
    url = re.sub(r"<int:number>", "1", url)
    url = re.sub(r"<int:pk>", str(ids.get(section) or 1), url)
    url = re.sub(r"<int:\w+>", "1", url)
    return "/" + url


def zh_client(account) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(account)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return client


def test_every_web_page_in_chinese_shows_no_english(world):
    own = {"alice", "bob", "atlas", "PostgreSQL"}
    client = zh_client(world["alice"])
    rendered, names, problems = [], set(), {}
    for route, name in web_routes():
        url = fill(route, world)
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            response = client.get(url, **headers)
            if response.status_code in (302, 405) or "text/html" not in response.get("Content-Type", ""):
                continue
            rendered.append(f"{url} {'(htmx)' if headers else ''}")
            names.add(name)
            left = english_left(response.content.decode(), own)
            if left:
                problems[f"{name} {url}{' (htmx)' if headers else ''}"] = left
    # Refusals: the 403 page with its reason, and the 404 page.
    for url in ("/keys/", "/audit/", "/memories/999999/"):
        response = zh_client(world["bob"]).get(url)
        assert response.status_code in (403, 404)
        rendered.append(url)
        left = english_left(response.content.decode(), own)
        if left:
            problems[f"refusal {url}"] = left
    # The gate's refusals, shown next to the field.
    for content in ("好", "我的密码是 hunter2，API key sk-live-abcdefghijklmnopqrstuvwx"):
        response = client.post("/memories/add/", {"content": content, "project": ""})
        assert response.status_code == 400
        assert "field-error" in response.content.decode()
        rendered.append(f"refused add {content[:4]}")
        left = english_left(response.content.decode().replace(content, ""), own)  # but what was typed
        if left:
            problems[f"gate refusal {content[:6]}"] = left
    # A Markdown document refused line by line.
    page = client.get("/markdown/").content.decode()
    version = re.search(r'name="base_version" value="([^"]+)"', page).group(1)
    for document in (
        "# user.md\n## 喜欢的东西\n- 猫\n",
        "# user.md\n- 没有标题\n",
        "# user.md\n## 事实\n只是一句话\n",
    ):
        response = client.post("/markdown/", {"document": document, "base_version": version})
        assert response.status_code in (400, 409, 422), response.status_code
        assert "行：" in response.content.decode()  # the refusal is on the page, line numbered
        rendered.append("markdown refusal")
        left = english_left(response.content.decode(), own)
        if left:
            problems[f"markdown refusal {document[10:20]!r}"] = left
    # Signing in.
    left = english_left(Client(HTTP_ACCEPT_LANGUAGE="zh-hans").get("/login/").content.decode(), own)
    if left:
        problems["login"] = left
    assert len(rendered) >= 20, rendered
    wanted = {
        "memory-list",
        "memory-detail",
        "project-detail",
        "queue",
        "queue-job",
        "markdown",
        "markdown-skill",
        "key-list",
        "profile",
        "usage",
        "audit-log-page",
        "webhook-list",
        "webhook-detail",
        "memory-edit",
        "home",
        "project-list",
    }
    assert wanted <= names, wanted - names
    assert not problems, "\n".join(f"{page}: {left[:6]}" for page, left in problems.items())


@pytest.mark.skipif(not shutil.which("msgattrib"), reason="gettext tools are not installed")
def test_the_catalogue_has_no_untranslated_or_fuzzy_entry():
    for flag in ("--untranslated", "--only-fuzzy"):
        out = subprocess.run(["msgattrib", flag, "--no-obsolete", str(PO)], capture_output=True, text=True)
        assert "msgid" not in out.stdout.replace('msgid ""\nmsgstr ""', "", 1), out.stdout[:2000]


def test_the_detector_finds_english(world):
    """The page check is able to fail: English text, outside code and stored content, is reported."""
    html = '<p>已保存 <span title="Added 2">x</span></p><code>curl -H "Bearer"</code><p>1 attempts</p>'
    assert english_left(html, set()) == ["Added 2", "1 attempts"]
