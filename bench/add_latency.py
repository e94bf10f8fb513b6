"""Latency of a single explicit add: POST /api/v1/memories, p50 and p95 (goal p50 < 60 ms).

    .venv/bin/python bench/add_latency.py [--n 200] [--existing 1000] [--url URL --key KEY]

Without --url it runs in-process with Django's test client against a fresh PostgreSQL database (see
bench/ingest.py), so each add runs the full path: API key authentication, validation, the gate,
embedding with the local model, the hash and similarity duplicate checks against the subject's
--existing memories (HNSW), the insert with keyword tokens, and the revision. With --url and --key it
posts to a running server instead (then HTTP and the server's workers are included).

Also prints the embedding alone (one text, local model) so the rest of the path can be read off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import api_client, bench_database, make_texts, post_batches  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=200, help="single adds to time (default 200)")
    parser.add_argument("--existing", type=int, default=1000, help="memories the subject has already")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--url", help="base URL of a running server")
    parser.add_argument("--key", help="API key for --url")
    args = parser.parse_args()

    texts = make_texts(args.existing + args.warmup + args.n, seed=11)
    existing, warm, timed = (
        texts[: args.existing],
        texts[args.existing : args.existing + args.warmup],
        texts[args.existing + args.warmup :],
    )

    from memory.embeddings.local import LocalE5Provider

    provider = LocalE5Provider()
    provider.embed_passages(["warm up"])
    embed_ms = []
    for text in timed[:50]:
        t0 = time.perf_counter()
        provider.embed_passages([text])
        embed_ms.append((time.perf_counter() - t0) * 1000)

    if args.url:
        import httpx2 as httpx  # the HTTP client the locked openai package brings

        http = httpx.Client(
            base_url=args.url.rstrip("/"), headers={"Authorization": f"Bearer {args.key}"}, timeout=60
        )

        def post_one(body):
            response = http.post("/api/v1/memories", json=body)
            return response.status_code, response.json()

        def post_batch(body):
            response = http.post("/api/v1/memories/batch", json=body)
            return response.status_code, response.json()

        run(args, existing, warm, timed, post_one, post_batch, embed_ms)
        http.delete("/api/v1/memories", params={"user_id": "latency-bench"})
        return

    with bench_database(f"bench_latency_{os.getpid()}"):
        _, client = api_client()

        def post_one(body):
            response = client.post("/api/v1/memories", body, format="json")
            return response.status_code, response.json()

        def post_batch(body):
            response = client.post("/api/v1/memories/batch", body, format="json")
            return response.status_code, response.json()

        run(args, existing, warm, timed, post_one, post_batch, embed_ms)


def run(args, existing, warm, timed, post_one, post_batch, embed_ms) -> None:
    user_id = "latency-bench"
    if existing:
        post_batches(post_batch, existing, 1000, user_id)
    for text in warm:
        post_one({"content": text, "user_id": user_id})
    times, cpu, statuses = [], [], {}
    for text in timed:
        t0, c0 = time.perf_counter(), time.process_time()
        status, _ = post_one({"content": text, "user_id": user_id, "memory_type": "fact", "tags": ["bench"]})
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        statuses[status] = statuses.get(status, 0) + 1
    print(
        f"\n{len(times)} single adds, subject with {len(existing) + len(warm)} memories before; statuses {statuses}"
    )
    print(
        f"  POST /api/v1/memories: p50 {percentile(times, 0.5):.1f} ms   p95 {percentile(times, 0.95):.1f} ms   "
        f"mean {statistics.mean(times):.1f} ms   (goal p50 < 60 ms)"
    )
    print(
        f"  CPU time of this process per add (all threads; in-process runs only): p50 {percentile(cpu, 0.5):.1f} ms"
        f"   (wall time above includes waiting for the CPU and for PostgreSQL; check the load average: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    print(
        f"  embedding alone (local model, one text): p50 {percentile(embed_ms, 0.5):.1f} ms   "
        f"p95 {percentile(embed_ms, 0.95):.1f} ms"
    )


if __name__ == "__main__":
    main()
