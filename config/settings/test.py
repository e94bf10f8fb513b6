from .base import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

import os  # noqa: E402

from config.env import env_float, env_str  # noqa: E402

# Parallel runs on one server (several developers, or CI beside a dev server) use their own test database.
DATABASES["default"]["TEST"] = {"NAME": env_str("ENGRAM_TEST_DB", "test_engram")}  # noqa: F405
# A worker started by one test run must not take another run's tasks on a shared Redis.
# pytest-xdist gives each of its workers a database of its own (test_engram_gw0, ...): a queue of its own too,
# or one process's Celery worker takes the other's tasks and finds none of their rows.
CELERY_TASK_DEFAULT_QUEUE = "-".join(
    filter(None, ["engram", DATABASES["default"]["TEST"]["NAME"], os.environ.get("PYTEST_XDIST_WORKER")])  # noqa: F405
)
# Recall counts are written in the request thread, inside the test transaction, so tests can see them; the
# processes tests/test_multiprocess.py starts set it to buffer them as a deployment does.
SEARCH_ACCESS_FLUSH_SECONDS = env_float("SEARCH_ACCESS_FLUSH_SECONDS", 0.0, minimum=0.0)
# The OpenAI-compatible stub (tests/openai_server.py) listens on loopback; the SSRF tests set this back to
# the production default ([]).
ENGRAM_OUTBOUND_ALLOW = ["127.0.0.0/8", "::1"]
# Limits the normal suite never reaches; the throttling tests lower them (override_settings, Organization.api_rate).
ENGRAM_API_RATE = "1000000/min"
ENGRAM_LOGIN_ACCOUNT_FAILURES = 1000
ENGRAM_LOGIN_ADDRESS_FAILURES = 1000
ENGRAM_API_KEY_ADDRESS_FAILURES = 1000
# The suite reads from the primary: its rows live in test transactions that no replica sees. The replica
# tests (tests/test_replica.py) start a streaming replica of the test database and add its alias themselves.
for _alias in DATABASE_REPLICAS:  # noqa: F405
    del DATABASES[_alias]  # noqa: F405
DATABASE_REPLICAS = []
