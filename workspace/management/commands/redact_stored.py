"""Redact secrets in rows stored before they were redacted on the way in.

Writes redact a memory's source_id, a session's agent_id, profile fields and their history, the context
query of the injection log, checkpoint state (keys and values, archived ones too) and imported extraction
jobs; rows written before that keep what they held. This passes over those columns and rewrites the rows
whose redacted value differs, in chunks, each chunk one transaction: it can be stopped and run again (a
second run changes nothing). Memory content, tags and metadata are the gate's and are not touched here."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from checkpoints.models import Checkpoint, CheckpointArchive, Session
from checkpoints.services import PAYLOAD_DEFAULTS, archive_json, compress_payload, redacted_payload
from core.secrets import redact, redact_json
from memory.models import ExtractionJob, InjectionLog, MemoryItem
from profiles.models import ProfileRevision, ProjectProfile, UserProfile
from profiles.selectors import PROJECT_FIELDS, USER_FIELDS
from profiles.services import profile_values_redacted
from projects.commands import RowRewriteCommand


def _text(model, name: str) -> Callable[[object, dict], dict]:
    limit = model._meta.get_field(name).max_length

    def redacted(row, values: dict) -> dict:
        value = redact(values[name]) if values[name] else values[name]
        return {name: value[:limit] if limit else value}

    return redacted


def _profile(row, values: dict) -> dict:
    return profile_values_redacted(row, values)


def _checkpoint(row, values: dict) -> dict:
    return redacted_payload(values)


def _archive(row, values: dict) -> dict:
    payload = archive_json(bytes(values["payload"]))
    cleaned = redacted_payload(
        {name: payload.get(name, default) for name, default in PAYLOAD_DEFAULTS.items()}
    )
    if all(payload.get(name, PAYLOAD_DEFAULTS[name]) == cleaned[name] for name in cleaned):
        return {"payload": values["payload"]}  # unchanged: keep the stored bytes
    return {"payload": compress_payload({**payload, **cleaned})}


def _job(row, values: dict) -> dict:
    return {
        "messages": redact_json(values["messages"]),
        "result": redact_json(values["result"]),
        "error": redact(values["error"]) if values["error"] else values["error"],
    }


def _json(name: str) -> Callable[[object, dict], dict]:
    return lambda row, values: {name: redact_json(values[name])}


# (label, model, columns, redactor, rows scoped to an org by)
PASSES = [
    ("memory source ids", MemoryItem, ["source_id"], _text(MemoryItem, "source_id"), "org"),
    ("session agent ids", Session, ["agent_id"], _text(Session, "agent_id"), "org"),
    ("injection-log queries", InjectionLog, ["query"], _text(InjectionLog, "query"), "org"),
    ("user profiles", UserProfile, USER_FIELDS, _profile, "org"),
    ("project profiles", ProjectProfile, PROJECT_FIELDS, _profile, "org"),
    ("profile history", ProfileRevision, ["changes"], _json("changes"), "org"),
    ("checkpoints", Checkpoint, list(PAYLOAD_DEFAULTS), _checkpoint, "org"),
    ("archived checkpoints", CheckpointArchive, ["payload"], _archive, "org"),
    ("extraction jobs", ExtractionJob, ["messages", "result", "error"], _job, "org"),
]


class Command(RowRewriteCommand):
    help = "Redact secrets kept in rows stored before writes redacted them (idempotent)."

    def rewrite(self, *, org, chunk: int, dry_run: bool) -> None:
        verb = "would change" if dry_run else "changed"
        total = 0
        for label, model, columns, redactor, org_field in PASSES:
            rows = model.objects.order_by("pk")
            if org is not None:
                rows = rows.filter(**{org_field: org})
            seen = changed = 0
            last = 0
            while True:
                batch = list(rows.filter(pk__gt=last).only("pk", *columns)[:chunk])
                if not batch:
                    break
                last = batch[-1].pk
                dirty = []
                for row in batch:
                    values = {name: getattr(row, name) for name in columns}
                    cleaned = redactor(row, values)
                    if any(cleaned[name] != values[name] for name in cleaned):
                        for name, value in cleaned.items():
                            setattr(row, name, value)
                        dirty.append(row)
                seen += len(batch)
                changed += len(dirty)
                if dirty and not dry_run:
                    with transaction.atomic():
                        model.objects.bulk_update(dirty, columns)
            total += changed
            self.stdout.write(f"{label}: {changed} of {seen} rows {verb}")
        self.stdout.write(f"done: {total} rows {verb}")
