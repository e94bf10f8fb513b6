"""Examples of the memory API's main operations for the OpenAPI schema (Swagger UI shows them; the
contract test checks them against their schemas)."""

from drf_spectacular.utils import OpenApiExample

from .schemas import SearchMemorySerializer

MEMORY = {
    "id": 42,
    "content": "Prefers answers in English, with code samples in Python",
    "memory_type": "preference",
    "scope": "user",
    "user_id": "alice",
    "project": None,
    "session_id": "",
    "agent_id": "support-bot",
    "skill": "",
    "source": "agent",
    "source_id": "",
    "source_message_id": "",
    "confidence": 0.9,
    "visibility": "members",
    "status": "active",
    "superseded_by": None,
    "pinned": False,
    "tags": ["language"],
    "metadata": {},
    "embedding_model": "multilingual-e5-small",
    "has_embedding": True,
    "access_count": 0,
    "confirmations": 0,
    "last_accessed_at": None,
    "occurred_at": None,
    "valid_from": None,
    "valid_until": None,
    "expires_at": None,
    "version": 1,
    "created_at": "2026-03-01T09:30:00Z",
    "updated_at": "2026-03-01T09:30:00Z",
}

MEMORY_ADD = [
    OpenApiExample(
        "A user's preference",
        value={
            "content": "Prefers answers in English, with code samples in Python",
            "user_id": "alice",
            "memory_type": "preference",
            "agent_id": "support-bot",
            "source": "agent",
            "confidence": 0.9,
            "tags": ["language"],
        },
        request_only=True,
    ),
    OpenApiExample(
        "A project's decision",
        value={"content": "Atlas deploys on Fridays only", "scope": "project", "project": "atlas"},
        request_only=True,
    ),
    OpenApiExample("The memory stored", value=MEMORY, response_only=True, status_codes=["201"]),
]

BATCH = [
    OpenApiExample(
        "Two memories, one refused by the gate",
        value={
            "memories": [
                {"content": "Lives in Berlin", "user_id": "alice"},
                {"content": "ok", "user_id": "alice"},
            ]
        },
        request_only=True,
    ),
    OpenApiExample(
        "Counts and one result per item",
        value={
            "created": 1,
            "duplicate": 0,
            "superseded": 0,
            "rejected": 1,
            "paused": 0,
            "results": [
                {"index": 0, "status": "created", "id": 43},
                {
                    "index": 1,
                    "status": "rejected",
                    "error": {"code": "too_short", "message": "A memory needs at least 5 characters."},
                },
            ],
        },
        response_only=True,
        status_codes=["200"],
    ),
]

# A search result: the memory's fields that search hands out, and its score.
SEARCH_HIT = {name: MEMORY.get(name) for name in SearchMemorySerializer().fields} | {"score": 0.8123}

SEARCH = [
    OpenApiExample(
        "What does Alice prefer?",
        value={"query": "which language should I answer in?", "user_id": "alice", "top_k": 5},
        request_only=True,
    ),
    OpenApiExample(
        "The best memories first",
        value={"results": [SEARCH_HIT], "took_ms": 23.5},
        response_only=True,
        status_codes=["200"],
    ),
]
