"""Sign-in throttling: failures are counted per account name and per client address in the cache (Redis);
enough of them lock that name or address for a while, doubling with each lockout up to a ceiling.

While locked, even the right password is refused (the form says when to try again). A successful sign-in
clears the account's failures and lockouts; an address's count only expires, so signing in to one's own
account between guesses at others does not reset it.

Wrong API keys are counted the same way per client address (api_key_failed / api_key_wait): an address
that keeps presenting keys that do not exist is locked out of key authentication for a while (429).
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
import unicodedata

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from .origin import client_address

STRIKES_KEPT_SECONDS = 24 * 3600  # lockouts double for a day after the last one


def _address_key(address: str) -> str:
    """An IPv6 client counts by its /64 (one subscriber's usual share), anything else as it is."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    return str(ipaddress.ip_network(f"{ip}/64", strict=False)) if ip.version == 6 else str(ip)


def _address_hash(request) -> str:
    return hashlib.sha256(_address_key(client_address(request)).encode()).hexdigest()[:32]


def _subjects(request, username: str) -> list[tuple[str, int]]:
    """(cache key stem, failures allowed) for the account name and the client address."""
    # NFKC as Django's UsernameField normalises: "ａｌｉｃｅ" must not be a fresh name to guess with.
    name = unicodedata.normalize("NFKC", username).strip().lower()
    name = hashlib.sha256(name.encode()).hexdigest()[:32]
    address = _address_hash(request)
    return [
        (f"login:account:{name}", settings.ENGRAM_LOGIN_ACCOUNT_FAILURES),
        (f"login:address:{address}", settings.ENGRAM_LOGIN_ADDRESS_FAILURES),
    ]


def login_wait(request, username: str) -> int:
    """Seconds until this name may try to sign in from this address again (0: now)."""
    return _wait(stem for stem, _limit in _subjects(request, username))


def login_failed(request, username: str) -> None:
    """Count a failure; the one that reaches a limit locks the name or address."""
    for stem, limit in _subjects(request, username):
        _count_failure(stem, limit)


def _count_failure(stem: str, limit: int) -> None:
    window = settings.ENGRAM_LOGIN_LOCKOUT_MAX_SECONDS
    if _incr(f"{stem}:failures", window) < limit:
        return
    cache.delete(f"{stem}:failures")
    strikes = _incr(f"{stem}:strikes", STRIKES_KEPT_SECONDS)
    cache.touch(f"{stem}:strikes", STRIKES_KEPT_SECONDS)
    seconds = min(settings.ENGRAM_LOGIN_LOCKOUT_SECONDS * 2 ** (strikes - 1), window)
    cache.set(f"{stem}:locked", time.time() + seconds, timeout=math.ceil(seconds))


def _wait(stems) -> int:
    until = max((cache.get(f"{stem}:locked") or 0.0) for stem in stems)
    return max(0, math.ceil(until - time.time()))


def _api_key_stem(request) -> str:
    return f"apikey:address:{_address_hash(request)}"


def api_key_wait(request) -> int:
    """Seconds until this address may present an API key again (0: now)."""
    return _wait([_api_key_stem(request)])


def api_key_failed(request) -> None:
    """Count a key that matched none; the one that reaches ENGRAM_API_KEY_ADDRESS_FAILURES locks the address."""
    _count_failure(_api_key_stem(request), settings.ENGRAM_API_KEY_ADDRESS_FAILURES)


def _incr(key: str, timeout: int) -> int:
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key)
    except ValueError:  # expired between the two calls
        cache.add(key, 1, timeout=timeout)
        return 1


def login_succeeded(request, username: str) -> None:
    """Clear the account's failures and lockout history (not the address's)."""
    stem = _subjects(request, username)[0][0]
    cache.delete_many([f"{stem}:failures", f"{stem}:strikes", f"{stem}:locked"])


def locked_error(seconds: int) -> ValidationError:
    if seconds <= 90:
        wait = ngettext("%(n)d second", "%(n)d seconds", seconds) % {"n": seconds}
    else:
        minutes = math.ceil(seconds / 60)
        wait = ngettext("%(n)d minute", "%(n)d minutes", minutes) % {"n": minutes}
    return ValidationError(
        _("Too many failed sign-in attempts. Try again in %(wait)s.") % {"wait": wait}, code="locked"
    )


class ThrottledLoginMixin:
    """For an AuthenticationForm: refuse while locked, count failures, clear the account on success."""

    def clean(self):
        username = self.data.get("username", "") or ""
        wait = login_wait(self.request, username)
        if wait:
            raise locked_error(wait)
        try:
            cleaned = super().clean()
        except ValidationError:
            login_failed(self.request, username)
            wait = login_wait(self.request, username)
            if wait:
                raise locked_error(wait)
            raise
        login_succeeded(self.request, username)
        return cleaned


class ThrottledAuthenticationForm(ThrottledLoginMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottledLoginMixin, AdminAuthenticationForm):
    pass
