"""The API's resources, written once for both clients: each method builds a Request and hands it to the
client, which sends it (Engram) or returns an awaitable (AsyncEngram). Arguments left at None are not
sent, so the server's defaults apply; other fields the API accepts go through **fields."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any
from urllib.parse import quote

from ._base import Request, clean, idempotency, query
from .models import (
    ApiKey,
    AuditEvent,
    BatchResult,
    Checkpoint,
    Config,
    Context,
    Deleted,
    ExtractionJob,
    Feedback,
    Forgotten,
    Injection,
    MarkdownDocument,
    Member,
    Memory,
    MemoryStats,
    MessagesAppended,
    Paused,
    PauseState,
    Project,
    ProjectProfile,
    ReembedJob,
    Revision,
    SearchResponse,
    Session,
    StoreItem,
    ToolResult,
    UserProfile,
    Webhook,
    WebhookDelivery,
)


def _seg(value: Any) -> str:
    return quote(str(value), safe="")


def _encode(value: Any) -> Any:
    """JSON-ready: datetimes and dates as ISO 8601, models as dicts."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value


def _memory_or_paused(data: Any) -> Memory | Paused:
    """An add's answer: the memory, or Paused when memory is paused for the subject or the session."""
    if isinstance(data, dict) and data.get("status") == "paused":
        return Paused.model_validate(data)
    return Memory.model_validate(data)


def _results(model):
    return lambda body: [model.model_validate(row) for row in body.get("results", [])]


class Resource:
    def __init__(self, client):
        self._c = client

    def _call(self, method, path, *, params=None, body=None, headers=None, parse=None, none_if_missing=False):
        params = query(params) if params else None
        return self._c.call(Request(method, path, params, _encode(body), headers, parse, none_if_missing))

    def _list(self, path: str, params: dict[str, Any], model) -> Iterator[Any]:
        return self._c.pages(path, query(params), model.model_validate)


class Memories(Resource):
    """Long-term memories: /memories."""

    def add(
        self,
        content: str,
        *,
        user_id: str | None = None,
        memory_type: str | None = None,
        scope: str | None = None,
        project: int | str | None = None,
        session_id: str | None = None,
        agent_id: str | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Memory | Paused:
        """Store one memory (through the gate). A duplicate answers the existing memory with `duplicate_of`;
        while memory is paused for the subject or the session, a Paused (nothing stored)."""
        body = clean(
            dict(
                content=content,
                user_id=user_id,
                memory_type=memory_type,
                scope=scope,
                project=project,
                session_id=session_id,
                agent_id=agent_id,
                tags=tags,
                metadata=metadata,
                **fields,
            )
        )
        return self._call(
            "POST", "/memories", body=body, headers=idempotency(idempotency_key), parse=_memory_or_paused
        )

    def batch(
        self,
        memories: list[dict[str, Any]],
        *,
        infer: bool | None = None,
        dedup: bool | None = None,
        idempotency_key: str | None = None,
    ) -> BatchResult:
        body = clean({"memories": memories, "infer": infer, "dedup": dedup})
        return self._call(
            "POST",
            "/memories/batch",
            body=body,
            headers=idempotency(idempotency_key),
            parse=BatchResult.model_validate,
        )

    def get(self, memory_id: int) -> Memory:
        return self._call("GET", f"/memories/{memory_id}", parse=Memory.model_validate)

    def list(
        self, *, metadata: dict[str, Any] | None = None, page_size: int | None = None, **filters
    ) -> Iterator[Memory]:
        """Every memory matching the filters (user_id, agent_id, project, session_id, scope, memory_type,
        status, source, pinned, tags, skill, created_after/before, occurred_after/before, skills,
        include_superseded, include_expired), newest first, walking the cursor pages."""
        params = {**filters, "page_size": page_size, "metadata": json.dumps(metadata) if metadata else None}
        return self._list("/memories", params, Memory)

    def update(self, memory_id: int, *, version: int | None = None, **fields: Any) -> Memory:
        """Change fields; with `version` a stale write raises PreconditionFailed (412) and changes nothing."""
        headers = {"If-Match": f'"{version}"'} if version is not None else None
        return self._call(
            "PATCH", f"/memories/{memory_id}", body=fields, headers=headers, parse=Memory.model_validate
        )

    def delete(self, memory_id: int, *, version: int | None = None) -> None:
        headers = {"If-Match": f'"{version}"'} if version is not None else None
        return self._call("DELETE", f"/memories/{memory_id}", headers=headers)

    def delete_all(self, *, user_id: str, agent_id: str | None = None) -> Deleted:
        """Every user- and session-scope memory of the subject (project memories stay)."""
        params = {"user_id": user_id, "agent_id": agent_id}
        return self._call("DELETE", "/memories", params=params, parse=Deleted.model_validate)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        top_k: int | None = None,
        threshold: float | None = None,
        **options: Any,
    ) -> SearchResponse:
        """Hybrid search; results scoring under `threshold` (0..1) are left out (default: the server's
        calibrated relevance floor; 0 keeps every candidate). Options: project, session_id, agent_id,
        skills, max_tokens, memory_types, scopes, tags, status, metadata, created_after/before,
        occurred_after/before, include_superseded, include_expired, explain, mode."""
        body = clean({"query": query, "user_id": user_id, "top_k": top_k, "threshold": threshold, **options})
        return self._call("POST", "/memories/search", body=body, parse=SearchResponse.model_validate)

    def history(self, memory_id: int) -> list[Revision]:
        return self._call("GET", f"/memories/{memory_id}/history", parse=_results(Revision))

    def restore(self, memory_id: int, revision: int, *, reason: str | None = None) -> Memory:
        body = clean({"revision": revision, "reason": reason})
        return self._call("POST", f"/memories/{memory_id}/restore", body=body, parse=Memory.model_validate)

    def split(self, memory_id: int, revision: int, *, reason: str | None = None) -> Memory:
        """Turn what one merge revision recorded as incoming back into its own memory (the new one)."""
        body = clean({"revision": revision, "reason": reason})
        return self._call("POST", f"/memories/{memory_id}/split", body=body, parse=Memory.model_validate)

    def stats(self, **filters: Any) -> MemoryStats:
        return self._call("GET", "/memories/stats", params=filters, parse=MemoryStats.model_validate)

    def injections(self, memory_id: int) -> Iterator[Injection]:
        """When this memory was given to agents (newest first)."""
        return self._list(f"/memories/{memory_id}/injections", {}, Injection)

    def feedback(
        self,
        memory_id: int,
        value: str,
        *,
        user_id: str | None = None,
        injection: int | None = None,
        note: str | None = None,
        idempotency_key: str | None = None,
    ) -> Feedback:
        """Say a memory an agent was given is "useful", "wrong" or "outdated" (for `user_id`, the person it
        is about; `injection`: the context answer's injection_id). A small, bounded ranking signal."""
        body = clean({"value": value, "user_id": user_id, "injection": injection, "note": note})
        path = f"/memories/{memory_id}/feedback"
        return self._call(
            "POST", path, body=body, headers=idempotency(idempotency_key), parse=Feedback.model_validate
        )

    def feedback_list(self, memory_id: int) -> Iterator[Feedback]:
        """The feedback on a memory (a key: everyone's; an account: its own), newest first."""
        return self._list(f"/memories/{memory_id}/feedback", {}, Feedback)


class Markdown(Resource):
    """A subject's (or a project's) memories as one Markdown document: /memories/markdown."""

    def get(self, *, user_id: str | None = None, project: int | None = None, skill: str | None = None):
        params = {"user_id": user_id, "project": project, "skill": skill}
        return self._call("GET", "/memories/markdown", params=params, parse=MarkdownDocument.model_validate)

    def put(
        self,
        document: str,
        *,
        base_version: str,
        user_id: str | None = None,
        project: int | None = None,
        skill: str | None = None,
    ) -> MarkdownDocument:
        """Apply an edited copy; a stale base_version raises Conflict (409) with details.changed."""
        params = {"user_id": user_id, "project": project, "skill": skill}
        body = {"document": document, "base_version": base_version}
        return self._call(
            "PUT", "/memories/markdown", params=params, body=body, parse=MarkdownDocument.model_validate
        )


class Agents(Resource):
    """Seed 004's per-agent routes: /agents/{agent_id}/memories."""

    def list(self, agent_id: str, *, user_id: str | None = None) -> Iterator[Memory]:
        return self._list(f"/agents/{_seg(agent_id)}/memories", {"user_id": user_id}, Memory)

    def add(
        self, agent_id: str, content: str, *, user_id: str | None = None, **fields: Any
    ) -> Memory | Paused:
        body = clean({"content": content, "user_id": user_id, **fields})
        return self._call("POST", f"/agents/{_seg(agent_id)}/memories", body=body, parse=_memory_or_paused)

    def update(self, agent_id: str, memory_id: int, **fields: Any) -> Memory:
        path = f"/agents/{_seg(agent_id)}/memories/{memory_id}"
        return self._call("PATCH", path, body=fields, parse=Memory.model_validate)

    def delete(self, agent_id: str, memory_id: int) -> Deleted:
        path = f"/agents/{_seg(agent_id)}/memories/{memory_id}"
        return self._call("DELETE", path, parse=Deleted.model_validate)

    def delete_all(self, agent_id: str, *, user_id: str) -> Deleted:
        path = f"/agents/{_seg(agent_id)}/memories"
        return self._call("DELETE", path, params={"user_id": user_id}, parse=Deleted.model_validate)

    def stats(self, agent_id: str, *, user_id: str | None = None) -> MemoryStats:
        path = f"/agents/{_seg(agent_id)}/memories/stats"
        return self._call("GET", path, params={"user_id": user_id}, parse=MemoryStats.model_validate)


class ContextResource(Resource):
    def get(self, *, user_id: str, query: str | None = None, **options: Any) -> Context:
        """What the agent should know before answering: profile, core and relevant memories, the session's
        summary and recent messages, and `prompt` (Markdown). Options: project, session_id, agent_id,
        skills, top_k, max_tokens."""
        body = clean({"user_id": user_id, "query": query, **options})
        return self._call("POST", "/context", body=body, parse=Context.model_validate)


class Sessions(Resource):
    """Short-term memory: /sessions."""

    def append(
        self,
        session_id: str,
        messages: list[dict[str, Any]],
        *,
        user_id: str | None = None,
        project: int | str | None = None,
        agent_id: str | None = None,
        extract: bool | None = None,
        idempotency_key: str | None = None,
    ) -> MessagesAppended:
        """Append messages ({"role": "user|assistant|system|tool|developer" or "human|ai", "content",
        "message_id"?}); with extract (the default) an extraction job is queued:
        `jobs.wait(result.extraction_job.id)`."""
        body = clean(
            {
                "messages": messages,
                "user_id": user_id,
                "project": project,
                "agent_id": agent_id,
                "extract": extract,
            }
        )
        return self._call(
            "POST",
            f"/sessions/{_seg(session_id)}/messages",
            body=body,
            headers=idempotency(idempotency_key),
            parse=MessagesAppended.model_validate,
        )

    def get(self, session_id: str, *, limit: int | None = None) -> Session:
        path = f"/sessions/{_seg(session_id)}"
        return self._call("GET", path, params={"limit": limit}, parse=Session.model_validate)

    def list(self, *, user_id: str | None = None, status: str | None = None) -> Iterator[Session]:
        return self._list("/sessions", {"user_id": user_id, "status": status}, Session)

    def delete(self, session_id: str) -> None:
        return self._call("DELETE", f"/sessions/{_seg(session_id)}")


class Checkpoints(Resource):
    """Episodic memory: a session's saved agent states."""

    def save(
        self,
        session_id: str,
        *,
        user_id: str | None = None,
        messages: list[Any] | None = None,
        agent_state: dict[str, Any] | None = None,
        tool_states: dict[str, Any] | None = None,
        pending_tool_calls: list[Any] | None = None,
        parent: int | None = None,
        metadata: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Checkpoint:
        body = clean(
            dict(
                user_id=user_id,
                messages=messages,
                agent_state=agent_state,
                tool_states=tool_states,
                pending_tool_calls=pending_tool_calls,
                parent=parent,
                metadata=metadata,
                **fields,
            )
        )
        return self._call(
            "PUT",
            f"/sessions/{_seg(session_id)}/checkpoints",
            body=body,
            headers=idempotency(idempotency_key),
            parse=Checkpoint.model_validate,
        )

    def latest(self, session_id: str) -> Checkpoint:
        """Resume: the session's newest checkpoint (NotFound when it has none)."""
        path = f"/sessions/{_seg(session_id)}/checkpoints/latest"
        return self._call("GET", path, parse=Checkpoint.model_validate)

    def list(self, session_id: str) -> Iterator[Checkpoint]:
        return self._list(f"/sessions/{_seg(session_id)}/checkpoints", {}, Checkpoint)

    def archived(self, session_id: str) -> Iterator[Checkpoint]:
        return self._list(f"/sessions/{_seg(session_id)}/checkpoints/archived", {}, Checkpoint)

    def get(self, checkpoint_id: int) -> Checkpoint:
        return self._call("GET", f"/checkpoints/{checkpoint_id}", parse=Checkpoint.model_validate)

    def approve(
        self, checkpoint_id: int, *, tool_call_ids: list[str] | None = None, comment: str | None = None
    ):
        """Approve pending tool calls (all when tool_call_ids is None): a new checkpoint records it."""
        return self._decide("approve", checkpoint_id, tool_call_ids, comment)

    def reject(
        self, checkpoint_id: int, *, tool_call_ids: list[str] | None = None, comment: str | None = None
    ):
        return self._decide("reject", checkpoint_id, tool_call_ids, comment)

    def _decide(self, decision: str, checkpoint_id: int, tool_call_ids, comment) -> Checkpoint:
        body = clean({"tool_call_ids": tool_call_ids, "comment": comment})
        path = f"/checkpoints/{checkpoint_id}/{decision}"
        return self._call("POST", path, body=body, parse=Checkpoint.model_validate)

    def restore(self, checkpoint_id: int) -> Checkpoint:
        """An archived checkpoint becomes the session's newest."""
        return self._call("POST", f"/checkpoints/{checkpoint_id}/restore", parse=Checkpoint.model_validate)


class Jobs(Resource):
    """Extraction jobs: /extraction-jobs."""

    def get(self, job_id: int) -> ExtractionJob:
        return self._call("GET", f"/extraction-jobs/{job_id}", parse=ExtractionJob.model_validate)

    def list(self, *, status: str | None = None, user_id: str | None = None, session_id: str | None = None):
        params = {"status": status, "user_id": user_id, "session_id": session_id}
        return self._list("/extraction-jobs", params, ExtractionJob)

    def retry(self, job_id: int) -> ExtractionJob:
        return self._call("POST", f"/extraction-jobs/{job_id}/retry", parse=ExtractionJob.model_validate)

    def accept_deferred(self, job_id: int, index: int) -> dict:
        """Write a candidate the job held back (result["deferred"][index]: the session's cap, or code "unsure", not
        worded as a statement); {"accepted", "job"}."""
        return self._call("POST", f"/extraction-jobs/{job_id}/deferred/accept", body={"index": index})

    def wait(self, job_id: int, *, timeout: float = 60.0, interval: float = 0.5) -> ExtractionJob:
        """Poll until the job is done or failed; JobTimeout after `timeout` seconds."""
        return self._c.wait_until(lambda: self.get(job_id), lambda job: job.finished, timeout, interval)


class ReembedJobs(Resource):
    def list(self) -> Iterator[ReembedJob]:
        return self._list("/reembed-jobs", {}, ReembedJob)

    def get(self, job_id: int) -> ReembedJob:
        return self._call("GET", f"/reembed-jobs/{job_id}", parse=ReembedJob.model_validate)


class Users(Resource):
    """A subject's data as a whole: export, import, forget, pause memory."""

    def export(self, user_id: str) -> dict[str, Any]:
        return self._call("GET", f"/users/{_seg(user_id)}/export")

    def import_(
        self, user_id: str, data: dict[str, Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """Load an export for this subject; the report says what was taken and what was refused."""
        path = f"/users/{_seg(user_id)}/import"
        return self._call("POST", path, body=data, headers=idempotency(idempotency_key))

    def forget(self, user_id: str) -> Forgotten:
        """Erase every row about the subject the key may erase; counts per kind deleted and left."""
        return self._call("DELETE", f"/users/{_seg(user_id)}", parse=Forgotten.model_validate)

    def pause_state(self, user_id: str) -> PauseState:
        """Whether memory is paused for the subject, and which of its conversations have memory off."""
        return self._call("GET", f"/users/{_seg(user_id)}/memory-pause", parse=PauseState.model_validate)

    def pause(self, user_id: str, *, session_id: str | None = None) -> PauseState:
        """Pause memory for the subject, or only for one conversation ("don't remember this"): every add
        about them then answers Paused and stores nothing; search and context keep working."""
        path = f"/users/{_seg(user_id)}/memory-pause"
        return self._call(
            "PUT", path, body=clean({"session_id": session_id}), parse=PauseState.model_validate
        )

    def resume(self, user_id: str, *, session_id: str | None = None) -> PauseState:
        """Memory on again for the subject, or for one conversation."""
        path = f"/users/{_seg(user_id)}/memory-pause"
        params = {"session_id": session_id}
        return self._call("DELETE", path, params=params, parse=PauseState.model_validate)


class Profiles(Resource):
    def get_user(self, user_id: str) -> UserProfile:
        return self._call("GET", f"/profiles/users/{_seg(user_id)}", parse=UserProfile.model_validate)

    def update_user(self, user_id: str, **fields: Any) -> UserProfile:
        path = f"/profiles/users/{_seg(user_id)}"
        return self._call("PATCH", path, body=fields, parse=UserProfile.model_validate)

    def get_project(self, project_id: int) -> ProjectProfile:
        return self._call("GET", f"/projects/{project_id}/profile", parse=ProjectProfile.model_validate)

    def update_project(self, project_id: int, **fields: Any) -> ProjectProfile:
        path = f"/projects/{project_id}/profile"
        return self._call("PATCH", path, body=fields, parse=ProjectProfile.model_validate)


class Members(Resource):
    def list(self, project_id: int) -> Iterator[Member]:
        return self._list(f"/projects/{project_id}/members", {}, Member)

    def add(self, project_id: int, *, role: str, username: str | None = None, account: int | None = None):
        body = clean({"role": role, "username": username, "account": account})
        return self._call("POST", f"/projects/{project_id}/members", body=body, parse=Member.model_validate)

    def update(self, project_id: int, membership_id: int, *, role: str) -> Member:
        path = f"/projects/{project_id}/members/{membership_id}"
        return self._call("PATCH", path, body={"role": role}, parse=Member.model_validate)

    def remove(self, project_id: int, membership_id: int) -> None:
        return self._call("DELETE", f"/projects/{project_id}/members/{membership_id}")


class Projects(Resource):
    def __init__(self, client):
        super().__init__(client)
        self.members = Members(client)

    def list(self) -> Iterator[Project]:
        return self._list("/projects", {}, Project)

    def create(self, name: str, *, slug: str | None = None, description: str | None = None) -> Project:
        body = clean({"name": name, "slug": slug, "description": description})
        return self._call("POST", "/projects", body=body, parse=Project.model_validate)

    def get(self, project_id: int) -> Project:
        return self._call("GET", f"/projects/{project_id}", parse=Project.model_validate)

    def update(self, project_id: int, **fields: Any) -> Project:
        return self._call("PATCH", f"/projects/{project_id}", body=fields, parse=Project.model_validate)

    def replace(self, project_id: int, *, name: str, slug: str | None = None, description: str | None = None):
        body = clean({"name": name, "slug": slug, "description": description})
        return self._call("PUT", f"/projects/{project_id}", body=body, parse=Project.model_validate)

    def delete(self, project_id: int) -> None:
        return self._call("DELETE", f"/projects/{project_id}")


class ApiKeys(Resource):
    """The org's API keys (org owners and admins)."""

    def list(self) -> Iterator[ApiKey]:
        return self._list("/api-keys", {}, ApiKey)

    def create(
        self, name: str, *, read_only: bool | None = None, projects: list[int] | None = None
    ) -> ApiKey:
        """The answer's `secret` is shown once."""
        body = clean({"name": name, "read_only": read_only, "projects": projects})
        return self._call("POST", "/api-keys", body=body, parse=ApiKey.model_validate)

    def get(self, key_id: int) -> ApiKey:
        return self._call("GET", f"/api-keys/{key_id}", parse=ApiKey.model_validate)

    def revoke(self, key_id: int) -> ApiKey:
        return self._call("POST", f"/api-keys/{key_id}/revoke", parse=ApiKey.model_validate)


class Webhooks(Resource):
    """Signed webhook endpoints and their delivery log (org owners and admins, and a project's admins for
    its own; an API key is answered PermissionDenied: a key may not send the org's events elsewhere)."""

    def list(self) -> Iterator[Webhook]:
        return self._list("/webhooks", {}, Webhook)

    def create(
        self,
        url: str,
        *,
        events: list[str] | None = None,
        project: str | int | None = None,
        description: str | None = None,
        include_content: bool | None = None,
    ) -> Webhook:
        """The answer's `secret` (whsec_...) is shown once."""
        body = clean(
            {
                "url": url,
                "events": events,
                "project": project,
                "description": description,
                "include_content": include_content,
            }
        )
        return self._call("POST", "/webhooks", body=body, parse=Webhook.model_validate)

    def get(self, webhook_id: int) -> Webhook:
        return self._call("GET", f"/webhooks/{webhook_id}", parse=Webhook.model_validate)

    def update(self, webhook_id: int, **fields: Any) -> Webhook:
        """url, description, events, include_content, active (true enables a disabled endpoint again)."""
        return self._call("PATCH", f"/webhooks/{webhook_id}", body=fields, parse=Webhook.model_validate)

    def delete(self, webhook_id: int) -> None:
        self._call("DELETE", f"/webhooks/{webhook_id}")

    def rotate_secret(self, webhook_id: int) -> str:
        """The new secret (the old one stops working at once)."""
        return self._call("POST", f"/webhooks/{webhook_id}/rotate-secret", parse=lambda body: body["secret"])

    def test(self, webhook_id: int) -> WebhookDelivery:
        """Send a webhook.test event now."""
        return self._call("POST", f"/webhooks/{webhook_id}/test", parse=WebhookDelivery.model_validate)

    def deliveries(self, webhook_id: int, **filters: Any) -> Iterator[WebhookDelivery]:
        """Filters: status, event."""
        return self._list(f"/webhooks/{webhook_id}/deliveries", filters, WebhookDelivery)

    def delivery(self, webhook_id: int, delivery_id: int) -> WebhookDelivery:
        path = f"/webhooks/{webhook_id}/deliveries/{delivery_id}"
        return self._call("GET", path, parse=WebhookDelivery.model_validate)

    def retry(self, webhook_id: int, delivery_id: int) -> WebhookDelivery:
        path = f"/webhooks/{webhook_id}/deliveries/{delivery_id}/retry"
        return self._call("POST", path, parse=WebhookDelivery.model_validate)


class Audit(Resource):
    def list(self, **filters: Any) -> Iterator[AuditEvent]:
        """Filters: action, actor, actor_kind, project, subject, since, until (org owners and admins)."""
        return self._list("/audit-log", filters, AuditEvent)


class Injections(Resource):
    def list(self, *, user_id: str | None = None, **filters: Any) -> Iterator[Injection]:
        return self._list("/injections", {"user_id": user_id, **filters}, Injection)


class Tools(Resource):
    """The agent tools as OpenAI function-calling schemas, and running one."""

    def list(self) -> list[dict[str, Any]]:
        return self._call("GET", "/tools", parse=lambda body: body["tools"])

    def invoke(
        self, name: str, arguments: dict[str, Any] | str, *, user_id: str | None = None, **context: Any
    ):
        body = clean({"arguments": arguments, "user_id": user_id, **context})
        return self._call("POST", f"/tools/{_seg(name)}/invoke", body=body, parse=ToolResult.model_validate)


MCP_REVISION = "2026-07-28"


class Mcp(Resource):
    """One self-contained MCP request (protocol revision 2026-07-28: no handshake, no session), e.g.
    `mcp.request("tools/call", {"name": "search_memories", "arguments": {...}})`; answers the JSON-RPC body.
    For a full session use the `mcp` package's client (README, "MCP")."""

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        id: int | str = 1,
        user_id: str | None = None,
        project: str | None = None,
        session_id: str | None = None,
        agent_id: str | None = None,
    ) -> dict[str, Any]:
        params = dict(params or {})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MCP_REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
            **(params.get("_meta") or {}),
        }
        headers = {
            name: value
            for name, value in {
                "Accept": "application/json, text/event-stream",
                "Mcp-Protocol-Version": MCP_REVISION,
                "Mcp-Method": method,
                "Mcp-Name": params.get("name") if method in ("tools/call", "prompts/get") else None,
                "X-Engram-User-Id": user_id,
                "X-Engram-Project": project,
                "X-Engram-Session-Id": session_id,
                "X-Engram-Agent-Id": agent_id,
            }.items()
            if value
        }
        body = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        return self._call("POST", "/mcp", body=body, headers=headers)


class Store(Resource):
    """The LangGraph store: JSON objects under namespaces (tuples of labels) with keys you choose.
    `engram_client.langgraph.EngramStore` is LangGraph's `BaseStore` built on it."""

    def put(
        self,
        namespace,
        key: str,
        value: dict[str, Any],
        *,
        index: list[str] | bool | None = None,
        ttl: float | None = None,
    ) -> None:
        """Create or replace an item. `index`: the fields semantic search embeds (None: the whole value,
        False: none); `ttl`: minutes until it expires."""
        body: dict[str, Any] = {"namespace": list(namespace), "key": key, "value": value}
        if index is not None:
            body["index"] = index
        if ttl is not None:
            body["ttl"] = ttl
        return self._call("PUT", "/store/items", body=body)

    def get(self, namespace, key: str, *, refresh_ttl: bool | None = None) -> StoreItem | None:
        """The item, or None when there is none (or it expired)."""
        params = {"namespace": ".".join(namespace), "key": key, "refresh_ttl": refresh_ttl}
        return self._call(
            "GET", "/store/items", params=params, parse=StoreItem.model_validate, none_if_missing=True
        )

    def delete(self, namespace, key: str) -> None:
        return self._call("DELETE", "/store/items", body={"namespace": list(namespace), "key": key})

    def search(
        self,
        namespace_prefix=(),
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int | None = None,
        offset: int | None = None,
        refresh_ttl: bool | None = None,
    ) -> list[StoreItem]:
        """Items under the prefix, filtered ({"field": value} or {"field": {"$gt": 3}}), best match first
        with a `query`, else the most recently updated first."""
        body = clean(
            {
                "namespace_prefix": list(namespace_prefix),
                "query": query,
                "filter": filter,
                "limit": limit,
                "offset": offset,
                "refresh_ttl": refresh_ttl,
            }
        )
        return self._call(
            "POST",
            "/store/items/search",
            body=body,
            parse=lambda answer: [StoreItem.model_validate(row) for row in answer["items"]],
        )

    def namespaces(
        self,
        *,
        prefix=None,
        suffix=None,
        max_depth: int | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> list[list[str]]:
        """The namespaces in use; "*" in prefix or suffix stands for any one label."""
        body = clean(
            {
                "prefix": list(prefix) if prefix else None,
                "suffix": list(suffix) if suffix else None,
                "max_depth": max_depth,
                "limit": limit,
                "offset": offset,
            }
        )
        return self._call("POST", "/store/namespaces", body=body, parse=lambda answer: answer["namespaces"])


class _Settings(Resource):
    path = ""

    def get(self, **params: Any) -> Config:
        return self._call("GET", self.path, params=params, parse=Config.model_validate)

    def set(self, **fields: Any) -> Config:
        return self._call("PUT", self.path, body=fields, parse=Config.model_validate)

    def delete(self, **params: Any) -> Config | None:
        return self._call("DELETE", self.path, params=params, parse=Config.model_validate)


class EmbeddingConfig(_Settings):
    """The org's embedding provider, or with level="user" the caller's own override."""

    path = "/embedding-config"


class LlmConfig(_Settings):
    """The org's OpenAI-compatible chat model (org owners and admins)."""

    path = "/llm-config"


RESOURCES = {
    "memories": Memories,
    "markdown": Markdown,
    "agents": Agents,
    "context": ContextResource,
    "sessions": Sessions,
    "checkpoints": Checkpoints,
    "jobs": Jobs,
    "reembed_jobs": ReembedJobs,
    "users": Users,
    "profiles": Profiles,
    "projects": Projects,
    "api_keys": ApiKeys,
    "audit": Audit,
    "webhooks": Webhooks,
    "injections": Injections,
    "tools": Tools,
    "mcp": Mcp,
    "store": Store,
    "embedding_config": EmbeddingConfig,
    "llm_config": LlmConfig,
}


def attach(client) -> None:
    for name, cls in RESOURCES.items():
        setattr(client, name, cls(client))
