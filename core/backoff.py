"""Exponential backoff with jitter, for retries whose attempt count we keep ourselves (on a job row).

Celery tasks whose retries are Celery's own use its `autoretry_for` / `retry_backoff` /
`retry_backoff_max` / `retry_jitter` options instead (memory/tasks.py, checkpoints/tasks.py).
"""

from __future__ import annotations

import random


def backoff(attempt: int, *, base: float, cap: float, salt: int = 0) -> float:
    """Seconds to wait after failed attempt number `attempt` (1 for the first): base·4^(attempt-1),
    at most `cap`, plus a jitter below one `base` so that work failing together does not come back
    together.

    `salt` (a job id, say) fixes the jitter for that salt and attempt, so a retry can be reproduced;
    0 draws it at random."""
    delay = min(cap, base * 4 ** max(0, attempt - 1))
    draw = random.Random(f"{salt}:{attempt}") if salt else random
    return delay + draw.uniform(0, base)
