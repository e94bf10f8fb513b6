"""The rule path of automatic extraction: quality on labelled conversations and worker time per turn.

    .venv/bin/python bench/extraction.py [--data bench/data/extraction_conversations.jsonl] [--repeat 1]

1. Precision / recall of memory.extraction.rules.extract_rules on the labelled set (Chinese and
   English; explicit requests, implicit preferences and facts, corrections, chit-chat), per split:
   "dev" (68 conversations; the rules were tuned on it) and "holdout" (32, written after tuning). A candidate
   matches an expected memory when it contains all of that memory's keywords (case-insensitive);
   each expected memory is matched at most once. Also: memory type accuracy among matches.
2. Worker time per conversation turn on the rule path: for each conversation, the turn is appended
   (POST messages' service) and the job is run the way the Celery task runs it
   (memory.extraction.services.extraction_job_run: claim, rules, local e5 embedding, gate,
   reconcile against the subject's memories, writes, job result). Goal: < 200 ms.
   The embedding model is loaded before timing (its one-off load time is printed separately).

Runs in its own throw-away database (engram_bench_extraction on the server of $DATABASE_URL),
created and migrated at the start, dropped at the end. No chat model is configured (rule path).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["ENGRAM_TEST_DB"] = "engram_bench_extraction"
os.environ["ENGRAM_LLM_BASE_URL"] = ""
# As the Celery worker runs (config/celery.py: one OpenMP thread per worker process); --omp-threads 0
# measures the library's default (all cores) instead.
if "--omp-threads" not in " ".join(sys.argv):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
DEFAULT_DATA = ROOT / "bench" / "data" / "extraction_conversations.jsonl"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def match(candidates, expected) -> tuple[int, int, int, int]:
    """(true positives, false positives, false negatives, type matches) for one conversation."""
    used: set[int] = set()
    tp = type_ok = 0
    for cand in candidates:
        text = cand.content.lower()
        hit = next(
            (
                i
                for i, exp in enumerate(expected)
                if i not in used and all(k.lower() in text for k in exp["keywords"])
            ),
            None,
        )
        if hit is None:
            continue
        used.add(hit)
        tp += 1
        type_ok += cand.memory_type == expected[hit]["memory_type"]
    fp = len(candidates) - tp
    fn = len(expected) - tp
    return tp, fp, fn, type_ok


def quality(rows: list[dict], verbose: bool, title: str = "") -> None:
    from memory.extraction.rules import extract_rules

    groups: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    misses = []
    for row in rows:
        candidates = extract_rules(row["messages"])
        tp, fp, fn, type_ok = match(candidates, row["expected"])
        for key in ("all", row["category"], row["lang"]):
            g = groups[key]
            g[0] += tp
            g[1] += fp
            g[2] += fn
            g[3] += type_ok
            g[4] += 1
        if fp or fn or type_ok < tp:
            misses.append(
                (
                    row["id"],
                    [(c.content, c.memory_type) for c in candidates],
                    [(e["keywords"], e["memory_type"]) for e in row["expected"]],
                )
            )
    print(f"\nRule path quality on {len(rows)} labelled conversations{title}")
    print(
        f"{'group':<12}{'convs':>6}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}{'F1':>7}{'type ok':>9}"
    )
    for key in ("all", "explicit", "implicit", "correction", "chitchat", "zh", "en"):
        tp, fp, fn, type_ok, n = groups[key]
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 1.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        t = f"{type_ok}/{tp}" if tp else "-"
        print(f"{key:<12}{n:>6}{tp:>5}{fp:>5}{fn:>5}{p:>11.3f}{r:>8.3f}{f:>7.3f}{t:>9}")
    if verbose:
        print("\nmisses (id, extracted, expected keywords):")
        for miss in misses:
            print("  ", miss)


def timing(rows: list[dict], repeat: int) -> None:
    from checkpoints.services import messages_append
    from memory.embeddings import provider_for
    from memory.extraction.services import extraction_job_run
    from memory.models import MemoryItem
    from projects.models import Organization

    org = Organization.objects.create(name="Bench", slug="bench-extraction")
    provider = provider_for(org, "")
    t0 = time.perf_counter()
    provider.embed_passages(["warm up the model"])
    # Time spent inside the embedding model, to split it from the rest of the worker's time.
    embed_ms = [0.0]
    original = provider.embed_passages

    def timed(texts):
        started = time.perf_counter()
        try:
            return original(texts)
        finally:
            embed_ms[0] += (time.perf_counter() - started) * 1000

    provider.embed_passages = timed
    print(f"\nembedding model load + first call: {(time.perf_counter() - t0) * 1000:.0f} ms (excluded below)")

    with_candidates: list[float] = []
    without: list[float] = []
    cpu: list[float] = []
    rest: list[float] = []
    for round_ in range(repeat):
        for row in rows:
            user = f"{row['id']}-{round_}"
            _, _, job = messages_append(
                org=org, session_id=f"s-{user}", user_id=user, messages=row["messages"], extract=True
            )
            if job is None:
                continue
            embed_ms[0] = 0.0
            started, cpu_started = time.perf_counter(), time.process_time()
            status = extraction_job_run(job_id=job.pk)
            elapsed = (time.perf_counter() - started) * 1000
            rest.append(elapsed - embed_ms[0])
            cpu.append((time.process_time() - cpu_started) * 1000)
            assert status == "done", status
            job.refresh_from_db()
            (with_candidates if job.result.get("candidates") else without).append(elapsed)
    every = sorted(with_candidates + without)

    def line(name, values):
        if not values:
            return f"{name:<28}{0:>6}"
        values = sorted(values)
        p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
        return (
            f"{name:<28}{len(values):>6}{statistics.mean(values):>9.1f}{statistics.median(values):>9.1f}"
            f"{p95:>9.1f}{max(values):>9.1f}"
        )

    print(f"\nWorker time per conversation turn, rule path, ms (goal < 200 ms; {repeat} round(s))")
    print(f"{'turns':<28}{'n':>6}{'mean':>9}{'median':>9}{'p95':>9}{'max':>9}")
    print(line("all", every))
    print(line("with candidates (embed+db)", with_candidates))
    print(line("nothing to extract", without))
    print(line("CPU of this process, all", cpu))
    print(line("all minus embedding model", rest))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load:.1f} (wall times grow with load; CPU time less so)"
    )
    print(f"memories written: {MemoryItem.objects.filter(org=org).count()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=1, help="timing rounds over the set")
    parser.add_argument("--verbose", action="store_true", help="list the conversations the rules got wrong")
    parser.add_argument("--omp-threads", type=int, default=1, help="OpenMP threads of the model (0: default)")
    args = parser.parse_args()
    if args.omp_threads:
        os.environ["OMP_NUM_THREADS"] = str(args.omp_threads)
    rows = load(args.data)
    cats = defaultdict(int)
    for row in rows:
        cats[(row["lang"], row["category"])] += 1
    print(
        f"{len(rows)} conversations: "
        + ", ".join(f"{lang}/{cat} {n}" for (lang, cat), n in sorted(cats.items()))
    )

    import django

    django.setup()
    splits = {
        "dev": " - dev split (the rules were tuned on it)",
        "holdout": " - holdout split (written after tuning, never tuned on)",
    }
    for split, title in splits.items():
        quality([r for r in rows if r.get("split") == split], args.verbose, title)
    quality(rows, False, " - all")

    from bench.ingest import owned_test_databases

    with owned_test_databases():
        timing(rows, args.repeat)


if __name__ == "__main__":
    main()
