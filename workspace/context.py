"""The context call (seed 000 passive injection, seed 002 prompt builder, seed 004 two layers).

One call gathers, for a subject (and optionally a project and a session):
profile (user and project profiles), core (every core-type and pinned memory, no retrieval),
relevant (hybrid search for the query; skill memories only for the enabled skills, seed 003),
the session's summary and recent messages, and a ready prompt section in the user's language.
Every call is written to the InjectionLog, so a person can see why an agent knew something.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from checkpoints.models import Message, Session
from checkpoints.selectors import sessions_for
from core.roles import role_kind
from core.text import cjk_count, estimate_tokens
from memory.injections import injection_log_row
from memory.models import InjectionLog, MemoryItem
from memory.search import Hit, memory_search
from memory.selectors import MemoryFilters, core_memories
from profiles.models import UserProfile
from profiles.selectors import profile_for_context, profile_prompt_lines
from projects.access import Actor

RECENT_MESSAGES = 10

HEADINGS = {
    "en": {
        "profile": "User profile",
        "core": "Core memories",
        "relevant": "Relevant memories",
        "summary": "Conversation summary",
        "recent": "Recent messages",
    },
    "zh": {
        "profile": "用户画像",
        "core": "核心记忆",
        "relevant": "相关记忆",
        "summary": "对话摘要",
        "recent": "最近对话",
    },
}
# The memory types as the prompt names them (Chinese prompts carry no English tags).
TYPE_NAMES = {
    "en": {},
    "zh": {
        "preference": "偏好",
        "fact": "事实",
        "skill": "技能",
        "habit": "习惯",
        "event": "事件",
        "context": "上下文",
        "constraint": "约束",
        "decision": "决策",
        "core": "核心",
        "summary": "摘要",
        "note": "笔记",
    },
}
ROLE_NAMES = {
    "en": {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"},
    "zh": {"user": "用户", "assistant": "助手", "system": "系统", "tool": "工具"},
}


@dataclass
class Context:
    profile: dict
    core: list[MemoryItem]
    relevant: list[Hit]
    summary: str
    recent_messages: list[Message]
    session: Session | None
    language: str
    prompt: str
    log: InjectionLog
    took_ms: float = 0.0
    notes: list[str] = field(default_factory=list)


def language_of(*, profile: UserProfile | None, texts: list[str]) -> str:
    """zh or en: the profile's preference when set, else the script most of the texts are written in."""
    preference = (profile.language_preference if profile else "").strip().lower()
    if preference:
        return (
            "zh" if preference.startswith("zh") or "chinese" in preference or "中文" in preference else "en"
        )
    joined = "".join(texts)
    cjk = cjk_count(joined)
    latin = len(re.findall(r"[A-Za-z]", joined))
    # One CJK character carries about as much as a short English word.
    return "zh" if cjk and cjk * 3 >= latin else "en"


def _memory_line(language: str, item_type: str, content: str, when) -> str:
    date = f" ({when:%Y-%m-%d})" if when else ""
    return f"- [{TYPE_NAMES[language].get(item_type, item_type)}] {content}{date}"


def render_prompt(
    *,
    language: str,
    profile: dict,
    core: list[MemoryItem],
    relevant: list[Hit],
    summary: str,
    recent: list[Message],
) -> str:
    """The sections seed 002 shows, in order: profile, core, relevant, summary, recent messages."""
    heads = HEADINGS[language]
    sections = []
    lines = profile_prompt_lines(profile, language=language)
    if lines:
        sections.append(f"## {heads['profile']}\n" + "\n".join(lines))
    if core:
        body = "\n".join(_memory_line(language, m.memory_type, m.content, m.occurred_at) for m in core)
        sections.append(f"## {heads['core']}\n{body}")
    if relevant:
        body = "\n".join(
            _memory_line(language, h.row["memory_type"], h.row["content"], h.row["occurred_at"])
            for h in relevant
        )
        sections.append(f"## {heads['relevant']}\n{body}")
    if summary:
        sections.append(f"## {heads['summary']}\n{summary}")
    if recent:
        names = ROLE_NAMES[language]
        body = "\n".join(f"- {names[role_kind(m.role)]}: {m.content}" for m in recent)
        sections.append(f"## {heads['recent']}\n{body}")
    return "\n\n".join(sections)


def context_build(
    *,
    actor: Actor,
    filters: MemoryFilters,
    query: str = "",
    top_k: int = 8,
    max_tokens: int = 1000,
) -> Context:
    """Everything an agent should know before answering, logged in the InjectionLog."""
    org = actor.org
    profile = profile_for_context(org, filters.user_id, filters.project)
    core = core_memories(actor=actor, filters=filters)
    core_ids = {m.pk for m in core}
    relevant: list[Hit] = []
    notes: list[str] = []
    took = 0.0
    if query.strip():
        # The budget covers both memory layers; core memories are always in, relevant ones fill the rest.
        core_tokens = sum(estimate_tokens(m.content) for m in core)
        result = memory_search(
            actor=actor,
            query=query,
            filters=filters,
            top_k=top_k + len(core_ids),
            max_tokens=max(0, max_tokens - core_tokens),
        )
        relevant = [h for h in result.hits if h.id not in core_ids][:top_k]
        notes, took = result.notes, result.took_ms
    session = None
    recent: list[Message] = []
    if filters.session_id:
        # Only a session the actor may read (a project-restricted key: not another project's).
        session = sessions_for(actor, user_id=filters.user_id).filter(session_id=filters.session_id).first()
        if session is not None:
            recent = list(reversed(session.messages.order_by("-id")[:RECENT_MESSAGES]))
    summary = session.summary if session else ""
    user_profile = UserProfile.objects.filter(org=org, user_id=filters.user_id).first()
    language = language_of(
        profile=user_profile,
        texts=[query, *(m.content for m in core), *(h.row["content"] for h in relevant)],
    )
    prompt = render_prompt(
        language=language, profile=profile, core=core, relevant=relevant, summary=summary, recent=recent
    )
    log = injection_log_row(
        org=org,
        user_id=filters.user_id,
        # A call about a project's session is about that project: its readers see the log, no one else.
        project=filters.project or (session.project if session else None),
        session_id=filters.session_id,
        kind="context",
        query=query,
        caller=actor.label,
        memory_ids=[m.pk for m in core] + [h.id for h in relevant],
    )
    log.save()
    return Context(
        profile=profile,
        core=core,
        relevant=relevant,
        summary=summary,
        recent_messages=recent,
        session=session,
        language=language,
        prompt=prompt,
        log=log,
        took_ms=took,
        notes=notes,
    )
