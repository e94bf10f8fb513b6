"""Celery queues by kind: a flood of one kind of task cannot hold up the others.

Every task is routed to the queue of its kind, named `<prefix>.<kind>`. A worker started without a queue
option consumes every kind (and Celery's default queue, which holds what an older release left behind);
`ENGRAM_WORKER_QUEUES=extraction,embedding` (or `./engram run --queues ...`) starts one for some kinds only,
so production can run dedicated workers per kind (README, "Production shape").

The test settings give each test database (and each pytest-xdist worker) a prefix of its own: parallel test
runs on one Redis never take each other's tasks.
"""

from __future__ import annotations

from kombu import Queue

# kind → the tasks it holds. Beat tasks (the sweeps and purges) are "maintenance": a backlog of work never
# delays the sweep that re-sends lost work.
KINDS: dict[str, tuple[str, ...]] = {
    "extraction": (
        "memory.extraction.tasks.extraction_next",
        "memory.extraction.tasks.extraction_run",
    ),
    "embedding": (
        "memory.tasks.memory_embed",
        "memory.tasks.memory_embed_many",
        "memory.tasks.reembed_run",
    ),
    # Derived views of a subject: profile rebuilds and the summaries of long sessions.
    "profiles": (
        "profiles.tasks.profile_rebuild",
        "checkpoints.tasks.session_compress",
    ),
    "webhooks": ("webhooks.tasks.webhook_deliver",),
    "maintenance": (
        "memory.extraction.tasks.extraction_sweep",
        "memory.tasks.memory_embed_sweep",
        "memory.tasks.reembed_sweep",
        "memory.tasks.store_items_purge",
        "memory.tasks.access_counts_flush",
        "checkpoints.tasks.sessions_expire",
        "checkpoints.tasks.checkpoints_archive",
        "projects.tasks.idempotency_keys_purge",
        "webhooks.tasks.webhooks_sweep",
    ),
}


def queue_name(prefix: str, kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown queue kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return f"{prefix}.{kind}"


def task_queues(prefix: str, default_queue: str) -> list[Queue]:
    """Every queue a worker consumes when it is not told otherwise: one per kind, then the default one."""
    return [Queue(queue_name(prefix, kind)) for kind in KINDS] + [Queue(default_queue)]


def task_routes(prefix: str) -> dict[str, dict]:
    return {task: {"queue": queue_name(prefix, kind)} for kind, tasks in KINDS.items() for task in tasks}


def parse_kinds(raw: str) -> list[str]:
    """'extraction, webhooks' → ['extraction', 'webhooks']; an unknown kind raises ValueError."""
    kinds = [part.strip() for part in raw.split(",") if part.strip()]
    for kind in kinds:
        queue_name("", kind)
    return kinds
