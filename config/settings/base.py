"""Settings shared by every environment. Engram's own settings read ENGRAM_* variables."""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from config import queues as celery_queues
from config.env import env_bool, env_float, env_int, env_list, env_rate, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(env_str("ENGRAM_DATA_DIR", str(BASE_DIR / ".data")))

SECRET_KEY = env_str("ENGRAM_SECRET_KEY", "dev-insecure-engram-secret-key-change-me-in-production-0123456789")
DEBUG = env_bool("ENGRAM_DEBUG", False)
ALLOWED_HOSTS = env_list("ENGRAM_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("ENGRAM_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "guardian",
    "django_htmx",
    "template_partials",
    "projects",
    "audit",
    "memory",
    "profiles",
    "checkpoints",
    "workspace",
    "webhooks",
    "mem0compat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "projects.middleware.BadInputMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "projects.middleware.RowSecurityMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "projects.middleware.CurrentOrgMiddleware",
    "core.replicas.ReadYourWritesMiddleware",
]

# Content-Security-Policy (core.middleware): only our own scripts, styles, images and requests; nothing
# inline, no plugins, no framing, forms post to this site only. The API docs (Swagger UI, Redoc, served from
# the app's static files) add what their bundles need: styles they inject, and Redoc's search worker (blob:).
ENGRAM_CSP = env_str(
    "ENGRAM_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)
ENGRAM_CSP_DOCS_PATHS = ("/api/docs/", "/api/redoc/")
ENGRAM_CSP_DOCS = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
    "form-action 'self'; frame-ancestors 'none'"
)

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "projects.context_processors.current_org",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", "postgres://postgres@localhost:5432/engram"), conn_max_age=60
    )
}
# Row-level security (core/rls): the application connects as DATABASE_URL's role, which must be neither a
# superuser nor the tables' owner; migrations run as the owner, DATABASE_OWNER_URL (same database).
DATABASES["default"]["ENGINE"] = "core.rls"
DATABASE_OWNER = (
    dj_database_url.parse(env_str("DATABASE_OWNER_URL")) if env_str("DATABASE_OWNER_URL") else None
)
DATABASE_APP_ROLE = DATABASES["default"]["USER"] if DATABASE_OWNER else ""
# Search statements (memory/search/) are prepared on the server, which saves parsing and lets PostgreSQL
# reuse plans; Django's other queries bind on the client and are never prepared. Set
# DATABASE_PREPARED_STATEMENTS=false behind a pooler that cannot keep prepared statements (PgBouncer
# before 1.21 in transaction mode).
if env_bool("DATABASE_PREPARED_STATEMENTS", True):
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = 5

# Read replicas (core/replicas.py): search, context and list reads go to a streaming replica of the primary,
# everything else to the primary. DATABASE_REPLICA_URLS: comma-separated URLs (same database, same
# application role: row-level security holds there as on the primary); empty, no replicas. A caller (API key
# or account) that just wrote reads from the primary for DATABASE_REPLICA_PIN_SECONDS; a replica more than
# DATABASE_REPLICA_MAX_LAG_SECONDS behind, or down, is not used (checked at most every
# DATABASE_REPLICA_CHECK_SECONDS per process; one that failed is left alone for DATABASE_REPLICA_RETRY_SECONDS).
DATABASE_REPLICAS = []
for _number, _url in enumerate(env_list("DATABASE_REPLICA_URLS")):
    _replica = dj_database_url.parse(_url, conn_max_age=60)
    _replica["ENGINE"] = "core.rls"
    # A replica that does not answer costs one short wait per retry interval, not a long one per request.
    _replica["OPTIONS"] = {**DATABASES["default"].get("OPTIONS", {}), "connect_timeout": 2}
    DATABASES[f"replica_{_number}"] = _replica
    DATABASE_REPLICAS.append(f"replica_{_number}")
DATABASE_ROUTERS = ["core.replicas.ReplicaRouter"]
DATABASE_REPLICA_MAX_LAG_SECONDS = env_float("DATABASE_REPLICA_MAX_LAG_SECONDS", 2.0, minimum=0.0)
DATABASE_REPLICA_CHECK_SECONDS = env_float("DATABASE_REPLICA_CHECK_SECONDS", 1.0, minimum=0.0)
DATABASE_REPLICA_RETRY_SECONDS = env_float("DATABASE_REPLICA_RETRY_SECONDS", 10.0, minimum=0.0)
DATABASE_REPLICA_PIN_SECONDS = env_float("DATABASE_REPLICA_PIN_SECONDS", 5.0, minimum=0.0)
# With the pin at least the lag bound plus the check interval, a caller's next read after the pin sees its
# write (core/replicas.py explains why); a shorter pin would make read-your-writes a matter of luck.
if DATABASE_REPLICA_PIN_SECONDS < DATABASE_REPLICA_MAX_LAG_SECONDS + DATABASE_REPLICA_CHECK_SECONDS:
    raise ImproperlyConfigured(
        "DATABASE_REPLICA_PIN_SECONDS must be at least DATABASE_REPLICA_MAX_LAG_SECONDS +"
        " DATABASE_REPLICA_CHECK_SECONDS"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL", "redis://localhost:6379/0")
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "guardian.backends.ObjectPermissionBackend",
]
ANONYMOUS_USER_NAME = None  # guardian: no anonymous user row
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# WhiteNoise serves static files from the app server (gunicorn); collected, compressed files when
# `collectstatic` has run (./engram run does), the app folders otherwise.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("ENGRAM_MAX_BODY_BYTES", 10 * 1024 * 1024, minimum=1024)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "projects.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["projects.api.parsers.JSONParser"],  # enforces DATA_UPLOAD_MAX_MEMORY_SIZE
    "DEFAULT_PAGINATION_CLASS": "projects.api.pagination.CreatedCursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "projects.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "projects.api.errors.exception_handler",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "UNAUTHENTICATED_ERROR_STATUS": 401,
    "DEFAULT_THROTTLE_CLASSES": ["projects.api.throttling.OrgRateThrottle"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Engram API",
    "DESCRIPTION": "Long-term memory for AI agents: memories, search, context, sessions, checkpoints, profiles.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "projects.api.schema.document_errors",
    ],
    # One name per choice set, so generated clients get stable, meaningful enum types.
    "ENUM_NAME_OVERRIDES": {
        "MemoryTypeEnum": "memory.models.MemoryType",
        "ScopeEnum": "memory.models.Scope",
        "SourceEnum": "memory.models.Source",
        "MemoryStatusEnum": "memory.models.Status",
        "JobStatusEnum": "memory.models.JobStatus",
        "ProjectRoleEnum": "projects.models.ProjectRole",
        "MessageRoleEnum": "checkpoints.api.serializers.ROLES",
        "PauseLevelEnum": "memory.pause.PAUSE_LEVELS",
        "PausedStatusEnum": "memory.pause.PAUSED_STATUS",
    },
    # Swagger UI and Redoc from the app's own static files (drf-spectacular-sidecar): no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery: tasks take ids, JSON only, late acks so a crashed worker's task is redelivered.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "") or REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("ENGRAM_CELERY_EAGER", False)
CELERY_BEAT_SCHEDULE: dict = {}
# Queues by kind (config/queues.py): <prefix>.extraction, .embedding, .profiles, .webhooks, .maintenance.
# A worker consumes them all unless ENGRAM_WORKER_QUEUES names some kinds. The default queue holds nothing
# new (every task has a kind) and is still consumed, for messages an older release left there.
ENGRAM_QUEUE_PREFIX = env_str("ENGRAM_QUEUE_PREFIX", "engram")
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = celery_queues.task_queues(ENGRAM_QUEUE_PREFIX, CELERY_TASK_DEFAULT_QUEUE)
CELERY_TASK_ROUTES = celery_queues.task_routes(ENGRAM_QUEUE_PREFIX)
try:
    ENGRAM_WORKER_QUEUES = celery_queues.parse_kinds(env_str("ENGRAM_WORKER_QUEUES", ""))
except ValueError as exc:
    raise ImproperlyConfigured(f"ENGRAM_WORKER_QUEUES: {exc}") from exc

# The MCP process (config/mcp.py) the web server forwards /api/v1/mcp to; `./engram run` sets it.
ENGRAM_MCP_URL = env_str("ENGRAM_MCP_URL", "")

# Secrets at rest (provider API keys) are encrypted with Fernet keys derived from this.
ENGRAM_ENCRYPTION_KEY = env_str("ENGRAM_ENCRYPTION_KEY", "")

# Embeddings: the server default; orgs and users may override it.
ENGRAM_EMBEDDING_PROVIDER = env_str("ENGRAM_EMBEDDING_PROVIDER", "local")
ENGRAM_EMBEDDING_MODEL = env_str("ENGRAM_EMBEDDING_MODEL", "multilingual-e5-small")
ENGRAM_EMBEDDING_BASE_URL = env_str("ENGRAM_EMBEDDING_BASE_URL", "")
ENGRAM_EMBEDDING_API_KEY = env_str("ENGRAM_EMBEDDING_API_KEY", "")
ENGRAM_EMBEDDING_DIM = 384  # the vector column's width; remote models are asked for this many dimensions
ENGRAM_EMBEDDING_TIMEOUT = env_float("ENGRAM_EMBEDDING_TIMEOUT", 10.0, minimum=0.1)

# LLM (OpenAI-compatible chat) for extraction, reconciliation, summaries; empty = rule-based paths.
ENGRAM_LLM_BASE_URL = env_str("ENGRAM_LLM_BASE_URL", "")
ENGRAM_LLM_MODEL = env_str("ENGRAM_LLM_MODEL", "")
ENGRAM_LLM_API_KEY = env_str("ENGRAM_LLM_API_KEY", "")
ENGRAM_LLM_TIMEOUT = env_float("ENGRAM_LLM_TIMEOUT", 30.0, minimum=0.1)

# Sign-in throttling (projects/login_throttle.py): this many failures lock an account name, or a client
# address, for LOCKOUT seconds, doubling with each lockout up to LOCKOUT_MAX. Behind reverse proxies,
# ENGRAM_TRUSTED_PROXIES says how many of them append to X-Forwarded-For (0: the client is REMOTE_ADDR);
# the audit log takes the same address (projects.origin.client_address).
ENGRAM_LOGIN_ACCOUNT_FAILURES = env_int("ENGRAM_LOGIN_ACCOUNT_FAILURES", 5, minimum=1)
ENGRAM_LOGIN_ADDRESS_FAILURES = env_int("ENGRAM_LOGIN_ADDRESS_FAILURES", 20, minimum=1)
ENGRAM_LOGIN_LOCKOUT_SECONDS = env_int("ENGRAM_LOGIN_LOCKOUT_SECONDS", 60, minimum=1)
ENGRAM_LOGIN_LOCKOUT_MAX_SECONDS = env_int("ENGRAM_LOGIN_LOCKOUT_MAX_SECONDS", 900, minimum=1)
# Wrong API keys from one address before it is locked out of key authentication (the same back-off).
ENGRAM_API_KEY_ADDRESS_FAILURES = env_int("ENGRAM_API_KEY_ADDRESS_FAILURES", 50, minimum=1)
ENGRAM_TRUSTED_PROXIES = env_int("ENGRAM_TRUSTED_PROXIES", 0, minimum=0, maximum=10)
# API requests per API key, and per account on a session: "<n>/<s|min|hour|day>"; an org may set its own.
ENGRAM_API_RATE = env_rate("ENGRAM_API_RATE", "1200/min")

# Outbound URLs a tenant configures (embedding and chat endpoints) must reach public addresses only
# (core/net.py). ENGRAM_OUTBOUND_ALLOW: host names and addresses/CIDRs let through anyway (e.g.
# "ollama.internal,10.0.0.0/8"); ENGRAM_ALLOW_PRIVATE_URLS=1 lets every address through.
ENGRAM_ALLOW_PRIVATE_URLS = env_bool("ENGRAM_ALLOW_PRIVATE_URLS", False)
ENGRAM_OUTBOUND_ALLOW = env_list("ENGRAM_OUTBOUND_ALLOW", [])

# The gate (seed 000); the names are the seed's own.
MEMORY_MIN_CONFIDENCE = env_float("MEMORY_MIN_CONFIDENCE", 0.7, minimum=0.0, maximum=1.0)
MEMORY_DUPLICATE_THRESHOLD = env_float("MEMORY_DUPLICATE_THRESHOLD", 0.0, minimum=0.0, maximum=1.0) or None
MEMORY_MAX_EXTRACTIONS = env_int("MEMORY_MAX_EXTRACTIONS", 3, minimum=0)
MEMORY_MIN_LENGTH = env_int("MEMORY_MIN_LENGTH", 5, minimum=1)
MEMORY_MAX_LENGTH = env_int("MEMORY_MAX_LENGTH", 2000, minimum=1)
# Profiles are rebuilt this many seconds after the first of a burst of memory changes (one rebuild per burst).
PROFILE_REBUILD_DEBOUNCE_SECONDS = env_int("ENGRAM_PROFILE_DEBOUNCE_SECONDS", 30, minimum=0)

# Retrieval. SEARCH_RANKING "relevance" (default): relevance decides the order (the two sides fused with
# each language pair's bias taken out, read as a calibrated probability), confidence and scope adjust it by
# at most SEARCH_ADJUSTMENT in all (shared 3:2 like the seed weights), with the model's relevance floor;
# "seed": seed 000's final = 0.5·relevance + 0.3·confidence + 0.2·scope with the weights below (README,
# "Search and context"). SEARCH_MIN_SCORE: the default threshold of a search (empty = the embedding model's
# calibrated floor under "relevance", none under "seed"; see memory/search/ranking.py).
SEARCH_RANKING = env_str("SEARCH_RANKING", "relevance")
if SEARCH_RANKING not in ("relevance", "seed"):
    raise ImproperlyConfigured("SEARCH_RANKING must be 'relevance' or 'seed'.")
SEARCH_ADJUSTMENT = env_float("SEARCH_ADJUSTMENT", 0.06, minimum=0.0, maximum=0.5)
SEARCH_MIN_SCORE = env_float("SEARCH_MIN_SCORE", -1.0, minimum=-1.0, maximum=1.0)
SEARCH_MIN_SCORE = None if SEARCH_MIN_SCORE < 0 else SEARCH_MIN_SCORE
# A query's words matched with their translations from CC-CEDICT on the keyword side (hybrid search under
# "relevance"; memory/search/crosslingual.py). Off: each word only as written.
SEARCH_CROSS_LINGUAL_TERMS = env_bool("SEARCH_CROSS_LINGUAL_TERMS", True)
# The vector side's share of the cosine with the query mapped (the embedding model's shared and language
# directions projected out), where the model has a map (memory/search/query_map.py; hybrid search under
# "relevance"); the rest is the cosine with the model's own query vector. 0: the model's own vector alone.
SEARCH_QUERY_MAP_WEIGHT = env_float("SEARCH_QUERY_MAP_WEIGHT", 0.5, minimum=0.0, maximum=1.0)
# Retrieval weights (seed 004 + seed 000).
SEARCH_VECTOR_WEIGHT = env_float("SEARCH_VECTOR_WEIGHT", 0.7, minimum=0.0, maximum=1.0)
SEARCH_KEYWORD_WEIGHT = env_float("SEARCH_KEYWORD_WEIGHT", 0.3, minimum=0.0, maximum=1.0)
SEARCH_RELEVANCE_WEIGHT = env_float("SEARCH_RELEVANCE_WEIGHT", 0.5, minimum=0.0, maximum=1.0)
SEARCH_CONFIDENCE_WEIGHT = env_float("SEARCH_CONFIDENCE_WEIGHT", 0.3, minimum=0.0, maximum=1.0)
SEARCH_SCOPE_WEIGHT = env_float("SEARCH_SCOPE_WEIGHT", 0.2, minimum=0.0, maximum=1.0)
# The people's feedback (useful / wrong / outdated, memory.feedback): at most this much either way.
SEARCH_FEEDBACK_WEIGHT = env_float("SEARCH_FEEDBACK_WEIGHT", 0.05, minimum=0.0, maximum=0.2)
# Candidates taken from each side (at least 3 x top_k), the HNSW iterative-scan ceiling, the word overlap
# (Jaccard) two near-duplicates need to count as one subject, and how often recall counts are flushed
# (0 = at once, in the request thread).
SEARCH_CANDIDATES = env_int("SEARCH_CANDIDATES", 24, minimum=1, maximum=1000)
SEARCH_MAX_SCAN_TUPLES = env_int("SEARCH_MAX_SCAN_TUPLES", 20000, minimum=100)
# A subject with at most this many memories is searched in one exact pass over its rows (no HNSW); a bigger
# one through the indexes. 0 = always through the indexes.
SEARCH_EXACT_SUBJECT_ROWS = env_int("SEARCH_EXACT_SUBJECT_ROWS", 5000, minimum=0)
# How long a broad search's keyword statistics (row count, average length of its filter's rows) are
# reused from Redis before they are read again (memory.search.sql.known_stats); 0: read on every search.
SEARCH_KEYWORD_STATS_SECONDS = env_int("SEARCH_KEYWORD_STATS_SECONDS", 300, minimum=0)
SEARCH_GROUP_MIN_OVERLAP = env_float("SEARCH_GROUP_MIN_OVERLAP", 0.3, minimum=0.0, maximum=1.0)
SEARCH_ACCESS_FLUSH_SECONDS = env_float("SEARCH_ACCESS_FLUSH_SECONDS", 1.0, minimum=0.0)
# Cosine that counts as "no match" when normalising the vector side; empty = per model (memory/search/).
SEARCH_VECTOR_FLOOR = env_float("SEARCH_VECTOR_FLOOR", -1.0, minimum=-1.0, maximum=0.99)
SEARCH_VECTOR_FLOOR = None if SEARCH_VECTOR_FLOOR < 0 else SEARCH_VECTOR_FLOOR
# Share of a match's relevance lent to the turns stored just before and after it (same conversation); 0 = off.
SEARCH_NEIGHBOUR_WEIGHT = env_float("SEARCH_NEIGHBOUR_WEIGHT", 0.85, minimum=0.0, maximum=1.0)

# Short-term memory (seed 002).
SHORT_TERM_MAX_MESSAGES = env_int("SHORT_TERM_MAX_MESSAGES", 30, minimum=2)
SHORT_TERM_KEEP = env_int("SHORT_TERM_KEEP", 20, minimum=1)
SHORT_TERM_TTL = env_int("SHORT_TERM_TTL", 7 * 24 * 3600, minimum=60)
CHECKPOINT_ARCHIVE_AFTER = env_int("CHECKPOINT_ARCHIVE_AFTER", 30 * 24 * 3600, minimum=60)

# Extraction queue (seed 003): attempts per job, backoff base (s), when a claim counts as stale (s).
EXTRACTION_MAX_ATTEMPTS = env_int("ENGRAM_EXTRACTION_MAX_ATTEMPTS", 3, minimum=1)
EXTRACTION_RETRY_BACKOFF = env_float("ENGRAM_EXTRACTION_RETRY_BACKOFF", 5.0, minimum=0.0)
EXTRACTION_STALE_AFTER = env_int("ENGRAM_EXTRACTION_STALE_AFTER", 600, minimum=10)
# Fair scheduling (memory/extraction/fair.py): a worker takes the next job of the org with the fewest jobs
# running, then the one served longest ago; at most EXTRACTION_WAKEUPS wake-up messages wait in the
# extraction queue however many jobs are pending. Off (0): one message per job, first in first out.
EXTRACTION_FAIR = env_bool("ENGRAM_EXTRACTION_FAIR", True)
EXTRACTION_WAKEUPS = env_int("ENGRAM_EXTRACTION_WAKEUPS", 16, minimum=1)
# A running job's row gets a heartbeat this often (s); a job whose heartbeat is older than the second
# value (s) lost its worker and goes back to the queue. Claims without a heartbeat use the value above.
JOB_HEARTBEAT_SECONDS = env_float("ENGRAM_JOB_HEARTBEAT_SECONDS", 20.0, minimum=0.1)
JOB_HEARTBEAT_STALE = env_int("ENGRAM_JOB_HEARTBEAT_STALE", 120, minimum=1)
if JOB_HEARTBEAT_STALE < 2 * JOB_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "ENGRAM_JOB_HEARTBEAT_STALE must be at least twice ENGRAM_JOB_HEARTBEAT_SECONDS, or live jobs look dead."
    )


# Webhooks (webhooks/delivery.py): seconds before each attempt of a delivery (Standard Webhooks' schedule:
# at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), the timeout of one attempt, and how many deliveries in
# a row may be abandoned before the endpoint is disabled.
def _seconds_list(name: str, default: str) -> list[float]:
    raw = env_list(name, default.split(","))
    try:
        values = [float(v) for v in raw]
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a comma-separated list of seconds, not {','.join(raw)!r}")
    if not values or any(v < 0 for v in values):
        raise ImproperlyConfigured(f"{name} needs at least one attempt and no negative wait")
    return values


WEBHOOK_RETRY_SCHEDULE = _seconds_list("ENGRAM_WEBHOOK_RETRY_SCHEDULE", "0,5,300,1800,7200,18000,36000,36000")
WEBHOOK_TIMEOUT = env_float("ENGRAM_WEBHOOK_TIMEOUT", 5.0, minimum=0.5, maximum=60.0)
WEBHOOK_DISABLE_AFTER = env_int("ENGRAM_WEBHOOK_DISABLE_AFTER", 5, minimum=1)

CELERY_BEAT_SCHEDULE.update(
    {
        "extraction-sweep": {"task": "memory.extraction.tasks.extraction_sweep", "schedule": 60.0},
        "embed-sweep": {"task": "memory.tasks.memory_embed_sweep", "schedule": 600.0},
        "reembed-sweep": {"task": "memory.tasks.reembed_sweep", "schedule": 60.0},
        "sessions-expire": {"task": "checkpoints.tasks.sessions_expire", "schedule": 3600.0},
        "checkpoints-archive": {"task": "checkpoints.tasks.checkpoints_archive", "schedule": 3600.0},
        "idempotency-keys-purge": {"task": "projects.tasks.idempotency_keys_purge", "schedule": 3600.0},
        "store-items-purge": {"task": "memory.tasks.store_items_purge", "schedule": 600.0},
        "access-counts-flush": {"task": "memory.tasks.access_counts_flush", "schedule": 60.0},
        "webhooks-sweep": {"task": "webhooks.tasks.webhooks_sweep", "schedule": 60.0},
    }
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("ENGRAM_LOG_LEVEL", "INFO")},
}
