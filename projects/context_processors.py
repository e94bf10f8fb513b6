def current_org(request):
    membership = getattr(request, "membership", None)
    if membership is None or not getattr(request, "user", None) or not request.user.is_authenticated:
        return {"current_membership": None}
    return {"current_membership": membership if membership else None}
