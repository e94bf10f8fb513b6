from django.http import HttpResponseBadRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext as _

from core import rls

from .api.errors import NUL_MESSAGE, is_api_path, json_error


def _current_membership(request):
    from .access import account_membership, account_memberships

    user = request.user
    if not user.is_authenticated:
        return None
    wanted = request.session.get("org_id")
    if wanted:
        chosen = account_membership(user, wanted)
        if chosen:
            return chosen
    return account_memberships(user).first()


class CurrentOrgMiddleware:
    """Puts the signed-in account's current org membership on request.membership (pages only)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.membership = SimpleLazyObject(lambda: _current_membership(request))
        return self.get_response(request)


# Ids in URLs (user_id, session_id, agent_id, skill, tool names) are at most 255 characters everywhere.
MAX_PATH_ID = 255


def _bad_input(request, field: str, message: str):
    text = f"{field}: {message}"
    if is_api_path(request.path):
        return json_error(400, "invalid", text)
    return HttpResponseBadRequest(text, content_type="text/plain; charset=utf-8")


class BadInputMiddleware:
    """400 for what no view can take and PostgreSQL cannot store or compare: a NUL character in the path,
    a query parameter or a header (X-Engram-Org, Authorization...), and a URL id longer than any stored
    one. Answered before sessions, authentication and views touch the database."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:
            return _bad_input(request, "path", NUL_MESSAGE)
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in v for v in values):
                return _bad_input(request, name.replace("\x00", "\\u0000"), NUL_MESSAGE)
        for key, value in request.META.items():
            if key.startswith("HTTP_") and isinstance(value, str) and "\x00" in value:
                return _bad_input(request, key[5:].replace("_", "-").title(), NUL_MESSAGE)
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        for name, value in view_kwargs.items():
            if isinstance(value, str) and len(value) > MAX_PATH_ID:
                message = _("at most %(limit)d characters.") % {"limit": MAX_PATH_ID}
                return _bad_input(request, name, message)
        return None


class RowSecurityMiddleware:
    """Each request starts with the row-level security scope of its signed-in account (core.rls): the
    account's own memberships and nothing of any org, until the view binds the actor's org
    (projects.web.org_page, projects.api.base.ActorMixin). Staff see every org in the Django admin."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.admin_prefix = None

    def __call__(self, request):
        with rls.scoped(self.scope(request)):
            return self.get_response(request)

    def scope(self, request) -> rls.Scope:
        user = request.user
        if not user.is_authenticated:
            return rls.NOTHING
        if self.admin_prefix is None:
            self.admin_prefix = reverse("admin:index")
        if user.is_active and user.is_staff and request.path.startswith(self.admin_prefix):
            return rls.ALL_ORGS
        return rls.Scope(account_id=user.pk)
