"""Writes to user and project profiles. Every change writes a ProfileRevision (field -> [before, after])."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from audit import services as audit
from core.secrets import redact_json
from projects.access import Actor, require_edit_project_profile, require_subject
from projects.models import Project

from .models import ProfileRevision, ProjectProfile, UserProfile
from .selectors import PROJECT_FIELDS, USER_FIELDS

AGGREGATION_ACTOR = "aggregation"


def _locked_user_profile(*, org, user_id: str) -> UserProfile:
    try:
        with transaction.atomic():
            UserProfile.objects.get_or_create(org=org, user_id=user_id)
    except IntegrityError:  # created by a concurrent request in between: it exists now
        pass
    return UserProfile.objects.select_for_update().get(org=org, user_id=user_id)


def _locked_project_profile(*, project: Project) -> ProjectProfile:
    try:
        with transaction.atomic():
            ProjectProfile.objects.get_or_create(project=project, defaults={"org_id": project.org_id})
    except IntegrityError:
        pass
    return ProjectProfile.objects.select_for_update().get(project=project)


def profile_values_redacted(profile, values: dict) -> dict:
    """Profile values without secrets: every string, in lists and objects too, through core.secrets.redact
    (as conversation text is kept), then cut to its column's length."""
    out = {}
    for name, value in redact_json(values).items():
        limit = getattr(profile._meta.get_field(name), "max_length", None)
        out[name] = value[:limit] if limit and isinstance(value, str) else value
    return out


def _apply(
    profile, *, names: list[str], values: dict, mark_edited: bool, clear_edited: list[str], actor: str
) -> dict:
    """Set values on a locked profile; returns the changes written to its revision."""
    unknown = (set(values) | set(clear_edited)) - set(names)
    if unknown:
        raise ValueError(f"not profile fields: {sorted(unknown)}")
    edited_before = list(profile.edited_fields or [])
    edited = [name for name in edited_before if name not in clear_edited]
    changes = {}
    for name, value in profile_values_redacted(profile, values).items():
        if not mark_edited and name in edited:
            continue  # a person's edit wins until they clear the mark
        if getattr(profile, name) != value:
            changes[name] = [getattr(profile, name), value]
            setattr(profile, name, value)
        if mark_edited and name not in edited:
            edited.append(name)
    if edited != edited_before:
        changes["edited_fields"] = [edited_before, edited]
        profile.edited_fields = edited
    if not mark_edited:
        profile.aggregated_at = timezone.now()
    else:  # a value a person set does not come from memories
        profile.sources = {k: v for k, v in (profile.sources or {}).items() if k not in values}
    profile.save()
    if changes:
        ProfileRevision.objects.create(
            org_id=profile.org_id,
            user_id=getattr(profile, "user_id", ""),
            project_id=getattr(profile, "project_id", None),
            actor=actor,
            changes=redact_json(changes),  # "before" may hold a value stored before redaction
        )
    return changes


@transaction.atomic
def user_profile_update(
    *, actor: Actor, org, user_id: str, values: dict, clear_edited: list[str] | None = None
) -> UserProfile:
    """A person edits a user profile: edited fields are marked and left alone by aggregation."""
    require_subject(actor, user_id, write=True)
    profile = _locked_user_profile(org=org, user_id=user_id)
    changes = _apply(
        profile,
        names=USER_FIELDS,
        values=values,
        mark_edited=True,
        clear_edited=list(clear_edited or []),
        actor=actor.label,
    )
    if changes:
        audit.record(
            actor,
            audit.Action.PROFILE_UPDATE,
            target=profile,
            subject=user_id,
            details=audit.field_names(changes),
        )
    if clear_edited:
        _schedule_rebuild(org_id=org.id, user_id=user_id)
    return profile


@transaction.atomic
def project_profile_update(
    *, actor: Actor, project: Project, values: dict, clear_edited: list[str] | None = None
) -> ProjectProfile:
    """Editors and up edit a project profile."""
    require_edit_project_profile(actor, project)
    profile = _locked_project_profile(project=project)
    changes = _apply(
        profile,
        names=PROJECT_FIELDS,
        values=values,
        mark_edited=True,
        clear_edited=list(clear_edited or []),
        actor=actor.label,
    )
    if changes:
        audit.record(
            actor,
            audit.Action.PROFILE_UPDATE,
            target=profile,
            project=project,
            details=audit.field_names(changes),
        )
    if clear_edited:
        _schedule_rebuild(org_id=project.org_id, project_id=project.id)
    return profile


def _set_sources(profile, sources: dict | None) -> None:
    edited = set(profile.edited_fields or [])
    profile.sources = {k: list(v) for k, v in (sources or {}).items() if k not in edited}


@transaction.atomic
def user_profile_aggregate_save(
    *, org, user_id: str, values: dict, sources: dict | None = None
) -> tuple[UserProfile, dict]:
    """Aggregation's write: fields a person edited are skipped. sources: field -> ids of the memories
    the field came from (a field a person edited has none)."""
    profile = _locked_user_profile(org=org, user_id=user_id)
    _set_sources(profile, sources)
    changes = _apply(
        profile, names=USER_FIELDS, values=values, mark_edited=False, clear_edited=[], actor=AGGREGATION_ACTOR
    )
    return profile, changes


@transaction.atomic
def project_profile_aggregate_save(
    *, project: Project, values: dict, sources: dict | None = None
) -> tuple[ProjectProfile, dict]:
    profile = _locked_project_profile(project=project)
    _set_sources(profile, sources)
    changes = _apply(
        profile,
        names=PROJECT_FIELDS,
        values=values,
        mark_edited=False,
        clear_edited=[],
        actor=AGGREGATION_ACTOR,
    )
    return profile, changes


def _schedule_rebuild(**kwargs) -> None:
    from .tasks import profile_rebuild_schedule

    transaction.on_commit(lambda: profile_rebuild_schedule(**kwargs))
