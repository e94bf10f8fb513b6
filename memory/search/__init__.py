"""Hybrid retrieval, entirely in PostgreSQL (seed 004 + seed 000).

The package: sql.py builds and runs the statement, ranking.py scores and orders the hits (no database),
service.py is memory_search, access_counts.py records recalls.

One SQL statement gathers the candidates of both sides under the same access and subject filters:
- vector: the nearest neighbours (cosine) of the query among vectors of the subject's current embedding
  model;
- keyword: rows sharing any query token in search_tokens (core.text.keyword_tokens: words of any
  script, bigrams of scripts written without spaces, Chinese characters), scored with BM25 (binary term frequency, since the tsvector holds no
  positions) computed in SQL over the filtered rows.
A subject's own memories (up to SEARCH_EXACT_SUBJECT_ROWS) are read in one pass that gives exact
distances, the keyword statistics and matches, and the conversation neighbours of the candidates, so
the search is one round trip. Bigger subjects and project searches go through the indexes: pgvector
HNSW, whose 0.8 iterative scan (relaxed order) keeps walking the graph until enough rows pass the
filters, and the GIN index or the filter's.

Both sides are normalised to [0, 1] (vector: cosine rescaled from the model's "unrelated" floor to 1;
keyword: BM25 divided by the best candidate's), combined as relevance = 0.7·vector + 0.3·keyword, then
final = 0.5·relevance + 0.3·confidence + 0.2·scope_priority (session 1.0, project 0.8, user 0.6).
Weights are the SEARCH_* settings.

Conversation context: turns stored verbatim from one conversation lean on each other, so each of the
best hits lends part of its relevance (SEARCH_NEIGHBOUR_WEIGHT) to the rows stored just before and after
it when they come from the same conversation (same subject, session and occurred_at).

Near-duplicates among the top candidates (cosine at the model's "related" threshold and shared words):
copies of one type and time collapse to the best; versions with different times keep the places they
earned, but inside those places the newest goes first and the older follow, so a move to Shanghai comes
before the old Beijing address, nothing is deleted and no unrelated memory is pushed out. Events are not
versions of one another (winning a fourth tournament does not make the first one out of date), so they
keep the places they earned. The list is
cut to top_k, then to the token budget.
"""

from .access_counts import access_recorder
from .ranking import Hit
from .service import MAX_QUERY_CHARS, SearchError, SearchResult, memory_search
from .sql import COLUMNS, filter_sql, vector_literal

__all__ = [
    "COLUMNS",
    "MAX_QUERY_CHARS",
    "Hit",
    "SearchError",
    "SearchResult",
    "access_recorder",
    "filter_sql",
    "memory_search",
    "vector_literal",
]
