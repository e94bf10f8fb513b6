"""Any script is stored and found by its words: through the API, a batch and an extraction job (issue 13,
finding 3: text with no Latin letter and no Chinese character was a 500 on every write path)."""

import json

import pytest

from memory.extraction.services import extraction_job_run
from memory.models import MemoryItem

from . import test_extraction_llm as llm

stub = llm.stub  # the chat model on loopback (tests/openai_server.py), with the org's LLM config

SENTENCES = [
    # (script, stored text, a word of it to search for)
    ("cyrillic", "Пользователь любит кофе по утрам", "кофе"),
    ("greek", "Ο χρήστης αγαπά τον καφέ", "καφέ"),
    ("arabic", "المستخدم يحب القهوة كثيرا", "القهوة"),
    ("hebrew", "המשתמש אוהב קפה שחור", "קפה"),
    ("korean", "사용자는 커피를 좋아한다", "커피"),  # the particle 를 is written onto the noun
    ("thai", "ผู้ใช้ชอบกาแฟมาก", "กาแฟ"),
    ("hindi", "उपयोगकर्ता को कॉफ़ी पसंद है", "कॉफ़ी"),
    ("tamil", "பயனர் காபியை விரும்புகிறார்", "காபியை"),
    ("japanese", "ユーザーはコーヒーが好きです", "コーヒー"),
    ("emoji only", "☕🍰🎉☕🍩", "☕"),
    ("punctuation only", "?!?!?! ...", "?!"),
]


@pytest.mark.parametrize("script,text,word", SENTENCES, ids=[s[0] for s in SENTENCES])
def test_it_stores_and_finds_a_sentence_in_any_script(script, text, word, key_a):
    client, user = key_a[1], f"u-{script.replace(' ', '-')}"
    other = client.post(
        "/api/v1/memories", {"content": "Alice plays tennis on Sundays", "user_id": user}, format="json"
    )
    assert other.status_code == 201, other.content
    response = client.post(
        "/api/v1/memories", {"content": text, "user_id": user, "memory_type": "preference"}, format="json"
    )
    assert response.status_code == 201, response.content
    item = MemoryItem.objects.get(pk=response.json()["id"])
    assert item.content == text
    found = client.post(
        "/api/v1/memories/search",
        {"query": word, "user_id": user, "mode": "keyword", "explain": True},
        format="json",
    )
    assert found.status_code == 200, found.content
    assert [r["id"] for r in found.json()["results"]] == [item.pk]
    assert found.json()["results"][0]["explain"]["keyword"] > 0


def test_it_stores_a_batch_with_one_item_in_another_script(key_a):
    client = key_a[1]
    response = client.post(
        "/api/v1/memories/batch",
        {
            "memories": [
                {"content": "The user drinks tea", "user_id": "batcher"},
                {"content": "Пользователь пьёт чай с лимоном", "user_id": "batcher"},
                {"content": "🍵🍋🍵🍋🍵", "user_id": "batcher"},
            ],
            "infer": False,
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    assert [r["status"] for r in response.json()["results"]] == ["created"] * 3
    assert MemoryItem.objects.filter(user_id="batcher").count() == 3
    found = client.post(
        "/api/v1/memories/search",
        {"query": "лимоном", "user_id": "batcher", "mode": "keyword"},
        format="json",
    )
    assert [r["content"] for r in found.json()["results"]] == ["Пользователь пьёт чай с лимоном"]


def test_it_runs_an_extraction_job_over_russian_messages(stub, org_a):
    from checkpoints.services import messages_append

    stub.chat_replies.append(
        json.dumps(
            {"memories": [{"content": "Пользователь любит кофе без сахара", "confidence": 0.9}]},
            ensure_ascii=False,
        )
    )
    _, _, job = messages_append(
        org=org_a,
        session_id="s-ru",
        user_id="ivan",
        messages=[
            {"role": "human", "content": "Я очень люблю кофе, но без сахара.", "message_id": "m1"},
            {"role": "ai", "content": "Понял, запомню.", "message_id": "m2"},
        ],
    )
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    assert (job.status, job.method, job.error) == ("done", "llm", "")
    assert [a["content"] for a in job.result["added"]] == ["Пользователь любит кофе без сахара"]
    assert MemoryItem.objects.get(org=org_a, user_id="ivan").content == "Пользователь любит кофе без сахара"
