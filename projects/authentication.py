"""`Authorization: Bearer <key>` for agent services (`Token <key>`, what Mem0's client sends, too)."""

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from core import rls

from .login_throttle import api_key_failed, api_key_wait
from .models import ApiKey, hash_secret


class ApiKeyPrincipal:
    """Stands in for request.user when an API key authenticated the request."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False
    pk = None

    def __init__(self, key: ApiKey):
        self.key = key
        self.username = f"key:{key.prefix}"

    def __str__(self) -> str:
        return self.username


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"
    keywords = ("bearer", "token")  # Mem0's client says `Token <key>` (mem0compat)

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if not parts or parts[0].lower() not in self.keywords:
            return None  # not ours (e.g. Basic): session auth may still apply, else 401
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Malformed Authorization header; expected 'Bearer <key>'.")
        return self.authenticate_secret(request, parts[1])

    def authenticate_secret(self, request, secret: str):
        wait = api_key_wait(request)
        if wait:  # this address presented too many keys that match none
            raise exceptions.Throttled(wait=wait)
        with rls.all_orgs():  # the key names its org: it is found among every org's keys
            key = ApiKey.objects.select_related("org").filter(hashed_secret=hash_secret(secret)).first()
            if key is None:
                api_key_failed(request)
                raise exceptions.AuthenticationFailed("Invalid API key.")
            if key.revoked_at is not None:
                raise exceptions.AuthenticationFailed("This API key has been revoked.")
            now = timezone.now()
            if key.last_used_at is None or now - key.last_used_at > timedelta(seconds=60):
                ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
                key.last_used_at = now
        return ApiKeyPrincipal(key), key

    def authenticate_header(self, request):
        return self.keyword


class ApiKeyHeaderAuthentication(ApiKeyAuthentication):
    """`X-Api-Key: <key>`, the header LangGraph's client sends (the store API takes it)."""

    def authenticate(self, request):
        secret = request.headers.get("X-Api-Key", "").strip()
        if not secret:
            return None
        return self.authenticate_secret(request, secret)
