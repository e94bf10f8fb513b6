from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int

from .base import *  # noqa: F401,F403
from .base import ENGRAM_ENCRYPTION_KEY, SECRET_KEY

DEBUG = False
if SECRET_KEY.startswith("dev-insecure") or not ENGRAM_ENCRYPTION_KEY:
    raise ImproperlyConfigured("Set ENGRAM_SECRET_KEY and ENGRAM_ENCRYPTION_KEY in production.")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True

# HTTPS only: plain-http requests are redirected, and browsers are told (HSTS) to use https for a year,
# subdomains included. Behind a proxy that terminates TLS, Django learns the scheme from the
# X-Forwarded-Proto header: set ENGRAM_TRUST_X_FORWARDED_PROTO=1 there (docker-compose.yml does; its
# nginx sets the header). Off by default: a client that reaches Django directly could claim https with it.
SECURE_SSL_REDIRECT = env_bool("ENGRAM_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("ENGRAM_HSTS_SECONDS", 365 * 24 * 3600, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("ENGRAM_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("ENGRAM_HSTS_PRELOAD", False)
if env_bool("ENGRAM_TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
