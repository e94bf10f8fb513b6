"""Bilingual search benchmark (zh / en / code-mixed), through the HTTP API, tuning and held-out side by side.

    .venv/bin/python bench/bilingual.py [--base-url URL --api-key KEY] [--json OUT] [--show-misses KIND] [--probe]
        [--set NAME ...]

The set is bench/data/bilingual_memories.jsonl (30 subjects, their memories and everyday fillers) and the
questions of bench/data/bilingual_tune.jsonl and bilingual_heldout.jsonl (built by bench/bilingual_build.py,
split by a fixed seed before any tuning). Without --base-url the script creates an org and an API key with
the management commands, starts gunicorn on a free port against $DATABASE_URL (settings from the
environment, e.g. SEARCH_RANKING=seed for the seed formula), and stops it at the end.

Every subject's memories are stored through POST /api/v1/memories/batch with infer=false (as an import
would: nothing is superseded at write time, so both versions of a changed attribute stay active), then
every question is searched through POST /api/v1/memories/search four ways in the same run:
- Engram: the product's ranking as configured (mode=hybrid, its default threshold);
- BM25-only (mode=keyword) and vector-only (mode=vector), with threshold 0 (pure rankings);
- naive fusion: 0.7 x dense + 0.3 x BM25 over the union of the vector and keyword candidates (dense:
  cosine min-max normalised over the union, BM25 divided by the best), computed here from the two
  baselines' explain components.
--probe adds a third column: the version probe (bench/data/bilingual_probe_memories.jsonl and
bilingual_probe.jsonl: 24 more subjects, 60 "now", 60 "past", 48 paraphrase and 24 negative questions),
written later by another author than the main set and without looking at it or at the ranking code, to
check the version order out of sample. Its first score (before any change it was used to choose) was
"now" R@1 0.483, "past" 0.400; since then it has been used to choose ranking.VERSION_BOTH_ANSWER and
VERSION_NEIGHBOURS.
--set NAME adds any other set of the same form as a column of its own: bench/data/bilingual_NAME_memories.jsonl
(its subjects, whose user names must differ from the main set's) and bilingual_NAME.jsonl (its questions);
--probe is --set probe. `--set probe2` is a second out-of-sample set, written by another author than the
main set and the probe, without looking at them or at the ranking code; its first run is its score.
`--set probe3` is a third (12 subjects, 435 memories, 192 positive and 48 negative questions in all eight
kinds, with version pairs whose newer memory often states the new value without a change word). First score
(after the speaker and time rules): R@1 / R@5 / R@10 0.641 / 0.857 / 0.904, vector-only 0.562 / 0.872 / 0.906;
second, after two more changes chosen without it: 0.651 / 0.862 / 0.898. It has been read for errors since
(the cross-language candidates, README "Measured") and is a tuning set like the others. `--set probe4` is a
fourth (12 subjects t01-t12, 427 memories, 192 positive and 48 negative questions, another author): first score
0.812 / 0.943 / 0.966, vector-only 0.630 / 0.852 / 0.867; its "now" misses have been read since.
`--set probe5` is a fifth (12 subjects w01-w12, 427 memories, 192 positive and 48 negative questions, another
author who saw neither the sets nor the code): first score 0.732 / 0.938 / 0.974, vector-only 0.576 / 0.807 /
0.888; "now" R@1 0.458, negative questions empty 0.104.
`--set probe6` is a sixth (12 subjects x01-x12, 424 memories, 192 positive and 48 negative questions, another
author who saw neither the sets nor the code): first score 0.740 / 0.904 / 0.945, vector-only 0.737 / 0.914 /
0.943; "now" R@1 0.750, negative questions empty 0.271. Its "now" misses have been read since.
`--set probe7` is a seventh (12 subjects y01-y12, 420 memories, 192 positive and 48 negative questions, another
author who saw neither the sets nor the code; many new values stored in the other language than the old one):
first score 0.693 / 0.919 / 0.961, vector-only 0.557 / 0.766 / 0.818; "now" R@1 0.375, "past" 0.542, negative
questions empty 0.146. Its "now" misses have been read since (ranking.neighbour_similarities).
`--set probe8` (z01-z12) and `--set probe9` (v01-v12, people far from software work) are an eighth and a ninth,
by new authors who saw neither the sets nor the code. First scores: probe8 0.693 / 0.878 / 0.956 ("now" 0.750,
negatives empty 0.021), probe9 0.708 / 0.922 / 0.961 ("now" 0.458, negatives empty 0.000). probe8's "now" and
"past" misses have been read since (classify.SLOTS, ranking.previous_first); probe9 has not been read.
`--set probe10` (k01-k12, by a new author) first scored 0.667 / 0.919 / 0.969 (cross-lingual 0.528, "now" 0.542,
negatives empty 0.083); its cross-lingual misses have been read since (README "Probe 10").
`--set probe11` (n01-n12, by a new author, never read) first scored 0.747 / 0.917 / 0.964 (paraphrase 0.750 against
vector-only's 0.889, cross-lingual 0.750, "now" 0.708, negatives empty 0.083).
`--set probe12` (h01-h12) and `--set probe13` (p01-p12) are two more by new authors, never read: first scores
0.859 / 0.982 / 0.992 and 0.714 / 0.932 / 0.964 (probe13: paraphrase 0.722 against vector-only's 0.861, "now" 0.500,
negatives empty 0.083).
R@k is the share of a question's expected memories in the first k (for "now" and "past" questions the
expected memory is the one valid now / the old one, so R@1 is "the right version first"). Negative questions
(a topic the subject never mentioned) count only as "empty": the share answered with no result at all.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import Api, manage, percentile, start_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench/data"
KS = (1, 5, 10)
RANKINGS = ("engram", "keyword", "vector", "naive")
LABELS = {"engram": "Engram", "keyword": "BM25-only", "vector": "vector-only", "naive": "naive .7/.3"}
KINDS = ("paraphrase", "cross-lingual", "multi-hop", "now", "past", "keyword", "code-mixed")
HALVES = ("tune", "heldout")
SHORT = {"tune": "tune", "heldout": "held", "probe": "probe"}
# --show-misses prints the misses of these only: the held-out half and a new set are evidence, not tuning
# data (probe2 and probe3 became tuning sets after their second scores; README, "Measured")
MISS_HALVES = (
    "tune",
    "probe",
    "probe2",
    "probe3",
    "probe4",
    "probe5",
    "probe6",
    "probe7",
    "probe8",
    "probe10",
)


def load(name: str) -> list[dict]:
    return [
        json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def ingest(api: Api, subject: dict, user_id: str, refused: list[str]) -> dict[str, int]:
    """The subject's memories stored as they are (infer=false); their ids by key. A memory the write path refuses
    (a secret such as a passport number: never stored) is left out and named in `refused` ("user/key: code"),
    and the questions that expect it are not asked (asked())."""
    entries = [
        {
            "content": m["content"],
            "user_id": user_id,
            "memory_type": m["memory_type"],
            "occurred_at": m["occurred_at"],
            "metadata": {"key": m["key"]},
        }
        for m in subject["memories"]
    ]
    body = api.post("/memories/batch", {"memories": entries, "infer": False})
    ids = {}
    for row in body["results"]:
        memory_id = row.get("id") or row.get("duplicate_of")
        key = entries[row["index"]]["metadata"]["key"]
        if memory_id is None:
            code = (row.get("error") or {}).get("code", "error")
            if code not in ("sensitive_content", "too_short"):
                raise RuntimeError(
                    f"{user_id}: {entries[row['index']]['content']!r} rejected: {row.get('error')}"
                )
            refused.append(f"{subject['user']}/{key}: {code}")
            continue
        ids[key] = memory_id
    return ids


def asked(q: dict, ids: dict) -> bool:
    """Whether a question can be asked: every memory it expects was stored."""
    return all(k in ids[q["user"]] for k in q["expected"])


def naive_fusion(vector: list[dict], keyword: list[dict]) -> list[int]:
    """0.7 x dense (min-max over the union) + 0.3 x BM25 / best BM25."""
    cos = {r["id"]: r["explain"]["vector_similarity"] for r in vector}
    bm25 = {r["id"]: r["explain"]["keyword_bm25"] for r in keyword}
    ids = list(dict.fromkeys([*cos, *bm25]))
    if not ids:
        return []
    low = min(cos.values(), default=0.0)
    high = max(cos.values(), default=1.0)
    best = max(bm25.values(), default=0.0) or 1.0

    def score(i):
        dense = (cos.get(i, low) - low) / (high - low) if high > low else 0.0
        return 0.7 * dense + 0.3 * bm25.get(i, 0.0) / best

    return sorted(ids, key=score, reverse=True)


def fit(api: Api, questions: list[dict], ids: dict[str, dict[str, int]], run: str) -> None:
    """Fit the calibration (memory/search/ranking.py CALIBRATION) on these questions and print it.

    Every candidate of a hybrid search (threshold 0, explain) is a sample: relevant when it is one of
    the question's expected memories, not relevant otherwise (every candidate of a negative question).
    One logistic regression over the fused match above the search's background (explain's `fused` minus
    `background`); then, for floors from 0.02 to 0.3, the share of negative questions left empty (best
    hit under the floor) and of positive ones answered."""
    import numpy as np

    xs, ys = [], []
    per_question = []
    dump = []
    for q in questions:
        if not asked(q, ids):
            continue
        body = {"query": q["query"], "user_id": f"bl-{q['user']}-{run}", "top_k": 100, "max_tokens": 100_000}
        results = api.post("/memories/search", {**body, "explain": True, "threshold": 0})["results"]
        wanted = {ids[q["user"]][k] for k in q["expected"]}
        over = []
        for r in results:
            if r["explain"]["neighbour_of"] is None:
                over.append(r["explain"]["fused"] - r["explain"]["background"])
                xs.append(over[-1])
                ys.append(r["id"] in wanted)
        per_question.append((bool(wanted), max(over, default=-1.0)))
        dump.append({"q": q, "wanted": sorted(wanted), "results": results})
    if os.environ.get("BILINGUAL_DUMP"):
        Path(os.environ["BILINGUAL_DUMP"]).write_text(json.dumps(dump, ensure_ascii=False))
    x = np.column_stack([np.ones(len(xs)), np.array(xs)])
    y = np.array(ys, dtype=float)
    w = np.zeros(2)
    for _ in range(60):  # Newton's method with a little ridge
        p = 1 / (1 + np.exp(-(x @ w)))
        grad = x.T @ (y - p) - 1e-2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + 1e-2 * np.eye(2)
        w += np.linalg.solve(hess, grad)
    a, b = (round(float(v), 2) for v in w)
    print(f'    "<model>": ({a}, {b}),  # {len(xs)} samples, {int(y.sum())} relevant')
    best = [(positive, 1 / (1 + np.exp(-(a + b * top)))) for positive, top in per_question]
    for floor in (0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.3):
        empty = [p < floor for positive, p in best if not positive]
        answered = [p >= floor for positive, p in best if positive]
        print(
            f"floor {floor:.2f}: negative empty {np.mean(empty):.3f}, positive answered {np.mean(answered):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="e.g. http://localhost:8000/api/v1 (default: start gunicorn)")
    parser.add_argument("--api-key", help="an org API key (with --base-url)")
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument(
        "--show-misses",
        default="",
        help="print the Engram misses at R@1 of this kind (tuning half and the probes only)",
    )
    parser.add_argument("--fit", action="store_true", help="fit the calibration on the tuning half and stop")
    parser.add_argument(
        "--probe",
        action="store_true",
        help="also run the version probe (bilingual_probe_memories.jsonl, bilingual_probe.jsonl)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME",
        help="also run bilingual_NAME_memories.jsonl with bilingual_NAME.jsonl as a column of its own",
    )
    parser.add_argument(
        "--explain", action="append", default=[], help="'u02|query': print its explain and stop"
    )
    args = parser.parse_args()

    subjects = load("bilingual_memories.jsonl")
    extra = list(dict.fromkeys(["probe", *args.set] if args.probe else args.set))
    halves = [*HALVES, *extra]
    questions = {half: load(f"bilingual_{half}.jsonl") for half in halves}  # the extra sets' too
    for name in extra:
        subjects += load(f"bilingual_{name}_memories.jsonl")
    repeated = sorted({s["user"] for s in subjects if sum(t["user"] == s["user"] for t in subjects) > 1})
    if repeated:  # each set's subjects need their own names: a question finds its subject by name
        parser.error(f"subjects named in more than one set: {', '.join(repeated)}")

    server = None
    if args.base_url:
        if not args.api_key:
            parser.error("--api-key is required with --base-url")
        base_url, key = args.base_url, args.api_key
    else:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
        slug = f"bilingual-{uuid.uuid4().hex[:8]}"
        manage("create_org", slug)
        key = manage("create_api_key", "--org", slug, "--name", "bilingual-bench")
        server, base_url = start_server()
        print(f"org {slug}, server {base_url}")
    api = Api(base_url, key)
    run = uuid.uuid4().hex[:6]
    # recall[half][ranking][kind][k] -> list of per-question recalls
    recall = {h: {r: {kind: {k: [] for k in KS} for kind in KINDS} for r in RANKINGS} for h in halves}
    empty = {h: {r: [] for r in RANKINGS} for h in halves}
    answered = {h: [] for h in halves}  # positive questions with at least one Engram result
    stale_first = {h: [] for h in halves}  # "now" questions whose stale version came above the current one
    server_ms: list[float] = []
    misses = []
    no_floor = {"threshold": 0}
    try:
        try:  # the baselines rank without a relevance floor (a server without `threshold` has none)
            api.post("/memories/search", {"query": "x", "user_id": "bl-probe", "mode": "vector", **no_floor})
        except RuntimeError as exc:
            if "threshold" not in str(exc):
                raise
            no_floor = {}
        t0 = time.perf_counter()
        refused: list[str] = []
        ids = {s["user"]: ingest(api, s, f"bl-{s['user']}-{run}", refused) for s in subjects}
        print(f"{len(subjects)} subjects stored in {time.perf_counter() - t0:.1f}s")
        if args.fit:
            fit(api, questions["tune"], ids, run)
            return
        for line in args.explain:
            user, query = line.split("|", 1)
            body = {
                "query": query,
                "user_id": f"bl-{user}-{run}",
                "top_k": 6,
                "explain": True,
                "threshold": 0,
            }
            print("==", query)
            for r in api.post("/memories/search", body)["results"]:
                e = r["explain"]
                print(
                    f"  {r['score']:.3f} stale={e['stale']} cos={e['vector_similarity']} lift={e['vector_lift']} "
                    f"cov={e['keyword_coverage']} rel={e['relevance']} {e['language_pair']} {r['content'][:50]}"
                )
        if args.explain:
            return
        if refused:
            skipped = sum(not asked(q, ids) for half in halves for q in questions[half])
            print(
                f"refused by the write path: {', '.join(refused)}; {skipped} questions expecting them not asked"
            )
        for half in halves:
            for q in questions[half]:
                if not asked(q, ids):
                    continue
                user_id = f"bl-{q['user']}-{run}"
                base = {"query": q["query"], "user_id": user_id, "max_tokens": 100_000}
                engram = api.post("/memories/search", {**base, "top_k": max(KS)})
                server_ms.append(engram["took_ms"])
                plain = {**base, "top_k": 30, "explain": True, **no_floor}
                vector = api.post("/memories/search", {**plain, "mode": "vector"})["results"]
                keyword = api.post("/memories/search", {**plain, "mode": "keyword"})["results"]
                found = {
                    "engram": [r["id"] for r in engram["results"]],
                    "vector": [r["id"] for r in vector],
                    "keyword": [r["id"] for r in keyword if r["explain"]["keyword_bm25"] > 0],
                    "naive": naive_fusion(vector, keyword),
                }
                if q["class"] == "negative":
                    for ranking in RANKINGS:
                        empty[half][ranking].append(not found[ranking])
                    continue
                key_ids = ids[q["user"]]
                wanted = [key_ids[k] for k in q["expected"]]
                target = set(wanted[:1]) if q["class"] in ("now", "past") else set(wanted)
                answered[half].append(bool(found["engram"]))
                for ranking in RANKINGS:
                    for k in KS:
                        recall[half][ranking][q["class"]][k].append(
                            len(target & set(found[ranking][:k])) / len(target)
                        )
                if q["class"] == "now":
                    order = found["engram"]
                    stale = wanted[1]
                    stale_first[half].append(
                        stale in order
                        and (wanted[0] not in order or order.index(stale) < order.index(wanted[0]))
                    )
                if (
                    args.show_misses == q["class"]
                    and half in MISS_HALVES
                    and not target & set(found["engram"][:1])
                ):
                    top = engram["results"][:3]
                    misses.append(
                        (
                            half,
                            q["id"],
                            q["query"],
                            q["expected"],
                            [(r["content"][:40], r["score"]) for r in top],
                        )
                    )
        # Long queries: 2,000 characters of pasted text (every question of a subject, repeated), timed.
        long_ms = []
        for n, s in enumerate(subjects * 2):
            text = " ".join(q["query"] for h in halves for q in questions[h] if q["user"] == s["user"])
            text = (text + " ") * (2000 // max(1, len(text)) + 1)
            body = {"query": text[:2000], "user_id": f"bl-{s['user']}-{run}", "top_k": 10}
            if n >= len(subjects):
                body["query"] = "x" * 1999 + str(n)  # one 2,000-character word
            long_ms.append(api.post("/memories/search", body)["took_ms"])
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)

    def avg(values):
        return statistics.fmean(values) if values else 0.0

    def overall(half, ranking, k):
        return avg([v for kind in KINDS for v in recall[half][ranking][kind][k]])

    figures = {}
    n = {h: sum(len(recall[h]["engram"][kind][1]) for kind in KINDS) for h in halves}
    neg = {h: len(empty[h]["engram"]) for h in halves}
    print(
        f"\nBilingual search: {len(subjects)} subjects; "
        + ", ".join(f"{SHORT.get(h, h)} {n[h]} + {neg[h]} negative questions" for h in halves)
    )
    header = f"{'':<26}" + "".join(f"{SHORT.get(h, h) + ' R@' + str(k):>11}" for h in halves for k in KS)
    print(header)
    for kind in ("all", *KINDS):
        print(
            f"{kind} ({len(recall['heldout']['engram'][kind][1]) if kind != 'all' else n['heldout']} held out)"
        )
        for ranking in RANKINGS:
            cells = []
            for half in halves:
                for k in KS:
                    value = (
                        overall(half, ranking, k) if kind == "all" else avg(recall[half][ranking][kind][k])
                    )
                    cells.append(value)
                    figures.setdefault(half, {}).setdefault(kind, {}).setdefault(LABELS[ranking], {})[
                        f"R@{k}"
                    ] = value
            print(f"  {LABELS[ranking]:<24}" + "".join(f"{v:>11.3f}" for v in cells))
    print("\nnegative questions answered with an empty list:")
    for ranking in RANKINGS:
        cells = [avg(empty[h][ranking]) for h in halves]
        for h, v in zip(halves, cells, strict=True):
            figures[h].setdefault("negative_empty", {})[LABELS[ranking]] = v
        print(
            f"  {LABELS[ranking]:<24} "
            + "   ".join(f"{SHORT.get(h, h)} {v:.3f}" for h, v in zip(halves, cells, strict=True))
        )
    for h in halves:
        figures[h]["positive_answered"] = avg(answered[h])
        figures[h]["now_stale_above_current"] = avg(stale_first[h])
    print(
        "positive questions with at least one Engram result: "
        + "   ".join(f"{h} {avg(answered[h]):.3f}" for h in halves)
    )
    print(
        "'now' questions with the stale version above the current one: "
        + "   ".join(f"{h} {avg(stale_first[h]):.3f}" for h in halves)
    )
    beats = {
        h: all(
            avg(recall[h]["engram"][kind][k])
            >= max(avg(recall[h][b][kind][k]) for b in ("keyword", "vector")) - 1e-9
            for kind in KINDS
            for k in KS
        )
        for h in halves
    }
    print(
        "Engram at or above the best of BM25-only and vector-only at every k and kind: "
        + "   ".join(f"{h} {'yes' if beats[h] else 'no'}" for h in halves)
    )
    print(
        f"search latency (Engram, {len(server_ms)} requests): server took_ms p50 {percentile(server_ms, 50):.1f} ms, "
        f"p95 {percentile(server_ms, 95):.1f} ms"
    )
    print(
        f"2,000-character queries ({len(long_ms)}, half of them one word): server took_ms "
        f"p50 {percentile(long_ms, 50):.1f} ms, p95 {percentile(long_ms, 95):.1f} ms"
    )
    for miss in misses:
        print("miss", *miss)
    if args.json:
        figures["latency_ms"] = {
            "server_p50": percentile(server_ms, 50),
            "server_p95": percentile(server_ms, 95),
        }
        Path(args.json).write_text(json.dumps(figures, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
