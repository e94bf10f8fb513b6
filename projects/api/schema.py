"""OpenAPI: the Bearer API key, one tag per resource, and the one error body on every 4xx an operation
can answer (projects.api.errors)."""

import re

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiResponse


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "projects.authentication.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An org API key: `Authorization: Bearer eng_xxxxxxxx.<secret>`.",
        }


class ApiKeyHeaderAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "projects.authentication.ApiKeyHeaderAuthentication"
    name = "ApiKeyHeader"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "X-Api-Key",
            "description": "The same org API key in `X-Api-Key` (as LangGraph's client sends it; the store API).",
        }


# ---- tags ----------------------------------------------------------------------------------------------

TAGS = [
    {
        "name": "memories",
        "description": "Long-term memories: add (through the memory gate), read, change, "
        "delete, batch, statistics, history and restore.",
    },
    {
        "name": "search",
        "description": "Hybrid (vector + keyword) search over the memories the caller may read.",
    },
    {"name": "context", "description": "Everything an agent should know before it answers, in one call."},
    {"name": "markdown", "description": "A subject's memories as one editable Markdown document."},
    {"name": "agents", "description": "One agent's memories (the agent routes of seed 004)."},
    {
        "name": "sessions",
        "description": "Conversations: messages (extraction runs on them) and rolling summaries.",
    },
    {
        "name": "checkpoints",
        "description": "Saved agent states of a session: resume, approve or reject pending "
        "tool calls, restore archived ones.",
    },
    {"name": "jobs", "description": "Extraction and re-embed jobs: status, progress, retry."},
    {"name": "profiles", "description": "User and project profiles, aggregated from memories and editable."},
    {"name": "users", "description": "A subject's data as a whole: export, import, forget, pause memory."},
    {
        "name": "feedback",
        "description": "Useful / wrong / outdated from the people a memory is about; a small ranking signal.",
    },
    {"name": "injections", "description": "What was handed to agents (context, search, tools), and when."},
    {
        "name": "tools",
        "description": "The memory tools as OpenAI function-calling schemas, and running them.",
    },
    {
        "name": "store",
        "description": "The LangGraph store: JSON items under namespaces, for LangGraph agents.",
    },
    {"name": "config", "description": "The org's chat model and embedding provider (org owners and admins)."},
    {"name": "projects", "description": "Projects and their members."},
    {"name": "keys", "description": "The org's API keys (org owners and admins); a secret is shown once."},
    {"name": "audit", "description": "The org's audit log (org owners and admins)."},
    {"name": "webhooks", "description": "Signed deliveries of memory and extraction events."},
]

# The first rule whose pattern matches the path after /api/v1/ names the operation's tag.
TAG_RULES = [
    (r"memories/search", "search"),
    (r"injections|memories/\{id\}/injections", "injections"),
    (r"memories/markdown", "markdown"),
    (r"memories/\{id\}/feedback", "feedback"),
    (r"memories", "memories"),
    (r"agents/", "agents"),
    (r"sessions/\{session_id\}/checkpoints|checkpoints", "checkpoints"),
    (r"sessions", "sessions"),
    (r"extraction-jobs|reembed-jobs", "jobs"),
    (r"profiles/|projects/\{id\}/profile", "profiles"),
    (r"projects", "projects"),
    (r"users/", "users"),
    (r"context", "context"),
    (r"tools", "tools"),
    (r"store/", "store"),
    (r"llm-config|embedding-config", "config"),
    (r"api-keys", "keys"),
    (r"audit-log", "audit"),
    (r"webhooks", "webhooks"),
]


def tag_for(path: str) -> str | None:
    rest = path.removeprefix("/api/v1/")
    for pattern, tag in TAG_RULES:
        if re.match(pattern, rest):
            return tag
    return None


# One line per operation, shown in Swagger UI and Redoc and used by generators for method docs. Keyed by
# operationId (stable: the Python client maps to them).
SUMMARIES = {
    "v1_memories_list": "List memories",
    "v1_memories_create": "Add a memory",
    "v1_memories_destroy": "Delete all memories of a user",
    "v1_memories_retrieve": "Get a memory",
    "v1_memories_partial_update": "Update a memory",
    "v1_memories_destroy_2": "Delete a memory",
    "v1_memories_history_list": "A memory's revisions",
    "v1_memories_restore_create": "Restore a memory's revision",
    "v1_memories_split_create": "Split a merge back into its own memory",
    "v1_memories_batch_create": "Add many memories",
    "v1_memories_stats_retrieve": "Memory statistics",
    "v1_memories_search_create": "Search memories",
    "v1_memories_markdown_retrieve": "Memories as a Markdown document",
    "v1_memories_markdown_update": "Apply an edited Markdown document",
    "v1_memories_injections_list": "When a memory was handed to agents",
    "v1_injections_list": "What was handed to agents about a user",
    "v1_context_create": "Context for an agent",
    "v1_agents_memories_list": "List an agent's memories",
    "v1_agents_memories_create": "Add an agent's memory",
    "v1_agents_memories_destroy": "Delete an agent's memories of a user",
    "v1_agents_memories_partial_update": "Update an agent's memory",
    "v1_agents_memories_destroy_2": "Delete an agent's memory",
    "v1_agents_memories_stats_retrieve": "An agent's memory statistics",
    "v1_sessions_list": "List sessions",
    "v1_sessions_retrieve": "Get a session with its recent messages",
    "v1_sessions_destroy": "Delete a session",
    "v1_sessions_messages_create": "Append messages to a session",
    "v1_sessions_checkpoints_list": "List a session's checkpoints",
    "v1_sessions_checkpoints_update": "Save a checkpoint",
    "v1_sessions_checkpoints_archived_list": "List a session's archived checkpoints",
    "v1_sessions_checkpoints_latest_retrieve": "The latest checkpoint (resume)",
    "v1_checkpoints_retrieve": "Get a checkpoint",
    "v1_checkpoints_approve_create": "Approve pending tool calls",
    "v1_checkpoints_reject_create": "Reject pending tool calls",
    "v1_checkpoints_restore_create": "Restore an archived checkpoint",
    "v1_extraction_jobs_list": "List extraction jobs",
    "v1_extraction_jobs_retrieve": "Get an extraction job",
    "v1_extraction_jobs_retry_create": "Retry a failed extraction job",
    "v1_reembed_jobs_list": "List re-embed jobs",
    "v1_reembed_jobs_retrieve": "Get a re-embed job",
    "v1_profiles_users_retrieve": "Get a user's profile",
    "v1_profiles_users_partial_update": "Edit a user's profile",
    "v1_projects_profile_retrieve": "Get a project's profile",
    "v1_projects_profile_partial_update": "Edit a project's profile",
    "v1_users_destroy": "Forget a user",
    "v1_users_export_retrieve": "Export a user's data",
    "v1_users_import_create": "Import a user's data",
    "v1_users_memory_pause_retrieve": "Whether memory is paused for a user",
    "v1_users_memory_pause_update": "Pause memory for a user or one conversation",
    "v1_users_memory_pause_destroy": "Turn memory back on for a user or one conversation",
    "v1_memories_feedback_list": "List the feedback on a memory",
    "v1_memories_feedback_create": "Give feedback on a memory (useful, wrong, outdated)",
    "v1_tools_retrieve": "List the memory tools",
    "v1_tools_invoke_create": "Run a memory tool",
    "v1_store_items_retrieve": "Get a store item",
    "v1_store_items_update": "Put a store item",
    "v1_store_items_destroy": "Delete a store item",
    "v1_store_items_search_create": "Search store items",
    "v1_store_namespaces_create": "List store namespaces",
    "v1_llm_config_retrieve": "Get the chat model",
    "v1_llm_config_update": "Set the chat model",
    "v1_llm_config_destroy": "Remove the chat model",
    "v1_embedding_config_retrieve": "Get the embedding provider",
    "v1_embedding_config_update": "Set the embedding provider",
    "v1_embedding_config_destroy": "Remove the embedding provider override",
    "v1_projects_list": "List projects",
    "v1_projects_create": "Create a project",
    "v1_projects_retrieve": "Get a project",
    "v1_projects_update": "Replace a project",
    "v1_projects_partial_update": "Update a project",
    "v1_projects_destroy": "Delete a project",
    "v1_projects_members_list": "List a project's members",
    "v1_projects_members_create": "Add a project member",
    "v1_projects_members_partial_update": "Change a member's role",
    "v1_projects_members_destroy": "Remove a project member",
    "v1_api_keys_list": "List API keys",
    "v1_api_keys_create": "Create an API key",
    "v1_api_keys_retrieve": "Get an API key",
    "v1_api_keys_revoke_create": "Revoke an API key",
    "v1_audit_log_list": "The audit log",
}


class AutoSchema(SpectacularAutoSchema):
    """Tags by resource (TAG_RULES) instead of the path's first segment (which would be "v1" for all), and
    the summaries above where the view gives none."""

    def get_tags(self) -> list[str]:
        tag = tag_for(self.path)
        return [tag] if tag else super().get_tags()

    def get_summary(self) -> str | None:
        return super().get_summary() or SUMMARIES.get(self.get_operation_id())


# ---- errors --------------------------------------------------------------------------------------------

ERROR_STATUSES = {
    400: "Invalid input; the message names the field.",
    401: "No or an invalid API key or session.",
    403: "The caller's role or key may not do this.",
    404: "No such object, or one the caller may not see.",
    406: "The Accept header asks for a format the API does not offer.",
    409: "Conflicts with the current state.",
    412: "If-Match names an older version.",
    413: "The request body is too large.",
    415: "The body is not JSON.",
    422: "Refused by the memory gate.",
    429: "Too many requests; see Retry-After.",
}
# Any operation can answer these (bad query or header, authentication, role, unknown org, Accept, rate).
COMMON_ERRORS = (400, 401, 403, 404, 406, 429)
# And an operation that takes an Idempotency-Key header these (projects.api.idempotency).
IDEMPOTENCY_ERRORS = {
    409: "A request with this Idempotency-Key is still running.",
    422: "This Idempotency-Key was used with a different request.",
}
# And an operation that takes a body these.
BODY_ERRORS = (413, 415)
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {
                    "type": "string",
                    "description": "Machine-readable, e.g. invalid, not_found, too_short.",
                },
                "message": {"type": "string", "description": "For people; names the field at fault."},
                "details": {"description": "Per-field problems, or what the code needs to explain itself."},
            },
        }
    },
}


def errors(*codes: int, **descriptions: str) -> dict:
    """The error answers an operation adds to the common ones, for extend_schema(responses=...):
    `errors(409, 422, e409="...")`; the body (the Error schema) is filled in by document_errors."""
    return {
        code: OpenApiResponse(description=descriptions.get(f"e{code}", ERROR_STATUSES[code]))
        for code in codes
    }


def document_errors(result, generator, request, public):
    """Postprocessing hook: the common errors on every operation, the body ones where it takes a body, the
    one error body on every 4xx (projects.api.errors); and the descriptions of the tags in use."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            codes = COMMON_ERRORS + (BODY_ERRORS if "requestBody" in operation else ())
            for code in codes:
                responses.setdefault(str(code), {"description": ERROR_STATUSES[code]})
            if any(p.get("name") == "Idempotency-Key" for p in operation.get("parameters", [])):
                for code, description in IDEMPOTENCY_ERRORS.items():
                    responses.setdefault(str(code), {"description": description})
            for code, response in responses.items():
                if code.startswith("4"):
                    response.setdefault("content", error)
            operation["responses"] = dict(sorted(responses.items()))
    used = {
        tag
        for operations in result.get("paths", {}).values()
        for op in operations.values()
        for tag in op.get("tags", [])
    }
    named = {tag["name"] for tag in TAGS}
    declared = TAGS + [tag for tag in result.get("tags", []) if tag["name"] not in named]
    result["tags"] = [tag for tag in declared if tag["name"] in used]
    return result
