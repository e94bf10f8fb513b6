"""Reads of user and project profiles (layer 3 of seed 000). Who may read which is projects.access's
rule (user_profile_read_q, project_profile_read_q, profile_revision_read_q)."""

from __future__ import annotations

from projects.access import Actor, profile_revision_read_q, project_profile_read_q, user_profile_read_q
from projects.models import Project

from .models import ProfileRevision, ProjectProfile, UserProfile

USER_FIELDS = [
    "username",
    "background",
    "profession",
    "communication_style",
    "response_format",
    "language_preference",
    "characteristics",
    "content",
    "expertise_areas",
    "programming_languages",
    "frequently_used_tools",
]
PROJECT_FIELDS = [
    "project_goal",
    "tech_stack",
    "constraints",
    "key_decisions",
    "team_conventions",
    "current_phase",
]

# Labels used when a profile is written into a prompt.
_ZH_LABELS = {
    "username": "姓名",
    "background": "背景",
    "profession": "职业",
    "communication_style": "沟通风格",
    "response_format": "回复格式",
    "language_preference": "语言偏好",
    "characteristics": "特点",
    "content": "自定义说明",
    "expertise_areas": "专业领域",
    "programming_languages": "编程语言",
    "frequently_used_tools": "常用工具",
    "project_goal": "项目目标",
    "tech_stack": "技术栈",
    "constraints": "约束",
    "key_decisions": "关键决策",
    "team_conventions": "团队约定",
    "current_phase": "当前阶段",
}
_LABELS = {
    "username": "Name",
    "background": "Background",
    "profession": "Profession",
    "communication_style": "Communication style",
    "response_format": "Preferred response format",
    "language_preference": "Preferred language",
    "characteristics": "Characteristics",
    "content": "Custom instructions",
    "expertise_areas": "Expertise",
    "programming_languages": "Programming languages",
    "frequently_used_tools": "Frequently used tools",
    "project_goal": "Project goal",
    "tech_stack": "Tech stack",
    "constraints": "Constraints",
    "key_decisions": "Key decisions",
    "team_conventions": "Team conventions",
    "current_phase": "Current phase",
}


def user_profile_get(*, org, user_id: str) -> UserProfile | None:
    """The subject's profile in the org, or None when none was ever built or edited (no access check:
    for callers that made it, like the context endpoint)."""
    return UserProfile.objects.filter(org=org, user_id=user_id).first()


def project_profile_get(*, project: Project) -> ProjectProfile | None:
    """The project's profile, or None (no access check, as user_profile_get)."""
    return ProjectProfile.objects.filter(org_id=project.org_id, project=project).first()


def user_profile_for(*, actor: Actor, user_id: str) -> UserProfile | None:
    """The subject's profile if it exists and the actor may read it."""
    return UserProfile.objects.filter(user_profile_read_q(actor), user_id=user_id).first()


def project_profile_for(*, actor: Actor, project: Project) -> ProjectProfile | None:
    """The project's profile if it exists and the actor may read it."""
    return ProjectProfile.objects.filter(project_profile_read_q(actor), project=project).first()


def _fields(profile, names: list[str]) -> dict:
    return {name: getattr(profile, name) for name in names}


def user_profile_dict(profile: UserProfile | None) -> dict:
    """Every user-profile field (empty values when there is no profile yet)."""
    if profile is None:
        return {name: [] if name in _LIST_FIELDS else "" for name in USER_FIELDS}
    return _fields(profile, USER_FIELDS)


def project_profile_dict(profile: ProjectProfile | None) -> dict:
    if profile is None:
        return {name: [] if name in _LIST_FIELDS else "" for name in PROJECT_FIELDS}
    return _fields(profile, PROJECT_FIELDS)


_LIST_FIELDS = {
    "characteristics",
    "expertise_areas",
    "programming_languages",
    "frequently_used_tools",
    "tech_stack",
    "constraints",
    "key_decisions",
    "team_conventions",
}


def profile_for_context(org, user_id: str | None, project: Project | None) -> dict:
    """What the context endpoint injects: {"user": {field: value}, "project": {field: value}}.

    Only non-empty fields are included; "project" is {} without a project. Access is the caller's
    business (the context endpoint has already checked the subject and the project).
    """
    user = {}
    if user_id:
        user = {k: v for k, v in user_profile_dict(user_profile_get(org=org, user_id=user_id)).items() if v}
    proj = {}
    if project is not None:
        proj = {k: v for k, v in project_profile_dict(project_profile_get(project=project)).items() if v}
    return {"user": user, "project": proj}


def _render_value(value) -> str:
    if isinstance(value, list):
        parts = []
        for entry in value:
            if isinstance(entry, dict):
                text = entry.get("decision") or entry.get("text") or ""
                extra = [str(entry[k]) for k in ("reason", "date") if entry.get(k)]
                parts.append(f"{text} ({'; '.join(extra)})" if extra else text)
            else:
                parts.append(str(entry))
        return "; ".join(p for p in parts if p)
    return str(value)


def profile_prompt_lines(profile: dict, *, language: str = "en") -> list[str]:
    """The output of profile_for_context as prompt lines ("- Profession: engineer", "- 职业：工程师")."""
    labels, sep = (_ZH_LABELS, "：") if language == "zh" else (_LABELS, ": ")
    lines = []
    for section in ("user", "project"):
        for name, value in profile.get(section, {}).items():
            text = _render_value(value)
            if text:
                lines.append(f"- {labels.get(name, name)}{sep}{text}")
    return lines


def profile_revisions(*, actor: Actor, user_id: str = "", project: Project | None = None, limit: int = 50):
    """The newest changes of a user's or a project's profile that the actor may read."""
    qs = ProfileRevision.objects.filter(profile_revision_read_q(actor))
    qs = qs.filter(project=project) if project is not None else qs.filter(user_id=user_id, project=None)
    return list(qs.order_by("-created_at", "-id")[:limit])
