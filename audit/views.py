"""The audit log page: the org's events with filters (org owners and admins)."""

from django.utils.translation import gettext

from projects.access import readable_projects
from projects.web import org_page, paginate, render_page

from .filters import AuditEventFilterSet
from .selectors import audit_events


def detail_pairs(details: dict) -> list[tuple[str, str]]:
    """The details as (name, text) pairs for the table: lists joined, nested dicts as name=value."""

    def text(value) -> str:
        if isinstance(value, bool):
            return gettext("yes") if value else gettext("no")
        if isinstance(value, list | tuple):
            return ", ".join(text(v) for v in value)
        if isinstance(value, dict):
            return ", ".join(f"{k}={text(v)}" for k, v in value.items())
        return str(value)

    return [(str(key), text(value)) for key, value in (details or {}).items()]


@org_page
def audit_log(request):
    events = audit_events(request.actor)  # 403 for members
    filterset = AuditEventFilterSet(request.GET, queryset=events, request=request)
    listed = filterset.qs if filterset.is_valid() else events.none()
    page, querystring = paginate(request, listed)
    context = {
        "filter": filterset,
        "form": filterset.form,
        "page": page,
        "rows": [(event, detail_pairs(event.details)) for event in page.object_list],
        "querystring": querystring,
        "projects": readable_projects(request.actor).order_by("name"),
    }
    return render_page(request, "audit/list.html", context, partial="events")
