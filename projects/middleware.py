from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from core import rls


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
