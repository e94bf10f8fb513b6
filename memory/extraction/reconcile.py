"""Reconcile one candidate with the subject's nearest active memories: merge, supersede, update or add.

With a chat model, the model chooses ADD / UPDATE / SUPERSEDE / NOOP among the nearest items (it
cannot invent ids; an invalid answer falls back to the offline decision). Without one:
- a correction ("不对…", "actually, I…", "我现在…") supersedes the nearest item of the same type
  within CORRECTION_MARGIN below the duplicate threshold, else the nearest within SAME_SUBJECT_MARGIN;
- otherwise the same decision as a single add with infer (memory.write_decision.offline, i.e.
  memory.classify per candidate): duplicate → merge, update (same slot, new value) → supersede,
  distinct → add.
Nothing is lost: merges and supersedes write revisions, and a superseded item can be restored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext

from core.llm import LLMClient, LLMError
from memory import gate, services, write_decision
from memory.drafts import MemoryDraft
from memory.embeddings import EmbeddingError
from memory.models import Source
from memory.thresholds import duplicate_threshold
from projects.access import Actor

from .llm import LLMInvalidOutput, decide_llm
from .rules import Candidate

CORRECTION_MARGIN = 0.105
SAME_SUBJECT_MARGIN = 0.055
NEAREST_K = 5
JOB_SOURCE = "extraction-job:"  # the source_id of what extraction writes: this and the job's id


@dataclass
class Outcome:
    kind: str  # added | merged | superseded | rejected | deferred
    entry: dict = field(default_factory=dict)


@dataclass
class Target:
    """Where a candidate goes: the subject and provenance of the job, and who acts for it
    (projects.access.system_actor_for_job: it reconciles only with what the job's sender may read)."""

    org: object
    user_id: str
    project: object
    session_id: str
    agent_id: str
    job_id: int
    actor: Actor
    # More fields of every memory the job writes (metadata, occurred_at, expires_at), when its sender gave them.
    draft_fields: dict = field(default_factory=dict)

    def subjects(self) -> list[MemoryDraft]:
        """The subjects its candidates may go to: the user's, and the project's when there is one."""
        user = MemoryDraft(content="", user_id=self.user_id, agent_id=self.agent_id)
        if self.project is None:
            return [user]
        return [user, MemoryDraft(content="", scope="project", project=self.project, agent_id=self.agent_id)]


def _threshold_decision(candidate: Candidate, nearest: list, model: str) -> tuple[str, object, str]:
    if not nearest:
        return "ADD", None, "no similar memory"
    # "哦不对，…": the statement the user took back in this message is superseded, whatever its similarity
    for item, sim in nearest:
        if item.content in candidate.replaces:
            return "SUPERSEDE", item, f"the user took back #{item.pk} (similarity {sim:.3f})"
    # Floors below the model's duplicate threshold, measured with e5-small (0.955): a correction of the
    # same kind of memory from 0.85, of any kind from 0.90; unrelated memories score up to ~0.89.
    duplicate = duplicate_threshold(model)
    same_subject = duplicate - SAME_SUBJECT_MARGIN
    if candidate.correction:
        same_type = [
            (item, sim)
            for item, sim in nearest
            if sim >= duplicate - CORRECTION_MARGIN and item.memory_type == candidate.memory_type
        ]
        # Of another kind only when the write path's classifier does not find them distinct: statements in
        # the third person ("用户…", "The user…") score 0.90+ with e5-small even when unrelated.
        any_type = [
            (item, sim)
            for item, sim in nearest
            if sim >= same_subject
            and write_decision.offline(candidate.content, [(item, sim)], model).kind != "distinct"
        ]
        pick = (same_type or any_type or [None])[0]
        if pick is not None:
            item, sim = pick
            return "SUPERSEDE", item, f"correction of #{item.pk} (similarity {sim:.3f})"
    decided = write_decision.offline(candidate.content, nearest, model)
    if decided.kind == "duplicate":
        return "MERGE", decided.target, decided.decision.reason
    if decided.kind == "update":
        return "SUPERSEDE", decided.target, decided.decision.reason
    return "ADD", None, decided.decision.reason


def reconcile(*, target: Target, candidate: Candidate, client: LLMClient | None, provider) -> Outcome:
    """Apply one candidate; GateRejection becomes a 'rejected' outcome with its code."""
    scope = candidate.scope if candidate.scope == "project" and target.project is not None else "user"
    draft = MemoryDraft(
        content=candidate.content,
        memory_type=candidate.memory_type,
        scope=scope,
        user_id=target.user_id,
        project=target.project if scope == "project" else None,
        session_id=target.session_id,
        agent_id=target.agent_id,
        source=Source.AUTO,
        source_id=f"{JOB_SOURCE}{target.job_id}",
        source_message_id=candidate.source_message_id,
        confidence=candidate.confidence,
        **{
            **target.draft_fields,
            # What the user asked for ("记住…", "remember …", or a deferred candidate a person accepted) is
            # not counted by the per-session cap of automatic memories (gate.check_rate_limit).
            "metadata": {
                **(target.draft_fields.get("metadata") or {}),
                **({gate.EXPLICIT_KEY: True} if candidate.explicit else {}),
            },
        },
    )
    actor = target.actor
    try:
        gate.check(candidate.content, candidate.confidence)
    except gate.GateRejection as exc:
        return _rejected(candidate, exc)
    if candidate.unsure:
        # Not worded as a statement: kept on the job with its text for a person to accept (nothing is dropped).
        return _deferred(
            candidate, "unsure", gettext("Not worded as a clear statement: kept for you to check.")
        )
    vector, model = None, ""
    try:
        vector = provider.embed_passages([candidate.content])[0]
        model = provider.model_name
    except EmbeddingError:
        pass  # no vector: identical text still merges; the item is embedded later
    nearest = []
    if vector is not None:
        nearest = services.nearest_active(
            actor=actor, base=draft.subject(target.org), embedding=vector, model=model, limit=NEAREST_K
        )
    action, item, reason = _threshold_decision(candidate, nearest, model)
    content = None
    # The model is asked only about memories that could be the same subject; the rest cannot be a target.
    floor = min(
        duplicate_threshold(model) - CORRECTION_MARGIN, duplicate_threshold(model, cross_lingual=True)
    )
    related = [(row, sim) for row, sim in nearest if sim >= floor]
    if client is not None and related:
        try:
            decision = decide_llm(client, candidate, related)
        except (LLMError, LLMInvalidOutput) as exc:
            reason = f"{reason}; the model could not decide ({exc}), thresholds decided"
        else:
            by_id = {row.pk: row for row, _ in related}
            action, item, content = decision.action, by_id.get(decision.target_id), decision.content
            reason = f"model: {decision.action}" + (f" ({decision.reason})" if decision.reason else "")
    embed = {"embedding": vector, "embedding_model": model} if vector is not None else {}
    try:
        if action in ("MERGE", "NOOP"):
            # Already known: the candidate is recorded on the item it confirms (a split can undo it).
            similarity = next((sim for row, sim in nearest if row.pk == item.pk), None)
            merged = services.merge_into(
                existing=item, draft=draft, actor=actor, reason=reason, similarity=similarity
            )
            return Outcome(
                "merged",
                {"id": merged.pk, "content": candidate.content, "similarity": similarity, "reason": reason},
            )
        if action == "UPDATE":
            updated = services.memory_update(actor=actor, item=item, content=content, reason=reason)
            return Outcome("merged", {"id": updated.pk, "content": updated.content, "reason": reason})
        result = services.memory_create(
            actor=actor,
            org=target.org,
            draft=draft,
            dedup="hash",
            reason=reason,
            **embed,
        )
    except gate.GateRejection as exc:
        return _rejected(candidate, exc)
    if not result.created:
        return Outcome(
            "merged",
            {
                "id": result.item.pk,
                "content": candidate.content,
                "similarity": result.similarity,
                "reason": "identical content",
            },
        )
    if action == "SUPERSEDE" and item is not None:
        services.memory_supersede(actor=actor, old=item, new=result.item, reason=reason)
        return Outcome(
            "superseded",
            {
                "id": result.item.pk,
                "old_id": item.pk,
                "content": result.item.content,
                "old_content": item.content,
                "reason": reason,
            },
        )
    return Outcome(
        "added",
        {
            "id": result.item.pk,
            "content": result.item.content,
            "memory_type": result.item.memory_type,
            "reason": reason,
        },
    )


def _deferred(candidate: Candidate, code: str, reason: str) -> Outcome:
    """Held back on the job with its text (`result.deferred`), for a person to accept."""
    return Outcome(
        "deferred",
        {
            **candidate.as_dict(),
            "source_message_id": candidate.source_message_id,
            "code": code,
            "reason": reason,
            "accepted": None,
        },
    )


def _rejected(candidate: Candidate, exc: gate.GateRejection) -> Outcome:
    if exc.code == "rate_limited":
        # Over the session's cap: kept on the job with its text, for a person to accept (nothing is dropped).
        return _deferred(candidate, exc.code, exc.message)
    # A refused secret is not echoed back into the job's record.
    content = None if exc.code == "sensitive_content" else candidate.content
    return Outcome("rejected", {"content": content, "code": exc.code, "reason": exc.message})
