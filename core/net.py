"""The outbound-URL guard: every HTTP call Engram makes to a URL a tenant chose goes through here.

A URL may be called when its scheme is http or https and every address its host resolves to is public:
not loopback, private, link-local, multicast, reserved, unspecified, shared (CGNAT, 100.64.0.0/10), nor
one of those inside an IPv6 form (IPv4-mapped, 6to4, Teredo, NAT64). The operator opens the rest with
ENGRAM_ALLOW_PRIVATE_URLS (everything) or ENGRAM_OUTBOUND_ALLOW (host names and addresses/CIDRs).

The check runs twice: when a configuration is saved (check_url, a readable refusal) and when the request
is sent (guarded_http_client): the connection re-resolves the host, checks every address and connects to
the checked one (so a name that changes its answer in between cannot reach an internal address), and
redirects are not followed (each hop would otherwise be a new, unchecked target).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeURL(ValueError):
    """The URL may not be called: bad scheme, no host, unresolvable, or an address the guard refuses."""


def _embedded_ipv4(ip: Address) -> ipaddress.IPv4Address | None:
    if ip.version != 6:
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]  # the client's address
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public_address(ip: Address) -> bool:
    """True for a globally routable unicast address (and not an internal one wrapped in IPv6)."""
    if not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified:
        return False
    inner = _embedded_ipv4(ip)
    return inner is None or is_public_address(inner)


def _allow_list() -> tuple[set[str], list]:
    hosts, networks = set(), []
    for entry in settings.ENGRAM_OUTBOUND_ALLOW:
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            hosts.add(entry.lower().rstrip("."))
    return hosts, networks


def address_allowed(ip: Address, host: str = "") -> bool:
    """May a connection go to this address (reached through this host name)?"""
    if settings.ENGRAM_ALLOW_PRIVATE_URLS or is_public_address(ip):
        return True
    hosts, networks = _allow_list()
    return host.lower().rstrip(".") in hosts or any(
        ip in net for net in networks if ip.version == net.version
    )


def resolve(host: str, port: int) -> list[Address]:
    """Every address the host resolves to (a literal address is its own answer)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise UnsafeURL(_("The host %(host)s does not resolve.") % {"host": host}) from exc
    seen: list[Address] = []
    for *_rest, sockaddr in infos:
        ip = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])  # drop an IPv6 zone
        if ip not in seen:
            seen.append(ip)
    if not seen:
        raise UnsafeURL(_("The host %(host)s does not resolve.") % {"host": host})
    return seen


def checked_addresses(host: str, port: int) -> list[Address]:
    """The host's addresses, when every one of them may be called; else UnsafeURL."""
    addresses = resolve(host, port)
    refused = [ip for ip in addresses if not address_allowed(ip, host)]
    if not refused:
        return addresses
    if str(refused[0]) == host.strip("[]"):
        message = _(
            "%(address)s is a private, loopback or otherwise internal address; "
            "the server's operator can allow it with ENGRAM_OUTBOUND_ALLOW."
        )
    else:
        message = _(
            "%(host)s resolves to %(address)s, a private, loopback or otherwise internal address; "
            "the server's operator can allow it with ENGRAM_OUTBOUND_ALLOW."
        )
    raise UnsafeURL(message % {"host": host, "address": refused[0]})


def check_url(url: str) -> None:
    """Raise UnsafeURL (with a message for people) unless the URL may be called now."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeURL(_("This is not a valid URL.")) from exc
    if parts.scheme not in ("http", "https"):
        raise UnsafeURL(_("Only http and https URLs are allowed."))
    if not parts.hostname:
        raise UnsafeURL(_("The URL has no host."))
    checked_addresses(parts.hostname, port)


def guarded_http_client(*, timeout: float, trusted: bool = False):
    """An httpx client for the openai SDK that checks every connection (see the module's docstring) and
    follows no redirect. trusted=True (a URL the operator configured, not a tenant) skips the address check."""
    import httpcore2
    import httpx2

    class GuardedBackend(httpcore2.SyncBackend):
        def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            if trusted:
                return super().connect_tcp(host, port, timeout, local_address, socket_options)
            try:
                addresses = checked_addresses(host, port)
            except UnsafeURL as exc:
                raise httpcore2.ConnectError(str(exc)) from exc
            last: Exception | None = None
            for ip in addresses:  # all checked; the first that answers is the pinned one
                try:
                    return super().connect_tcp(str(ip), port, timeout, local_address, socket_options)
                except httpcore2.ConnectError as exc:
                    last = exc
            raise last or httpcore2.ConnectError(f"could not connect to {host}")

    class GuardedTransport(httpx2.HTTPTransport):
        def __init__(self):
            super().__init__(trust_env=False)
            # The same pool HTTPTransport builds, with a backend that checks and pins each address.
            self._pool = httpcore2.ConnectionPool(
                ssl_context=httpx2.create_ssl_context(), network_backend=GuardedBackend()
            )

        def handle_request(self, request):
            if request.url.scheme not in ("http", "https"):
                raise httpx2.UnsupportedProtocol(f"{request.url.scheme} URLs are not allowed")
            return super().handle_request(request)

    return httpx2.Client(
        transport=GuardedTransport(), timeout=timeout, follow_redirects=False, trust_env=False
    )
