"""The write services directly: revisions for every change, supersede, archive, restore, delete, batch,
the gate on edits, and access enforced inside the services."""

import pytest
from django.core.exceptions import PermissionDenied

from memory import services
from memory.batch import memory_create_batch
from memory.drafts import MemoryDraft
from memory.gate import GateRejection
from memory.models import MemoryItem, MemoryRevision
from memory.services import StaleVersion
from projects.access import actor_for_key


def create(actor, org, text, **kw):
    kw.setdefault("user_id", "alice")
    return services.memory_create(actor=actor, org=org, draft=MemoryDraft(content=text, **kw))


def actions(item) -> list[str]:
    return list(
        MemoryRevision.objects.filter(item_ref=item.pk).order_by("number").values_list("action", flat=True)
    )


def test_it_records_every_change_as_a_revision(alice_actor, org_a):
    item = create(alice_actor, org_a, "The user lives in Berlin").item
    assert item.search_tokens is not None or MemoryItem.objects.get(pk=item.pk).search_tokens is not None
    item = services.memory_update(
        actor=alice_actor, item=item, content="The user lives in Lisbon", reason="moved"
    )
    # Added without inference (an inferred add would already supersede it: test_write_classification.py).
    new = services.memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="The user lives in Porto", user_id="alice"),
        dedup="hash",
    ).item
    services.memory_supersede(actor=alice_actor, old=item, new=new, reason="moved again")
    old = MemoryItem.objects.get(pk=item.pk)
    assert (old.status, old.superseded_by_id, old.content) == (
        "superseded",
        new.pk,
        "The user lives in Lisbon",
    )
    services.memory_archive(actor=alice_actor, item=new)
    services.memory_restore(actor=alice_actor, item=old, number=1)
    assert actions(old) == ["add", "update", "supersede", "restore"]
    assert actions(new) == ["add", "archive"]
    restored = MemoryItem.objects.get(pk=item.pk)
    assert (restored.content, restored.status, restored.superseded_by_id) == (
        "The user lives in Berlin",
        "active",
        None,
    )
    revision = MemoryRevision.objects.get(item_ref=item.pk, number=2)
    assert revision.reason == "moved" and revision.actor == "account:alice"
    assert revision.before["content"] == "The user lives in Berlin"
    assert revision.after["content"] == "The user lives in Lisbon"


def test_it_keeps_search_tokens_when_the_returned_instance_is_saved_again(alice_actor, org_a):
    item = create(alice_actor, org_a, "The user collects vinyl records").item
    item.pinned = True
    item.save()
    row = MemoryItem.objects.get(pk=item.pk)
    assert row.pinned and row.search_tokens is not None


def test_it_raises_stale_version_and_writes_nothing(alice_actor, org_a):
    item = create(alice_actor, org_a, "The user likes jazz").item
    services.memory_update(actor=alice_actor, item=item, expected_version=1, pinned=True)
    with pytest.raises(StaleVersion) as exc:
        services.memory_update(
            actor=alice_actor, item=item, expected_version=1, content="The user likes rock"
        )
    assert exc.value.current.version == 2
    assert MemoryItem.objects.get(pk=item.pk).content == "The user likes jazz"
    assert actions(item) == ["add", "update"]


def test_it_gates_edits(alice_actor, org_a):
    item = create(alice_actor, org_a, "The user likes jazz").item
    for fields in ({"content": "my password is Hunter22"}, {"content": "hey"}, {"confidence": 0.2}):
        with pytest.raises(GateRejection):
            services.memory_update(actor=alice_actor, item=item, **fields)
    assert MemoryItem.objects.get(pk=item.pk).version == 1


def test_it_enforces_access_inside_the_services(alice_actor, org_a, bob, project):
    from projects.access import actor_for_account

    bob_actor = actor_for_account(bob, org_a)
    with pytest.raises(PermissionDenied):
        create(bob_actor, org_a, "Alice is on holiday next week", user_id="alice")
    item = create(
        alice_actor, org_a, "Atlas ships in June", scope="project", project=project, user_id=""
    ).item
    with pytest.raises(PermissionDenied):  # bob is a viewer
        services.memory_update(actor=bob_actor, item=item, pinned=True)
    with pytest.raises(PermissionDenied):
        services.memory_delete(actor=bob_actor, item=item)
    assert MemoryItem.objects.filter(pk=item.pk, pinned=False).exists()


def test_it_deletes_all_of_a_subject_but_not_project_memories(alice_actor, org_a, project):
    for text in ("The user likes tea", "用户每周游泳两次", "The user has a dog"):
        create(alice_actor, org_a, text)
    create(alice_actor, org_a, "Atlas uses PostgreSQL 16", scope="project", project=project)
    create(alice_actor, org_a, "Scratch note for this chat", scope="session", session_id="s1")
    assert services.memory_delete_all(actor=alice_actor, org=org_a, user_id="alice") == 4
    assert list(MemoryItem.objects.values_list("scope", flat=True)) == ["project"]
    deleted = MemoryRevision.objects.filter(action="delete")
    assert deleted.count() == 4 and all(r.before is None and r.after is None for r in deleted)
    assert (
        not MemoryRevision.objects.filter(action="add", user_id="alice", item=None)
        .exclude(after=None)
        .exists()
    )


def test_it_rate_limits_auto_creates_in_the_service(alice_actor, org_a, settings):
    settings.MEMORY_MAX_EXTRACTIONS = 1
    create(alice_actor, org_a, "The user runs marathons", source="auto", session_id="s9")
    with pytest.raises(GateRejection) as exc:
        create(alice_actor, org_a, "用户喜欢吃火锅", source="auto", session_id="s9")
    assert exc.value.code == "rate_limited"
    assert MemoryItem.objects.count() == 1


def test_it_writes_a_batch_with_one_embedding_call(key_a, org_a):
    from memory.models import EmbeddingConfig

    from .openai_server import OpenAIStub

    actor = actor_for_key(key_a[0])
    with OpenAIStub() as stub:
        EmbeddingConfig.objects.create(
            org=org_a, provider="openai", model="stub-embed", base_url=stub.base_url
        )
        drafts = [
            MemoryDraft(content=f"Customer {i} prefers delivery on day {i}", user_id="u1") for i in range(40)
        ]
        drafts.append(MemoryDraft(content="Customer 0 prefers delivery on day 0", user_id="u1"))
        drafts.append(GateRejection("too_short", "x"))
        results = memory_create_batch(actor=actor, org=org_a, drafts=drafts, infer=False)
        calls = [len(r["body"]["input"]) for r in stub.requests if r["path"].endswith("/embeddings")]
    assert calls == [40]
    assert [r.status for r in results].count("created") == 40
    assert results[40].status == "duplicate" and results[40].duplicate_of == results[0].id
    assert results[41].status == "rejected" and results[41].code == "too_short"
    stored = MemoryItem.objects.filter(org=org_a, search_tokens__isnull=False, embedding_model="stub-embed")
    assert stored.count() == 40
    assert MemoryRevision.objects.filter(org=org_a, action="add", number=1).count() == 40


def test_it_applies_the_whole_gate_to_an_inferred_batch(key_a, org_a, settings):
    settings.MEMORY_MAX_EXTRACTIONS = 2
    actor = actor_for_key(key_a[0])
    drafts = [
        MemoryDraft(content="The user keeps bees", user_id="u1", confidence=0.5),
        MemoryDraft(content="用户在学德语", user_id="u1", source="auto", session_id="s"),
        MemoryDraft(content="The user plays the cello", user_id="u1", source="auto", session_id="s"),
        MemoryDraft(content="The user grows tomatoes", user_id="u1", source="auto", session_id="s"),
    ]
    results = memory_create_batch(actor=actor, org=org_a, drafts=drafts, infer=True)
    assert [r.code or r.status for r in results] == ["low_confidence", "created", "created", "rate_limited"]
    assert "limit 2" in results[3].message  # the gate's own rejection, as a single add gives it
    assert MemoryItem.objects.count() == 2


def test_a_batch_counts_the_sessions_stored_automatic_items_too(key_a, org_a, settings):
    settings.MEMORY_MAX_EXTRACTIONS = 2
    actor = actor_for_key(key_a[0])
    create(actor, org_a, "The user collects stamps", user_id="u1", source="auto", session_id="s")
    drafts = [
        MemoryDraft(content="The user sails on lakes", user_id="u1", source="auto", session_id="s"),
        MemoryDraft(content="The user bakes sourdough", user_id="u1", source="auto", session_id="s"),
        MemoryDraft(content="The user knits scarves", user_id="u1", source="auto", session_id="t"),
    ]
    results = memory_create_batch(actor=actor, org=org_a, drafts=drafts, infer=True)
    assert [r.code or r.status for r in results] == ["created", "rate_limited", "created"]
    assert MemoryItem.objects.filter(session_id="s").count() == 2


def test_it_keeps_a_skills_memories_apart_from_general_ones(alice_actor, org_a):
    """A skill's memory never merges into a general one (seed 003: skill memory is injected per skill)."""
    general = services.memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Uses VS Code and Git Flow every day.", user_id="alice"),
    )
    skill = services.memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Uses VS Code and Git Flow every day.", user_id="alice", skill="git"),
    )
    assert general.created and skill.created
    assert skill.item.pk != general.item.pk and skill.item.skill == "git"
    again = services.memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Uses VS Code and Git Flow every day.", user_id="alice", skill="git"),
    )
    assert again.duplicate_of == skill.item.pk
