"""Where a request came from, put on the Actor for the audit log ("from where")."""

from __future__ import annotations

import ipaddress

from django.conf import settings

from .access import Actor

USER_AGENT_MAX = 255


def client_address(request) -> str:
    """The client's address: REMOTE_ADDR, or the one the ENGRAM_TRUSTED_PROXIES proxies in front reported
    (each appends the address it was called from to X-Forwarded-For)."""
    hops = settings.ENGRAM_TRUSTED_PROXIES
    if hops:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if len(forwarded) >= hops:
            return forwarded[-hops]
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def request_origin(request) -> tuple[str, str]:
    """(client address, user agent), the address as client_address tells it."""
    try:
        ip = str(ipaddress.ip_address(client_address(request)))
    except ValueError:
        ip = ""  # a proxy that sent garbage: better no address than a wrong one
    agent = (request.META.get("HTTP_USER_AGENT", "") or "").replace("\x00", "")
    return ip, agent[:USER_AGENT_MAX]


def with_origin(actor: Actor, request) -> Actor:
    """The actor, marked with the request's origin."""
    actor.ip, actor.user_agent = request_origin(request)
    return actor
