"""Python client for Engram, long-term memory for AI agents. See README.md."""

from . import models
from ._base import RetryPolicy
from .client import AsyncEngram, Engram
from .errors import (
    APIError,
    AuthenticationError,
    Conflict,
    ConnectionError,
    EngramError,
    JobTimeout,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    PreconditionFailed,
    RateLimited,
    ServerError,
    Unprocessable,
    ValidationError,
)

__version__ = "0.1.0"

__all__ = [
    "APIError",
    "AsyncEngram",
    "AuthenticationError",
    "Conflict",
    "ConnectionError",
    "Engram",
    "EngramError",
    "JobTimeout",
    "NotFound",
    "PayloadTooLarge",
    "PermissionDenied",
    "PreconditionFailed",
    "RateLimited",
    "RetryPolicy",
    "ServerError",
    "Unprocessable",
    "ValidationError",
    "models",
]
