from django.utils.functional import SimpleLazyObject


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
