"""One FilterSet for memories (memory.filters): the API list and stats, the memory page and search agree.

Tags match ALL given tags everywhere; bad filter values are a 400 with a message, never a 500.
"""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from memory.drafts import MemoryDraft
from memory.selectors import MemoryFilters, core_memories, memory_candidates
from memory.services import memory_create
from projects.access import actor_for_key

from .factories import MemoryItemFactory

URL = "/api/v1/memories"


def add(actor, content, **kw):
    return memory_create(
        actor=actor, org=actor.org, draft=MemoryDraft(user_id="alice", content=content, **kw)
    ).item


@pytest.fixture
def tagged(alice_actor):
    """Alice's memories tagged [a] and [a, b], and one without tags."""
    only_a = add(alice_actor, "The user takes the train to Hangzhou every month", tags=["a"])
    a_and_b = add(alice_actor, "The user cycles to the office when it is sunny", tags=["a", "b"])
    untagged = add(alice_actor, "The user keeps a paper diary about the weekend")
    return only_a, a_and_b, untagged


def api_ids(client, **params) -> set[int]:
    response = client.get(URL, {"page_size": 500, **params})
    assert response.status_code == 200, response.content
    return {m["id"] for m in response.json()["results"]}


def page_ids(client, **params) -> set[int]:
    response = client.get("/memories/", params)
    assert response.status_code == 200
    return {int(pk) for pk in re.findall(r'id="mem-(\d+)"', response.content.decode())}


def search_ids(client, **body) -> set[int]:
    body = {"query": "the user", "user_id": "alice", "top_k": 20, **body}
    response = client.post(f"{URL}/search", body, format="json")
    assert response.status_code == 200, response.content
    return {r["id"] for r in response.json()["results"]}


def test_it_matches_all_tags_through_the_api_the_page_and_search(tagged, alice, alice_client, alice_actor):
    only_a, a_and_b, untagged = tagged
    web = Client()
    web.force_login(alice)
    both, just_a = {a_and_b.pk}, {only_a.pk, a_and_b.pk}

    assert api_ids(alice_client, tags="a,b") == both
    assert api_ids(alice_client, tags="a") == just_a
    assert alice_client.get(f"{URL}/stats", {"tags": "a,b"}).json()["total"] == 1
    assert page_ids(web, tag="a,b") == both
    assert page_ids(web, tag="a， b") == both  # the page reads tags as the add form does
    assert page_ids(web, tag="a") == just_a
    assert page_ids(web, q="the user", tag="a,b") == both  # the page's hybrid search
    assert search_ids(alice_client, tags=["a", "b"]) == both
    assert search_ids(alice_client, tags=["a"]) == just_a
    assert search_ids(alice_client) == {only_a.pk, a_and_b.pk, untagged.pk}
    candidates = memory_candidates(actor=alice_actor, filters=MemoryFilters(user_id="alice", tags=["a", "b"]))
    assert set(candidates.values_list("id", flat=True)) == both


def test_context_core_memories_filter_through_the_same_filters(alice_actor):
    pinned = add(alice_actor, "The user is allergic to peanuts and shellfish", pinned=True)
    agent = add(alice_actor, "The user wants replies in formal English", pinned=True, agent_id="bot")
    skill = add(alice_actor, "The user prints labels on the 4x6 template", pinned=True, skill="labels")
    expired = add(
        alice_actor,
        "The user is travelling in Japan this week",
        pinned=True,
        expires_at=datetime.now(UTC) - timedelta(days=1),
    )

    def core(**kw):
        return {m.pk for m in core_memories(actor=alice_actor, filters=MemoryFilters(user_id="alice", **kw))}

    assert core() == {pinned.pk, agent.pk}  # no skill's memories, nothing expired
    assert core(skills=["labels"]) == {pinned.pk, agent.pk, skill.pk}
    assert core(agent_id="bot") == {agent.pk}
    assert core(include_expired=True) == {pinned.pk, agent.pk, expired.pk}


def test_the_api_list_takes_search_s_filters_too(alice_actor, alice_client):
    meta = add(alice_actor, "The user booked a train for the conference", metadata={"trip": "kdd"})
    skill = add(alice_actor, "The user prints labels on the 4x6 template", skill="labels")
    expired = add(
        alice_actor,
        "The user is travelling in Japan this week",
        expires_at=datetime.now(UTC) - timedelta(days=1),
    )
    plain = add(alice_actor, "The user keeps a paper diary about the weekend")
    everything = {meta.pk, skill.pk, expired.pk, plain.pk}

    assert api_ids(alice_client) == everything
    assert api_ids(alice_client, metadata='{"trip": "kdd"}') == {meta.pk}
    assert api_ids(alice_client, include_expired="false") == everything - {expired.pk}
    assert api_ids(alice_client, skills="labels") == everything
    assert api_ids(alice_client, skills="other") == everything - {skill.pk}
    assert api_ids(alice_client, skill="") == everything - {skill.pk}  # given empty: rows of no skill
    assert api_ids(alice_client, skill="labels") == {skill.pk}


@pytest.mark.parametrize("path", [URL, f"{URL}/stats"])
@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"status": "gone"},
            'status: "gone" is not a valid choice. Valid values: active, archived, superseded.',
        ),
        (
            {"status": "active,"},
            'status: "" is not a valid choice. Valid values: active, archived, superseded.',
        ),
        (
            {"memory_type": "%d %s"},
            'memory_type: "%d %s" is not a valid choice. Valid values: preference, fact, skill, habit, event, context, constraint, decision, core, summary, note.',
        ),
        ({"scope": "world"}, 'scope: "world" is not a valid choice. Valid values: user, project, session.'),
        (
            {"source": "rumour"},
            'source: "rumour" is not a valid choice. Valid values: auto, agent, user, admin, import, '
            "knowledge_base, project_resource.",
        ),
        ({"pinned": "maybe"}, "pinned: expected true or false."),
        ({"include_expired": "2"}, "include_expired: expected true or false."),
        ({"created_after": "yesterday"}, "created_after: expected an ISO 8601 date-time."),
        ({"occurred_before": "2024-13-01T00:00:00Z"}, "occurred_before: expected an ISO 8601 date-time."),
        ({"metadata": "{not json"}, "metadata: expected a JSON object."),
        ({"metadata": "[1, 2]"}, "metadata: expected a JSON object."),
        (
            {"metadata": '{"k": "\\u0000"}'},
            "metadata: k: contains a NUL character (\\u0000), which cannot be stored.",
        ),
        (
            {"metadata": '{"k": "\\ud800"}'},
            "metadata: k: contains a lone surrogate (\\ud800), which is not valid Unicode text.",
        ),
        (
            {"user_id": "al\x00ice"},
            "user_id: contains a NUL character (\\u0000), which cannot be stored.",
        ),
        ({"tags": "a,\x00"}, "tags: contains a NUL character (\\u0000), which cannot be stored."),
    ],
)
def test_it_answers_bad_filter_values_with_400_and_a_message(path, params, message, tagged, alice_client):
    response = alice_client.get(path, params)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert (error["code"], error["message"]) == ("invalid", message)


def test_it_answers_a_project_out_of_reach_with_404(tagged, alice_client, charlie_client, project):
    assert alice_client.get(URL, {"project": "atlas"}).status_code == 200
    assert charlie_client.get(URL, {"project": "atlas"}).status_code == 404
    assert charlie_client.get(f"{URL}/stats", {"project": str(project.pk)}).status_code == 404


def test_the_agent_routes_filter_by_agent_and_user(key_a):
    key, client = key_a
    agent = actor_for_key(key)

    def remember(user_id, agent_id, content):
        return memory_create(
            actor=agent, org=agent.org, draft=MemoryDraft(user_id=user_id, agent_id=agent_id, content=content)
        ).item

    mine = remember("alice", "bot", "The user prefers short answers from the bot")
    remember("alice", "helper", "The user prefers long answers from the helper")
    other = remember("bob", "bot", "Bob likes green tea in the afternoon")
    listed = client.get("/api/v1/agents/bot/memories").json()["results"]
    assert {m["id"] for m in listed} == {mine.pk, other.pk}
    listed = client.get("/api/v1/agents/bot/memories", {"userId": "alice"}).json()["results"]
    assert {m["id"] for m in listed} == {mine.pk}
    assert client.get("/api/v1/agents/bot/memories/stats", {"user_id": "bob"}).json()["total"] == 1
    assert client.get("/api/v1/agents/bot/memories/stats").json()["total"] == 2


def test_search_answers_a_nul_in_metadata_with_400(alice_client):
    body = {"query": "train", "user_id": "alice", "metadata": {"k": "\u0000"}}
    response = alice_client.post(f"{URL}/search", body, format="json")
    assert response.status_code == 400, response.content
    assert (
        response.json()["error"]["message"]
        == "metadata.k: contains a NUL character (\\u0000), which cannot be stored."
    )


def test_a_subject_takes_its_own_memories_and_its_session_s(org_a, alice_actor):
    """The subject filter (selectors.subject_q): the user's own memories, and their session memories, of
    every session without a session id, of that session with one; never another user's."""
    own = MemoryItemFactory(org=org_a, content="own", user_id="alice")
    s1 = MemoryItemFactory(org=org_a, content="s1", user_id="alice", scope="session", session_id="s1")
    s2 = MemoryItemFactory(org=org_a, content="s2", user_id="alice", scope="session", session_id="s2")
    MemoryItemFactory(org=org_a, content="bob's", user_id="bob")
    MemoryItemFactory(org=org_a, content="bob's s1", user_id="bob", scope="session", session_id="s1")

    def rows(**filters):
        return set(
            memory_candidates(actor=alice_actor, filters=MemoryFilters(**filters)).values_list(
                "pk", flat=True
            )
        )

    assert rows(user_id="alice") == {own.pk, s1.pk, s2.pk}
    assert rows(user_id="alice", session_id="s1") == {own.pk, s1.pk}
