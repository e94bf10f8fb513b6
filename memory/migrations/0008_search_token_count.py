"""BM25's document length stored with each memory: search_token_count, the number of tokens in
search_tokens, a column PostgreSQL computes itself (GENERATED ALWAYS ... STORED) on every insert and every
update of search_tokens, whichever path writes them (create, content update, batch and subject import,
the compat surfaces, memory_retokenize, raw SQL), so it cannot drift from the tokens.

The subject search (memory.search.sql) read length(search_tokens) on every row of the subject for the
average length: 500 calls for a 500-memory subject, each unpacking the row's tokens. Adding the column
rewrites the table once (every row gets its count, every index is rebuilt, the HNSW one included) under
an exclusive lock: on a large table run it at a quiet time (README "Search and context", "Scale")."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_search_keys")]

    operations = [
        migrations.AddField(
            model_name="memoryitem",
            name="search_token_count",
            field=models.GeneratedField(
                db_persist=True,
                expression=models.Func(
                    models.F("search_tokens"), function="length", output_field=models.IntegerField()
                ),
                output_field=models.IntegerField(null=True),
            ),
        ),
    ]
