"""Markdown memory documents (seed 003's user.md and skills/<skill>.md).

A subject's active memories render as one document, grouped by type under `## Heading`s. Every
bullet ends with `<!-- m:123 -->`, the id of its item, so an edited document can be matched to the
items it came from. Applying an edited document (based on a version) turns its differences into
ordinary writes through memory.services: a changed bullet -> memory_update, a removed bullet ->
memory_archive (never a hard delete), a new bullet -> memory_create through the gate. All of it
happens in one transaction: a refusal anywhere applies nothing.

The version is "<state hash>.<revision mark>": the hash of the items' ids and versions decides
whether the document is current; the mark (the newest revision id then) lets a conflict answer list
what changed since.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Max
from django.utils.translation import get_language, gettext, gettext_noop

from core.times import rfc3339
from projects.access import Actor
from projects.models import Project

from . import gate
from .drafts import MemoryDraft, default_source, lock_subjects
from .models import MemoryItem, MemoryRevision, MemoryType, Scope, Status
from .pause import MemoryPaused
from .selectors import readable_memories
from .services import StaleVersion, memory_archive, memory_create, memory_update

HEADINGS = {
    MemoryType.PREFERENCE: ("Preferences", "偏好"),
    MemoryType.FACT: ("Facts", "事实"),
    MemoryType.SKILL: ("Skills", "技能"),
    MemoryType.HABIT: ("Habits", "习惯"),
    MemoryType.EVENT: ("Events", "事件"),
    MemoryType.CONTEXT: ("Context", "上下文"),
    MemoryType.CONSTRAINT: ("Constraints", "约束"),
    MemoryType.DECISION: ("Decisions", "决策"),
    MemoryType.CORE: ("Core", "核心"),
    MemoryType.SUMMARY: ("Summaries", "摘要"),
    MemoryType.NOTE: ("Notes", "笔记"),
}
TYPE_ORDER = list(HEADINGS)
_HEADING_KEYS: dict[str, str] = {}
for _type, (_en, _zh) in HEADINGS.items():
    for _key in (_type, _en, _zh, _en.rstrip("s"), f"{_en} ({_zh})", f"{_en}（{_zh}）"):
        _HEADING_KEYS[_key.lower()] = _type

_MARKER = re.compile(r"\s*<!--\s*m:(\d+)\s*-->\s*")
_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
_BULLET = re.compile(r"^[-*+]\s+(.*)$")
_HELP = gettext_noop(
    "One bullet per memory under a type heading (## Preferences, ## Facts, ...). Keep the m:<id> marks."
)


def _chinese() -> bool:
    """Whether the document is written for a Chinese reader (the request's language): headings and the
    help comment in Chinese; either language's headings are read back."""
    return (get_language() or "").lower().startswith("zh")


class MarkdownError(Exception):
    """The document cannot be applied: status, code, message and details for the API answer."""

    def __init__(self, status: int, code: str, message: str, details=None):
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details


@dataclass
class Subject:
    """Which memories one document holds: a user's (or a project's), optionally one skill's."""

    org: object
    user_id: str = ""
    project: Project | None = None
    skill: str = ""

    @property
    def title(self) -> str:
        base = f"projects/{self.project.slug}" if self.project else ""
        if self.skill:
            return f"{base}/skills/{self.skill}.md" if base else f"skills/{self.skill}.md"
        return f"{base}.md" if base else "user.md"

    def filters(self) -> dict:
        if self.project is not None:
            return {"scope": Scope.PROJECT, "project": self.project, "skill": self.skill}
        return {"scope": Scope.USER, "user_id": self.user_id, "skill": self.skill}

    def lock_key(self) -> str:
        return f"markdown:{self.org.pk}:{self.project.pk if self.project else ''}:{self.user_id}:{self.skill}"


def subject_items(actor: Actor, subject: Subject, *, status: str | None = Status.ACTIVE):
    """The items of the document that the actor may read."""
    qs = readable_memories(actor).filter(**subject.filters())
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("created_at", "id")


def _revision_mark(actor: Actor, subject: Subject) -> int:
    ids = subject_items(actor, subject, status=None).values("id")
    return MemoryRevision.objects.filter(org=subject.org, item_ref__in=ids).aggregate(m=Max("id"))["m"] or 0


def _state_hash(items) -> str:
    text = ",".join(f"{i.pk}:{i.version}" for i in sorted(items, key=lambda i: i.pk))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def document_version(actor: Actor, subject: Subject, items=None) -> str:
    items = list(subject_items(actor, subject)) if items is None else items
    return f"{_state_hash(items)}.{_revision_mark(actor, subject)}"


def _bullet(item: MemoryItem) -> list[str]:
    lines = [line.rstrip() for line in item.content.splitlines() if line.strip()] or [""]
    out = [f"- {lines[0]}"] + [f"  {line.strip()}" for line in lines[1:]]
    out[-1] += f" <!-- m:{item.pk} -->"
    return out


def render(items, subject: Subject) -> str:
    """The document: a title, then one `## Heading` per type that has items, one bullet per item."""
    by_type: dict[str, list[MemoryItem]] = {}
    for item in items:
        by_type.setdefault(item.memory_type, []).append(item)
    zh = _chinese()
    lines = [f"# {subject.title}", "", f"<!-- {gettext(_HELP)} -->"]
    for memory_type in TYPE_ORDER:
        if memory_type not in by_type:
            continue
        lines += ["", f"## {HEADINGS[memory_type][1 if zh else 0]}", ""]
        for item in by_type[memory_type]:
            lines += _bullet(item)
    return "\n".join(lines) + "\n"


def document_get(*, actor: Actor, subject: Subject) -> dict:
    """The rendered document and its version."""
    items = list(subject_items(actor, subject))
    return {
        "title": subject.title,
        "document": render(items, subject),
        "version": document_version(actor, subject, items),
        "count": len(items),
    }


# ---- parsing ------------------------------------------------------------------------------------


@dataclass
class Bullet:
    line: int  # 1-based line number of the bullet's first line
    memory_type: str
    text: str
    item_id: int | None = None
    extra: list[str] = field(default_factory=list)

    @property
    def content(self) -> str:
        return "\n".join([self.text, *self.extra]).strip()


def _heading_type(text: str) -> str | None:
    key = re.sub(r"\s+", " ", text.strip()).lower()
    return _HEADING_KEYS.get(key)


def parse(document: str) -> list[Bullet]:
    """Bullets with their heading's type and their item id (None for new ones); MarkdownError on nonsense."""
    bullets: list[Bullet] = []
    current_type: str | None = None
    current: Bullet | None = None
    errors = []
    for number, raw in enumerate(document.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip():
            current = None
            continue
        if line.startswith("# ") and not line.startswith("## "):
            current = None
            continue
        if line.startswith("## "):
            current = None
            current_type = _heading_type(line[3:])
            if current_type is None:
                errors.append(
                    {
                        "line": number,
                        "code": "unknown_heading",
                        "message": gettext(
                            "Line %(line)d: unknown heading %(heading)s; use one of %(headings)s."
                        )
                        % {
                            "line": number,
                            "heading": repr(line[3:].strip()),
                            "headings": ", ".join(pair[1 if _chinese() else 0] for pair in HEADINGS.values()),
                        },
                    }
                )
            continue
        if _COMMENT.match(line):
            continue
        match = _BULLET.match(line)
        if match:
            if current_type is None:
                if not any(e["code"] == "unknown_heading" for e in errors):
                    errors.append(
                        {
                            "line": number,
                            "code": "no_heading",
                            "message": gettext(
                                "Line %(line)d: a bullet needs a type heading above it (## Facts, ...)."
                            )
                            % {"line": number},
                        }
                    )
                continue
            current = Bullet(line=number, memory_type=current_type, text=match.group(1))
            bullets.append(current)
            continue
        if current is not None and raw[:1] in (" ", "\t"):
            current.extra.append(line.strip())
            continue
        errors.append(
            {
                "line": number,
                "code": "not_a_bullet",
                "message": gettext("Line %(line)d: only bullets ('- ...') under a heading are memories.")
                % {"line": number},
            }
        )
    seen: dict[int, int] = {}
    for bullet in bullets:
        ids = [int(m) for m in _MARKER.findall(bullet.content)]
        if len(ids) > 1:
            errors.append(
                {
                    "line": bullet.line,
                    "code": "two_marks",
                    "message": gettext("Line %(line)d: one bullet carries two memory marks.")
                    % {"line": bullet.line},
                }
            )
            continue
        if ids:
            bullet.item_id = ids[0]
            bullet.text = _MARKER.sub(" ", bullet.text).strip()
            bullet.extra = [s for s in (_MARKER.sub(" ", e).strip() for e in bullet.extra) if s]
            if ids[0] in seen:
                errors.append(
                    {
                        "line": bullet.line,
                        "code": "duplicate_mark",
                        "message": gettext(
                            "Line %(line)d: memory #%(id)d appears twice (also line %(other)d)."
                        )
                        % {"line": bullet.line, "id": ids[0], "other": seen[ids[0]]},
                    }
                )
            seen[ids[0]] = bullet.line
    if errors:
        raise MarkdownError(422, errors[0]["code"], errors[0]["message"], {"errors": errors})
    return bullets


# ---- applying -----------------------------------------------------------------------------------


def _same_text(a: str, b: str) -> bool:
    return re.sub(r"\s+", " ", a).strip() == re.sub(r"\s+", " ", b).strip()


def _changes_since(actor: Actor, subject: Subject, mark: int, extra_ids: set[int]) -> list[dict]:
    ids = set(subject_items(actor, subject, status=None).values_list("id", flat=True))
    # Items the document names that are gone from it altogether (hard-deleted): their revisions say so.
    gone = extra_ids - ids - set(MemoryItem.objects.filter(pk__in=extra_ids).values_list("id", flat=True))
    revisions = MemoryRevision.objects.filter(org=subject.org, item_ref__in=ids | gone, id__gt=mark).order_by(
        "id"
    )
    return [
        {
            "memory": r.item_ref,
            "revision": r.number,
            "action": r.action,
            "actor": r.actor,
            "at": rfc3339(r.created_at),
            "content": (r.after or {}).get("content"),
        }
        for r in revisions[:200]
    ]


def _gate_errors(bullets: list[Bullet], current: dict[int, MemoryItem]) -> list[dict]:
    errors = []
    for bullet in bullets:
        old = current.get(bullet.item_id) if bullet.item_id else None
        if old is not None and _same_text(old.content, bullet.content):
            continue
        try:
            if old is None:
                gate.check(bullet.content, 1.0)
            else:
                gate.check_sensitive(bullet.content)
                gate.check_length(bullet.content)
        except gate.GateRejection as exc:
            errors.append(
                {
                    "line": bullet.line,
                    "code": exc.code,
                    "message": gettext("Line %(line)d: %(message)s")
                    % {"line": bullet.line, "message": exc.message},
                }
            )
    return errors


def _refuse(errors: list[dict]):
    first = errors[0]
    return MarkdownError(422, first["code"], first["message"], {"errors": errors})


@transaction.atomic
def document_apply(*, actor: Actor, subject: Subject, document: str, base_version: str) -> dict:
    """Apply an edited document based on base_version; MarkdownError (409/422/...) applies nothing."""
    base_hash, _, base_mark = (base_version or "").partition(".")
    if not base_hash or not base_mark.isdigit():
        raise MarkdownError(
            400, "invalid", "base_version must be the version the document was rendered with."
        )
    bullets = parse(document)
    with connection.cursor() as cursor:  # one document apply per subject at a time
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [subject.lock_key()])
    items = list(subject_items(actor, subject))
    # The subjects' duplicate-check locks before any row lock, in the order adds take them: an add
    # merging into one of these rows holds its subject's lock first, so the two cannot deadlock.
    lock_subjects(subject.org.pk, items)
    current = {item.pk: item for item in items}
    if _state_hash(items) != base_hash:
        marked = {b.item_id for b in bullets if b.item_id}
        raise MarkdownError(
            409,
            "conflict",
            gettext(
                "The memories changed since this document was rendered; reload it and apply your edit again."
            ),
            {
                "current_version": document_version(actor, subject, items),
                "changed": _changes_since(actor, subject, int(base_mark), marked),
            },
        )
    foreign = [b for b in bullets if b.item_id and b.item_id not in current]
    if foreign:
        raise _refuse(
            [
                {
                    "line": b.line,
                    "code": "unknown_memory",
                    "message": gettext(
                        "Line %(line)d: memory #%(id)d is not an active memory of this document."
                    )
                    % {"line": b.line, "id": b.item_id},
                }
                for b in foreign
            ]
        )
    errors = _gate_errors(bullets, current)
    if errors:
        raise _refuse(errors)

    report: dict[str, list[int]] = {"added": [], "merged": [], "updated": [], "archived": []}
    reason = "edited in Markdown"
    kept = {b.item_id for b in bullets if b.item_id}
    for item in items:
        if item.pk not in kept:
            memory_archive(actor=actor, item=item, reason="removed from the Markdown document")
            report["archived"].append(item.pk)
    for bullet in bullets:
        if not bullet.item_id:
            continue
        item = current[bullet.item_id]
        fields = {}
        if not _same_text(item.content, bullet.content):
            fields["content"] = bullet.content
        if item.memory_type != bullet.memory_type:
            fields["memory_type"] = bullet.memory_type
        if fields:
            try:
                memory_update(actor=actor, item=item, expected_version=item.version, reason=reason, **fields)
            except gate.GateRejection as exc:
                raise _refuse(
                    [
                        {
                            "line": bullet.line,
                            "code": exc.code,
                            "message": gettext("Line %(line)d: %(message)s")
                            % {"line": bullet.line, "message": exc.message},
                        }
                    ]
                )
            except StaleVersion:
                raise MarkdownError(
                    409,
                    "conflict",
                    gettext("Memory #%(id)d changed while the document was applied.") % {"id": item.pk},
                )
            report["updated"].append(item.pk)
    for bullet in bullets:
        if bullet.item_id:
            continue
        try:
            draft = MemoryDraft(
                content=bullet.content,
                memory_type=bullet.memory_type,
                scope=Scope.PROJECT if subject.project else Scope.USER,
                user_id="" if subject.project else subject.user_id,
                project=subject.project,
                skill=subject.skill,
                source=default_source(actor),
            )
            result = memory_create(actor=actor, org=subject.org, draft=draft, reason=reason, dedup="hash")
        except gate.GateRejection as exc:
            raise _refuse(
                [
                    {
                        "line": bullet.line,
                        "code": exc.code,
                        "message": gettext("Line %(line)d: %(message)s")
                        % {"line": bullet.line, "message": exc.message},
                    }
                ]
            )
        except MemoryPaused as exc:  # memory paused for the subject: a new bullet cannot be stored
            raise _refuse(
                [{"line": bullet.line, "code": "paused", "message": f"Line {bullet.line}: {exc.message}"}]
            )
        report["added" if result.created else "merged"].append(result.item.pk)
    return {**document_get(actor=actor, subject=subject), "applied": report}
