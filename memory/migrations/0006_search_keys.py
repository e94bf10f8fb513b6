"""The keyword side's own index for big subjects and projects (memory.search.sql, "keyed" matching).

memory_search_keys() prefixes every search token of a row with whose row it is: "<org>|u|<user_id>|"
for user and session memories, "<org>|p|<project_id>|" for project memories. A GIN index over it finds
the rows of one subject or project that hold a word without reading anyone else's: the plain GIN index
on search_tokens lists a common word's rows in the whole table, which the search then intersects with
the subject's rows (at a million rows, 50-100 ms against 5-15 ms; docs/scaling.md)."""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION memory_search_keys(org bigint, scope text, user_id text, project bigint, tokens tsvector)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT array_to_tsvector(ARRAY(
        SELECT org::text || CASE WHEN scope = 'project' THEN '|p|' || coalesce(project::text, '') ELSE '|u|' || user_id END
               || '|' || word
        FROM unnest(tsvector_to_array(tokens)) AS word
    ))
$$;
"""

INDEX = """
CREATE INDEX IF NOT EXISTS mem_search_keys ON memory_memoryitem USING gin (
    memory_search_keys(org_id, scope::text, user_id::text, project_id, search_tokens)
);
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0005_store_items")]

    operations = [
        migrations.RunSQL(
            FUNCTION + INDEX,
            "DROP INDEX IF EXISTS mem_search_keys;"
            " DROP FUNCTION IF EXISTS memory_search_keys(bigint, text, text, bigint, tsvector);",
        ),
    ]
