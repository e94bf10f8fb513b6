from django.utils.functional import SimpleLazyObject


def _current_membership(request):
    from .models import OrgMembership

    user = request.user
    if not user.is_authenticated:
        return None
    memberships = OrgMembership.objects.filter(account=user).select_related("org").order_by("id")
    wanted = request.session.get("org_id")
    if wanted:
        chosen = memberships.filter(org_id=wanted).first()
        if chosen:
            return chosen
    return memberships.first()


class CurrentOrgMiddleware:
    """Puts the signed-in account's current org membership on request.membership (pages only)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.membership = SimpleLazyObject(lambda: _current_membership(request))
        return self.get_response(request)
