"""Template helpers: translated labels for stored codes, and small formatting filters."""

import re

from django import template
from django.utils.translation import gettext
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
    "public": _("everyone in the organization"),
    "members": _("project members"),
    "owner_only": _("only its author"),
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
    # extraction results (the queue's counts)
    "added": _("added"),
    "merged": _("merged"),
    "updated": _("updated"),
    "rejected": _("rejected"),
    "skipped": _("skipped"),
    "withdrawn": _("withdrawn (taken back later)"),
    # how a job extracted
    "rules": _("rules"),
    "llm": _("language model"),
    "deferred": _("deferred"),
}

# What kind of agent call an injection log records.
CALL_KINDS = {"context": _("context call"), "search": _("search"), "tool": _("tool call")}

# The reasons the pages, tools and services write on revisions, as they are shown; a reason an API caller
# wrote itself is shown as written.
REASONS = {
    "added on the web page": _("added on the web page"),
    "edited on the web page": _("edited on the web page"),
    "deleted on the web page": _("deleted on the web page"),
    "deleted for good on the web page": _("deleted for good on the web page"),
    "undo delete": _("undo delete"),
    "pinned": _("pinned"),
    "unpinned": _("unpinned"),
    "visibility changed": _("visibility changed"),
    "edited in Markdown": _("edited in Markdown"),
    "removed from the Markdown document": _("removed from the Markdown document"),
    "memory_add tool": _("added by the memory_add tool"),
    "batch add": _("batch add"),
    "imported": _("imported"),
    "imported as archived": _("imported as archived"),
    "identical content": _("identical content"),
    "deleted": _("deleted"),
    "archived": _("deleted (archived)"),
    "deleted with all of the subject's memories": _("deleted with all of the subject's memories"),
}
REASON_PATTERNS = [
    (re.compile(r"restored revision (\d+)"), _("restored revision %(a)s")),
    (re.compile(r"superseded by #(\d+)"), _("superseded by #%(a)s")),
    (re.compile(r"split from #(\d+) revision (\d+)"), _("split from #%(a)s revision %(b)s")),
    (re.compile(r"revision (\d+) split into #(\d+)"), _("revision %(a)s split into #%(b)s")),
]


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


@register.filter
def call_kind(code):
    """The kind of agent call an injection log records (context, search, tool)."""
    return CALL_KINDS.get(code, code)


@register.filter
def reason_label(reason):
    """A revision's reason in the page's language when the product wrote it."""
    if reason in REASONS:
        return REASONS[reason]
    for pattern, text in REASON_PATTERNS:
        match = pattern.fullmatch(reason or "")
        if match:
            return text % dict(zip("ab", match.groups(), strict=False))
    return reason


@register.filter
def actor_label(label):
    """Who did it, from the stored label: "account:alice", "key:eg_ab12", "system"."""
    kind, _sep, name = (label or "").partition(":")
    if kind == "account" and name:
        return gettext("account %(name)s") % {"name": name}
    if kind == "key" and name:
        return gettext("API key %(prefix)s") % {"prefix": name}
    if label == "system":
        return gettext("the system")
    return label


# The fields a revision may change, as the detail page names them.
FIELD_LABELS = {
    "memory_type": _("Type"),
    "visibility": _("Who can see it"),
    "pinned": _("Pinned"),
    "tags": _("Tags"),
    "skill": _("Skill"),
}


@register.filter
def field_label(name):
    return FIELD_LABELS.get(name, name)


@register.filter
def field_value(value, name):
    """A field's stored value as the page shows it."""
    if name == "pinned":
        return gettext("yes") if value else gettext("no")
    if name == "tags":
        return ", ".join(value or []) or "—"
    if name in ("memory_type", "visibility"):
        return LABELS.get(value, value)
    return value or "—"
