"""API rate limits: each API key, and each account using the API with its session, has its own budget,
ENGRAM_API_RATE unless its organization sets another (Organization.api_rate). Counted in the cache
(Redis); over the budget the answer is 429 with Retry-After."""

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

from projects.models import ApiKey


class OrgRateThrottle(SimpleRateThrottle):
    scope = "api"

    def __init__(self):
        pass  # the rate depends on the request's org: set in allow_request

    def allow_request(self, request, view):
        actor = getattr(request, "actor", None)  # set by ActorMixin.initial, which throttles after it
        org = actor.org if actor is not None else None
        self.rate = (org.api_rate if org is not None else "") or settings.ENGRAM_API_RATE
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def get_cache_key(self, request, view):
        if isinstance(request.auth, ApiKey):
            ident = f"key:{request.auth.prefix}"
        elif request.user and request.user.is_authenticated:
            ident = f"account:{request.user.pk}"
        else:
            return None  # refused by authentication anyway
        return f"throttle:api:{ident}"
