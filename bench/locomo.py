"""LoCoMo retrieval benchmark, through the HTTP API as an agent would use it.

    .venv/bin/python bench/locomo.py PATH/TO/locomo.json [--base-url URL --api-key KEY] [--json OUT]

Without --base-url the script creates an org and an API key with the management commands
(create_org, create_api_key), starts gunicorn on a free port against $DATABASE_URL, and stops it at the end.
The org and its memories stay in that database afterwards (its slug is printed: locomo-<hex>).

For each conversation one subject (user_id) is created; every turn is stored verbatim as
"<speaker>: <text>" (plus " [shares a photo: <caption>]") through POST /api/v1/memories/batch with
infer=false, metadata.dia_id and occurred_at from the session's date. Then every question of
categories 1-4 is searched with that subject through POST /api/v1/memories/search, three ways in the
same run: Engram's hybrid ranking (mode=hybrid, the default), BM25 alone (mode=keyword) and the vector
alone (mode=vector). Recall@k is the share of a question's evidence turns found in the top k,
averaged over questions. max_tokens is raised so the token budget does not cut the top 20.
Latency is the client's wall time of the hybrid requests (query embedding included) and the server's
took_ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
KS = (1, 5, 10, 20)
MODES = ("hybrid", "keyword", "vector")
LABELS = {"hybrid": "Engram", "keyword": "BM25-only", "vector": "vector-only"}
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class Api:
    def __init__(self, base_url: str, key: str):
        url = urlparse(base_url)
        self.host, self.port = url.hostname, url.port or 80
        self.prefix = url.path.rstrip("/")
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=600)

    def post(self, path: str, body: dict) -> dict:
        payload = json.dumps(body)
        for attempt in range(2):
            try:
                self.conn.request("POST", self.prefix + path, payload, self.headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
                if attempt:
                    raise
        if response.status >= 400:
            raise RuntimeError(f"{path} -> {response.status}: {data[:500]!r}")
        return json.loads(data)


def manage(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return out.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    gunicorn = Path(sys.executable).parent / "gunicorn"
    proc = subprocess.Popen(
        [str(gunicorn), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--threads", "2", "-t", "600"],
        cwd=ROOT,
        env={
            **os.environ,
            "ENGRAM_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            # A benchmark, not a client to slow down: the per-org rate limit would answer 429 mid-run.
            "ENGRAM_API_RATE": os.environ.get("ENGRAM_API_RATE", "100000/min"),
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/api/v1"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("gunicorn did not start")


def session_time(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> ISO 8601 (UTC)."""
    when = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return when.replace(tzinfo=UTC).isoformat()


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("image_caption"):
        text += f" [shares a photo: {turn['image_caption']}]"
    return text


def evidence_ids(question: dict) -> list[str]:
    out = []
    for entry in question.get("evidence", []):
        out.extend(re.findall(r"D\d+:\d+", entry))
    return list(dict.fromkeys(out))


def ingest(api: Api, conversation: dict, user_id: str) -> dict[str, int]:
    """Store every turn; returns dia_id -> memory id (a repeated identical turn maps to the stored one)."""
    entries = []
    for session in conversation["sessions"]:
        occurred = session_time(session["date_time"])
        for turn in session["turns"]:
            entries.append(
                {
                    "content": turn_text(turn),
                    "user_id": user_id,
                    "memory_type": "event",
                    "occurred_at": occurred,
                    "metadata": {"dia_id": turn["dia_id"], "session": session["session"]},
                }
            )
    ids: dict[str, int] = {}
    for start in range(0, len(entries), 200):
        chunk = entries[start : start + 200]
        body = api.post("/memories/batch", {"memories": chunk, "infer": False})
        for row in body["results"]:
            memory_id = row.get("id") or row.get("duplicate_of")
            if memory_id is None:
                print(f"  rejected {chunk[row['index']]['metadata']['dia_id']}: {row.get('error')}")
                continue
            ids[chunk[row["index"]]["metadata"]["dia_id"]] = memory_id
    return ids


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", help="LoCoMo JSON (conversations with sessions, turns and qa)")
    parser.add_argument("--base-url", help="e.g. http://localhost:8000/api/v1 (default: start gunicorn)")
    parser.add_argument("--api-key", help="an org API key (with --base-url)")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()

    data = json.loads(Path(args.path).read_text())
    conversations = data["conversations"] if isinstance(data, dict) else data
    if args.conversations:
        conversations = conversations[: args.conversations]

    server = None
    if args.base_url:
        if not args.api_key:
            parser.error("--api-key is required with --base-url")
        base_url, key = args.base_url, args.api_key
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        slug = f"locomo-{uuid.uuid4().hex[:8]}"
        manage("create_org", slug)
        key = manage("create_api_key", "--org", slug, "--name", "locomo-bench")
        server, base_url = start_server()
        print(f"org {slug}, server {base_url}")
    api = Api(base_url, key)
    run = uuid.uuid4().hex[:6]
    recall = {m: {k: [] for k in KS} for m in MODES}
    by_cat = {m: {c: {k: [] for k in KS} for c in CATEGORIES} for m in MODES}
    client_ms: list[float] = []
    server_ms: list[float] = []
    try:
        for conversation in conversations:
            user_id = f"locomo-{conversation['conversation_id']}-{run}"
            t0 = time.perf_counter()
            ids = ingest(api, conversation, user_id)
            print(
                f"conversation {conversation['conversation_id']}: {len(ids)} turns stored "
                f"in {time.perf_counter() - t0:.1f}s"
            )
            for question in conversation["qa"]:
                category = int(question["category"])
                if category not in CATEGORIES:
                    continue
                wanted = {ids[d] for d in evidence_ids(question) if d in ids}
                if not wanted:
                    continue
                for mode in MODES:
                    body = {
                        "query": question["question"],
                        "user_id": user_id,
                        "top_k": max(KS),
                        "max_tokens": 100_000,
                        "mode": mode,
                    }
                    t1 = time.perf_counter()
                    answer = api.post("/memories/search", body)
                    if mode == "hybrid":
                        client_ms.append((time.perf_counter() - t1) * 1000)
                        server_ms.append(answer["took_ms"])
                    found = [r["id"] for r in answer["results"]]
                    for k in KS:
                        r = len(wanted & set(found[:k])) / len(wanted)
                        recall[mode][k].append(r)
                        by_cat[mode][category][k].append(r)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)

    def avg(values):
        return statistics.fmean(values) if values else 0.0

    questions = len(recall["hybrid"][1])
    print(f"\nLoCoMo retrieval: {len(conversations)} conversations, {questions} questions (categories 1-4)")
    header = "ranking       " + "  ".join(f"R@{k:<4}" for k in KS)
    print(header)
    for mode in MODES:
        print(f"{LABELS[mode]:<13} " + "  ".join(f"{avg(recall[mode][k]):.3f}" for k in KS))
    for category, name in CATEGORIES.items():
        n = len(by_cat["hybrid"][category][1])
        print(f"\ncategory {category} ({name}, {n} questions)")
        for mode in MODES:
            print(f"  {LABELS[mode]:<11} " + "  ".join(f"{avg(by_cat[mode][category][k]):.3f}" for k in KS))
    beats = all(avg(recall["hybrid"][k]) > avg(recall[m][k]) for k in KS for m in ("keyword", "vector"))
    print(f"\nEngram above both baselines at every k: {'yes' if beats else 'no'}")
    print(
        f"search latency (hybrid, {len(client_ms)} requests): client p50 {percentile(client_ms, 50):.1f} ms, "
        f"p95 {percentile(client_ms, 95):.1f} ms; server took_ms p50 {percentile(server_ms, 50):.1f} ms, "
        f"p95 {percentile(server_ms, 95):.1f} ms"
    )
    if args.json:
        figures = {
            "questions": questions,
            "recall": {LABELS[m]: {f"R@{k}": avg(recall[m][k]) for k in KS} for m in MODES},
            "by_category": {
                CATEGORIES[c]: {LABELS[m]: {f"R@{k}": avg(by_cat[m][c][k]) for k in KS} for m in MODES}
                for c in CATEGORIES
            },
            "latency_ms": {
                "client_p50": percentile(client_ms, 50),
                "client_p95": percentile(client_ms, 95),
                "server_p50": percentile(server_ms, 50),
                "server_p95": percentile(server_ms, 95),
            },
        }
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
