"""The roles a conversation message may have: Engram's own (human, ai, system, tool) and OpenAI's (user,
assistant, system, tool, developer), accepted everywhere a message is (sessions, checkpoints,
extraction, the Mem0 add). A message keeps the role it was sent with; these sets say what each one is."""

from __future__ import annotations

ROLES = ["human", "ai", "system", "tool", "user", "assistant", "developer"]
USER_ROLES = frozenset({"human", "user"})
ASSISTANT_ROLES = frozenset({"ai", "assistant"})
SYSTEM_ROLES = frozenset({"system", "developer"})


def role_kind(role: str) -> str:
    """user / assistant / system / tool: what a role is, whichever vocabulary named it."""
    if role in USER_ROLES:
        return "user"
    if role in ASSISTANT_ROLES:
        return "assistant"
    if role in SYSTEM_ROLES:
        return "system"
    return "tool"
