"""Recompute the keyword tokens (search_tokens) of stored memories with today's tokeniser.

Rows written by an older core.text.keyword_tokens keep its tokens until their content changes: accented
Latin words stored as fragments, kana not at all, scripts with neither Latin nor CJK letters empty. This
rewrites the rows whose tokens differ, in chunks, each chunk one transaction, so it can be stopped and run
again at any time (a second run changes nothing)."""

from __future__ import annotations

import json

from django.contrib.postgres.fields import ArrayField
from django.db import connection, transaction
from django.db.models import TextField
from django.db.models.expressions import RawSQL

from core.text import keyword_tokens
from memory.models import MemoryItem
from projects.commands import RowRewriteCommand

UPDATE = """
    UPDATE memory_memoryitem AS m
       SET search_tokens = array_to_tsvector(ARRAY(SELECT jsonb_array_elements_text(v.tokens)))
      FROM jsonb_to_recordset(%s::jsonb) AS v(id bigint, tokens jsonb)
     WHERE m.id = v.id
"""

STORED = RawSQL("tsvector_to_array(search_tokens)", [], output_field=ArrayField(TextField()))


class Command(RowRewriteCommand):
    help = "Recompute the keyword search tokens of stored memories (after a tokeniser change); idempotent."

    def rewrite(self, *, org, chunk: int, dry_run: bool) -> None:
        rows = MemoryItem.objects.order_by("pk")
        if org is not None:
            rows = rows.filter(org=org)
        total = rows.count()
        seen = changed = 0
        last = 0
        while True:
            batch = list(
                rows.filter(pk__gt=last)
                .annotate(stored=STORED)
                .values_list("pk", "content", "stored")[:chunk]
            )
            if not batch:
                break
            last = batch[-1][0]
            updates = []
            for pk, content, stored in batch:
                tokens = keyword_tokens(content)
                if set(tokens) != set(stored or ()):
                    updates.append({"id": pk, "tokens": sorted(set(tokens))})
            seen += len(batch)
            changed += len(updates)
            if updates and not dry_run:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(UPDATE, [json.dumps(updates)])
            self.stdout.write(f"{seen}/{total} rows read, {changed} {'to change' if dry_run else 'changed'}")
        verb = "would change" if dry_run else "changed"
        self.stdout.write(f"done: {changed} of {total} memories {verb}")
