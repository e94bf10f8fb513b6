"""The memory API end to end: create, duplicates, batch, list, patch/412, history/restore, delete-all, stats,
seed 004's agent routes, and the visibility x role matrix."""

from memory.models import MemoryItem, MemoryRevision

URL = "/api/v1/memories"


def add(client, **body):
    body.setdefault("content", "The user prefers dark mode in every editor")
    return client.post(URL, body, format="json")


def test_it_creates_a_memory_for_the_account_itself(alice_client, org_a):
    response = add(alice_client, memory_type="preference", tags=["ui"])
    assert response.status_code == 201, response.content
    body = response.json()
    item = MemoryItem.objects.get(pk=body["id"])
    assert item.org == org_a and item.user_id == "alice" and item.scope == "user"
    assert item.embedding is not None and item.embedding_model == "multilingual-e5-small"
    assert item.search_tokens is not None
    assert body["has_embedding"] is True and "embedding" not in body
    assert list(MemoryRevision.objects.filter(item_ref=item.pk).values_list("action", flat=True)) == ["add"]
