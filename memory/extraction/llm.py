"""The LLM path: one chat call turns a conversation turn into candidate memories (seed 004's rules),
and, when similar memories exist, one call per candidate chooses ADD / UPDATE / SUPERSEDE / NOOP.

Invalid JSON gets one repair request; if that fails too, LLMInvalidOutput tells the caller to use
the rule path. Model errors surface as memory.llm.LLMError (transient or not).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

from core.llm import LLMClient
from core.roles import role_kind
from memory.models import MemoryType, Scope

from .rules import USER_ROLES, Candidate, message_too_short, validate_statement


def extract_prompt() -> str:
    """The extraction instructions (translated: the server's language is the prompt's)."""
    return _(
        "You extract long-term memories about the user from one conversation turn.\n"
        "Rules:\n"
        "- Write each memory as one short, durable statement about the user in the third person, in the "
        'user\'s language: "用户住在成都", "The user is allergic to shellfish". Never "I", "my", "我".\n'
        "- Leave out the request it came with and anything that only matters for the current task: "
        '"帮我把这个 SQL 改成标准 SQL，我们公司数据库不让用存储过程" gives "用户公司的数据库不允许使用存储过程".\n'
        '- One fact per memory: split independent facts ("我儿子上三年级，在学游泳" gives two memories).\n'
        "- Keep what the user says about themselves in passing (where they live or work, company, team, "
        "tools, family, diet, health), and when they ask you to remember some background, keep the "
        "background itself, not the request.\n"
        "- correction is true when the user changes or corrects something (a move, a new job, a new date), "
        "even without a marker word; state only the new value.\n"
        "- Never guess what was not said. Leave out passwords, keys, tokens, ID or card numbers, greetings "
        "and chit-chat.\n"
        "- memory_type is one of: core (identity: name, role), preference, fact, habit, constraint, decision, "
        'skill, event. scope is "user" unless the statement is about the shared project ("project"). '
        "confidence is 0.0-1.0: how sure you are the user really stated it.\n"
        'Reply with JSON only: {"memories": [{"content": "...", "memory_type": "...", "confidence": 0.9, '
        '"scope": "user", "correction": false}]}. Reply {"memories": []} when nothing is worth remembering.'
    )


DECIDE_PROMPT = """You keep a user's memory consistent. Given existing memories (with ids) and one new
memory, choose exactly one action:
- ADD: the new memory is about something not covered by any existing one.
- UPDATE: it adds detail to one existing memory about the same thing; give the combined text in "content".
- SUPERSEDE: it gives a new value for the same subject as one existing memory (a correction, a move,
  a changed preference); the old one is kept as history.
- NOOP: one existing memory already says the same.
For UPDATE, SUPERSEDE and NOOP, "id" must be one of the given ids.
Reply with JSON only: {"action": "ADD|UPDATE|SUPERSEDE|NOOP", "id": null, "content": null, "reason": "..."}"""

REPAIR_PROMPT = (
    "Your reply was not valid JSON of the required shape ({error}). Reply again with the JSON only."
)

CONTEXT_HEADER = "Earlier in the conversation (context only; extract nothing from it):"
TURN_HEADER = "This turn (extract from this):"
ACTIONS = {"ADD", "UPDATE", "SUPERSEDE", "NOOP"}
_TYPES = set(MemoryType.values)
_SCOPES = {Scope.USER.value, Scope.PROJECT.value}
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


class LLMInvalidOutput(Exception):
    """The model's reply could not be used, even after one repair request."""


def _loads(text: str):
    return json.loads(_FENCE.sub("", text.strip()))


def transcript(messages: list[dict]) -> str:
    names = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}
    return "\n".join(f"{names[role_kind(m.get('role') or 'user')]}: {m.get('content', '')}" for m in messages)


def _chat_json(client: LLMClient, messages: list[dict], parse):
    """A JSON reply parsed by `parse`; one repair request when it does not parse."""
    reply = client.chat(messages, json_mode=True)
    try:
        return parse(reply)
    except (ValueError, TypeError, KeyError) as exc:
        error = str(exc)[:200]
    repair = [
        *messages,
        {"role": "assistant", "content": reply[:4000]},
        {"role": "user", "content": REPAIR_PROMPT.format(error=error)},
    ]
    reply = client.chat(repair, json_mode=True)
    try:
        return parse(reply)
    except (ValueError, TypeError, KeyError) as exc:
        raise LLMInvalidOutput(f"invalid JSON from the chat model after one repair request: {exc}") from exc


def _parse_candidates(text: str) -> list[Candidate]:
    data = _loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
        raise ValueError('expected an object with a "memories" list')
    out = []
    for raw in data["memories"]:
        if not isinstance(raw, dict) or not isinstance(raw.get("content"), str):
            raise ValueError('every memory needs a "content" string')
        # Held to the rule path's form: a first person is rewritten, a request, a question or a statement that
        # does not last is dropped.
        content = validate_statement(raw["content"], correction=bool(raw.get("correction")))
        if not content:
            continue
        memory_type = raw.get("memory_type") if raw.get("memory_type") in _TYPES else "fact"
        scope = raw.get("scope") if raw.get("scope") in _SCOPES else "user"
        try:
            confidence = float(raw.get("confidence", 0.8))
        except (TypeError, ValueError):
            raise ValueError("confidence must be a number") from None
        confidence = min(1.0, max(0.0, confidence))
        out.append(
            Candidate(
                content,
                memory_type,
                confidence,
                scope=scope,
                correction=bool(raw.get("correction")),
                rule="llm",
            )
        )
    return out


def extract_llm(client: LLMClient, messages: list[dict]) -> list[Candidate]:
    """Candidates from the model for one turn (user messages under 10 characters are left out).

    Earlier messages marked "context" are shown to the model for reference only.
    """
    context = [m for m in messages if m.get("context")]
    kept = [
        m
        for m in messages
        if not m.get("context")
        and (m.get("role") not in USER_ROLES or not message_too_short(m.get("content") or ""))
    ]
    if not any(m.get("role") in USER_ROLES for m in kept):
        return []
    text = transcript(kept)
    if context:
        text = f"{CONTEXT_HEADER}\n{transcript(context)}\n\n{TURN_HEADER}\n{text}"
    candidates = _chat_json(
        client,
        [{"role": "system", "content": extract_prompt()}, {"role": "user", "content": text}],
        _parse_candidates,
    )
    user_ids = [m.get("message_id") or "" for m in kept if m.get("role") in USER_ROLES]
    for candidate in candidates:
        candidate.source_message_id = user_ids[-1] if user_ids else ""
    return candidates


@dataclass
class Decision:
    action: str
    target_id: int | None
    content: str | None
    reason: str


def decide_llm(client: LLMClient, candidate: Candidate, nearest: list) -> Decision:
    """The model's choice among the nearest items; ids it invents are refused (LLMInvalidOutput)."""
    ids = {item.pk for item, _ in nearest}
    existing = [
        {"id": item.pk, "content": item.content, "memory_type": item.memory_type} for item, _ in nearest
    ]
    prompt = json.dumps(
        {"existing": existing, "new": {"content": candidate.content, "memory_type": candidate.memory_type}},
        ensure_ascii=False,
    )

    def parse(text: str) -> Decision:
        data = _loads(text)
        if not isinstance(data, dict):
            raise ValueError("expected an object")
        action = str(data.get("action", "")).upper()
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}")
        target = data.get("id")
        if action != "ADD":
            try:
                target = int(target)
            except (TypeError, ValueError):
                raise ValueError(f"{action} needs the id of an existing memory") from None
            if target not in ids:
                raise ValueError(f"id {target} is not one of the given memories")
        else:
            target = None
        content = data.get("content") if isinstance(data.get("content"), str) else None
        if action == "UPDATE" and not (content and content.strip()):
            raise ValueError("UPDATE needs the combined content")
        return Decision(
            action, target, content.strip() if content else None, str(data.get("reason") or "")[:300]
        )

    return _chat_json(
        client, [{"role": "system", "content": DECIDE_PROMPT}, {"role": "user", "content": prompt}], parse
    )


SUMMARY_PROMPT = (
    "你是对话压缩引擎。请在保留事实、偏好、结论、待办和约束的前提下进行递归摘要。"
    "Keep facts, preferences, conclusions, to-dos and constraints; write in the conversation's language, "
    "at most 300 words, compact."
)


def summarize_llm(client: LLMClient, existing_summary: str, messages: list[dict]) -> str:
    """Seed 002's recursive summary: the old summary plus the messages that leave the window."""
    prompt = f"已有摘要 / Existing summary:\n{existing_summary or '无 / none'}\n\n新增历史 / New history:\n{transcript(messages)}"
    return client.chat(
        [{"role": "system", "content": SUMMARY_PROMPT}, {"role": "user", "content": prompt}]
    ).strip()
