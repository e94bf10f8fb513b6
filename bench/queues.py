"""Celery at scale: one org's flood of turns against another org's next turn, with 2 real workers.

    .venv/bin/python scripts/devservices.py exec -- .venv/bin/python bench/queues.py [--flood 2000]
        [--turns 12] [--interval 5] [--workers 2] [--bulk] [--only before|after]

Runs in its own throw-away database (engram_bench_queue on the server of $DATABASE_URL) and starts
`--workers` real Celery worker processes (one slot each, every queue) on the Redis of $CELERY_BROKER_URL.
Two phases, in the same run, on the same data:

1. **Before** (the baseline): one message per extraction job, first in, first out
   (ENGRAM_EXTRACTION_FAIR off), and every task on one queue (the probes below are sent to the extraction
   queue, as when all tasks shared Celery's default queue).
2. **After**: fair extraction scheduling (memory/extraction/fair.py) and queues by kind (config/queues.py).

In each phase org A queues `--flood` turns at once (a bulk import through the append-messages service,
spread over 50 people), then org B sends one turn every `--interval` seconds, `--turns` times, and with
each turn a webhook delivery task and a profile rebuild task (B's person). Measured:
- B's wait: from the turn's job being queued to a worker claiming it (the job row's created_at and
  started_at), p50 / p95 / max;
- the webhook and profile tasks' wait: from sending to the worker starting them (a task_prerun hook in
  the workers records the time in Redis);
- the most messages waiting in the extraction queue, and A's jobs done per second during the phase.
The baseline phase runs until B's last turn is claimed (A's flood drained before it); the fair phase
stops when B's last turn is claimed, and A's remaining jobs are cancelled. --bulk inserts the flood's job
rows in batches instead of appending turns one by one (how 100,000 turns are queued in reasonable time),
and --only runs one phase (the baseline of a 100,000-turn flood takes hours to drain on 2 cores). Waits are wall-clock on a
shared 2-core machine; the ratio between the phases is the figure.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

# Not named queue.py: run as a script, a file's folder comes first on sys.path, and that name would hide
# the standard library's `queue` from every script in bench/ (psycopg, Celery and kombu import it).
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DB_NAME = "engram_bench_queue"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
os.environ["ENGRAM_TEST_DB"] = DB_NAME
os.environ["ENGRAM_LLM_BASE_URL"] = ""
os.environ.setdefault("OMP_NUM_THREADS", "1")

STARTED = "engram:bench:queue:started:"


def _record_start(task_id=None, **kwargs) -> None:
    """In the workers: when each task starts (the probes' waits are measured from it)."""
    from django.core.cache import cache

    cache.set(STARTED + str(task_id), time.time(), timeout=3600)


if os.environ.get("ENGRAM_BENCH_QUEUE_WORKER"):  # `celery -A bench.queues worker`: the app, with the hook
    from celery.signals import task_prerun

    from config.celery import app  # noqa: F401 - what `celery -A bench.queues` looks for

    task_prerun.connect(_record_start, weak=False)


CITIES = ["Leeds", "Bristol", "成都", "厦门", "Lyon", "Porto", "杭州", "Austin", "Kyoto", "Graz"]
JOBS = ["a nurse", "a teacher", "an accountant", "a welder", "a translator", "a pilot", "a chef", "a baker"]


def flood_text(i: int) -> str:
    return (
        f"I live in {CITIES[i % len(CITIES)]} and I work as {JOBS[(i // 10) % len(JOBS)]}; my badge is {i}."
    )


def percentiles(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):7.2f} s  p95 {p95:7.2f} s  max {ordered[-1]:7.2f} s  (n={len(ordered)})"


def worker_env() -> dict:
    """The workers' environment: the bench database, the bench's queue prefix, the start hook."""
    env = {**os.environ, "ENGRAM_BENCH_QUEUE_WORKER": "1"}
    for name in ("DATABASE_URL", "DATABASE_OWNER_URL"):
        if env.get(name):
            parts = urlsplit(env[name])
            env[name] = urlunsplit(parts._replace(path=f"/{DB_NAME}"))
    return env


def start_workers(n: int) -> list[subprocess.Popen]:
    procs = []
    for i in range(n):
        cmd = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "bench.queues",
            "worker",
            "--pool=threads",
            "--concurrency=1",
            "-n",
            f"bench-queue-{i}-{os.getpid()}@localhost",
            "--loglevel=WARNING",
        ]
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=worker_env(), stdout=subprocess.DEVNULL))
    return procs


def wait_for_workers(names: int) -> None:
    from config.celery import app

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        answer = app.control.ping(timeout=1.0) or []
        if sum(1 for reply in answer for name in reply if name.startswith("bench-queue-")) >= names:
            return
    raise SystemExit("the workers did not start")


def purge() -> None:
    from django.conf import settings

    from config.celery import app

    with app.connection_for_write() as conn:
        for queue in settings.CELERY_TASK_QUEUES:
            conn.default_channel.queue_purge(queue.name)


def warm_up(org) -> None:
    """One job per worker before measuring: the embedding model loads in each worker process."""
    from memory.extraction.services import extraction_job_create
    from memory.models import ExtractionJob

    jobs = [
        extraction_job_create(
            org=org,
            user_id=f"warm-{i}",
            session_id="warm",
            messages=[{"role": "human", "content": flood_text(i)}],
        )
        for i in range(6)
    ]
    deadline = time.monotonic() + 180
    while ExtractionJob.objects.filter(
        pk__in=[j.pk for j in jobs], status__in=["pending", "processing"]
    ).exists():
        if time.monotonic() > deadline:
            raise SystemExit("the workers did not run the warm-up jobs")
        time.sleep(0.2)


def bulk_flood(org, n: int, *, fair: bool) -> None:
    """--bulk: the flood's job rows inserted in batches (as an import writes them), then its messages: one
    per job first in first out, or the fair scheduler's wake-ups."""
    from django.conf import settings

    from config.celery import send_quietly
    from memory.extraction import fair as fair_scheduling
    from memory.extraction.tasks import extraction_run
    from memory.models import ExtractionJob

    for start in range(0, n, 5000):
        rows = ExtractionJob.objects.bulk_create(
            [
                ExtractionJob(
                    org=org,
                    user_id=f"person-{i % 50}",
                    session_id=f"import-{i % 50}",
                    messages=[{"role": "human", "content": flood_text(i), "message_id": ""}],
                )
                for i in range(start, min(n, start + 5000))
            ]
        )
        if not fair:
            for row in rows:
                send_quietly(extraction_run, row.pk)
    if fair:
        fair_scheduling.wake(most=settings.EXTRACTION_WAKEUPS)


def phase(name: str, *, fair: bool, args, org_a, org_b) -> dict:
    from django.conf import settings
    from django.core.cache import cache

    from checkpoints.services import messages_append
    from memory.extraction.fair import waiting_wakeups
    from memory.models import ExtractionJob
    from profiles.tasks import profile_rebuild
    from webhooks.tasks import webhook_deliver

    settings.EXTRACTION_FAIR = fair
    extraction_queue = f"{settings.ENGRAM_QUEUE_PREFIX}.extraction"
    print(f"\n== {name}", flush=True)
    t0 = time.time()
    if args.bulk:
        bulk_flood(org_a, args.flood, fair=fair)
    else:
        for i in range(args.flood):
            messages_append(
                org=org_a,
                session_id=f"import-{i % 50}",
                user_id=f"person-{i % 50}",
                messages=[{"role": "human", "content": flood_text(i)}],
                extract=True,
            )
    print(f"org A queued {args.flood} turns in {time.time() - t0:.1f} s", flush=True)
    peak = waiting_wakeups() or 0
    b_jobs, probes = [], {"webhook": [], "profile": []}
    a_done_before = ExtractionJob.objects.filter(org=org_a, status="done").count()
    started = time.time()
    for i in range(args.turns):
        due = started + i * args.interval
        while time.time() < due:
            peak = max(peak, waiting_wakeups() or 0)
            time.sleep(0.2)
        _, _, job = messages_append(
            org=org_b,
            session_id="steady",
            user_id="bea",
            messages=[{"role": "human", "content": f"I moved my desk to room {i} and I like it there."}],
            extract=True,
        )
        b_jobs.append(job.pk)
        for kind, task, kwargs in (
            ("webhook", webhook_deliver, {"args": [0]}),
            ("profile", profile_rebuild, {"kwargs": {"org_id": org_b.pk, "user_id": "bea"}}),
        ):
            task_id = str(uuid.uuid4())
            options = {} if fair else {"queue": extraction_queue}  # before: every task on one queue
            task.apply_async(task_id=task_id, **kwargs, **options)
            probes[kind].append((task_id, time.time()))
    deadline = time.time() + args.timeout
    while ExtractionJob.objects.filter(pk__in=b_jobs, started_at=None).exists():
        if time.time() > deadline:
            print(f"stopped after {args.timeout} s: some of B's turns were not claimed", flush=True)
            break
        peak = max(peak, waiting_wakeups() or 0)
        time.sleep(0.5)
    elapsed = time.time() - started
    # Probes not started yet (they were behind the flood on one queue) are waited for too.
    while time.time() < deadline and any(
        cache.get(STARTED + task_id) is None for runs in probes.values() for task_id, _ in runs
    ):
        time.sleep(0.5)
    a_done = ExtractionJob.objects.filter(org=org_a, status="done").count() - a_done_before
    b_waits = [
        (job.started_at - job.created_at).total_seconds()
        for job in ExtractionJob.objects.filter(pk__in=b_jobs).exclude(started_at=None)
    ]
    result = {
        "b": b_waits,
        "unclaimed": len(b_jobs) - len(b_waits),
        "peak": peak,
        "a_rate": a_done / max(elapsed, 1e-9),
    }
    for kind, runs in probes.items():
        result[kind] = [
            cache.get(STARTED + task_id) - sent for task_id, sent in runs if cache.get(STARTED + task_id)
        ]
    unclaimed = f"; {result['unclaimed']} not claimed within --timeout" if result["unclaimed"] else ""
    print(f"B's turn, queued → claimed:   {percentiles(b_waits)}{unclaimed}", flush=True)
    print(f"webhook task, sent → started: {percentiles(result['webhook'])}", flush=True)
    print(f"profile task, sent → started: {percentiles(result['profile'])}", flush=True)
    print(
        f"most messages waiting in the extraction queue: {peak}; A's turns done: {a_rate(result)}", flush=True
    )
    # Cancel what is left of the flood, empty the queues, let the workers finish their current job.
    ExtractionJob.objects.filter(status="pending").update(status="failed", error="bench: cancelled")
    purge()
    while ExtractionJob.objects.filter(status="processing").exists():
        time.sleep(0.2)
    return result


def a_rate(result: dict) -> str:
    return f"{result['a_rate']:.1f}/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--flood", type=int, default=2000, help="org A's turns, queued at once (default 2000)"
    )
    parser.add_argument("--turns", type=int, default=12, help="org B's turns (default 12)")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between B's turns (default 5)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes, one slot each (default 2)")
    parser.add_argument(
        "--bulk", action="store_true", help="insert the flood's job rows in batches (fast: for 100,000 turns)"
    )
    parser.add_argument("--only", choices=["before", "after"], help="run one phase")
    parser.add_argument(
        "--timeout", type=float, default=1800.0, help="most seconds a phase waits (default 1800)"
    )
    args = parser.parse_args()

    import django

    from bench.ingest import owned_test_databases

    django.setup()
    with owned_test_databases():
        workers: list[subprocess.Popen] = []
        try:
            run(args, workers)
        finally:  # the workers stop before the database is dropped
            for proc in workers:
                proc.send_signal(signal.SIGTERM)
            for proc in workers:
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()


def run(args, workers: list) -> None:
    from django.conf import settings

    from projects.models import Organization

    org_a = Organization.objects.create(name="Flood", slug="bench-flood")
    org_b = Organization.objects.create(name="Steady", slug="bench-steady")
    purge()
    workers += start_workers(args.workers)
    wait_for_workers(args.workers)
    settings.EXTRACTION_FAIR = True
    warm_up(org_a)
    print(
        f"{args.workers} workers (one slot each, every queue); org A floods {args.flood} turns, org B sends "
        f"{args.turns} turns every {args.interval:g} s",
        flush=True,
    )
    phases = {
        "before": ("before: one message per job (FIFO), one queue", False),
        "after": ("after: fair scheduling, queues by kind", True),
    }
    results = {
        key: phase(title, fair=fair, args=args, org_a=org_a, org_b=org_b)
        for key, (title, fair) in phases.items()
        if args.only in (None, key)
    }
    if len(results) < 2:
        return
    before, after = results["before"], results["after"]
    print("\n== summary (before → after; ratio = before / after)")
    for label, key in (("B's turn", "b"), ("webhook task", "webhook"), ("profile task", "profile")):
        b, a = before[key], after[key]
        if b and a:
            p50b, p50a = statistics.median(b), statistics.median(a)
            print(
                f"{label:13} p50 {p50b:8.2f} s → {p50a:6.2f} s  max {max(b):8.2f} s → {max(a):6.2f} s"
                f"  (p50 ×{p50b / max(p50a, 1e-3):.0f})"
            )
    print(f"messages waiting in the extraction queue at most: {before['peak']} → {after['peak']}")
    print(f"A's turns done per second: {a_rate(before)} → {a_rate(after)}")


if __name__ == "__main__":
    main()
