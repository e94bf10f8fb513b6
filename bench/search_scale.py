"""Search at scale: 100,000 memories in one org, 500,000 in the database, Chinese and English; with
--big-subjects and --project-rows also subjects of 50,000 memories and a project of 200,000.

    .venv/bin/python bench/search_scale.py [--pool 4000] [--per-org 100000] [--orgs 5] [--users 200]
                                           [--big-subjects 0] [--subject-rows 50000] [--project-rows 0]
                                           [--queries 100] [--recall 20] [--repeat 1]
                                           [--database engram_bench] [--keep] [--reuse] [--as-owner]

The million-row run (docs/scaling.md, "Measured: search at 1M rows"): 5 orgs of 120,000 memories
(240 subjects of 500), plus 4 subjects of 50,000 and a project of 200,000 in the measured org:

    .venv/bin/python bench/search_scale.py --orgs 5 --per-org 120000 --users 240 \
        --big-subjects 4 --subject-rows 50000 --project-rows 200000 --keep
    (then the same with --reuse instead of --keep to measure again without loading)

Runs in its own database (--database, default engram_bench, on the server of $DATABASE_URL), created,
migrated and dropped at the end (--keep leaves it; --reuse measures again on the database a --keep run
left, without loading, and keeps it).

Data. Embedding 500,000 texts with the local model takes hours on two cores, so a pool of real
sentences (--pool, default 4,000: short statements about people and projects, English and Chinese,
from templates) is embedded with the real model, and every stored memory is built in SQL from the pool:
its text and keyword tokens are those of one pool sentence, its vector the normalised mixture
a*v(i) + (1-a)*v(j) of that sentence's vector and another one's (a in 0.55..0.95), so vectors are
spread like real ones rather than repeated. Rows are bulk-inserted with INSERT ... SELECT; the HNSW
index (the migration's: m = 16, ef_construction = 64) is built after loading. Each org has --users
subjects (500 memories each with the defaults); the measured org also has --big-subjects subjects
big0, big1, ... of --subject-rows memories and one project's --project-rows shared (project-scope)
memories.

Measured for each shape (a subject of the ordinary size, a big subject, the project), for --queries
real queries (embedded once, outside the timings) each against a random target of that shape in the
measured org, with the same vector and filters, alternately:
- Engram search server time without query embedding: memory.search.memory_search with query_vector,
  i.e. access filter, both SQL sides, ranking, near-duplicate step, budget (no HTTP); and the same in
  mode "vector" (no keyword side), to show what the keyword side costs;
- the raw pgvector query (the physical limit): SELECT id ... WHERE org, subject or project, scope,
  status, model ORDER BY embedding <=> q LIMIT k, with the search statement's own iterative-scan
  settings (memory.search.sql._scan_args: ef_search, max_scan_tuples, relaxed order);
- with --repeat N, each query's best of N rounds of the three (on a shared machine a query's time otherwise
  includes whatever moment another process took from it, on one side and not the other). With the
  default (1) the raw query runs first on each query's subject and so alone pays for bringing the
  subject's rows into shared buffers (a 500-memory subject's rows lie on ~500 pages; the default 128 MB
  of buffers hold a sixth of the table): 6.8 ms first, 2.9 ms again, and Engram 15.3 ms first against
  8.0 ms after raw (README "Scale"), which flatters the ratio; --repeat 3 compares both sides warm;
- end to end including the query embedding (memory_search embedding the text itself);
- recall@10 against the exact top 10 (every row's distance, no index) for the first --recall queries:
  of the raw query (LIMIT 10) and of Engram's vector side (the 10 most similar of its vector
  candidates).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
BENCH_DB = "engram_bench"

EN_SUBJECTS = [
    "The user",
    "Alice",
    "Bob",
    "The customer",
    "Our PM",
    "The team lead",
    "Maria",
    "Ken",
    "The new hire",
]
EN_FACTS = [
    "prefers {lang} for backend services",
    "is allergic to {food}",
    "lives in {city}",
    "moved to {city} last {month}",
    "works as a {job} at a {industry} company",
    "wants weekly reports every {day}",
    "uses {tool} to track bugs",
    "likes {food} for lunch",
    "asked to deploy the {project} service on {day}",
    "plans a trip to {city} in {month}",
    "reads about {topic} in the evenings",
    "prefers short answers with {format}",
    "is learning {lang} this {month}",
    "owns a {pet} named {name}",
    "runs the {project} migration to {tool}",
    "reported ticket {ticket} about {topic}",
    "decided to drop {tool} for {project}",
    "meets the {industry} client every {day}",
]
ZH_SUBJECTS = ["用户", "张伟", "李娜", "客户", "项目经理", "王芳", "新同事", "运维负责人"]
ZH_FACTS = [
    "喜欢用{zlang}写后端服务",
    "对{zfood}过敏",
    "住在{zcity}",
    "上个{zmonth}搬到了{zcity}",
    "在一家{zindustry}公司做{zjob}",
    "希望每周{zday}收到周报",
    "用{tool}跟踪缺陷",
    "午饭喜欢吃{zfood}",
    "要求在周{zday}部署{project}服务",
    "计划{zmonth}去{zcity}出差",
    "晚上常看关于{ztopic}的文章",
    "偏好简洁的回答和{zformat}",
    "养了一只叫{name}的{zpet}",
    "负责把{project}迁移到{tool}",
    "提交了工单{ticket}，是关于{ztopic}的问题",
    "决定在{project}里不再使用{tool}",
]
SLOTS = {
    "lang": ["Python", "Go", "Rust", "Java", "TypeScript", "Kotlin"],
    "food": ["peanuts", "shellfish", "gluten", "milk", "sesame", "ramen", "salad", "dumplings"],
    "city": ["Shanghai", "Beijing", "Berlin", "Lisbon", "Toronto", "Singapore", "Austin", "Osaka"],
    "month": ["January", "March", "May", "July", "September", "November"],
    "job": ["data engineer", "designer", "buyer", "accountant", "SRE", "product manager"],
    "industry": ["logistics", "retail", "fintech", "gaming", "healthcare", "foreign trade"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "tool": ["Jira", "Linear", "PostgreSQL", "Kafka", "Redis", "Grafana", "Airflow", "dbt"],
    "project": ["Atlas", "Orion", "Hermes", "Zeus", "Apollo", "Nova"],
    "topic": ["vector search", "supply chains", "tax law", "climbing", "jazz", "LLM agents", "gardening"],
    "format": ["tables", "bullet lists", "code samples", "diagrams"],
    "pet": ["cat", "dog", "parrot", "rabbit"],
    "name": ["Miso", "Luna", "Pepper", "Mochi", "Rex", "Tofu"],
    "ticket": [f"EDU-{n}" for n in range(2200, 2300, 7)],
    "zlang": ["Python", "Go", "Java", "Rust"],
    "zfood": ["花生", "海鲜", "牛奶", "芝麻", "饺子", "拉面", "沙拉"],
    "zcity": ["上海", "北京", "深圳", "杭州", "成都", "广州", "武汉"],
    "zmonth": ["一月", "三月", "五月", "七月", "九月", "十一月"],
    "zindustry": ["外贸", "物流", "零售", "金融", "医疗", "游戏"],
    "zjob": ["采购经理", "数据工程师", "设计师", "会计", "运维", "产品经理"],
    "zday": ["一", "二", "三", "四", "五"],
    "ztopic": ["向量检索", "供应链", "税务", "登录白屏", "支付超时", "大模型"],
    "zformat": ["表格", "列表", "代码示例"],
    "zpet": ["猫", "狗", "鹦鹉", "兔子"],
}
EN_QUERIES = [
    "what is the user allergic to",
    "where does the user live now",
    "which language does the team prefer for backend",
    "when should the weekly report be sent",
    "what tool tracks bugs",
    "who owns a cat",
    "what was ticket EDU-2291 about",
    "which project is migrating to Kafka",
    "what does the customer eat for lunch",
    "travel plans in March",
]
ZH_QUERIES = [
    "用户对什么过敏",
    "用户现在住在哪里",
    "后端服务用什么语言",
    "周报什么时候发",
    "用什么工具跟踪缺陷",
    "谁养了猫",
    "EDU-2291 是什么问题",
    "哪个项目迁移到 Kafka",
    "午饭喜欢吃什么",
    "三月的出差计划",
]


def fill(template: str, rng: random.Random) -> str:
    out = template
    while "{" in out:
        start = out.index("{")
        end = out.index("}", start)
        out = out[:start] + rng.choice(SLOTS[out[start + 1 : end]]) + out[end + 1 :]
    return out


def sentences(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    seen: dict[str, None] = {}
    while len(seen) < n:
        if rng.random() < 0.5:
            text = f"{rng.choice(EN_SUBJECTS)} {fill(rng.choice(EN_FACTS), rng)}."
        else:
            text = f"{rng.choice(ZH_SUBJECTS)}{fill(rng.choice(ZH_FACTS), rng)}。"
        seen[text] = None
    return list(seen)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


# ---- outer process: the database's life ---------------------------------------------------------


def bench_url(variable: str = "DATABASE_URL") -> str:
    url = urlparse(os.environ.get(variable) or "postgres://postgres@localhost:5432/engram")
    return urlunparse(url._replace(path=f"/{BENCH_DB}"))


def admin_conn():
    import psycopg

    owner = os.environ.get("DATABASE_OWNER_URL") or os.environ.get("DATABASE_URL")
    url = urlparse(owner or "postgres://postgres@localhost:5432/engram")
    return psycopg.connect(urlunparse(url._replace(path="/postgres")), autocommit=True)


def outer(args) -> None:
    # The application's role searches (row-level security applies to it, core.rls); the owner loads.
    # --as-owner searches as the owner too, whom the policies do not apply to: the difference is their cost.
    env = {**os.environ, "DATABASE_URL": bench_url(), "DJANGO_SETTINGS_MODULE": "config.settings.base"}
    if os.environ.get("DATABASE_OWNER_URL"):
        env["DATABASE_OWNER_URL"] = bench_url("DATABASE_OWNER_URL")
        if args.as_owner:
            env["DATABASE_URL"] = env["DATABASE_OWNER_URL"]
    if args.reuse:
        with admin_conn() as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone()
        args.reuse = bool(exists)
    if not args.reuse:
        with admin_conn() as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB}")
            conn.execute(f"CREATE DATABASE {BENCH_DB}")
    try:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
        print(
            f"database {BENCH_DB} {'reused' if args.reuse else 'created'} and migrated in {time.perf_counter() - t0:.1f}s"
        )
        if args.reuse:
            sys.argv.append("--loaded")
        subprocess.run([sys.executable, __file__, "--inner", *sys.argv[1:]], cwd=ROOT, env=env, check=True)
    finally:
        if not (args.keep or args.reuse):
            with admin_conn() as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {BENCH_DB} WITH (FORCE)")
            print(f"database {BENCH_DB} dropped")


# ---- inner process: load and measure ---------------------------------------------------------


def inner(args) -> None:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import connection

    from core import rls
    from core.rls.roles import as_owner
    from memory.embeddings import provider_for
    from projects.access import actor_for_key
    from projects.models import ApiKey, Organization, Project
    from projects.services import api_key_create, org_create, project_create

    rls.use_all_orgs_in_this_context()  # loading; the search binds the searching key's org below
    rng = random.Random(42)
    if args.loaded:  # --reuse: the database of an earlier --keep run, same sizes
        orgs = [Organization.objects.get(slug=f"bench-{i}") for i in range(args.orgs)]
        actor = actor_for_key(ApiKey.objects.filter(org=orgs[0], name="bench").first())
        project = Project.objects.filter(org=orgs[0], slug="bench-project").first()
    else:
        orgs = [org_create(slug=f"bench-{i}", name=f"Bench {i}") for i in range(args.orgs)]
        key, _ = api_key_create(org=orgs[0], name="bench")
        actor = actor_for_key(key)
        project = project_create(actor=actor, name="Bench project", slug="bench-project")
    provider = provider_for(orgs[0], "")
    model = provider.model_name
    if args.loaded:
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM memory_memoryitem")
            total = cur.fetchone()[0]
            cur.execute("SELECT count(*) FROM memory_memoryitem WHERE org_id = %s", [orgs[0].pk])
            in_org = cur.fetchone()[0]
        print(f"reusing {total} memories ({in_org} in the measured org)")
    else:
        with as_owner(connection):  # bulk SQL and index builds
            total, in_org = load(args, orgs, project, provider, model)
    with rls.scoped(rls.Scope(org_id=orgs[0].pk)):  # as a request of the key binds it
        measure(args, orgs, project, actor, model, provider, rng, total, in_org)


def load(args, orgs, project, provider, model) -> tuple[int, int]:
    from django.db import connection

    from core.text import content_hash, keyword_tokens
    from memory.search import vector_literal

    texts = sentences(args.pool)
    t0 = time.perf_counter()
    vectors = provider.embed_passages(texts)
    embed_s = time.perf_counter() - t0
    zh = sum(1 for t in texts if t.endswith("。"))
    print(f"pool: {len(texts)} real sentences ({zh} Chinese) embedded in {embed_s:.1f}s")

    t0 = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute(
            "CREATE UNLOGGED TABLE bench_pool (idx int PRIMARY KEY, content text, hash text, tokens tsvector, v vector)"
        )
        cur.executemany(
            "INSERT INTO bench_pool VALUES (%s, %s, %s, array_to_tsvector(%s::text[]), %s::vector)",
            [
                (i, t, content_hash(t), keyword_tokens(t), vector_literal(v))
                for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
            ],
        )
        cur.execute("CREATE UNLOGGED TABLE bench_alpha (k int PRIMARY KEY, va vector, vb vector)")
        alphas = [0.55 + 0.05 * k for k in range(9)]
        cur.executemany(
            "INSERT INTO bench_alpha VALUES (%s, %s::vector, %s::vector)",
            [(k, vector_literal([a] * 384), vector_literal([1 - a] * 384)) for k, a in enumerate(alphas)],
        )
        cur.execute("DROP INDEX IF EXISTS mem_embedding_hnsw")
        for org in orgs:
            insert_rows(cur, org=org, rows=args.per_org, users=args.users, model=model, pool=len(texts))
        if args.big_subjects and args.subject_rows:  # the measured org's big subjects, big0, big1, ...
            insert_rows(
                cur,
                org=orgs[0],
                rows=args.big_subjects * args.subject_rows,
                users=args.big_subjects,
                prefix="big",
                model=model,
                pool=len(texts),
                offset=10_000_000,
            )
        if project is not None and args.project_rows:  # one project's shared memories
            insert_rows(
                cur,
                org=orgs[0],
                rows=args.project_rows,
                project=project,
                model=model,
                pool=len(texts),
                offset=20_000_000,
            )
        load_s = time.perf_counter() - t0
        cur.execute("SELECT count(*) FROM memory_memoryitem")
        total = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM memory_memoryitem WHERE org_id = %s", [orgs[0].pk])
        in_org = cur.fetchone()[0]
        print(
            f"loaded {total} memories ({in_org} in the measured org, {args.users} subjects per org) in {load_s:.1f}s"
        )
        t0 = time.perf_counter()
        # Enough for the graph of a million 384-dimension vectors to stay in memory while it is built;
        # the index itself is the migration's (m = 16, ef_construction = 64).
        cur.execute("SET maintenance_work_mem = '%s'" % ("4GB" if total > 600_000 else "2GB"))
        cur.execute("SET max_parallel_maintenance_workers = 2")
        cur.execute(
            "CREATE INDEX mem_embedding_hnsw ON memory_memoryitem USING hnsw (embedding vector_cosine_ops)"
            " WITH (m = 16, ef_construction = 64)"
        )
        print(f"HNSW index built in {time.perf_counter() - t0:.1f}s")
        cur.execute("ANALYZE memory_memoryitem")
        cur.execute("DROP TABLE bench_pool")
        cur.execute("DROP TABLE bench_alpha")
    return total, in_org


def insert_rows(cur, *, org, rows, model, pool, users=0, prefix="u", project=None, offset=0) -> None:
    """`rows` memories of the org, built in SQL from the pool: user-scope rows spread over `users`
    subjects (prefix0, prefix1, ...), or the project's shared (project-scope) rows."""
    if project is None:
        scope, user_sql, project_id, user_args = "user", "%s || (g %% %s)", None, [prefix, users]
    else:
        scope, user_sql, project_id, user_args = "project", "''", project.pk, []
    cur.execute(
        f"""
        INSERT INTO memory_memoryitem (
            org_id, content, memory_type, scope, user_id, project_id, session_id, agent_id, skill,
            source, source_id, source_message_id, confidence, visibility, status, pinned, tags, metadata,
            embedding, embedding_model, search_tokens, content_hash, access_count, confirmations,
            feedback, created_at, updated_at, occurred_at, version)
        SELECT %s, p1.content, (ARRAY['fact','preference','event','habit'])[1 + g %% 4], %s,
               {user_sql}, %s, '', '', '', 'import', '', '', 0.7 + (g %% 4) * 0.1, 'members',
               'active', false, '[]'::jsonb, '{{}}'::jsonb,
               l2_normalize(p1.v * a.va + p2.v * a.vb), %s, p1.tokens, p1.hash, 0, 0, 0,
               now() - (g %% 1000) * interval '1 hour', now(),
               now() - (g %% 700) * interval '1 day', 1
        FROM generate_series(%s + 1, %s + %s) AS g
        JOIN bench_pool p1 ON p1.idx = (hashint4(g) & 2147483647) %% %s
        JOIN bench_pool p2 ON p2.idx = (hashint4(g + 7919) & 2147483647) %% %s
        JOIN bench_alpha a ON a.k = g %% 9
        """,
        [org.pk, scope, *user_args, project_id, model, offset, offset, rows, pool, pool],
    )


def measure(args, orgs, project, actor, model, provider, rng, total, in_org) -> None:
    from django.conf import settings

    queries = (EN_QUERIES + ZH_QUERIES) * (args.queries // 20 + 1)
    queries = queries[: args.queries]
    qvecs = [provider.embed_query(q) for q in queries]
    print(f"\n{total} memories in the database, {in_org} in the measured org")
    candidates = max(settings.SEARCH_CANDIDATES, TOP_K * 3)  # memory.search.service's count
    if args.users and args.per_org:
        subjects = [f"u{rng.randrange(args.users)}" for _ in queries]
        measure_shape(
            args, f"a subject of {args.per_org // args.users} memories", orgs, actor, model, provider,
            queries, qvecs, subjects, candidates,
        )  # fmt: skip
    if args.big_subjects and args.subject_rows:
        subjects = [f"big{rng.randrange(args.big_subjects)}" for _ in queries]
        measure_shape(
            args, f"a subject of {args.subject_rows} memories", orgs, actor, model, provider,
            queries, qvecs, subjects, candidates,
        )  # fmt: skip
    if project is not None and args.project_rows:
        measure_shape(
            args, f"a project of {args.project_rows} memories", orgs, actor, model, provider,
            queries, qvecs, [project] * len(queries), candidates,
        )  # fmt: skip


TOP_K = 8
RECALL_K = 10


def measure_shape(args, label, orgs, actor, model, provider, queries, qvecs, targets, candidates) -> None:
    """Raw pgvector and Engram on the same queries, alternately, for one shape: subjects (user ids) or a
    project as the target of each query."""
    import numpy as np
    from django.conf import settings
    from django.db import connection, transaction

    from memory.search import memory_search, vector_literal
    from memory.search.service import _exact_subject
    from memory.search.sql import _scan_args, fetch_rows, filter_sql
    from memory.selectors import MemoryFilters

    is_project = not isinstance(targets[0], str)
    where = (
        "org_id = %s AND project_id = %s AND scope = 'project'"
        if is_project
        else "org_id = %s AND user_id = %s AND scope IN ('user', 'session')"
    )
    raw_sql = (
        f"SELECT id FROM memory_memoryitem WHERE {where} AND status = 'active' AND embedding_model = %s"
        " ORDER BY embedding <=> %s::vector LIMIT %s"
    )
    # The same iterative-scan settings as Engram's statement (memory.search.sql._SCAN_SQL).
    ef_search, max_scan = _scan_args(candidates)

    def target_arg(target):
        return target.pk if is_project else target

    def filters(target):
        return MemoryFilters(project=target) if is_project else MemoryFilters(user_id=target)

    def run_raw(target, qvec, k=TOP_K, exact=False):
        t = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                " set_config('hnsw.ef_search', %s, true), set_config('hnsw.max_scan_tuples', %s, true),"
                " set_config('enable_indexscan', %s, true)",
                [ef_search, max_scan, "off" if exact else "on"],  # exact: no HNSW, every row's distance
            )
            cur.execute(raw_sql, [orgs[0].pk, target_arg(target), model, vector_literal(qvec), k])
            rows = [r[0] for r in cur.fetchall()]
        return (time.perf_counter() - t) * 1000, rows

    def run_engram(query, target, qvec, **kw):
        result = memory_search(
            actor=actor, query=query, filters=filters(target), query_vector=qvec, record_access=False, **kw
        )
        return result.took_ms, [h.id for h in result.hits]

    distinct = list(dict.fromkeys(targets))
    warm = list(zip(queries, targets, qvecs, strict=True))[:10]
    warm += [(queries[0], t, qvecs[0]) for t in distinct[:20]]
    for q, t, v in warm:  # caches, the plan cache, and a big subject's first (one-pass) attempt
        run_raw(t, v)
        run_engram(q, t, v, top_k=TOP_K)
    raw_ms, engram_ms, vector_ms, e2e_ms, counts = [], [], [], [], []
    for q, t, v in zip(queries, targets, qvecs, strict=True):
        # --repeat: each query's best of that many rounds (raw, Engram, mode=vector in turn), so that a
        # moment the shared machine gives to another process does not count against one side only.
        raw, engram, vector = [], [], []
        for _ in range(args.repeat):
            ms, ids = run_raw(t, v)
            raw.append(ms)
            ms, hits = run_engram(q, t, v, top_k=TOP_K)
            engram.append(ms)
            vector.append(run_engram(q, t, v, top_k=TOP_K, rank="vector")[0])
        raw_ms.append(min(raw))
        engram_ms.append(min(engram))
        vector_ms.append(min(vector))
        counts.append((len(ids), len(hits)))
    for q, t in zip(queries, targets, strict=True):
        started = time.perf_counter()
        memory_search(actor=actor, query=q, filters=filters(t), top_k=TOP_K, record_access=False)
        e2e_ms.append((time.perf_counter() - started) * 1000)
    # Recall@10 against the exact top 10 (every row's distance): raw pgvector's (LIMIT 10), and that of
    # Engram's vector side (its statement's vector candidates, the 10 most similar).
    raw_recall, engram_recall = [], []
    for t, v in list(zip(targets, qvecs, strict=True))[: args.recall]:
        exact = set(run_raw(t, v, k=RECALL_K, exact=True)[1])
        raw_recall.append(len(exact & set(run_raw(t, v, k=RECALL_K)[1])) / max(1, len(exact)))
        where_sql = filter_sql(actor, filters(t))
        subject = _exact_subject(actor, filters(t))
        rows = fetch_rows(
            where_sql, org_id=orgs[0].pk, qvec=np.asarray(v, dtype=np.float32), model=model, terms=[],
            candidates=candidates, subject=subject,
        )  # fmt: skip
        if subject and rows and rows[0]["subject_rows"] >= settings.SEARCH_EXACT_SUBJECT_ROWS:
            rows = fetch_rows(
                where_sql, org_id=orgs[0].pk, qvec=np.asarray(v, dtype=np.float32), model=model,
                terms=[], candidates=candidates, subject=False,
            )  # fmt: skip
        rows = sorted((r for r in rows if r["candidate"]), key=lambda r: -r["vsim"])[:RECALL_K]
        engram_recall.append(len(exact & {r["id"] for r in rows}) / max(1, len(exact)))
    with connection.cursor() as cur:
        cur.execute(
            "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false),"
            " set_config('hnsw.ef_search', %s, false)",
            [ef_search],
        )
        cur.execute(
            "EXPLAIN " + raw_sql, [orgs[0].pk, target_arg(targets[0]), model, vector_literal(qvecs[0]), TOP_K]
        )
        plan = " / ".join(
            re.sub(r"'\[[^']*'", "'[...]'", r[0].strip().split(" (cost")[0]) for r in cur.fetchall()
        )
        cur.execute("RESET hnsw.iterative_scan; RESET hnsw.ef_search")

    best = f", each the best of {args.repeat} rounds" if args.repeat > 1 else ""
    print(
        f"\nsearch in {label}, {len(queries)} queries{best}, top_k={TOP_K} ({len(distinct)} distinct targets)"
    )
    print(f"raw pgvector SQL       p50 {pct(raw_ms, 50):7.2f} ms   p95 {pct(raw_ms, 95):7.2f} ms")
    print(f"Engram search (server) p50 {pct(engram_ms, 50):7.2f} ms   p95 {pct(engram_ms, 95):7.2f} ms")
    print(
        f"ratio Engram/raw       p50 {pct(engram_ms, 50) / pct(raw_ms, 50):7.2f} x   "
        f"p95 {pct(engram_ms, 95) / pct(raw_ms, 95):7.2f} x   (goal <= 1.5x)"
    )
    print(
        f"Engram mode=vector     p50 {pct(vector_ms, 50):7.2f} ms   p95 {pct(vector_ms, 95):7.2f} ms"
        f"   (no keyword side: ratio p50 {pct(vector_ms, 50) / pct(raw_ms, 50):.2f} x)"
    )
    print(
        f"end to end incl. query embedding p50 {pct(e2e_ms, 50):.1f} ms, p95 {pct(e2e_ms, 95):.1f} ms; "
        f"mean {statistics.fmean(e2e_ms):.1f} ms"
    )
    print(
        f"rows returned: raw {min(c[0] for c in counts)}..{max(c[0] for c in counts)}, "
        f"Engram {min(c[1] for c in counts)}..{max(c[1] for c in counts)}"
    )
    if raw_recall:
        print(
            f"recall@{RECALL_K} vs exact ({len(raw_recall)} queries): raw pgvector "
            f"{statistics.fmean(raw_recall):.3f}, Engram's vector side {statistics.fmean(engram_recall):.3f}"
        )
    print(f"raw plan: {plan}")


def main() -> None:
    global BENCH_DB
    parser = argparse.ArgumentParser(
        description="Search latency at 100k memories per org / 500k in the database."
    )
    parser.add_argument("--pool", type=int, default=4000, help="real sentences embedded with the model")
    parser.add_argument("--per-org", type=int, default=100_000)
    parser.add_argument("--orgs", type=int, default=5)
    parser.add_argument("--users", type=int, default=200, help="subjects per org")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--big-subjects",
        type=int,
        default=0,
        help="extra subjects of --subject-rows memories in the measured org",
    )
    parser.add_argument("--subject-rows", type=int, default=50_000)
    parser.add_argument(
        "--project-rows", type=int, default=0, help="shared memories of one project in the measured org"
    )
    parser.add_argument("--recall", type=int, default=20, help="queries whose recall@10 is measured")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="time each query this many times (raw, Engram, mode=vector in turn) and keep each one's best",
    )
    parser.add_argument("--database", default=BENCH_DB, help="the scratch database's name")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure on the scratch database left by --keep (same sizes)",
    )
    parser.add_argument(
        "--as-owner",
        action="store_true",
        help="search as the tables' owner (row-level security off), to compare with the default",
    )
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--loaded", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    BENCH_DB = args.database
    if args.inner:
        inner(args)
    else:
        outer(args)


if __name__ == "__main__":
    main()
