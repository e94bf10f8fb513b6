from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from .models import OrgMembership


@login_required
def home(request):
    memberships = OrgMembership.objects.filter(account=request.user).select_related("org")
    return render(request, "home.html", {"memberships": memberships})


@login_required
@require_POST
def switch_org(request):
    org_id = request.POST.get("org", "")
    if org_id.isdigit() and OrgMembership.objects.filter(account=request.user, org_id=int(org_id)).exists():
        request.session["org_id"] = int(org_id)
    return redirect(request.POST.get("next") or "home")


def _wants_json(request) -> bool:
    return request.path.startswith("/api/")


def not_found(request, exception=None):
    if _wants_json(request):
        return JsonResponse({"error": {"code": "not_found", "message": "Not found."}}, status=404)
    return render(request, "404.html", status=404)


def server_error(request):
    if _wants_json(request):
        return JsonResponse({"error": {"code": "server_error", "message": "Internal error."}}, status=500)
    return render(request, "500.html", status=500)
