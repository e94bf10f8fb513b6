from .base import *  # noqa: F401,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

from config.env import env_str  # noqa: E402

# Parallel runs on one server (several developers, or CI beside a dev server) use their own test database.
DATABASES["default"]["TEST"] = {"NAME": env_str("ENGRAM_TEST_DB", "test_engram")}  # noqa: F405
# A worker started by one test run must not take another run's tasks on a shared Redis.
CELERY_TASK_DEFAULT_QUEUE = f"engram-{DATABASES['default']['TEST']['NAME']}"  # noqa: F405
# Recall counts are written in the request thread, inside the test transaction, so tests can see them.
SEARCH_ACCESS_FLUSH_SECONDS = 0
