"""The webhooks page: endpoints with their status, create (the secret shown once), test-send, enable
again, rotate, delete, and each endpoint's delivery log."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from projects.access import can_manage_webhooks, readable_projects
from projects.web import org_page, paginate

from . import services
from .forms import EndpointForm
from .models import DeliveryStatus
from .selectors import webhook_deliveries, webhook_endpoint, webhook_endpoints


def _form(actor, data=None) -> EndpointForm:
    projects = [p for p in readable_projects(actor).order_by("name") if can_manage_webhooks(actor, p)]
    return EndpointForm(data, projects=projects, org_wide=can_manage_webhooks(actor))


def _no_store(response):
    response["Cache-Control"] = "no-store"
    return response


@org_page
def webhook_list(request):
    actor = request.actor
    endpoints = webhook_endpoints(actor)  # 403 for those who manage none
    form = _form(actor, request.POST or None)
    created = secret = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            created, secret = services.endpoint_create(
                actor=actor,
                url=data["url"],
                project=data["project"],
                description=data["description"],
                events=data["events"],
                include_content=data["include_content"],
            )
        except ValidationError as exc:
            for name, errors in exc.message_dict.items():
                form.add_error(name if name in form.fields else None, errors)
        else:
            form = _form(actor)
    page, querystring = paginate(request, endpoints)
    context = {
        "page": page,
        "querystring": querystring,
        "form": form,
        "created": created,
        "secret": secret,
        "disabled": [e for e in endpoints if not e.is_active and e.disabled_at and e.failure_count],
    }
    response = render(request, "webhooks/list.html", context, status=400 if form.errors else 200)
    return _no_store(response) if secret else response


@org_page
def webhook_detail(request, pk):
    return _detail(request, webhook_endpoint(request.actor, pk))


def _detail(request, endpoint, secret: str | None = None):
    deliveries = webhook_deliveries(endpoint).order_by("-created_at", "-id")
    wanted = request.GET.get("status")
    if wanted in DeliveryStatus.values:
        deliveries = deliveries.filter(status=wanted)
    page, querystring = paginate(request, deliveries)
    context = {
        "endpoint": endpoint,
        "page": page,
        "querystring": querystring,
        "secret": secret,
        "statuses": DeliveryStatus.choices,
        "wanted": wanted,
        "retryable": (DeliveryStatus.FAILED, DeliveryStatus.ABANDONED),
    }
    response = render(request, "webhooks/detail.html", context)
    return _no_store(response) if secret else response


@org_page
@require_POST
def webhook_test(request, pk):
    endpoint = webhook_endpoint(request.actor, pk)
    try:
        services.endpoint_test(actor=request.actor, endpoint=endpoint)
    except services.EndpointDisabled as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Test event queued; it appears in the delivery log below."))
    return redirect("webhook-detail", pk=endpoint.pk)


@org_page
@require_POST
def webhook_active(request, pk):
    endpoint = webhook_endpoint(request.actor, pk)
    active = request.POST.get("active") == "1"
    services.endpoint_update(actor=request.actor, endpoint=endpoint, is_active=active)
    if active:
        messages.success(request, _("Endpoint enabled: new events are sent to it again."))
    else:
        messages.success(request, _("Endpoint disabled: no events are sent to it."))
    if request.POST.get("next") == "list":
        return redirect("webhook-list")
    return redirect("webhook-detail", pk=endpoint.pk)


@org_page
@require_POST
def webhook_rotate(request, pk):
    endpoint = webhook_endpoint(request.actor, pk)
    secret = services.endpoint_rotate_secret(actor=request.actor, endpoint=endpoint)
    return _detail(request, endpoint, secret=secret)


@org_page
@require_POST
def webhook_delete(request, pk):
    endpoint = webhook_endpoint(request.actor, pk)
    services.endpoint_delete(actor=request.actor, endpoint=endpoint)
    messages.success(request, _("Endpoint %(url)s deleted.") % {"url": endpoint.url})
    return redirect("webhook-list")


@org_page
@require_POST
def delivery_retry(request, pk, delivery_pk):
    endpoint = webhook_endpoint(request.actor, pk)
    delivery = get_object_or_404(webhook_deliveries(endpoint), pk=delivery_pk)
    try:
        services.delivery_retry(actor=request.actor, delivery=delivery)
    except (services.EndpointDisabled, services.NotRetryable) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, _("Delivery %(id)s queued again.") % {"id": delivery.message_id})
    return redirect("webhook-detail", pk=endpoint.pk)
