"""Embeddings: the real local model, the remote provider against a loopback OpenAI-compatible server
(5xx, timeouts, retry), provider resolution, the embedding-config API and re-embed jobs."""

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from core.crypto import decrypt
from memory.embeddings import EmbeddingError, provider_for
from memory.embeddings.local import LocalE5Provider
from memory.embeddings.remote import OpenAICompatibleProvider
from memory.models import EmbeddingConfig, MemoryItem, ReembedJob
from memory.tasks import memory_embed, memory_embed_many, memory_embed_sweep, reembed_run
from projects.models import ProjectMembership, ProjectRole
from projects.services import project_member_change_role

from .factories import MemoryItemFactory
from .openai_server import Delay, Fail, OpenAIStub, fake_vector

URL = "/api/v1/memories"
SECRET = "sk-remote-provider-key-0123456789abcdef"


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b)
    )


def keyword_hits(word: str) -> list[int]:
    qs = MemoryItem.objects.extra(where=["search_tokens @@ to_tsquery('simple', %s)"], params=[word])
    return list(qs.values_list("pk", flat=True))


def remote_org(org, stub, user_id=""):
    from core.crypto import encrypt

    return EmbeddingConfig.objects.create(
        org=org,
        user_id=user_id,
        provider="openai",
        model="stub-embed",
        base_url=stub.base_url,
        dimensions=384,
        api_key_encrypted=encrypt(SECRET),
    )


# ---- the local model, for real ----------------------------------------------------------------------


def test_it_embeds_chinese_and_english_with_the_local_model():
    provider = LocalE5Provider()
    vectors = provider.embed_passages(["用户喜欢深色主题", "用户偏好暗色的界面主题", "明天上海下雨"])
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert abs(sum(x * x for x in vectors[0]) - 1.0) < 1e-3
    same = cosine(vectors[0], vectors[1])
    other = cosine(vectors[0], vectors[2])
    assert same > other, (same, other)
    query = provider.embed_query("dark theme")
    assert len(query) == 384 and query != vectors[1]


def test_it_resolves_user_then_org_then_default(org_a, settings):
    assert provider_for(org_a, "alice").model_name == "multilingual-e5-small"
    with OpenAIStub() as stub:
        remote_org(org_a, stub)
        assert provider_for(org_a, "alice").model_name == "stub-embed"
        EmbeddingConfig.objects.create(
            org=org_a, user_id="alice", provider="local", model="multilingual-e5-small"
        )
        assert provider_for(org_a, "alice").model_name == "multilingual-e5-small"
        assert provider_for(org_a, "bob").model_name == "stub-embed"
        EmbeddingConfig.objects.all().delete()
        settings.ENGRAM_EMBEDDING_PROVIDER = "openai"
        settings.ENGRAM_EMBEDDING_BASE_URL = stub.base_url
        settings.ENGRAM_EMBEDDING_MODEL = "server-default"
        assert provider_for(org_a, "alice").model_name == "server-default"


# ---- the remote provider ------------------------------------------------------------------------------


def test_it_embeds_through_a_remote_endpoint_with_the_stored_key(org_a, alice_client):
    with OpenAIStub() as stub:
        remote_org(org_a, stub)
        response = alice_client.post(URL, {"content": "The user runs a bakery in Porto"}, format="json")
        assert response.status_code == 201
        item = MemoryItem.objects.get()
        assert item.embedding_model == "stub-embed"
        assert list(item.embedding) == pytest.approx(
            fake_vector("The user runs a bakery in Porto", 384), abs=1e-6
        )
        assert stub.requests[-1]["body"]["dimensions"] == 384


@pytest.mark.parametrize("failure", [Fail(503), Fail(500), "timeout"])
def test_it_stores_the_item_when_the_provider_fails_and_embeds_it_on_retry(
    org_a, alice_client, settings, failure
):
    settings.ENGRAM_EMBEDDING_TIMEOUT = 0.5
    with OpenAIStub() as stub:
        remote_org(org_a, stub)
        stub.embedding_failures.append(Delay(1.5) if failure == "timeout" else failure)
        response = alice_client.post(URL, {"content": "The user moved to Lisbon in March"}, format="json")
        assert response.status_code == 201, response.content
        item = MemoryItem.objects.get()
        assert item.embedding is None and item.embedding_model == ""
        assert response.json()["has_embedding"] is False
        assert keyword_hits("lisbon") == [item.pk]
        # Down again: the task raises so Celery retries it later; nothing changes.
        stub.embedding_failures.append(Fail(503))
        with pytest.raises(EmbeddingError):
            memory_embed(item.pk)
        assert MemoryItem.objects.get().embedding is None
        memory_embed(item.pk)
        item.refresh_from_db()
        assert item.embedding_model == "stub-embed" and item.embedding is not None


def test_it_stores_a_batch_when_the_provider_fails_and_retries_it(org_a, key_a):
    _, client = key_a
    with OpenAIStub() as stub:
        remote_org(org_a, stub)
        stub.embedding_failures.append(Fail(503))
        memories = [{"content": f"Customer {i} ordered item {i * 7}", "user_id": "u1"} for i in range(5)]
        response = client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
        assert response.json()["created"] == 5
        assert MemoryItem.objects.filter(embedding=None).count() == 5
        assert len([r for r in stub.requests if r["path"].endswith("/embeddings")]) == 1
        memory_embed_many(list(MemoryItem.objects.values_list("pk", flat=True)))
        assert MemoryItem.objects.filter(embedding=None).count() == 0
        assert set(MemoryItem.objects.values_list("embedding_model", flat=True)) == {"stub-embed"}


def test_it_sweeps_up_memories_left_without_a_vector(org_a, key_a):
    """An enqueue lost while the broker was down: the sweep sends what is still unembedded after 10 min."""
    _, client = key_a
    with OpenAIStub() as stub:
        remote_org(org_a, stub)
        stub.embedding_failures.append(Fail(503))
        memories = [{"content": f"Visitor {i} booked room {i * 3}", "user_id": "u1"} for i in range(4)]
        client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
    old, recent = MemoryItem.objects.order_by("pk")[:3], MemoryItem.objects.order_by("pk")[3]
    MemoryItem.objects.filter(pk__in=[i.pk for i in old]).update(
        updated_at=timezone.now() - timedelta(minutes=11)
    )
    assert memory_embed_sweep() == {"enqueued": 3}  # the recent one may still have a retry in flight
    assert MemoryItem.objects.get(pk=recent.pk).embedding is None


def test_it_turns_every_remote_failure_into_an_embedding_error():
    with OpenAIStub() as stub:
        provider = OpenAICompatibleProvider(base_url=stub.base_url, model="m", dimensions=384)
        assert len(provider.embed_query("hello")) == 384
        stub.embedding_failures.append(Fail(429))
        with pytest.raises(EmbeddingError):
            provider.embed_passages(["hello"])
        closed = stub.base_url
    with pytest.raises(EmbeddingError):  # the server is gone: connection refused
        OpenAICompatibleProvider(base_url=closed, model="m").embed_passages(["hello"])


# ---- embedding config API and re-embed jobs ---------------------------------------------------------------


def test_it_keeps_the_api_key_write_only_and_encrypted(alice_client, org_a):
    with OpenAIStub() as stub:
        body = {"provider": "openai", "model": "stub-embed", "base_url": stub.base_url, "api_key": SECRET}
        response = alice_client.put("/api/v1/embedding-config", body, format="json")
        assert response.status_code == 200, response.content
        assert SECRET not in response.content.decode()
        assert response.json()["config"]["has_api_key"] is True
        config = EmbeddingConfig.objects.get(org=org_a, user_id="")
        assert SECRET not in config.api_key_encrypted and decrypt(config.api_key_encrypted) == SECRET
        got = alice_client.get("/api/v1/embedding-config").json()
        assert SECRET not in str(got) and got["effective"]["model"] == "stub-embed"


def test_it_lets_only_org_admins_set_the_org_model(
    bob_client, key_a, org_a, alice_client, alice_actor, bob, project
):
    body = {"provider": "local"}
    assert bob_client.put("/api/v1/embedding-config", body, format="json").status_code == 403
    assert bob_client.get("/api/v1/embedding-config").status_code == 403
    _, client = key_a
    assert client.put("/api/v1/embedding-config", body, format="json").status_code == 403
    assert not EmbeddingConfig.objects.exists()
    bad = alice_client.put(
        "/api/v1/embedding-config", {"provider": "openai", "dimensions": 1536}, format="json"
    )
    assert bad.status_code == 400
    # A member may set an override for their own subject only, and only as an editor in an org that
    # allows it (tests/test_outbound_guard.py covers who may).
    org_a.members_set_embedding = True
    org_a.save()
    assert (
        bob_client.put("/api/v1/embedding-config", {**body, "level": "user"}, format="json").status_code
        == 403
    )
    membership = ProjectMembership.objects.get(project=project, account=bob)  # a viewer so far
    project_member_change_role(actor=alice_actor, membership=membership, role=ProjectRole.EDITOR)
    own = bob_client.put("/api/v1/embedding-config", {**body, "level": "user"}, format="json")
    assert own.status_code == 200
    assert EmbeddingConfig.objects.get().user_id == "bob"


def test_it_reembeds_the_org_after_a_model_change(alice_client, key_a, org_a):
    _, client = key_a
    memories = [{"content": f"Supplier {i} delivers on day {i}", "user_id": f"u{i % 3}"} for i in range(10)]
    client.post(f"{URL}/batch", {"memories": memories, "infer": False}, format="json")
    assert set(MemoryItem.objects.values_list("embedding_model", flat=True)) == {"multilingual-e5-small"}
    with OpenAIStub() as stub:
        EmbeddingConfig.objects.create(
            org=org_a, user_id="u0", provider="local", model="multilingual-e5-small"
        )
        body = {"provider": "openai", "model": "stub-embed", "base_url": stub.base_url}
        response = alice_client.put("/api/v1/embedding-config", body, format="json")
        job_body = response.json()["reembed_job"]
        assert job_body["status"] == "pending" and job_body["total"] == 6  # u0 keeps its own local model
        stub.embedding_failures.append(Fail(503))  # the first batch fails: counted, not fatal
        reembed_run(job_body["id"])
        job = ReembedJob.objects.get(pk=job_body["id"])
        assert (job.status, job.done, job.errors) == ("failed", 3, 3)  # one subject's call failed
        job2 = ReembedJob.objects.create(org=org_a, model="stub-embed")
        reembed_run(job2.pk)
        job2.refresh_from_db()
        assert (job2.status, job2.done, job2.total, job2.errors) == ("done", 3, 3, 0)  # only what was left
        models = dict(MemoryItem.objects.values_list("user_id", "embedding_model").distinct())
        assert models == {"u0": "multilingual-e5-small", "u1": "stub-embed", "u2": "stub-embed"}
        listed = alice_client.get("/api/v1/reembed-jobs").json()["results"]
        assert [j["id"] for j in listed] == [job2.pk, job.pk]
        assert alice_client.get(f"/api/v1/reembed-jobs/{job2.pk}").json()["done"] == 3


def test_it_hides_another_orgs_reembed_jobs(charlie_client, org_a):
    job = ReembedJob.objects.create(org=org_a, model="x")
    assert charlie_client.get(f"/api/v1/reembed-jobs/{job.pk}").status_code == 404
    assert charlie_client.get("/api/v1/reembed-jobs").json()["results"] == []


def test_it_leaves_embedding_retries_to_celery_with_backoff_and_a_limit(org_a, celery_retries):
    """memory_embed's retries are Celery's: up to 5·2^retries seconds (full jitter), at most 10 minutes,
    8 times; then the error stands and the sweep finds the item later. apply() runs the retries at once."""
    back = MemoryItemFactory(org=org_a, content="The user keeps bees on the roof")
    gone = MemoryItemFactory(org=org_a, content="The user sails on the lake in summer")
    with OpenAIStub() as stub:
        remote_org(org_a, stub)
        stub.embedding_failures.extend([Fail(503)] * 3)
        assert memory_embed.apply(args=[back.pk]).state == "SUCCESS"
        assert len(stub.requests) == 4
        waits = [when for _, when in celery_retries]
        assert len(waits) == 3 and all(0 <= w <= 5 * 2**n for n, w in enumerate(waits)), waits

        celery_retries.clear()
        stub.embedding_failures.extend([Fail(503)] * 9)
        result = memory_embed.apply(args=[gone.pk])
        assert (result.state, type(result.result)) == ("FAILURE", EmbeddingError)
        assert len(stub.requests) == 4 + 9  # the first try and 8 retries
        waits = [when for _, when in celery_retries]
        assert len(waits) == 8 and all(0 <= w <= min(600, 5 * 2**n) for n, w in enumerate(waits)), waits
    back.refresh_from_db()
    gone.refresh_from_db()
    assert back.embedding_model == "stub-embed" and back.embedding is not None
    assert gone.embedding is None
