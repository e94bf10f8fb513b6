"""The memory services always have an actor: tasks and commands name the system actor of their org,
which may change every memory of that org and nothing of another; None is refused; a supersede is
checked like any other change."""

import pytest
from django.core.exceptions import PermissionDenied
from django.http import Http404

from memory import services
from memory.batch import memory_create_batch
from memory.drafts import MemoryDraft
from memory.models import MemoryItem, MemoryRevision
from projects.access import actor_for_account, system_actor

from .factories import ProjectFactory


def add(actor, org, content, **fields):
    return services.memory_create(actor=actor, org=org, draft=MemoryDraft(content=content, **fields)).item


@pytest.fixture
def charlie_item(charlie, org_b):
    return add(actor_for_account(charlie, org_b), org_b, "Charlie takes the night train", user_id="charlie")


def test_the_system_actor_changes_any_memory_of_its_own_org(alice_actor, org_a, project):
    system = system_actor(org_a)
    private = add(alice_actor, org_a, "Alice keeps a diary in Esperanto", user_id="alice")
    owner_only = add(
        alice_actor,
        org_a,
        "The Atlas budget draft is in the red folder",
        scope="project",
        project=project,
        visibility="owner_only",
    )
    services.memory_update(actor=system, item=private, pinned=True)
    services.memory_archive(actor=system, item=owner_only)
    added = add(system, org_a, "Bob prefers tea to coffee", user_id="bob")
    assert MemoryItem.objects.get(pk=private.pk).pinned
    assert MemoryItem.objects.get(pk=owner_only.pk).status == "archived"
    assert (added.user_id, added.created_by_id, added.created_by_key_id) == ("bob", None, None)
    labels = MemoryRevision.objects.filter(item_ref__in=[private.pk, owner_only.pk, added.pk], number__gt=1)
    assert set(labels.values_list("actor", flat=True)) == {"system"}
    assert MemoryRevision.objects.get(item_ref=added.pk, number=1).actor == "system"


def test_the_system_actor_of_one_org_cannot_touch_another_org(org_a, org_b, charlie_item):
    system = system_actor(org_a)
    for write in (
        lambda: services.memory_update(actor=system, item=charlie_item, content="Charlie flies now"),
        lambda: services.memory_archive(actor=system, item=charlie_item),
        lambda: services.memory_restore(actor=system, item=charlie_item, number=1),
        lambda: services.memory_delete(actor=system, item=charlie_item),
        lambda: services.memory_delete_all(actor=system, org=org_b, user_id="charlie"),
        lambda: add(system, org_b, "Charlie likes jazz", user_id="charlie"),
    ):
        with pytest.raises(Http404):
            write()
    other_project = ProjectFactory(org=org_b, slug="borealis")
    with pytest.raises(Http404):
        add(system, org_a, "Borealis ships in May", scope="project", project=other_project)
    results = memory_create_batch(
        actor=system,
        org=org_a,
        drafts=[MemoryDraft(content="Borealis ships in June", scope="project", project=other_project)],
    )
    assert [r.code for r in results] == ["not_found"]
    row = MemoryItem.objects.get(pk=charlie_item.pk)
    assert (row.content, row.status) == ("Charlie takes the night train", "active")
    assert MemoryItem.objects.filter(org=org_b).count() == 1
    assert list(MemoryRevision.objects.filter(item_ref=charlie_item.pk).values_list("action", flat=True)) == [
        "add"
    ]


def test_the_services_refuse_to_write_without_an_actor(alice_actor, org_a):
    item = add(alice_actor, org_a, "Alice runs on Tuesdays", user_id="alice")
    draft = MemoryDraft(content="Alice swims on Thursdays", user_id="alice")
    for write in (
        lambda: services.memory_create(actor=None, org=org_a, draft=draft),
        lambda: memory_create_batch(actor=None, org=org_a, drafts=[draft]),
        lambda: services.memory_update(actor=None, item=item, pinned=True),
        lambda: services.memory_archive(actor=None, item=item),
        lambda: services.memory_restore(actor=None, item=item, number=1),
        lambda: services.memory_supersede(actor=None, old=item, new=item),
        lambda: services.memory_delete(actor=None, item=item),
        lambda: services.memory_delete_all(actor=None, org=org_a, user_id="alice"),
    ):
        with pytest.raises(TypeError, match="system_actor"):
            write()
    assert list(MemoryItem.objects.values_list("content", "pinned", "status")) == [
        ("Alice runs on Tuesdays", False, "active")
    ]


def test_a_viewer_cannot_supersede_and_nobody_supersedes_with_another_orgs_item(
    alice_actor, bob, org_a, project, charlie_item
):
    fields = {"scope": "project", "project": project}
    old = add(alice_actor, org_a, "Atlas stand-up is at nine", **fields)
    # Added without inference: an inferred add would supersede at once (tests/test_write_classification.py).
    new = services.memory_create(
        actor=alice_actor,
        org=org_a,
        draft=MemoryDraft(content="Atlas stand-up moved to ten", **fields),
        dedup="hash",
    ).item
    with pytest.raises(PermissionDenied):
        services.memory_supersede(actor=actor_for_account(bob, org_a), old=old, new=new)
    with pytest.raises(Http404):
        services.memory_supersede(actor=alice_actor, old=old, new=charlie_item)
    with pytest.raises(Http404):
        services.memory_supersede(actor=system_actor(org_a), old=charlie_item, new=new)
    assert MemoryItem.objects.get(pk=old.pk).status == "active"
    assert MemoryItem.objects.get(pk=charlie_item.pk).status == "active"
    services.memory_supersede(actor=alice_actor, old=old, new=new)
    row = MemoryItem.objects.get(pk=old.pk)
    assert (row.status, row.superseded_by_id) == ("superseded", new.pk)
