"""How the query embedder's OpenMP settings change its latency, idle and beside CPU-bound work.

    .venv/bin/python bench/embed_threads.py [--queries 100] [--busy 2] [--json OUT]

Each setting runs in its own subprocess (OpenMP and OpenBLAS read their environment once, when they
start): one process embeds --queries query strings one at a time with LocalE5Provider.embed_query, as
the web process does: from two request threads in turn (a gunicorn gthread worker's). Between two
queries it does what a search does after the embedding: matrix products of a hundred 384-dimension
vectors in numpy (ranking.similarities), then a 5 ms pause (a server is not a closed loop). Only the
embedding is timed. The settings:

  1 thread                       OMP_NUM_THREADS=1
  2 threads, passive             OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE   (Engram's old default)
  2 threads, libgomp's default   OMP_NUM_THREADS=2, a 300,000-turn spin       (the library's default)
  2 threads, Engram's default    OMP_NUM_THREADS=2, GOMP_SPINCOUNT from memory/embeddings/local.py
  the same, numpy's default      as above, but OpenBLAS with its default thread per core (Engram sets
                                 OPENBLAS_NUM_THREADS=1 in config/__init__.py)
  the same, on request threads   as Engram's default, but the model called on each request thread
                                 itself instead of on the provider's one embedding thread

first on an idle machine, then with --busy CPU-bound processes running beside it. It prints the wall
time p50 / p95 per query and the CPU time per query, and each p50 as a ratio to the passive policy's
in the same run (these machines are noisy; compare ratios, not milliseconds).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

QUERIES = [
    "What did Anna research after the support group meeting?",
    "When did Tom paint the sunrise over the lake?",
    "我对什么过敏？",
    "Which framework does my team use for the admin tooling?",
    "我们公司在哪个城市，有多少人？",
    "What is the name of my daughter's swimming coach?",
    "我上个月搬到哪里去了",
    "what laptop do I use these days?",
    "周末一般去哪儿钓鱼",
    "Where did I live before I moved to Bristol last spring?",
    "我儿子今年几年级，在学什么",
    "What time is my standing meeting with the design review group on Thursdays?",
    "帮我回忆一下我喜欢什么样的咖啡",
    "What kind of music does my partner listen to when cooking?",
    "我用哪个 IDE 写 Python",
    "How long have I been learning the piano and who teaches me?",
]


def child(queries: int) -> None:
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from memory.embeddings.local import LocalE5Provider

    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((100, 384)).astype(np.float32)

    provider = LocalE5Provider()
    embed = provider.embed_query
    if os.environ.get("BENCH_ON_REQUEST_THREAD"):
        model = provider._model()
        embed = model.query  # what the provider did before it kept the calls on one thread
    wall = []
    requests = [ThreadPoolExecutor(1), ThreadPoolExecutor(1)]  # two request threads, each its own
    for thread in requests:
        thread.submit(embed, "warm up").result()
    cpu0 = time.process_time()
    for i in range(queries):
        text = QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" ({i})")
        t0 = time.perf_counter()
        requests[i % 2].submit(embed, text).result()
        wall.append((time.perf_counter() - t0) * 1000)
        for _ in range(3):
            (matrix @ matrix.T).sum()
        time.sleep(0.005)
    cpu = (time.process_time() - cpu0) * 1000 / queries
    wall.sort()
    print(
        json.dumps(
            {
                "p50": statistics.median(wall),
                "p95": wall[min(len(wall) - 1, int(0.95 * len(wall)))],
                "cpu": cpu,
            }
        )
    )


SETTINGS = {
    "1 thread": {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    "2 threads, passive": {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_NUM_THREADS": "1"},
    "2 threads, libgomp's default": {
        "OMP_NUM_THREADS": "2",
        "GOMP_SPINCOUNT": "300000",
        "OPENBLAS_NUM_THREADS": "1",
    },
    "2 threads, Engram's default": {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "1"},
    "the same, numpy's default": {"OMP_NUM_THREADS": "2"},
    "the same, on request threads": {
        "OMP_NUM_THREADS": "2",
        "OPENBLAS_NUM_THREADS": "1",
        "BENCH_ON_REQUEST_THREAD": "1",
    },
}
ENV = (
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "GOMP_SPINCOUNT",
    "OPENBLAS_NUM_THREADS",
    "BENCH_ON_REQUEST_THREAD",
)


def run(setting: dict, queries: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ENV}
    env.update(setting)
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(queries)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--busy", type=int, default=2, help="CPU-bound processes beside it in the second round"
    )
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    results = {}
    for load in ("idle", f"{args.busy} busy processes"):
        stop = multiprocessing.Event()
        busy = [
            multiprocessing.Process(target=spin, args=(stop,))
            for _ in range(args.busy if load != "idle" else 0)
        ]
        for p in busy:
            p.start()
        try:
            results[load] = {name: run(setting, args.queries) for name, setting in SETTINGS.items()}
        finally:
            stop.set()
            for p in busy:
                p.join()
        base = results[load]["2 threads, passive"]["p50"]
        print(f"\n{load}: {args.queries} queries, one at a time")
        print(f"  {'setting':<32} {'p50 ms':>7} {'p95 ms':>7} {'CPU ms':>7} {'p50 / passive':>14}")
        for name, r in results[load].items():
            print(f"  {name:<32} {r['p50']:7.1f} {r['p95']:7.1f} {r['cpu']:7.1f} {r['p50'] / base:14.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
