"""The stored token count (MemoryItem.search_token_count, BM25's document length in the search statement)
equals the number of tokens in search_tokens after every write path: an add, a content edit, a restore, a
batch, the Mem0 surface (add and update), a subject import, memory_retokenize and raw SQL."""

from io import StringIO

from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from core.text import keyword_tokens
from memory.models import MemoryItem
from projects.services import api_key_create

URL = "/api/v1/memories"


def counts(org) -> dict[int, tuple[int | None, int | None]]:
    """Per row of the org: (stored count, the tokens' length measured now)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, search_token_count, length(search_tokens) FROM memory_memoryitem WHERE org_id = %s",
            [org.pk],
        )
        return {row[0]: (row[1], row[2]) for row in cursor.fetchall()}


def stored(pk: int) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_token_count FROM memory_memoryitem WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def expected(text: str) -> int:
    return len(set(keyword_tokens(text)))


def assert_all_right(org) -> None:
    rows = counts(org)
    assert rows
    assert all(count == length for count, length in rows.values()), rows


def test_add_edit_and_restore_through_the_api(alice_client, org_a):
    first = "The user lives in Berlin"
    created = alice_client.post(URL, {"content": first}, format="json")
    assert created.status_code == 201, created.content
    pk = created.json()["id"]
    assert stored(pk) == expected(first) > 0

    second = "The user moved to Lisbon with two cats and a very old piano last spring"
    assert alice_client.patch(f"{URL}/{pk}", {"content": second}, format="json").status_code == 200
    assert stored(pk) == expected(second) != expected(first)

    # An edit that leaves the content alone keeps the count.
    assert alice_client.patch(f"{URL}/{pk}", {"pinned": True}, format="json").status_code == 200
    assert stored(pk) == expected(second)

    assert alice_client.post(f"{URL}/{pk}/restore", {"revision": 1}, format="json").status_code == 200
    assert stored(pk) == expected(first)
    assert_all_right(org_a)


def test_a_batch_and_the_mem0_surface(key_a, org_a):
    _, client = key_a
    texts = ["User u1 works at a bakery in Porto", "用户对花生过敏，也不吃芝麻", "u1 prefers tea"]
    response = client.post(
        f"{URL}/batch",
        {"memories": [{"content": t, "user_id": "u1"} for t in texts], "infer": False},
        format="json",
    )
    assert response.status_code == 200, response.content
    ids = [r["id"] for r in response.json()["results"]]
    assert [stored(pk) for pk in ids] == [expected(t) for t in texts]

    mem0 = APIClient()
    mem0.credentials(HTTP_AUTHORIZATION=f"Token {api_key_create(org=org_a, name='mem0')[1]}")
    added = mem0.post(
        "/v3/memories/add/",
        {"messages": "Alex likes green tea", "infer": False, "user_id": "alex"},
        format="json",
    )
    assert added.status_code in (200, 201), added.content
    pk = int(added.json()["results"][0]["id"])
    assert stored(pk) == expected("Alex likes green tea")
    changed = "Alex switched to black coffee from a roaster in Kyoto"
    assert mem0.put(f"/v1/memories/{pk}/", {"text": changed}, format="json").status_code == 200
    assert stored(pk) == expected(changed)
    assert_all_right(org_a)


def test_a_subject_import(key_a, org_a):
    _, client = key_a
    data = {
        "format": "engram-subject-export",
        "version": 1,
        "memories": [
            {"id": 1, "content": "Likes green tea from Shizuoka", "scope": "user", "status": "active"},
            {"id": 2, "content": "住在杭州西湖附近", "scope": "user", "status": "archived"},
        ],
    }
    response = client.post("/api/v1/users/ext-7/import", data, format="json")
    assert response.status_code == 201, response.content
    rows = MemoryItem.objects.filter(org=org_a, user_id="ext-7")
    assert sorted(stored(m.pk) for m in rows) == sorted(expected(m["content"]) for m in data["memories"])
    assert_all_right(org_a)


def test_retokenize_raw_sql_and_no_tokens(alice_client, org_a):
    text = "Пользователь любит кофе и длинные прогулки"
    pk = alice_client.post(URL, {"content": text}, format="json").json()["id"]
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_memoryitem SET search_tokens = array_to_tsvector(ARRAY['caf']) WHERE id = %s", [pk]
        )
    assert stored(pk) == 1
    MemoryItem.objects.filter(pk=pk).update(search_tokens=None)
    assert stored(pk) is None  # the search reads it as 0, as it read length(NULL)
    call_command("memory_retokenize", "--org", org_a.slug, stdout=StringIO())
    assert stored(pk) == expected(text) > 1
    assert_all_right(org_a)
