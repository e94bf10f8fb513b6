from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F401,F403
from .base import ENGRAM_ENCRYPTION_KEY, SECRET_KEY

DEBUG = False
if SECRET_KEY.startswith("dev-insecure") or not ENGRAM_ENCRYPTION_KEY:
    raise ImproperlyConfigured("Set ENGRAM_SECRET_KEY and ENGRAM_ENCRYPTION_KEY in production.")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
