"""Secrets at rest (provider API keys), Fernet-encrypted with keys derived from settings.

ENGRAM_ENCRYPTION_KEY may list several keys separated by commas: the first encrypts, every one decrypts
(MultiFernet), so a key can be rotated without losing what the old one encrypted. Without it, a key is
derived from SECRET_KEY (development only; production settings refuse to start without one).
"""

import base64
import hashlib
import logging

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

log = logging.getLogger(__name__)


class DecryptionError(Exception):
    """A stored secret that none of the configured keys opens (the key changed, or the value is damaged)."""


def _fernet(material: str) -> Fernet:
    key = base64.urlsafe_b64encode(hashlib.sha256(("engram-fernet:" + material).encode()).digest())
    return Fernet(key)


def _keys() -> MultiFernet:
    materials = [m.strip() for m in (settings.ENGRAM_ENCRYPTION_KEY or "").split(",") if m.strip()]
    return MultiFernet([_fernet(m) for m in materials or [settings.SECRET_KEY]])


def encrypt(value: str) -> str:
    return _keys().encrypt(value.encode()).decode() if value else ""


def decrypt(token: str) -> str:
    """The secret; "" for none stored. Raises DecryptionError (logged, without the value) if no key opens it."""
    if not token:
        return ""
    try:
        return _keys().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        log.error("a stored secret could not be decrypted with any ENGRAM_ENCRYPTION_KEY; set it again")
        raise DecryptionError("a stored secret could not be decrypted; set it again") from exc
