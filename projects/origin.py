"""Where a request came from, put on the Actor for the audit log ("from where")."""

from __future__ import annotations

import ipaddress

from django.conf import settings

from .access import Actor

USER_AGENT_MAX = 255


def request_origin(request) -> tuple[str, str]:
    """(client address, user agent). X-Forwarded-For counts only when the operator says a proxy sets it
    (ENGRAM_TRUST_X_FORWARDED_FOR): then its last entry, the one that proxy appended, is the client."""
    meta = request.META
    ip = meta.get("REMOTE_ADDR", "") or ""
    forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
    if settings.ENGRAM_TRUST_X_FORWARDED_FOR and forwarded:
        ip = forwarded.split(",")[-1].strip()
    try:
        ip = str(ipaddress.ip_address(ip))
    except ValueError:
        ip = ""  # a proxy that sent garbage: better no address than a wrong one
    agent = (meta.get("HTTP_USER_AGENT", "") or "").replace("\x00", "")
    return ip, agent[:USER_AGENT_MAX]


def with_origin(actor: Actor, request) -> Actor:
    """The actor, marked with the request's origin."""
    actor.ip, actor.user_agent = request_origin(request)
    return actor
