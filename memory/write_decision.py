"""At write time, with infer: what a new memory is to the subject's nearest active ones.

One decision for the single add (services.memory_create), the batch (batch.memory_create_batch) and
extraction (extraction.reconcile): duplicate (merge into it), update (the new one supersedes it) or
distinct (add). Offline, memory.classify decides per candidate; with a chat model configured, the model
may choose among the related candidates (it cannot invent ids); an invalid answer or a failed call falls
back to the offline decision.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from django.utils.translation import gettext as _

from core.llm import LLMClient, LLMError

from .classify import Decision, classify, is_cross_lingual
from .thresholds import related_threshold

log = logging.getLogger(__name__)


# How many of the nearest candidates may have short texts embedded for their classification (each such
# classification embeds up to four short texts: about one embedding call).
EMBED_CANDIDATES = 2


@dataclass
class WriteDecision:
    decision: Decision
    target: object | None = None  # the MemoryItem merged into or superseded
    similarity: float | None = None

    @property
    def kind(self) -> str:
        return self.decision.kind


def offline(content: str, nearest: list, model: str) -> WriteDecision:
    """The nearest duplicate, else the nearest update, else distinct (nearest first)."""
    update = None
    for index, (item, similarity) in enumerate(nearest):
        # The readings that embed short texts (memory.classify) only for the nearest few candidates.
        decision = classify(item.content, content, similarity, model, embed=index < EMBED_CANDIDATES)
        if decision.kind == "duplicate":
            return WriteDecision(_with_target(decision, item), item, similarity)
        if decision.kind == "update" and update is None:
            update = WriteDecision(_with_target(decision, item), item, similarity)
    if update is not None:
        return update
    if nearest:
        item, similarity = nearest[0]
        reason = _("nearest memory #%(id)s is a different fact (similarity %(similarity).3f)") % {
            "id": item.pk,
            "similarity": similarity,
        }
        return WriteDecision(Decision("distinct", reason), None, None)
    return WriteDecision(Decision("distinct", _("no similar memory")), None, None)


def _with_target(decision: Decision, item) -> Decision:
    return Decision(decision.kind, f"#{item.pk}: {decision.reason}")


def related(content: str, nearest: list, model: str) -> list:
    """The candidates similar enough to be the same fact or the same slot (the model sees only these)."""
    return [
        (item, sim)
        for item, sim in nearest
        if sim >= related_threshold(model, cross_lingual=is_cross_lingual(item.content, content))
    ]


def decide(content: str, nearest: list, model: str, *, client=None) -> WriteDecision:
    """Offline decision, or the chat model's when one is given and there are related candidates.

    client: an LLMClient, or a callable returning one (or None), asked only when a candidate is related:
    most adds have none, and then no configuration is looked up."""
    fallback = offline(content, nearest, model)
    candidates = related(content, nearest, model)
    if not candidates:
        return fallback
    if callable(client) and not isinstance(client, LLMClient):
        client = client()
    if client is None:
        return fallback
    try:
        return decide_llm(client, content, candidates)
    except (LLMError, InvalidAnswer) as exc:
        log.info("the chat model could not decide a write (%s); the offline decision stands", exc)
        reason = _("%(reason)s (the chat model could not decide; offline decision)") % {
            "reason": fallback.decision.reason
        }
        return WriteDecision(Decision(fallback.kind, reason), fallback.target, fallback.similarity)


class InvalidAnswer(Exception):
    """The chat model's answer could not be used (after one repair request)."""


def prompt() -> str:
    return _(
        "You keep a user's long-term memory consistent. Given existing memories (with ids) and one new "
        "memory about the same person, decide what the new one is:\n"
        '- "duplicate": one existing memory already states the same fact (in any language, any wording);\n'
        '- "update": one existing memory holds the same attribute of the same person or thing (where they '
        "live, their employer, manager, a named project's deadline, the tool for one job, a preference "
        "about one thing) with an old value, and the new memory gives a new value;\n"
        '- "distinct": anything else, e.g. another person (a relative, a colleague), another sense of a '
        "word, a plan versus something done, two facts that can both be true, another year or another "
        "event. When unsure, answer distinct.\n"
        'For duplicate and update, "id" must be one of the given ids. Reply with JSON only: '
        '{"decision": "duplicate|update|distinct", "id": null, "reason": "..."}'
    )


def decide_llm(client: LLMClient, content: str, candidates: list) -> WriteDecision:
    """The model's choice among the candidates; an id it invents is refused (InvalidAnswer)."""
    from .extraction.llm import LLMInvalidOutput, _chat_json

    by_id = {item.pk: (item, sim) for item, sim in candidates}
    body = json.dumps(
        {"existing": [{"id": item.pk, "content": item.content} for item, _sim in candidates], "new": content},
        ensure_ascii=False,
    )

    def parse(text: str) -> WriteDecision:
        data = json.loads(text.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
        if not isinstance(data, dict):
            raise ValueError("expected an object")
        kind = str(data.get("decision", "")).lower()
        if kind not in ("duplicate", "update", "distinct"):
            raise ValueError(f"unknown decision {kind!r}")
        reason = _("chat model: %(reason)s") % {"reason": str(data.get("reason") or kind)[:300]}
        if kind == "distinct":
            return WriteDecision(Decision("distinct", reason), None, None)
        try:
            target = int(data.get("id"))
        except (TypeError, ValueError):
            raise ValueError(f"{kind} needs the id of an existing memory") from None
        if target not in by_id:
            raise ValueError(f"id {target} is not one of the given memories")
        item, sim = by_id[target]
        return WriteDecision(Decision(kind, f"#{item.pk}: {reason}"), item, sim)

    messages = [{"role": "system", "content": prompt()}, {"role": "user", "content": body}]
    try:
        return _chat_json(client, messages, parse)
    except LLMInvalidOutput as exc:
        raise InvalidAnswer(str(exc)) from exc
