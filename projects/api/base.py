"""The base every API view uses: it resolves the actor and org once, in initial()."""

from django.http import Http404
from rest_framework import serializers, viewsets
from rest_framework.views import APIView

from core import rls
from core.net import UnsafeURL, check_url
from projects.access import (
    Actor,
    account_membership,
    account_membership_by_ref,
    account_memberships,
    actor_for_account,
    actor_for_key,
)
from projects.models import ApiKey
from projects.origin import with_origin

from .errors import ApiError


def resolve_actor(request) -> Actor:
    if isinstance(request.auth, ApiKey):
        return actor_for_key(request.auth)
    account = request.user
    membership = None
    wanted = request.headers.get("X-Engram-Org")
    if wanted:  # asked for explicitly (slug or id): an org the account is not in does not exist for it
        membership = account_membership_by_ref(account, wanted)
        if membership is None:
            raise Http404("No such organization.")
    else:  # the org picked on the pages; stale (membership since removed) falls back to the first
        session = getattr(request, "session", None)
        chosen = session.get("org_id") if session is not None else None
        if chosen:
            membership = account_membership(account, chosen)
    membership = membership or account_memberships(account).first()
    if membership is None:
        raise ApiError(403, "no_organization", "This account belongs to no organization.")
    return actor_for_account(account, membership.org)


class ActorMixin:
    """Sets self.actor (account or API key) and self.org before any handler runs."""

    actor: Actor

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        account_id = None if isinstance(request.auth, ApiKey) else request.user.pk
        rls.bind_account(account_id)  # its memberships, to find its org
        self.actor = with_origin(resolve_actor(request), request)
        self.org = self.actor.org
        rls.bind_org(self.org.pk, account_id)
        request.actor = self.actor  # as on the pages (projects.web.org_page), e.g. for memory.filters
        super().check_throttles(request)  # the rate is the org's (projects.api.throttling)

    def check_throttles(self, request):
        pass  # APIView.initial would throttle before the org is known; initial() above does it after


class EngramAPIView(ActorMixin, APIView):
    """For endpoints that are not a model collection (search, context, tools...)."""


class EngramViewSet(ActorMixin, viewsets.GenericViewSet):
    """Model collections: subclasses build get_queryset() from projects.access."""


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 and not a silent no-op."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class StrictModelSerializer(serializers.ModelSerializer):
    def to_internal_value(self, data):
        if isinstance(data, dict):
            writable = {name for name, f in self.fields.items() if not f.read_only}
            unknown = sorted(set(data) - writable)
            if unknown:
                raise serializers.ValidationError({name: ["Unknown or read-only field."] for name in unknown})
        return super().to_internal_value(data)


class OutboundURLField(serializers.URLField):
    """A URL the server will call: http(s) to a public address only (core.net), checked when saved and
    again on every call."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value:
            try:
                check_url(value)
            except UnsafeURL as exc:
                raise serializers.ValidationError(str(exc)) from exc
        return value
