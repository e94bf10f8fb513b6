"""Export, forget, Markdown and profile aggregation on one large subject.

    .venv/bin/python bench/subject_data.py [--memories 20000] [--sessions 200] [--messages 100] [--edits 50]

Runs in its own throw-away database (engram_bench_subjects on the server of $DATABASE_URL), created and
migrated at the start and dropped at the end. One subject ("big") gets --memories memories (two revisions
each), --sessions sessions of --messages messages, a checkpoint per session and an injection log per ten
memories; a second subject ("other") gets the same, so every query has to pick its rows out of twice as
many. Rows are bulk-inserted (no embeddings: export and forget do not read vectors).

Printed: export time and size, forget time and row counts (then a check that nothing of "big" is left
and all of "other" is), Markdown render of 500 memories, applying an edit of --edits changed bullets
(each change re-embeds with the local model) plus as many removed and added bullets, and a profile
rebuild over 500 memories.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["ENGRAM_TEST_DB"] = "engram_bench_subjects"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=20000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--edits", type=int, default=50)
    args = parser.parse_args()

    import django

    django.setup()
    from bench.ingest import owned_test_databases

    with owned_test_databases():
        run(args)


def fill(org, user_id: str, args) -> None:
    from checkpoints.models import Checkpoint, Message, Session
    from core.text import content_hash
    from memory.models import InjectionLog, MemoryItem, MemoryRevision

    types = ["preference", "fact", "skill", "habit", "event", "context"]
    items = [
        MemoryItem(
            org=org,
            user_id=user_id,
            content=f"{user_id} remembers thing number {n}: likes topic {n % 97}",
            memory_type=types[n % len(types)],
            content_hash=content_hash(f"{user_id}-{n}"),
        )
        for n in range(args.memories)
    ]
    MemoryItem.objects.bulk_create(items, batch_size=2000)
    revisions = []
    for item in items:
        for number in (1, 2):
            revisions.append(
                MemoryRevision(
                    org=org,
                    item=item,
                    item_ref=item.pk,
                    user_id=user_id,
                    number=number,
                    action="add" if number == 1 else "update",
                    after={"content": item.content},
                )
            )
    MemoryRevision.objects.bulk_create(revisions, batch_size=5000)
    sessions = Session.objects.bulk_create(
        [Session(org=org, session_id=f"{user_id}-s{n}", user_id=user_id) for n in range(args.sessions)]
    )
    Message.objects.bulk_create(
        [
            Message(
                org=org, session=s, user_id=user_id, role="human" if m % 2 else "ai", content=f"message {m}"
            )
            for s in sessions
            for m in range(args.messages)
        ],
        batch_size=5000,
    )
    Checkpoint.objects.bulk_create(
        [Checkpoint(org=org, session=s, user_id=user_id, agent_state={"step": 1}) for s in sessions]
    )
    InjectionLog.objects.bulk_create(
        [InjectionLog(org=org, user_id=user_id, memory_ids=[items[n].pk]) for n in range(0, len(items), 10)],
        batch_size=5000,
    )


def timed(label: str, fn):
    started = time.perf_counter()
    result = fn()
    print(f"{label}: {(time.perf_counter() - started) * 1000:,.0f} ms")
    return result


def run(args) -> None:
    from memory.drafts import MemoryDraft
    from memory.embeddings import provider_for
    from memory.markdown import Subject, document_apply, document_get
    from memory.models import MemoryItem
    from memory.services import memory_create
    from profiles.aggregation import user_profile_rebuild
    from projects.access import actor_for_key, system_actor
    from projects.models import Organization
    from projects.services import api_key_create
    from workspace.subjects import subject_export, subject_forget

    org = Organization.objects.create(slug="bench", name="Bench")
    key, _ = api_key_create(org=org, name="bench")
    actor = actor_for_key(key)
    print(
        f"subject 'big': {args.memories:,} memories, {2 * args.memories:,} revisions, "
        f"{args.sessions * args.messages:,} messages; the same again for 'other'"
    )
    timed("fill", lambda: (fill(org, "big", args), fill(org, "other", args)))

    exported = timed("export (build the dict)", lambda: subject_export(actor=actor, org=org, user_id="big"))
    size = len(json.dumps(exported, ensure_ascii=False).encode())
    print(f"export size: {size / 1e6:,.1f} MB JSON")
    counts = timed("forget", lambda: subject_forget(actor=actor, org=org, user_id="big"))["deleted"]
    print(f"forget counts: {counts} (total {sum(counts.values()):,})")
    left = MemoryItem.objects.filter(org=org, user_id="big").count()
    other = MemoryItem.objects.filter(org=org, user_id="other").count()
    print(f"after forget: big has {left} memories, other still {other:,}")

    # Markdown and aggregation with real items (embedded by the local model)
    texts = [
        "喜欢简洁的回答",
        "Answer in English please",
        "Proficient in Python and Go",
        "熟悉 React 和 TypeScript",
        "常用 VS Code",
        "用户是后端工程师",
    ]
    contents = [f"{texts[n % len(texts)]} (note {n})" for n in range(500)]
    provider = provider_for(org, "md")
    started = time.perf_counter()
    vectors = []
    for i in range(0, len(contents), 64):
        vectors += provider.embed_passages(contents[i : i + 64])
    print(
        f"embed 500 texts with {provider.model_name} in batches of 64: {(time.perf_counter() - started):,.1f} s"
    )
    started = time.perf_counter()
    system = system_actor(org)
    for n, (content, vector) in enumerate(zip(contents, vectors, strict=True)):
        memory_create(
            actor=system,
            org=org,
            draft=MemoryDraft(
                user_id="md",
                content=content,
                memory_type=["preference", "preference", "skill", "skill", "habit", "fact"][n % 6],
            ),
            dedup="none",
            embedding=vector,
            embedding_model=provider.model_name,
        )
    print(f"create those 500 memories through the gate: {(time.perf_counter() - started):,.1f} s")
    subject = Subject(org=org, user_id="md")
    doc = timed("markdown render, 500 memories", lambda: document_get(actor=actor, subject=subject))
    lines = doc["document"].splitlines()
    bullets = [i for i, line in enumerate(lines) if line.startswith("- ")]
    for i in bullets[: args.edits]:
        lines[i] = lines[i].replace("(note", "(edited note")
    removed = set(bullets[args.edits : 2 * args.edits])
    lines = [line for i, line in enumerate(lines) if i not in removed]
    lines += [f"- a new bullet number {n} added in the editor" for n in range(args.edits)]
    edited = "\n".join(lines) + "\n"
    result = timed(
        f"markdown apply ({args.edits} changed, {args.edits} removed, {args.edits} added)",
        lambda: document_apply(actor=actor, subject=subject, document=edited, base_version=doc["version"]),
    )
    print("applied:", {k: len(v) for k, v in result["applied"].items()})
    timed("profile rebuild from 500 memories (rules)", lambda: user_profile_rebuild(org=org, user_id="md"))


if __name__ == "__main__":
    main()
