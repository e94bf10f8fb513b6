"""Mem0's REST surface (mem0compat) at the HTTP level: roles, projects and runs, the key's rights, the
filter language's edges, errors in Mem0's and Engram's shape (translated), linked deletes."""

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from mem0compat.filters import FilterError, filters_q, named_entities
from memory.models import ExtractionJob, MemoryFeedback, MemoryItem, Status
from projects.services import api_key_create


def token_client(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


@pytest.fixture
def mem0(org_a):
    return token_client(api_key_create(org=org_a, name="mem0")[1])


def add(client, text, **body):
    return client.post("/v3/memories/add/", {"messages": text, "infer": False, **body}, format="json")


def test_errors_carry_mem0s_detail_and_engrams_error_in_the_callers_language(mem0, org_a):
    response = mem0.post(
        "/v3/memories/add/",
        {"messages": [{"role": "bot", "content": "hello there"}], "user_id": "alex"},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == body["error"]["message"]
    assert "可选值：human, ai, system, tool, user, assistant, developer" in body["detail"]
    unknown = mem0.post("/v3/memories/add/", {"messages": "hi there", "colour": 1}, format="json")
    assert unknown.status_code == 400 and "colour: unknown field" in unknown.json()["detail"]


def test_app_id_is_the_project_and_run_id_the_session(mem0, org_a, project):
    response = add(mem0, "The team deploys on Fridays", app_id=project.slug, user_id="alex")
    assert response.status_code == 200, response.content
    row = MemoryItem.objects.get(pk=int(response.json()["results"][0]["id"]))
    assert (row.scope, row.project_id) == ("project", project.pk)
    listed = mem0.post("/v3/memories/", {"filters": {"app_id": str(project.pk)}}, format="json").json()
    assert [m["app_id"] for m in listed["results"]] == [str(project.pk)]
    both = add(mem0, "Deploys happen on Fridays", app_id=project.slug, run_id="r1", user_id="alex")
    assert both.status_code == 400 and "run_id and app_id" in both.json()["detail"]
    # filters may carry the entity ids of an add, but not contradict the top level
    clash = add(mem0, "Alex likes tea a lot", user_id="alex", filters={"user_id": "sam"})
    assert clash.status_code == 400


def test_an_other_orgs_project_does_not_exist(mem0, org_b):
    from projects.access import actor_for_account
    from projects.services import project_create

    from .factories import AccountFactory

    owner = AccountFactory(username="olga")
    from projects.services import org_membership_set

    org_membership_set(org=org_b, account=owner, role="owner")
    theirs = project_create(actor=actor_for_account(owner, org_b), name="Theirs", slug="theirs")
    response = add(mem0, "The team deploys on Fridays", app_id=str(theirs.pk), user_id="alex")
    assert response.status_code == 404
    assert not MemoryItem.objects.exists()


def test_a_read_only_key_may_read_but_not_write(org_a):
    writer = token_client(api_key_create(org=org_a, name="w")[1])
    reader = token_client(api_key_create(org=org_a, name="r", read_only=True)[1])
    memory_id = add(writer, "Alex likes green tea", user_id="alex").json()["results"][0]["id"]
    assert reader.get(f"/v1/memories/{memory_id}/").status_code == 200
    assert add(reader, "Alex likes black tea", user_id="alex").status_code == 403
    assert (
        reader.put(f"/v1/memories/{memory_id}/", {"text": "Alex likes coffee"}, format="json").status_code
        == 403
    )
    assert reader.delete(f"/v1/memories/{memory_id}/").status_code == 403
    assert MemoryItem.objects.get(pk=int(memory_id)).content == "Alex likes green tea"


def test_infer_reports_what_it_does_not_apply(mem0, org_a):
    response = mem0.post(
        "/v3/memories/add/",
        {
            "messages": "Remember that I prefer aisle seats",
            "user_id": "alex",
            "custom_instructions": "be terse",
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert [r["event"] for r in body["results"]] == ["ADD"]
    assert body["warnings"] == [
        "custom_instructions is accepted but not applied: Engram's extraction follows its own rules."
    ]


def test_expiration_and_timestamp_round_trip(mem0, org_a):
    response = add(
        mem0, "Alex is in Oslo this week", user_id="alex", expiration_date="2099-01-31", timestamp=1767225600
    )
    row = MemoryItem.objects.get(pk=int(response.json()["results"][0]["id"]))
    assert row.expires_at == datetime(2099, 1, 31, tzinfo=UTC)
    assert row.occurred_at == datetime(2026, 1, 1, tzinfo=UTC)
    got = mem0.get(f"/v1/memories/{row.pk}/").json()
    assert got["expiration_date"] == "2099-01-31"
    # expired memories are left out unless show_expired
    MemoryItem.objects.filter(pk=row.pk).update(expires_at=datetime(2020, 1, 1, tzinfo=UTC))
    assert mem0.post("/v3/memories/", {"filters": {"user_id": "alex"}}, format="json").json()["count"] == 0
    shown = mem0.post("/v3/memories/", {"filters": {"user_id": "alex"}, "show_expired": True}, format="json")
    assert shown.json()["count"] == 1
    # an update may clear it
    cleared = mem0.put(f"/v1/memories/{row.pk}/", {"expiration_date": None}, format="json")
    assert cleared.status_code == 200 and cleared.json()["expiration_date"] is None


def test_delete_linked_removes_the_versions_it_replaced(mem0, org_a):
    from memory.services import memory_supersede
    from projects.access import system_actor

    old = int(add(mem0, "Alex lives in Berlin", user_id="alex").json()["results"][0]["id"])
    new = int(add(mem0, "Alex lives in Munich now", user_id="alex").json()["results"][0]["id"])
    memory_supersede(
        actor=system_actor(org_a), old=MemoryItem.objects.get(pk=old), new=MemoryItem.objects.get(pk=new)
    )
    assert MemoryItem.objects.get(pk=old).status == Status.SUPERSEDED
    versions = mem0.post(
        "/v3/memories/", {"filters": {"user_id": "alex"}, "latest_only": False}, format="json"
    )
    assert versions.json()["count"] == 2
    assert mem0.delete(f"/v1/memories/{new}/?delete_linked=true").status_code == 200
    assert not MemoryItem.objects.filter(pk__in=[old, new]).exists()


def test_the_filter_language():
    assert named_entities({"AND": [{"user_id": "alex"}, {"agent_id": {"eq": "bot"}}]}) == {
        "user_id": "alex",
        "agent_id": "bot",
    }
    assert named_entities({"OR": [{"user_id": "alex"}]}) == {}
    q = filters_q({"NOT": [{"categories": {"contains": "food"}}], "created_at": {"lte": "2026-01-31"}})
    assert "tags" in str(q) and "created_at__lt" in str(q)  # a date alone keeps the whole day
    for bad, message in [
        ({"user": "alex"}, "Valid values"),
        ({"AND": {"user_id": "a"}}, "non-empty list"),
        ({"created_at": {"after": "2026-01-01"}}, "Valid values: eq, gt, gte, lt, lte"),
        ({"created_at": {"gte": "yesterday"}}, "ISO 8601"),
        ({"memory_ids": ["abc"]}, "not a memory id"),
        ({"keywords": {"regex": "a.*"}}, "Valid values: contains, icontains"),
        ([], "JSON object"),
    ]:
        with pytest.raises(FilterError, match=message):
            filters_q(bad)


def test_bearer_and_token_are_the_same_key(org_a):
    _, secret = api_key_create(org=org_a, name="both")
    for scheme in ("Bearer", "Token", "token"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"{scheme} {secret}")
        assert client.get("/v1/ping/").status_code == 200, scheme
        assert client.get("/api/v1/memories?user_id=x").status_code == 200, scheme


def test_feedback_values_and_rights(org_a):
    writer = token_client(api_key_create(org=org_a, name="w")[1])
    reader = token_client(api_key_create(org=org_a, name="r", read_only=True)[1])
    memory_id = add(writer, "Alex likes green tea", user_id="alex").json()["results"][0]["id"]
    bad = writer.post("/v1/feedback/", {"memory_id": memory_id, "feedback": "MEH"}, format="json")
    assert (
        bad.status_code == 400 and "Valid values: POSITIVE, NEGATIVE, VERY_NEGATIVE" in bad.json()["detail"]
    )
    refused = reader.post("/v1/feedback/", {"memory_id": memory_id, "feedback": "NEGATIVE"}, format="json")
    assert refused.status_code == 403
    assert not MemoryFeedback.objects.exists()
    ok = writer.post("/v1/feedback/", {"memory_id": memory_id, "feedback": "NEGATIVE"}, format="json")
    assert ok.status_code == 200 and MemoryFeedback.objects.get().value == "outdated"


def test_unknown_mem0_paths_and_bad_input_answer_json(mem0):
    missing = mem0.get("/v1/exports/nothing/")
    assert missing.status_code == 404 and missing["content-type"].startswith("application/json")
    nul = mem0.get("/v1/ping/?x=%00")
    assert nul.status_code == 400 and nul["content-type"].startswith("application/json")


@pytest.fixture
def chat_model(org_a, alice_client):
    from .openai_server import OpenAIStub

    with OpenAIStub() as server:
        response = alice_client.put(
            "/api/v1/llm-config", {"base_url": server.base_url, "model": "stub-chat"}, format="json"
        )
        assert response.status_code == 200, response.content
        yield server


def test_infer_uses_the_orgs_chat_model_synchronously(mem0, org_a, chat_model):
    import json

    chat_model.chat_replies.append(
        json.dumps(
            {"memories": [{"content": "Alex is vegetarian", "memory_type": "preference", "confidence": 0.9}]}
        )
    )
    response = mem0.post(
        "/v3/memories/add/",
        {"messages": [{"role": "user", "content": "I stopped eating meat last year"}], "user_id": "alex"},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert [(r["event"], r["data"]["memory"]) for r in response.json()["results"]] == [
        ("ADD", "Alex is vegetarian")
    ]
    job = ExtractionJob.objects.get(pk=response.json()["extraction_job"])
    assert (job.status, job.method) == ("done", "llm")


def test_infer_falls_back_to_the_rules_at_once_when_the_model_is_down(mem0, org_a, chat_model):
    from .openai_server import Fail

    chat_model.chat_replies.append(Fail(503))
    response = mem0.post(
        "/v3/memories/add/",
        {
            "messages": "Remember that I am allergic to peanuts",
            "user_id": "alex",
            "metadata": {"via": "mem0"},
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    job = ExtractionJob.objects.get(pk=response.json()["extraction_job"])
    assert (job.status, job.method, job.attempts) == ("done", "rules", 1)
    assert "503" in job.error and "used the rule path" in job.error
    [result] = response.json()["results"]
    assert MemoryItem.objects.get(pk=int(result["id"])).metadata == {"via": "mem0"}
