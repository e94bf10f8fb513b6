"""Markdown memory documents (seed 003): render, edit, apply as revisions, conflicts, gate, skills."""

import re

from memory.drafts import MemoryDraft
from memory.models import MemoryItem, MemoryRevision
from memory.services import memory_create, memory_update
from projects.access import system_actor

from .factories import MemoryItemFactory

URL = "/api/v1/memories/markdown"


def strip_marks(document: str) -> str:
    return re.sub(r" <!-- m:\d+ -->", "", document)


def test_it_renders_a_users_memories_grouped_by_type(alice_client, org_a, alice):
    a = MemoryItemFactory(org=org_a, content="喜欢简洁的代码", memory_type="preference")
    b = MemoryItemFactory(org=org_a, content="Works as a backend engineer")
    MemoryItemFactory(org=org_a, content="Knows the billing skill well", skill="billing")
    MemoryItemFactory(org=org_a, content="Bob likes tea", user_id="bob")

    response = alice_client.get(URL)
    assert response.status_code == 200, response.content
    body = response.json()
    doc = body["document"]
    assert doc.startswith("# user.md\n")
    assert f"## Preferences\n\n- 喜欢简洁的代码 <!-- m:{a.pk} -->" in doc
    assert f"## Facts\n\n- Works as a backend engineer <!-- m:{b.pk} -->" in doc
    assert doc.index("## Preferences") < doc.index("## Facts")
    assert "billing" not in doc and "tea" not in doc
    assert body["count"] == 2 and body["version"]


def test_it_renders_skill_memories_per_skill(alice_client, org_a, alice):
    MemoryItemFactory(org=org_a, content="Always answer in plain English", memory_type="preference")
    s = MemoryItemFactory(
        org=org_a, content="Billing exports need ISO dates", memory_type="constraint", skill="billing"
    )
    MemoryItemFactory(
        org=org_a, content="Charts use the dark theme", memory_type="preference", skill="charts"
    )

    doc = alice_client.get(URL, {"skill": "billing"}).json()["document"]
    assert doc.startswith("# skills/billing.md\n")
    assert f"- Billing exports need ISO dates <!-- m:{s.pk} -->" in doc
    assert "plain English" not in doc and "dark theme" not in doc

    # a bullet added to the skill document becomes a memory of that skill
    version = alice_client.get(URL, {"skill": "billing"}).json()["version"]
    edited = doc + "- Invoices are numbered per year\n"
    response = alice_client.put(
        f"{URL}?skill=billing", {"document": edited, "base_version": version}, format="json"
    )
    assert response.status_code == 200, response.content
    new = MemoryItem.objects.get(content="Invoices are numbered per year")
    assert (new.skill, new.memory_type, new.user_id, new.scope) == ("billing", "constraint", "alice", "user")


def test_it_round_trips_an_edited_document(alice_client, org_a, alice):
    keep = MemoryItemFactory(org=org_a, content="Prefers dark mode", memory_type="preference")
    change = MemoryItemFactory(org=org_a, content="Lives in Berlin")
    drop = MemoryItemFactory(org=org_a, content="Uses Vim", memory_type="habit")
    first = alice_client.get(URL).json()

    edited = (
        first["document"]
        .replace("Lives in Berlin", "Lives in Hamburg since 2024")
        .replace(f"- Uses Vim <!-- m:{drop.pk} -->\n", "")
        .replace(
            f"- Prefers dark mode <!-- m:{keep.pk} -->",
            f"- Prefers dark mode <!-- m:{keep.pk} -->\n- 喜欢用表格总结",
        )
    )
    response = alice_client.put(URL, {"document": edited, "base_version": first["version"]}, format="json")
    assert response.status_code == 200, response.content
    applied = response.json()["applied"]
    assert (
        applied["updated"] == [change.pk] and applied["archived"] == [drop.pk] and len(applied["added"]) == 1
    )

    again = alice_client.get(URL).json()
    assert strip_marks(again["document"]) == strip_marks(edited).replace("## Habits\n\n\n", "").replace(
        "\n\n## Habits\n", ""
    )
    assert again["document"] == response.json()["document"]
    change.refresh_from_db()
    drop.refresh_from_db()
    assert change.content == "Lives in Hamburg since 2024" and change.version == 2
    assert drop.status == "archived"  # removed means archived, not deleted
    added = MemoryItem.objects.get(pk=applied["added"][0])
    assert (added.content, added.memory_type, added.source) == ("喜欢用表格总结", "preference", "user")
    actions = dict(
        MemoryRevision.objects.filter(item_ref__in=[change.pk, drop.pk, added.pk])
        .values_list("item_ref", "action")
        .order_by("number")
    )
    assert actions == {change.pk: "update", drop.pk: "archive", added.pk: "add"}
    assert MemoryRevision.objects.get(item_ref=change.pk, action="update").reason == "edited in Markdown"
    assert not MemoryItem.objects.filter(
        pk=keep.pk, version__gt=1
    ).exists()  # untouched bullets stay as they were


def test_it_moves_a_bullet_to_another_type_by_moving_it_under_another_heading(alice_client, org_a, alice):
    item = MemoryItemFactory(org=org_a, content="Uses PostgreSQL 16 everywhere")
    first = alice_client.get(URL).json()
    edited = first["document"].replace("## Facts", "## Habits")
    assert (
        alice_client.put(
            URL, {"document": edited, "base_version": first["version"]}, format="json"
        ).status_code
        == 200
    )
    item.refresh_from_db()
    assert item.memory_type == "habit"


def test_it_answers_409_with_what_changed_meanwhile(alice_client, org_a, alice):
    item = MemoryItemFactory(org=org_a, content="Lives in Berlin")
    first = alice_client.get(URL).json()
    memory_update(actor=system_actor(item.org), item=item, content="Lives in Munich", reason="someone else")
    # Written through the service: its "add" revision is what the conflict reports.
    other = memory_create(
        actor=system_actor(org_a),
        org=org_a,
        draft=MemoryDraft(content="Has a cat named Miso", user_id="alice"),
    ).item

    edited = first["document"].replace("Berlin", "Paris")
    response = alice_client.put(URL, {"document": edited, "base_version": first["version"]}, format="json")
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "conflict"
    changed = {(c["memory"], c["action"]): c for c in error["details"]["changed"]}
    assert changed[(item.pk, "update")]["content"] == "Lives in Munich"
    assert changed[(other.pk, "add")]["content"] == "Has a cat named Miso"
    assert error["details"]["current_version"] == alice_client.get(URL).json()["version"]
    item.refresh_from_db()
    assert item.content == "Lives in Munich"  # nothing applied


def test_it_refuses_a_secret_naming_the_line_and_applies_nothing(alice_client, org_a, alice):
    # Through the service: revision 1 is the only revision when nothing is applied.
    item = memory_create(
        actor=system_actor(org_a), org=org_a, draft=MemoryDraft(content="Lives in Berlin", user_id="alice")
    ).item
    first = alice_client.get(URL).json()
    edited = first["document"].replace("Berlin", "Hamburg") + "- My password is hunter2hunter2\n"
    line = edited.splitlines().index("- My password is hunter2hunter2") + 1

    response = alice_client.put(URL, {"document": edited, "base_version": first["version"]}, format="json")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "sensitive_content"
    assert error["message"].startswith(f"Line {line}:")
    assert error["details"]["errors"][0]["line"] == line
    item.refresh_from_db()
    assert item.content == "Lives in Berlin" and item.version == 1
    assert not MemoryItem.objects.filter(content__icontains="hunter2").exists()
    assert MemoryRevision.objects.filter(org=org_a).count() == 1


def test_it_refuses_bad_documents_with_line_numbers(alice_client, org_a, alice):
    item = MemoryItemFactory(org=org_a, content="Lives in Berlin")
    version = alice_client.get(URL).json()["version"]
    for document, code in (
        ("# user.md\n- no heading above\n", "no_heading"),
        ("# user.md\n## Favourite things\n- cats are great\n", "unknown_heading"),
        ("# user.md\n## Facts\njust a sentence\n", "not_a_bullet"),
        (f"# user.md\n## Facts\n- a <!-- m:{item.pk} -->\n- b <!-- m:{item.pk} -->\n", "duplicate_mark"),
        ("# user.md\n## Facts\n- refers to another <!-- m:999999 -->\n", "unknown_memory"),
        ("# user.md\n## Facts\n- ok\n", "too_short"),
    ):
        response = alice_client.put(URL, {"document": document, "base_version": version}, format="json")
        assert response.status_code == 422, (document, response.content)
        assert response.json()["error"]["code"] == code
        assert response.json()["error"]["message"].startswith("Line ")
    assert (
        alice_client.put(URL, {"document": "x", "base_version": "nonsense"}, format="json").status_code == 400
    )
    assert alice_client.put(URL, {"document": "x"}, format="json").status_code == 400
    item.refresh_from_db()
    assert item.status == "active" and item.version == 1


def test_it_keeps_documents_to_their_subject(
    alice_client, bob_client, charlie_client, key_a, org_a, alice, bob
):
    MemoryItemFactory(org=org_a, content="Alice's secret garden plans")
    assert bob_client.get(URL, {"user_id": "alice"}).status_code == 404
    assert charlie_client.get(URL, {"user_id": "alice"}).status_code == 404
    version = alice_client.get(URL).json()["version"]
    put = bob_client.put(
        f"{URL}?user_id=alice", {"document": "# user.md\n", "base_version": version}, format="json"
    )
    assert put.status_code == 404
    assert MemoryItem.objects.filter(status="active").count() == 1
    _, client = key_a
    body = client.get(URL, {"user_id": "alice"}).json()
    assert "secret garden" in body["document"]
    assert client.get(URL).status_code == 400  # a key must say whose document


def test_it_renders_and_edits_project_documents_by_role(alice_client, bob_client, org_a, project):
    item = MemoryItemFactory(
        org=org_a, content="Must support PostgreSQL 16", memory_type="constraint", project=project
    )
    body = bob_client.get(URL, {"project": project.id}).json()  # viewer reads
    assert body["document"].startswith("# projects/atlas.md")
    assert f"<!-- m:{item.pk} -->" in body["document"]
    edited = body["document"] + "- Releases go out on Tuesdays\n"
    assert (
        bob_client.put(
            f"{URL}?project={project.id}",
            {"document": edited, "base_version": body["version"]},
            format="json",
        ).status_code
        == 403
    )
    ok = alice_client.put(
        f"{URL}?project={project.id}", {"document": edited, "base_version": body["version"]}, format="json"
    )
    assert ok.status_code == 200, ok.content
    new = MemoryItem.objects.get(content="Releases go out on Tuesdays")
    assert (new.scope, new.project_id, new.memory_type) == ("project", project.id, "constraint")


def test_it_treats_an_emptied_document_as_archiving_everything(alice_client, org_a, alice):
    items = [MemoryItemFactory(org=org_a, content=f"Fact number {n} about alice") for n in range(3)]
    version = alice_client.get(URL).json()["version"]
    response = alice_client.put(URL, {"document": "# user.md\n", "base_version": version}, format="json")
    assert response.status_code == 200
    assert sorted(response.json()["applied"]["archived"]) == [i.pk for i in items]
    assert MemoryItem.objects.filter(status="archived").count() == 3
    assert MemoryItem.objects.count() == 3
