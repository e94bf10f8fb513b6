"""Template helpers: translated labels for stored codes, and small formatting filters."""

from django import template
from django.utils.translation import gettext_lazy as _

register = template.Library()

LABELS = {
    # memory types
    "preference": _("preference"),
    "fact": _("fact"),
    "skill": _("skill"),
    "habit": _("habit"),
    "event": _("event"),
    "context": _("context"),
    "constraint": _("constraint"),
    "decision": _("decision"),
    "core": _("core"),
    "summary": _("summary"),
    "note": _("note"),
    # scopes
    "user": _("user"),
    "project": _("project"),
    "session": _("session"),
    # sources
    "auto": _("automatic"),
    "agent": _("agent"),
    "admin": _("admin"),
    "import": _("import"),
    "knowledge_base": _("knowledge base"),
    "project_resource": _("project resource"),
    # status
    "active": _("active"),
    "archived": _("deleted (archived)"),
    "superseded": _("superseded"),
    "pending": _("pending"),
    "processing": _("processing"),
    "done": _("done"),
    "failed": _("failed"),
    # visibility
    "public": _("public"),
    "members": _("members"),
    "owner_only": _("owner only"),
    # agent calls
    "search": _("search"),
    "injection": _("injection"),
    # roles
    "owner": _("Owner"),
    "editor": _("Editor"),
    "viewer": _("Viewer"),
    "member": _("Member"),
    # revision actions
    "add": _("added"),
    "update": _("updated"),
    "merge": _("merged"),
    "supersede": _("superseded"),
    "archive": _("deleted (archived)"),
    "restore": _("restored"),
    "delete": _("deleted"),
    "split": _("split"),
    # extraction results
    "rejected": _("rejected"),
    "skipped": _("skipped"),
    "deferred": _("deferred"),
}


@register.filter
def label(code):
    """The translated label of a stored code (type, scope, source, status, visibility, role)."""
    return LABELS.get(code, code)


@register.filter
def role_label(code):
    return _("Admin") if code == "admin" else LABELS.get(code, code)


@register.filter
def pct(part, whole):
    try:
        return round(100 * float(part) / float(whole)) if whole else 0
    except (TypeError, ValueError):
        return 0
