"""Profiles (layer 3 of seed 000): API access, edits with history, rule aggregation, debounced rebuilds."""

from django.conf import settings
from django.core.cache import cache
from django.test import Client

from config.celery import app as celery_app
from config.queues import queue_name
from memory.drafts import MemoryDraft
from memory.services import memory_archive, memory_create
from profiles.aggregation import project_profile_rebuild, project_values, user_profile_rebuild, user_values
from profiles.models import ProfileRevision, ProjectProfile, UserProfile
from profiles.selectors import profile_for_context, profile_prompt_lines
from profiles.tasks import profile_rebuild, profile_rebuild_schedule
from projects.access import actor_for_account, system_actor
from projects.models import ProjectRole
from projects.services import project_member_add

from .factories import AccountFactory, MemoryItemFactory

# ---- API access ---------------------------------------------------------------------------------


def test_it_shows_an_empty_profile_to_its_subject(alice_client):
    response = alice_client.get("/api/v1/profiles/users/alice")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["user_id"] == "alice"
    assert body["communication_style"] == "" and body["expertise_areas"] == []
    assert body["edited_fields"] == []
    assert not UserProfile.objects.exists()  # reading creates nothing


def test_it_hides_a_profile_from_other_members_and_other_orgs(
    alice_client, bob_client, charlie_client, key_b
):
    alice_client.patch("/api/v1/profiles/users/alice", {"profession": "engineer"}, format="json")
    assert bob_client.get("/api/v1/profiles/users/alice").status_code == 404
    assert (
        bob_client.patch("/api/v1/profiles/users/alice", {"profession": "x"}, format="json").status_code
        == 404
    )
    assert charlie_client.get("/api/v1/profiles/users/alice").status_code == 404
    _, client_b = key_b
    assert client_b.get("/api/v1/profiles/users/alice").json()["profession"] == ""
    assert UserProfile.objects.get(user_id="alice").profession == "engineer"


def test_it_lets_an_org_key_read_and_edit_any_subject(key_a, org_a):
    _, client = key_a
    response = client.patch(
        "/api/v1/profiles/users/ext-42",
        {"language_preference": "zh-CN", "expertise_areas": ["支付"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    profile = UserProfile.objects.get(org=org_a, user_id="ext-42")
    assert profile.language_preference == "zh-CN"
    assert profile.expertise_areas == ["支付"]
    assert sorted(profile.edited_fields) == ["expertise_areas", "language_preference"]


def test_it_rejects_bad_choices_and_unknown_fields(alice_client):
    for body in (
        {"communication_style": "verbose"},
        {"response_format": "html"},
        {"language_preference": "not a language!"},
        {"favourite_colour": "blue"},
        {"expertise_areas": "python"},
        {"clear_edited": ["nope"]},
    ):
        response = alice_client.patch("/api/v1/profiles/users/alice", body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error"]["message"]
    assert not UserProfile.objects.exists()


def test_it_marks_edited_fields_and_keeps_a_history(alice_client, org_a):
    response = alice_client.patch(
        "/api/v1/profiles/users/alice",
        {"communication_style": "concise", "profession": "前端工程师"},
        format="json",
    )
    assert response.status_code == 200
    assert sorted(response.json()["edited_fields"]) == ["communication_style", "profession"]
    alice_client.patch("/api/v1/profiles/users/alice", {"communication_style": "technical"}, format="json")
    revisions = list(ProfileRevision.objects.filter(org=org_a, user_id="alice").order_by("id"))
    assert len(revisions) == 2
    assert revisions[0].changes["profession"] == ["", "前端工程师"]
    assert revisions[1].changes == {"communication_style": ["concise", "technical"]}
    assert revisions[1].actor == "account:alice"
    history = alice_client.get("/api/v1/profiles/users/alice").json()["history"]
    assert history[0]["changes"] == {"communication_style": ["concise", "technical"]}

    cleared = alice_client.patch(
        "/api/v1/profiles/users/alice", {"clear_edited": ["profession"]}, format="json"
    )
    assert cleared.json()["edited_fields"] == ["communication_style"]
    assert (
        UserProfile.objects.get(user_id="alice").profession == "前端工程师"
    )  # the value stays until rebuilt


def test_it_lets_members_read_and_editors_edit_a_project_profile(
    alice_client, bob_client, charlie_client, project, alice_actor, org_a
):
    url = f"/api/v1/projects/{project.id}/profile"
    response = alice_client.patch(
        url,
        {
            "tech_stack": ["Django", "PostgreSQL"],
            "key_decisions": [{"decision": "Use pgvector", "reason": "one database", "date": "2026-01-05"}],
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["key_decisions"] == [
        {"decision": "Use pgvector", "reason": "one database", "date": "2026-01-05"}
    ]
    assert bob_client.get(url).json()["tech_stack"] == ["Django", "PostgreSQL"]  # viewer reads
    assert bob_client.patch(url, {"current_phase": "beta"}, format="json").status_code == 403
    assert charlie_client.get(url).status_code == 404
    assert charlie_client.patch(url, {"current_phase": "beta"}, format="json").status_code == 404

    dave = AccountFactory(username="dave")
    from projects.services import org_membership_set

    org_membership_set(org=org_a, account=dave, role="member")
    project_member_add(actor=alice_actor, project=project, account=dave, role=ProjectRole.EDITOR)
    from .conftest import client_for

    assert client_for(dave).patch(url, {"current_phase": "beta"}, format="json").status_code == 200
    profile = ProjectProfile.objects.get(project=project)
    assert profile.current_phase == "beta"
    assert ProfileRevision.objects.filter(project=project).count() == 2
    bad = alice_client.patch(url, {"key_decisions": [{"reason": "no decision"}]}, format="json")
    assert bad.status_code == 400


# ---- aggregation --------------------------------------------------------------------------------


def test_it_derives_user_fields_from_memories_in_chinese_and_english(org_a, alice):
    MemoryItemFactory(org=org_a, content="喜欢简洁的回答，不要长篇大论", memory_type="preference")
    MemoryItemFactory(org=org_a, content="Please answer in Chinese", memory_type="preference")
    MemoryItemFactory(org=org_a, content="Prefers answers as markdown tables", memory_type="preference")
    MemoryItemFactory(org=org_a, content="熟悉 React、TypeScript 和分布式系统", memory_type="skill")
    MemoryItemFactory(org=org_a, content="Proficient in Python and Go", memory_type="skill")
    MemoryItemFactory(org=org_a, content="常用 VS Code，习惯用 Git Flow", memory_type="habit")
    MemoryItemFactory(org=org_a, content="Uses tmux every day", memory_type="habit")
    MemoryItemFactory(org=org_a, content="用户是前端工程师", memory_type="fact")
    MemoryItemFactory(org=org_a, content="名字叫张三", memory_type="fact")

    profile, changes = user_profile_rebuild(org=org_a, user_id="alice")

    profile.refresh_from_db()
    assert profile.communication_style == "concise"
    assert profile.response_format == "markdown"
    assert profile.language_preference == "zh-CN"
    assert profile.profession == "前端工程师"
    assert profile.username == "张三"
    assert set(profile.programming_languages) == {"TypeScript", "Python", "Go"}
    assert "React" in profile.expertise_areas and "分布式系统" in profile.expertise_areas
    assert "Python" not in profile.expertise_areas
    assert set(profile.frequently_used_tools) == {"VS Code", "Git Flow", "tmux"}
    assert profile.aggregated_at is not None
    revision = ProfileRevision.objects.get(user_id="alice")
    assert revision.actor == "aggregation"
    assert revision.changes["profession"] == ["", "前端工程师"]


def test_it_never_overwrites_an_edited_field_until_the_mark_is_cleared(alice_client, org_a, alice):
    alice_client.patch("/api/v1/profiles/users/alice", {"communication_style": "detailed"}, format="json")
    MemoryItemFactory(org=org_a, content="Keep answers short and concise", memory_type="preference")
    MemoryItemFactory(org=org_a, content="Answer in English please", memory_type="preference")

    profile, _ = user_profile_rebuild(org=org_a, user_id="alice")
    profile.refresh_from_db()
    assert profile.communication_style == "detailed"  # the person's edit wins
    assert profile.language_preference == "en"  # not edited: aggregation fills it

    alice_client.patch(
        "/api/v1/profiles/users/alice", {"clear_edited": ["communication_style"]}, format="json"
    )
    user_profile_rebuild(org=org_a, user_id="alice")
    assert UserProfile.objects.get(user_id="alice").communication_style == "concise"


def test_it_follows_memories_that_go_away(org_a, alice):
    item = MemoryItemFactory(org=org_a, content="Uses Docker for everything", memory_type="habit")
    user_profile_rebuild(org=org_a, user_id="alice")
    assert UserProfile.objects.get(user_id="alice").frequently_used_tools == ["Docker"]
    memory_archive(actor=system_actor(item.org), item=item)
    user_profile_rebuild(org=org_a, user_id="alice")
    assert UserProfile.objects.get(user_id="alice").frequently_used_tools == []


def test_it_builds_the_project_profile_with_dated_decisions(org_a, project):
    MemoryItemFactory(
        org=org_a, content="项目必须支持 PostgreSQL 16", memory_type="constraint", project=project
    )
    MemoryItemFactory(
        org=org_a,
        content="选择了 Next.js 而不是 Remix，因为团队更熟悉",
        memory_type="decision",
        project=project,
    )
    MemoryItemFactory(
        org=org_a,
        content="We chose Celery for background jobs because it is proven",
        memory_type="decision",
        project=project,
    )
    MemoryItemFactory(
        org=org_a,
        content="Project goal: ship a memory service for agents",
        memory_type="context",
        project=project,
    )
    MemoryItemFactory(org=org_a, content="当前在开发支付模块", memory_type="context", project=project)
    MemoryItemFactory(
        org=org_a, content="Code review is required before merging", memory_type="habit", project=project
    )

    profile, _ = project_profile_rebuild(project=project)
    profile.refresh_from_db()
    assert profile.constraints == ["项目必须支持 PostgreSQL 16"]
    decisions = {d["decision"]: d for d in profile.key_decisions}
    assert decisions["选择了 Next.js 而不是 Remix"]["reason"] == "团队更熟悉"
    assert decisions["We chose Celery for background jobs"]["reason"] == "it is proven"
    assert all(len(d["date"]) == 10 for d in profile.key_decisions)
    assert profile.current_phase == "当前在开发支付模块"
    assert profile.project_goal == "ship a memory service for agents"
    assert {"PostgreSQL", "Next.js", "Celery"} <= set(profile.tech_stack)
    assert "Remix" not in profile.tech_stack  # the turned-down option is not the stack
    assert profile.team_conventions == ["Code review is required before merging"]


def test_it_leaves_undecidable_text_alone():
    class Item:
        def __init__(self, content, memory_type):
            self.content, self.memory_type = content, memory_type

    values = user_values([Item("likes cats", "preference"), Item("is happy today", "fact")])
    assert values == {}
    assert project_values([]) == {}


def test_it_rebuilds_nothing_for_a_subject_without_memories(org_a):
    profile, changes = user_profile_rebuild(org=org_a, user_id="ghost")
    assert profile is None and changes == {}
    assert not UserProfile.objects.exists()


# ---- debounced task -----------------------------------------------------------------------------


PROFILES_QUEUE = queue_name(settings.ENGRAM_QUEUE_PREFIX, "profiles")


def _queue_length() -> int:
    with celery_app.connection_for_write() as conn:
        return conn.default_channel.queue_declare(PROFILES_QUEUE).message_count


def _queue_purge() -> None:
    with celery_app.connection_for_write() as conn:
        conn.default_channel.queue_purge(PROFILES_QUEUE)


def test_it_enqueues_one_rebuild_for_a_burst_of_changes(org_a):
    cache.delete(f"engram:profile-rebuild:{org_a.id}:u:burst")
    before = _queue_length()
    results = [profile_rebuild_schedule(org_id=org_a.id, user_id="burst") for _ in range(5)]
    assert results == [True, False, False, False, False]
    assert _queue_length() == before + 1
    # the task clears the mark when it runs, so the next change schedules again
    profile_rebuild.apply(kwargs={"org_id": org_a.id, "user_id": "burst"})
    assert profile_rebuild_schedule(org_id=org_a.id, user_id="burst") is True
    assert _queue_length() == before + 2
    _queue_purge()
    cache.delete(f"engram:profile-rebuild:{org_a.id}:u:burst")


def test_it_rebuilds_through_the_task_after_a_memory_write(org_a, alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        memory_create(
            actor=system_actor(org_a),
            org=org_a,
            draft=MemoryDraft(
                content="Prefers plain text answers", memory_type="preference", user_id="alice"
            ),
        )
    assert callbacks, "a memory write schedules a profile rebuild after commit"
    result = profile_rebuild.apply(kwargs={"org_id": org_a.id, "user_id": "alice"}).get()
    assert "response_format" in result["changed"]
    assert UserProfile.objects.get(user_id="alice").response_format == "plain"


# ---- context --------------------------------------------------------------------------------------


def test_it_gives_the_context_endpoint_non_empty_fields(alice_client, org_a, project):
    alice_client.patch(
        "/api/v1/profiles/users/alice",
        {"profession": "backend engineer", "programming_languages": ["Go"]},
        format="json",
    )
    alice_client.patch(f"/api/v1/projects/{project.id}/profile", {"current_phase": "beta"}, format="json")
    context = profile_for_context(org_a, "alice", project)
    assert context == {
        "user": {"profession": "backend engineer", "programming_languages": ["Go"]},
        "project": {"current_phase": "beta"},
    }
    assert profile_for_context(org_a, "bob", None) == {"user": {}, "project": {}}
    lines = profile_prompt_lines(context)
    assert "- Profession: backend engineer" in lines and "- Current phase: beta" in lines


def test_it_lets_an_account_actor_see_its_own_profile_only(org_a, alice, bob):
    assert actor_for_account(bob, org_a).user_id == "bob"


def test_it_puts_the_aggregated_profile_into_the_context_endpoint(alice_client, org_a, alice, project):
    MemoryItemFactory(
        org=org_a, content="Prefers detailed, step-by-step explanations", memory_type="preference"
    )
    MemoryItemFactory(org=org_a, content="Proficient in Rust", memory_type="skill")
    MemoryItemFactory(
        org=org_a, content="Must run on PostgreSQL 16", memory_type="constraint", project=project
    )
    user_profile_rebuild(org=org_a, user_id="alice")
    project_profile_rebuild(project=project)

    response = alice_client.post(
        "/api/v1/context",
        {"user_id": "alice", "project": "atlas", "query": "how should I answer?"},
        format="json",
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["profile"]["user"]["communication_style"] == "detailed"
    assert body["profile"]["user"]["programming_languages"] == ["Rust"]
    assert body["profile"]["project"]["constraints"] == ["Must run on PostgreSQL 16"]
    assert "detailed" in body["prompt"] and "Must run on PostgreSQL 16" in body["prompt"]


# ---- LLM refinement ------------------------------------------------------------------------------


def test_it_lets_a_configured_llm_refine_the_rule_result(org_a, alice):
    from memory.llm import llm_config_set

    from .openai_server import Fail, OpenAIStub

    MemoryItemFactory(org=org_a, content="用户是后端工程师，主要做数据平台", memory_type="fact")
    MemoryItemFactory(org=org_a, content="回答请简洁", memory_type="preference")
    with OpenAIStub() as stub:
        llm_config_set(org=org_a, base_url=stub.base_url, model="stub-chat", api_key="sk-test-not-real-0000")
        stub.chat_replies.append('{"background": "数据平台团队", "communication_style": "concise"}')
        user_profile_rebuild(org=org_a, user_id="alice")
        profile = UserProfile.objects.get(user_id="alice")
        assert (profile.background, profile.communication_style, profile.profession) == (
            "数据平台团队",
            "concise",
            "后端工程师",
        )
        assert "回答请简洁" in stub.requests[-1]["body"]["messages"][1]["content"]

        # an invalid answer or a failing model keeps the rule result
        MemoryItemFactory(org=org_a, content="Please answer in English", memory_type="preference")
        stub.chat_replies.append('{"communication_style": "rambling", "language_preference": "en"}')
        user_profile_rebuild(org=org_a, user_id="alice")
        assert UserProfile.objects.get(user_id="alice").language_preference == "en"
        stub.chat_replies.append(Fail(500))
        MemoryItemFactory(org=org_a, content="Prefers markdown tables", memory_type="preference")
        user_profile_rebuild(org=org_a, user_id="alice")
        profile = UserProfile.objects.get(user_id="alice")
        assert profile.response_format == "markdown" and profile.communication_style == "concise"


def test_it_schedules_rebuilds_for_batch_writes_and_delete_all(org_a, django_capture_on_commit_callbacks):
    from memory.batch import memory_create_batch
    from memory.services import memory_delete_all

    key = f"engram:profile-rebuild:{org_a.id}:u:batcher"
    cache.delete(key)
    entries = [
        MemoryDraft(content=f"Batch fact number {n} about batcher", user_id="batcher") for n in range(5)
    ]
    with django_capture_on_commit_callbacks(execute=True):
        memory_create_batch(actor=system_actor(org_a), org=org_a, drafts=entries, infer=False)
    assert cache.get(key) == "1"  # a rebuild is waiting for this subject
    cache.delete(key)
    with django_capture_on_commit_callbacks(execute=True):
        memory_delete_all(actor=system_actor(org_a), org=org_a, user_id="batcher")
    assert cache.get(key) == "1"
    cache.delete(key)
    _queue_purge()


# ---- clean parts and their sources -----------------------------------------------------------------


def test_a_decision_is_never_cut_inside_a_word_and_its_rejected_option_is_not_the_stack(org_a, project):
    item = MemoryItemFactory(
        org=org_a,
        content="Chose Django REST framework over FastAPI for the admin tooling",
        memory_type="decision",
        project=project,
    )
    profile, _ = project_profile_rebuild(project=project)
    profile.refresh_from_db()
    [decision] = profile.key_decisions
    assert (decision["decision"], decision["reason"]) == (item.content, "")
    assert "Django" in profile.tech_stack and "FastAPI" not in profile.tech_stack
    lines = profile_prompt_lines(profile_for_context(org_a, None, project))
    assert any("Chose Django REST framework over FastAPI for the admin tooling" in line for line in lines)


def test_a_ticket_is_not_the_phase_and_a_long_phase_is_cut_between_words(org_a, project):
    MemoryItemFactory(
        org=org_a, content="项目处于内测阶段，下个月公测", memory_type="context", project=project
    )
    MemoryItemFactory(org=org_a, content="修复 #123 登录页报错", memory_type="context", project=project)
    profile, _ = project_profile_rebuild(project=project)
    profile.refresh_from_db()
    assert profile.current_phase == "项目处于内测阶段，下个月公测"

    long_phase = "The project is in its beta phase " + "with onboarding of design partners " * 8
    assert len(long_phase) > 200
    MemoryItemFactory(org=org_a, content=long_phase, memory_type="context", project=project)
    profile, _ = project_profile_rebuild(project=project)
    profile.refresh_from_db()
    phase = profile.current_phase
    assert len(phase) <= 201 and phase.endswith("…")
    assert long_phase.startswith(phase.removesuffix("…"))
    assert long_phase[len(phase) - 1] == " "  # the cut falls between two words


def test_a_language_for_code_samples_is_not_a_response_format(org_a):
    MemoryItemFactory(org=org_a, user_id="u9", content="代码示例用 Python", memory_type="preference")
    profile, _ = user_profile_rebuild(org=org_a, user_id="u9")
    assert profile.response_format == ""
    MemoryItemFactory(org=org_a, user_id="u9", content="只要代码，不要解释", memory_type="preference")
    profile, _ = user_profile_rebuild(org=org_a, user_id="u9")
    assert profile.response_format == "code"


def test_each_profile_field_links_to_the_memories_it_came_from(org_a, alice, alice_client):
    name = MemoryItemFactory(org=org_a, user_id="alice", content="用户叫王丹", memory_type="core")
    tools = MemoryItemFactory(
        org=org_a, user_id="alice", content="The user uses Neovim daily", memory_type="habit"
    )
    MemoryItemFactory(org=org_a, user_id="alice", content="The user likes cats", memory_type="fact")
    profile, _ = user_profile_rebuild(org=org_a, user_id="alice")
    profile.refresh_from_db()
    assert profile.username == "王丹" and profile.frequently_used_tools == ["Neovim"]
    assert profile.sources == {"username": [name.pk], "frequently_used_tools": [tools.pk]}
    body = alice_client.get("/api/v1/profiles/users/alice").json()
    assert body["sources"] == {"username": [name.pk], "frequently_used_tools": [tools.pk]}
    page = Client()
    page.force_login(alice)
    html = page.get("/profile/").content.decode()
    assert f'href="/memories/{name.pk}/"' in html and f'href="/memories/{tools.pk}/"' in html
    # A value a person sets does not come from memories any more.
    alice_client.patch("/api/v1/profiles/users/alice", {"username": "Dan"}, format="json")
    profile.refresh_from_db()
    assert "username" not in profile.sources and profile.sources["frequently_used_tools"] == [tools.pk]
