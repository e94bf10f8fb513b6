"""The OpenAPI schema against the API's real answers: the main operations are called on the live test
server (an org seeded as tests/test_schemathesis.py seeds it), and each answer's status must be
documented for that operation and its body must match the schema documented for that status — strictly:
a field the schema does not name is a failure too, so schema and behaviour cannot drift apart. A failure
names the operation, the status and the field.

Also: no 2xx answer is typed as a bare `object` (except fields that are free-form by design), every
operation has a resource tag with a description and a summary, and the examples match their schemas.
"""

from __future__ import annotations

import copy
from datetime import datetime

import pytest
import requests
from django.conf import settings
from django.middleware.csrf import get_token
from django.test import Client, RequestFactory
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import best_match

from projects.services import org_membership_set

from .factories import AccountFactory
from .test_schemathesis import AGENT, SESSION, SUBJECT, Seed

# Fields whose value is free-form by design: what a caller wrote (metadata, agent state), JSON Schema
# documents (tool parameters) and snapshots of stored rows (revisions, export rows).
FREE_FORM = {
    "AuditEvent.details",
    "CheckpointOut.agent_state",
    "CheckpointOut.messages[]",
    "CheckpointOut.metadata",
    "CheckpointOut.pending_tool_calls[]",
    "CheckpointOut.tool_states",
    "ContextProfile.project",
    "ContextProfile.user",
    "ExtractionJob.messages",
    "ExtractionJob.result",
    "Function.parameters",
    "MemoryWrite.metadata",
    "WebhookDelivery.payload",
    "Memory.metadata",
    "ProfileRevision.changes",
    "RefusedRow.id",
    "Revision.after",
    "Revision.before",
    "Revision.incoming",
    "SearchHit.metadata",
    "SearchMemory.metadata",
    "SplitResult.metadata",
    "StoreItem.value",
    "StoreSearchItem.value",
    "SubjectExport.embedding_config",
    "SubjectExport.extraction_jobs[]",
    "SubjectExport.feedback[]",
    "SubjectExport.injection_logs[]",
    "SubjectExport.memories[]",
    "SubjectExport.memory_revisions[]",
    "SubjectExport.profile",
    "SubjectExport.profile_revisions[]",
    "SubjectExport.sessions[]",
}


# ---- the schema as JSON Schema ---------------------------------------------------------------------------


def json_schema(node, *, strict: bool = True):
    """OpenAPI 3.0 schema -> JSON Schema 2020-12: `nullable` becomes a null alternative, and (strict) an
    object that lists its properties allows no others."""
    if isinstance(node, list):
        return [json_schema(n, strict=strict) for n in node]
    if not isinstance(node, dict):
        return node
    node = {key: json_schema(value, strict=strict) for key, value in node.items()}
    if "properties" in node and isinstance(node["properties"], dict):
        node["properties"] = {k: json_schema(v, strict=strict) for k, v in node["properties"].items()}
    if strict and "properties" in node and "additionalProperties" not in node:
        if not any(word in node for word in ("allOf", "oneOf", "anyOf")):
            node["additionalProperties"] = False
    if node.pop("nullable", False):
        if "type" in node:
            node["type"] = [node["type"], "null"]
            if "enum" in node:
                node["enum"] = [*node["enum"], None]
        else:
            node = {"anyOf": [node, {"type": "null"}]}
    node.pop("discriminator", None)  # oneOf alone decides; the mapping is for generators
    return node


FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def _rfc3339(value) -> bool:
    if not isinstance(value, str):
        return True
    return datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None


class Contract:
    """The served schema, and checks of real answers against it."""

    def __init__(self, schema: dict):
        self.schema = schema
        self.components = json_schema(schema["components"])
        self.operations = {
            (method.upper(), path): operation
            for path, operations in schema["paths"].items()
            for method, operation in operations.items()
        }
        self.called: set[str] = set()

    def validator(self, schema: dict) -> Draft202012Validator:
        return Draft202012Validator(
            {**json_schema(schema), "components": self.components}, format_checker=FORMATS
        )

    def check(self, method: str, template: str, response: requests.Response) -> requests.Response:
        operation = self.operations.get((method, template))
        assert operation is not None, f"{method} {template} is not in the schema"
        name, status = operation["operationId"], str(response.status_code)
        self.called.add(name)
        declared = operation["responses"].get(status)
        assert declared is not None, (
            f"{name} answered {status}, which it does not document ({', '.join(operation['responses'])}): "
            f"{response.text[:300]}"
        )
        content = declared.get("content")
        if not content:
            assert not response.content, (
                f"{name} {status}: documented without a body, answered {response.text[:300]}"
            )
            return response
        assert response.headers["Content-Type"].startswith("application/json"), (
            name,
            status,
            response.headers,
        )
        error = best_match(self.validator(content["application/json"]["schema"]).iter_errors(response.json()))
        if error is not None:
            field = "/".join(str(part) for part in error.absolute_path) or "(the body)"
            pytest.fail(f"{name} answered {status}; at {field}: {error.message}")
        return response


@pytest.fixture
def contract(live_server) -> Contract:
    return Contract(requests.get(f"{live_server.url}/api/schema/?format=json", timeout=60).json())


class Api:
    """Calls an operation by its path template and checks the answer against the schema."""

    def __init__(self, base_url: str, contract: Contract, headers: dict, cookies: dict | None = None):
        self.base_url, self.contract, self.headers, self.cookies = base_url, contract, headers, cookies or {}

    def __call__(self, method: str, template: str, body=None, *, params=None, headers=None, **path):
        url = self.base_url + template.format(**path)
        response = requests.request(
            method,
            url,
            json=body,
            params=params,
            headers={**self.headers, **(headers or {})},
            cookies=self.cookies,
            timeout=60,
        )
        return self.contract.check(method, template, response)


def owner_session(org, base_url: str, contract: Contract) -> Api:
    """An org owner signed in on the pages (session cookie and CSRF token): what admin-only operations need."""
    owner = AccountFactory(username=f"owner-{org.slug}")
    org_membership_set(org=org, account=owner, role="owner")
    client = Client()
    client.force_login(owner)
    token = get_token(RequestFactory().get("/"))
    cookies = {settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value}
    cookies[settings.CSRF_COOKIE_NAME] = token
    return Api(base_url, contract, {"X-CSRFToken": token}, cookies)


def test_it_answers_the_main_operations_as_documented(live_server, contract):
    seed = Seed(live_server.url)
    api = Api(live_server.url, contract, seed.headers)
    memories = "/api/v1/memories"
    memory = "/api/v1/memories/{id}"

    # memories: add (created, merged, refused), get, list, patch (and a stale one), history, restore, delete
    added = api("POST", memories, {"content": "Sam reads science fiction", "user_id": SUBJECT}).json()
    assert (
        api("POST", memories, {"content": "Sam reads science fiction", "user_id": SUBJECT}).status_code == 200
    )
    assert api("POST", memories, {"content": "ok", "user_id": SUBJECT}).status_code == 422
    assert api("POST", memories, {"content": "Sam is tall", "user_ids": SUBJECT}).status_code == 400
    api("GET", memory, id=added["id"])
    assert api("GET", memory, id=10**12).status_code == 404
    api("GET", memories, params={"user_id": SUBJECT})
    api("PATCH", memory, {"tags": ["books"], "reason": "tagged"}, id=added["id"])
    assert api("PATCH", memory, {"tags": []}, headers={"If-Match": '"1"'}, id=added["id"]).status_code == 412
    history = api("GET", memory + "/history", id=added["id"]).json()["results"]
    merge = next(r["number"] for r in history if r["action"] == "merge")
    api("POST", memory + "/split", {"revision": merge}, id=added["id"])
    assert api("POST", memory + "/split", {"revision": merge}, id=added["id"]).status_code == 409
    api("POST", memory + "/restore", {"revision": 1}, id=added["id"])
    assert api("DELETE", memory, id=added["id"]).status_code == 204
    api("POST", memories, {"content": "Kim likes jazz", "user_id": "kim"})
    assert api("DELETE", memories, params={"user_id": "kim"}).json() == {"deleted": 1}
    batch = {"memories": [{"content": "Sam has a cat called Miso", "user_id": SUBJECT}, {"content": "x"}]}
    api("POST", memories + "/batch", batch)
    api("GET", memories + "/stats")
    api(
        "POST",
        "/api/v1/agents/{agent_id}/memories",
        {"userId": SUBJECT, "content": "Sam asks short questions"},
        agent_id=AGENT,
    )

    # read path: search (plain and explained), context, Markdown
    api("POST", memories + "/search", {"query": "what does Sam drink?", "user_id": SUBJECT})
    api(
        "POST", memories + "/search", {"query": "tea", "user_id": SUBJECT, "explain": True, "mode": "keyword"}
    )
    api(
        "POST",
        "/api/v1/context",
        {"user_id": SUBJECT, "session_id": SESSION, "project": "atlas", "query": "tea"},
    )
    document = api("GET", memories + "/markdown", params={"user_id": SUBJECT}).json()
    edited = {
        "document": document["document"] + "\n- [fact] Sam cycles to work\n",
        "base_version": document["version"],
    }
    api("PUT", memories + "/markdown", edited, params={"user_id": SUBJECT})
    assert api("PUT", memories + "/markdown", edited, params={"user_id": SUBJECT}).status_code == 409

    # sessions, jobs, checkpoints
    messages = [{"role": "human", "content": "Sam's sister lives in Lyon."}]
    appended = api(
        "POST",
        "/api/v1/sessions/{session_id}/messages",
        {"user_id": SUBJECT, "messages": messages},
        session_id=SESSION,
    )
    api("GET", "/api/v1/sessions/{session_id}", session_id=SESSION)
    api("GET", "/api/v1/extraction-jobs/{id}", id=appended.json()["extraction_job"]["id"])
    checkpoint = {
        "user_id": SUBJECT,
        "messages": messages,
        "agent_state": {"step": 2},
        "parent": seed.checkpoint_id,
    }
    api("PUT", "/api/v1/sessions/{session_id}/checkpoints", checkpoint, session_id=SESSION)
    api("GET", "/api/v1/sessions/{session_id}/checkpoints/latest", session_id=SESSION)
    assert (
        api("GET", "/api/v1/sessions/{session_id}/checkpoints/latest", session_id="no-such").status_code
        == 404
    )

    # profiles, export and import
    api("GET", "/api/v1/profiles/users/{user_id}", user_id=SUBJECT)
    api("GET", "/api/v1/projects/{id}/profile", id=seed.project_id)
    export = api("GET", "/api/v1/users/{user_id}/export", user_id=SUBJECT).json()
    export["sessions"] = []  # their ids are taken in this org
    api("POST", "/api/v1/users/{user_id}/import", export, user_id="sam-copy")
    assert (
        api("POST", "/api/v1/users/{user_id}/import", {"format": "csv"}, user_id="sam-copy").status_code
        == 400
    )

    # tools
    api("GET", "/api/v1/tools")
    invoke = "/api/v1/tools/{name}/invoke"
    api("POST", invoke, {"arguments": {"query": "tea"}, "user_id": SUBJECT}, name="memory_search")
    api(
        "POST",
        invoke,
        {"arguments": '{"content": "Sam plays chess on Sundays"}', "user_id": SUBJECT},
        name="memory_add",
    )

    # configuration and the audit log: an API key may read the embedding provider only
    api("GET", "/api/v1/embedding-config")
    assert api("PUT", "/api/v1/embedding-config", {"provider": "local"}).status_code == 403
    assert api("GET", "/api/v1/audit-log").status_code == 403
    assert api("GET", "/api/v1/llm-config").status_code == 403
    owner = owner_session(seed.org, live_server.url, contract)
    owner("GET", "/api/v1/audit-log")
    owner("GET", "/api/v1/llm-config")
    owner(
        "PUT",
        "/api/v1/llm-config",
        {"base_url": "http://127.0.0.1:9/v1", "model": "tiny", "api_key": "sk-test"},
    )
    owner("GET", "/api/v1/llm-config")
    assert owner("DELETE", "/api/v1/llm-config").status_code == 204
    owner("PUT", "/api/v1/embedding-config", {"provider": "local", "level": "user"})

    main = {
        "v1_memories_create", "v1_memories_retrieve", "v1_memories_list", "v1_memories_partial_update",
        "v1_memories_destroy_2", "v1_memories_destroy", "v1_memories_batch_create", "v1_memories_stats_retrieve",
        "v1_memories_history_list", "v1_memories_restore_create", "v1_memories_split_create", "v1_memories_search_create", "v1_context_create",
        "v1_sessions_messages_create", "v1_extraction_jobs_retrieve", "v1_sessions_checkpoints_update",
        "v1_sessions_checkpoints_latest_retrieve", "v1_profiles_users_retrieve", "v1_users_export_retrieve",
        "v1_users_import_create", "v1_tools_retrieve", "v1_tools_invoke_create",
        "v1_memories_markdown_retrieve", "v1_memories_markdown_update", "v1_audit_log_list",
        "v1_embedding_config_retrieve", "v1_llm_config_retrieve", "v1_llm_config_update",
    }  # fmt: skip
    assert main <= contract.called, sorted(main - contract.called)


def test_it_types_every_answer_tags_and_summarises_every_operation(contract):
    untagged, found = [], set()
    tags = {tag["name"] for tag in contract.schema.get("tags", []) if tag.get("description")}
    for operation in contract.operations.values():
        name = operation["operationId"]
        if not operation.get("summary"):
            untagged.append(f"{name}: no summary")
        if not set(operation.get("tags", [])) & tags:
            untagged.append(f"{name}: tags {operation.get('tags')} (described: {sorted(tags)})")
        for status, response in operation["responses"].items():
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if status.startswith("2") and schema is not None:
                found |= {(where, f"{name} {status}") for where in _free_form(contract.schema, schema, name)}
            if status.startswith("4") and schema != {"$ref": "#/components/schemas/Error"}:
                untagged.append(f"{name} {status}: not the error body")
    assert not untagged, "\n".join(untagged)
    untyped = sorted(f"{operation}: {where}" for where, operation in found if where not in FREE_FORM)
    assert not untyped, "answers typed as a bare object:\n" + "\n".join(untyped)
    stale = FREE_FORM - {where for where, _ in found}
    assert not stale, f"FREE_FORM names what no answer has any more: {sorted(stale)}"


def _free_form(schema: dict, node: dict, where: str, seen=None) -> list[str]:
    """Where under `node` a value is a bare object (or anything at all)."""
    seen = set() if seen is None else seen
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        if name in seen:
            return []
        seen.add(name)
        return _free_form(schema, schema["components"]["schemas"][name], name, seen)
    found = []
    for word in ("allOf", "oneOf", "anyOf"):
        for part in node.get(word, []):
            found += _free_form(schema, part, where, seen)
    if any(word in node for word in ("allOf", "oneOf", "anyOf", "enum")):
        return found
    kind = node.get("type")
    if kind == "array":
        return found + _free_form(schema, node.get("items", {}), where + "[]", seen)
    if kind == "object" or kind is None:
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if not properties and not (isinstance(extra, dict) and extra):
            return [*found, where]
        for field, sub in (properties or {}).items():
            found += _free_form(schema, sub, f"{where}.{field}", seen)
        if isinstance(extra, dict) and extra:
            found += _free_form(schema, extra, where + "{}", seen)
    return found


def test_it_gives_examples_that_match_their_schemas(contract):
    checked = []
    for operation in contract.operations.values():
        name = operation["operationId"]
        bodies = [
            ("request", operation.get("requestBody", {}).get("content", {}).get("application/json", {}))
        ]
        bodies += [
            (status, r.get("content", {}).get("application/json", {}))
            for status, r in operation["responses"].items()
        ]
        for where, media in bodies:
            for label, example in media.get("examples", {}).items():
                error = best_match(
                    contract.validator(copy.deepcopy(media["schema"])).iter_errors(example["value"])
                )
                assert error is None, (
                    f"{name} {where} example {label!r}: at {list(error.absolute_path)}: {error.message}"
                )
                checked.append((name, where))
    names = {name for name, _ in checked}
    assert {
        "v1_memories_create",
        "v1_memories_search_create",
        "v1_context_create",
        "v1_sessions_messages_create",
    } <= names
