"""Helpers shared by the HTML views: the page actor, pagination, and HTMX-aware rendering."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render

from core import rls

from .access import actor_for_account
from .origin import with_origin

PAGE_SIZE = 20


def org_page(view):
    """Signed in, with a current org: sets request.actor (built by projects.access) for the view."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        membership = request.membership
        actor = actor_for_account(request.user, membership.org) if membership else None
        if actor is None:
            return render(request, "no_org.html", status=403)
        request.actor = with_origin(actor, request)
        rls.bind_org(actor.org.pk, request.user.pk)
        return view(request, *args, **kwargs)

    return wrapper


def paginate(request, queryset, per_page: int = PAGE_SIZE):
    """A page of the queryset plus the query string of the current filters (without page)."""
    page = Paginator(queryset, per_page).get_page(request.GET.get("page"))
    params = [(k, v) for k, values in request.GET.lists() if k != "page" for v in values]
    return page, urlencode(params)


def render_page(request, template: str, context: dict, partial: str | None = None, status: int = 200):
    """The whole page, or only the named partial when HTMX asks (same view, same template)."""
    name = f"{template}#{partial}" if partial and request.htmx and not request.htmx.boosted else template
    return render(request, name, context, status=status)
