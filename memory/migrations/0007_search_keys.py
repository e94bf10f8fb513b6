"""The keyword side's own index for big subjects and projects (memory.search.sql, keyed matching).

memory_search_keys() prefixes every search token of a row with whose row it is: "|<key>|", the key
being the first 10 hex digits of md5("<org>|u|<user_id>") for user and session memories and of
md5("<org>|p|<project_id>") for project memories. A GIN index over it finds the rows of one subject or
project that hold a word without reading anyone else's: the plain GIN index on search_tokens lists a
common word's rows in the whole table, which the search then intersects with the subject's (at a million
rows 50-100 ms against 5-15 ms; docs/scaling.md). A row with more than 2,000 tokens keeps them unprefixed
(its keyed form could pass tsvector's size limit; a stored token never starts with "|"), and the search
looks for the plain word too, so such rows are found as before."""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION memory_search_keys(org bigint, scope text, user_id text, project bigint, tokens tsvector)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 1000
AS $$
    SELECT CASE WHEN length(tokens) > 2000 THEN tokens ELSE array_to_tsvector(ARRAY(
        SELECT '|' || left(md5(org::text || CASE WHEN scope = 'project' THEN '|p|' || coalesce(project::text, '')
                                                  ELSE '|u|' || user_id END), 10) || '|' || word
        FROM unnest(tsvector_to_array(tokens)) AS word
    )) END
$$;
"""

INDEX = """
CREATE INDEX IF NOT EXISTS mem_search_keys ON memory_memoryitem USING gin (
    memory_search_keys(org_id, scope::text, user_id::text, project_id, search_tokens)
);
ANALYZE memory_memoryitem;
"""

# Under row-level security a condition drives an index only when its functions are leakproof (see
# workspace 0001): this one has no side effects and cannot raise on stored values (no element is null or
# empty, and a long token list is returned as stored). Only a superuser may mark it.
LEAKPROOF = (
    "DO $$ BEGIN IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN"
    " ALTER FUNCTION memory_search_keys(bigint, text, text, bigint, tsvector) LEAKPROOF; END IF; END $$;"
)


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_composite_org_keys")]

    operations = [
        migrations.RunSQL(
            FUNCTION + LEAKPROOF + INDEX,
            "DROP INDEX IF EXISTS mem_search_keys;"
            " DROP FUNCTION IF EXISTS memory_search_keys(bigint, text, text, bigint, tsvector);",
        ),
    ]
