"""Batch ingest through the HTTP API vs the raw embedder, on the same texts in the same run.

    .venv/bin/python bench/ingest.py [--n 2000] [--batch 1000] [--repeat 2] [--url URL --key KEY]

Without --url it runs in-process with Django's test client against a fresh PostgreSQL database on the
server of $DATABASE_URL (created, migrated and dropped; its name is bench_ingest_<pid>), so the whole
request path runs: authentication, validation, the gate, one embedding call per batch, the bulk insert
of items, keyword tokens and revisions. With --url and --key it posts to a running server instead.

--infer posts with infer: true, so each item also runs the gate and the write-time classification
(duplicate / update / distinct against the subject's nearest memories and earlier items of the batch).

Prints items/s of the raw embedder (multilingual-e5-small, embed_passages over the same texts and
batches) and of the API, and their ratio (goal >= 0.7). Each measurement is repeated (--repeat) and
the best run is reported, so a single hiccup of the shared machine does not decide the figure.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SUBJECTS_EN = ["The user", "Customer", "The buyer", "The manager", "Our client", "The analyst"]
VERBS_EN = ["prefers", "asked about", "ordered", "complained about", "wants", "is evaluating", "visited"]
THINGS_EN = [
    "dark mode", "the enterprise plan", "invoice #{n}", "a refund for order {n}", "weekly reports",
    "the Berlin office", "PostgreSQL {m}", "delivery on day {m}", "{m} seats", "the Q{q} roadmap",
]  # fmt: skip
SUBJECTS_ZH = ["用户", "客户", "采购经理", "这位买家", "项目负责人"]
VERBS_ZH = ["希望", "询问了", "订购了", "投诉了", "正在评估", "偏好", "参观了"]
THINGS_ZH = [
    "深色主题", "企业版套餐", "第 {n} 号发票", "订单 {n} 的退款", "每周报表", "杭州办公室",
    "{m} 个席位", "第 {q} 季度路线图", "周 {d} 的送货", "金蝶 ERP 集成",
]  # fmt: skip


def make_texts(n: int, seed: int = 7) -> list[str]:
    """n distinct short memories, about half Chinese, half English."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        i = len(out)
        fill = {
            "n": rng.randint(1000, 99999),
            "m": rng.randint(2, 64),
            "q": rng.randint(1, 4),
            "d": rng.randint(1, 5),
        }
        if i % 2:
            text = f"{rng.choice(SUBJECTS_ZH)}{rng.choice(VERBS_ZH)}{rng.choice(THINGS_ZH).format(**fill)}"
        else:
            text = f"{rng.choice(SUBJECTS_EN)} {rng.choice(VERBS_EN)} {rng.choice(THINGS_EN).format(**fill)}"
        text += f" ({i})"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


@contextmanager
def owned_test_databases():
    """Django's test databases, created and dropped by the owner (DATABASE_OWNER_URL) and used by the
    application's role, with every org in view for the set-up code (row-level security, core.rls)."""
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    from core import rls
    from core.rls.roles import switch_back, switch_to_owner

    app = switch_to_owner(connection)
    old = setup_databases(verbosity=0, interactive=False)
    switch_back(connection, app)
    rls.use_all_orgs_in_this_context()
    try:
        yield
    finally:
        switch_to_owner(connection)
        teardown_databases(old, verbosity=0)


@contextmanager
def bench_database(name: str):
    """Django set up on a fresh, migrated database; dropped afterwards."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    os.environ["ENGRAM_TEST_DB"] = name
    import django

    django.setup()
    t0 = time.perf_counter()
    with owned_test_databases():
        print(f"database {name} created and migrated in {time.perf_counter() - t0:.1f}s")
        yield


def api_client():
    """An org, an API key and a DRF test client that sends it."""
    from rest_framework.test import APIClient

    from projects.models import Organization
    from projects.services import api_key_create

    org = Organization.objects.create(name="Bench", slug=f"bench-{os.getpid()}")
    _, secret = api_key_create(org=org, name="bench")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return org, client


def post_batches(post, texts: list[str], batch: int, user_id: str, infer: bool = False) -> int:
    created = 0
    for start in range(0, len(texts), batch):
        memories = [
            {"content": t, "user_id": user_id, "memory_type": "fact", "metadata": {"i": start + i}}
            for i, t in enumerate(texts[start : start + batch])
        ]
        status, body = post({"memories": memories, "infer": infer})
        if status != 200:
            raise SystemExit(f"batch failed: HTTP {status} {str(body)[:300]}")
        created += body["created"] + body.get("superseded", 0) + (body["duplicate"] if infer else 0)
    return created


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000, help="texts to ingest (default 2000)")
    parser.add_argument("--batch", type=int, default=1000, help="items per API call / embedder call group")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side; the best is reported")
    parser.add_argument("--url", help="base URL of a running server, e.g. http://localhost:8000")
    parser.add_argument("--key", help="API key for --url")
    parser.add_argument(
        "--infer",
        action="store_true",
        help="infer: true (the whole gate and duplicate / update / distinct per item) instead of verbatim",
    )
    args = parser.parse_args()

    texts = make_texts(args.n)
    from memory.embeddings.local import LocalE5Provider

    raw = LocalE5Provider()
    raw.embed_passages(texts[:16])  # load the model once, outside the timings

    def run_raw(chunk: list[str]) -> float:
        t0 = time.perf_counter()
        raw.embed_passages(chunk)
        return time.perf_counter() - t0

    if args.url:
        import httpx2 as httpx  # the HTTP client the locked openai package brings

        http = httpx.Client(
            base_url=args.url.rstrip("/"), headers={"Authorization": f"Bearer {args.key}"}, timeout=600
        )

        def post(body):
            response = http.post("/api/v1/memories/batch", json=body)
            return response.status_code, response.json()

        def cleanup(user_id):
            http.delete("/api/v1/memories", params={"user_id": user_id})

        run_all(args, texts, run_raw, post, cleanup)
        return

    with bench_database(f"bench_ingest_{os.getpid()}"):
        from memory.models import MemoryItem

        _, client = api_client()

        def post(body):
            response = client.post("/api/v1/memories/batch", body, format="json")
            return response.status_code, response.json()

        def cleanup(user_id):
            MemoryItem.objects.filter(user_id=user_id).delete()

        run_all(args, texts, run_raw, post, cleanup)


def run_all(args, texts, run_raw_batch, post, cleanup) -> None:
    """Raw embedder and API take turns batch by batch, so a change of the machine's load hits both alike."""
    raw_times, api_times = [], []
    for round_no in range(args.repeat):
        user_id = f"bench-{round_no}"
        raw_s = api_s = 0.0
        created = 0
        for start in range(0, len(texts), args.batch):
            chunk = texts[start : start + args.batch]
            raw_s += run_raw_batch(chunk)
            t0 = time.perf_counter()
            created += post_batches(post, chunk, args.batch, user_id, infer=args.infer)
            api_s += time.perf_counter() - t0
        if created != len(texts):
            raise SystemExit(f"expected {len(texts)} created, got {created}")
        cleanup(user_id)
        raw_times.append(raw_s)
        api_times.append(api_s)
        print(
            f"run {round_no + 1}: raw embedder {len(texts) / raw_s:.1f} items/s, "
            f"API batch ingest {len(texts) / api_s:.1f} items/s, ratio {raw_s / api_s:.3f}"
        )
    ratios = sorted(r / a for r, a in zip(raw_times, api_times, strict=True))
    raw_best, api_best = min(raw_times), min(api_times)
    print(f"\n{len(texts)} texts, batches of {args.batch}, {args.repeat} runs (best run of each side):")
    print(f"  raw embedder (embed_passages): {len(texts) / raw_best:8.1f} items/s  ({raw_best:.2f} s)")
    print(f"  API POST memories/batch:       {len(texts) / api_best:8.1f} items/s  ({api_best:.2f} s)")
    print(
        f"  ratio API / raw: best runs {raw_best / api_best:.3f}, median of runs {ratios[len(ratios) // 2]:.3f}"
        "  (goal >= 0.7)"
    )
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
