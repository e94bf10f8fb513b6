"""Response shapes of the memory API that views build as dicts (search, tools, MCP, Markdown, chat model
configuration): for the OpenAPI schema only, so a generated client gets real types. The views stay the
source of the bodies; tests/test_openapi_contract.py checks that the two agree."""

from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from ..models import MemoryType, Scope, Source, Status
from .serializers import PausedSerializer, RevisionSerializer, WriteDecisionSerializer


class RevisionHistorySerializer(serializers.Serializer):
    """GET memories/{id}/history: every revision, oldest first (not paginated)."""

    results = RevisionSerializer(many=True)


# ---- search ------------------------------------------------------------------------------------------


class BriefMemorySerializer(serializers.Serializer):
    """A memory as the tools report it."""

    id = serializers.IntegerField()
    content = serializers.CharField()
    memory_type = serializers.ChoiceField(choices=MemoryType.choices)
    scope = serializers.ChoiceField(choices=Scope.choices)


class SearchMemorySerializer(BriefMemorySerializer):
    """A memory as search and context hand it to an agent."""

    user_id = serializers.CharField()
    project = serializers.IntegerField(allow_null=True, help_text="The project's id.")
    session_id = serializers.CharField()
    agent_id = serializers.CharField()
    skill = serializers.CharField()
    source = serializers.ChoiceField(choices=Source.choices)
    confidence = serializers.FloatField()
    status = serializers.ChoiceField(choices=Status.choices)
    pinned = serializers.BooleanField()
    tags = serializers.ListField(child=serializers.CharField())
    metadata = serializers.DictField(help_text="Free-form, as written.")
    occurred_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    version = serializers.IntegerField()


class HitExplainSerializer(serializers.Serializer):
    vector = serializers.FloatField()
    vector_similarity = serializers.FloatField(allow_null=True)
    keyword = serializers.FloatField()
    keyword_bm25 = serializers.FloatField()
    keyword_coverage = serializers.FloatField(help_text="Share of the query's terms (by rarity) it holds.")
    keyword_share = serializers.FloatField(help_text="Its BM25 over the best candidate's.")
    vector_lift = serializers.FloatField(
        help_text="Its cosine above the median of its language pair's 20 best among the candidates."
    )
    language_pair = serializers.CharField(help_text="Query and memory language: zh-zh, zh-en, en-zh, en-en.")
    fused = serializers.FloatField(
        help_text="Vector and keyword sides fused 0.7 / 0.3 (the order within one search, before adjustments)."
    )
    background = serializers.FloatField(
        help_text="The fused match of a memory at this search's background level (what unrelated memories get)."
    )
    relevance = serializers.FloatField(help_text="Calibrated: the probability that it answers the query.")
    confidence = serializers.FloatField()
    scope_priority = serializers.FloatField()
    stale = serializers.BooleanField(help_text="An older version of a fact a better-placed hit states.")
    feedback = serializers.FloatField(
        help_text="The people's feedback on the memory in (-1, 1); the score adds it times SEARCH_FEEDBACK_WEIGHT."
    )
    tokens = serializers.IntegerField()
    near_duplicate_group = serializers.IntegerField(allow_null=True)
    neighbour_of = serializers.IntegerField(allow_null=True)


class SearchHitSerializer(SearchMemorySerializer):
    score = serializers.FloatField()
    explain = HitExplainSerializer(
        required=False, help_text="With explain: true only: the parts of the score."
    )


class SearchExplainSerializer(serializers.Serializer):
    embedding_model = serializers.CharField(allow_null=True)
    embed_ms = serializers.FloatField()
    search_ms = serializers.FloatField()
    candidates = serializers.IntegerField()
    notes = serializers.ListField(child=serializers.CharField())


class SearchResultsSerializer(serializers.Serializer):
    """POST memories/search: the best memories first."""

    results = SearchHitSerializer(many=True)
    took_ms = serializers.FloatField()
    explain = SearchExplainSerializer(required=False, help_text="With explain: true only.")
    notes = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="What degraded the search, if anything."
    )


# ---- tools and MCP -----------------------------------------------------------------------------------


class FunctionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="The arguments as a JSON Schema object.")


class ToolSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = FunctionSerializer()


class ToolListSerializer(serializers.Serializer):
    """GET tools: OpenAI function-calling schemas (pass them as `tools` to a chat completion)."""

    tools = ToolSerializer(many=True)


class AddResultSerializer(BriefMemorySerializer):
    status = serializers.ChoiceField(choices=["created", "merged", "superseded"])
    duplicate_of = serializers.IntegerField(allow_null=True)
    supersedes = serializers.IntegerField(allow_null=True, help_text="superseded: the memory it replaced.")
    decision = WriteDecisionSerializer(allow_null=True, help_text="Duplicate, update or distinct, and why.")


class FoundMemorySerializer(BriefMemorySerializer):
    score = serializers.FloatField()


class FoundMemoriesSerializer(serializers.Serializer):
    memories = FoundMemorySerializer(many=True)


class MemoryAddInvocationSerializer(serializers.Serializer):
    tool = serializers.ChoiceField(choices=["memory_add"])
    result = PolymorphicProxySerializer(
        component_name="MemoryAddOutcome",
        serializers=[AddResultSerializer, PausedSerializer],
        resource_type_field_name=None,
        help_text='What was stored; or `"status": "paused"` (memory paused for the user or session: nothing stored).',
    )
    output = serializers.CharField(help_text="The result as text for the model.")


class MemorySearchInvocationSerializer(serializers.Serializer):
    tool = serializers.ChoiceField(choices=["memory_search"])
    result = FoundMemoriesSerializer()
    output = serializers.CharField(help_text="The result as text for the model.")


# ---- Markdown ----------------------------------------------------------------------------------------


class MarkdownDocumentSerializer(serializers.Serializer):
    """A subject's memories as one Markdown document."""

    title = serializers.CharField()
    document = serializers.CharField(help_text="The Markdown text (text/markdown).")
    version = serializers.CharField(help_text="Send it back as base_version when you PUT an edited copy.")
    count = serializers.IntegerField(help_text="Memories in the document.")


class MarkdownAppliedSerializer(serializers.Serializer):
    added = serializers.ListField(child=serializers.IntegerField())
    merged = serializers.ListField(child=serializers.IntegerField())
    updated = serializers.ListField(child=serializers.IntegerField())
    archived = serializers.ListField(child=serializers.IntegerField())


class MarkdownAppliedDocumentSerializer(MarkdownDocumentSerializer):
    """PUT memories/markdown: the document as it is now, and the memory ids each kind of change touched."""

    applied = MarkdownAppliedSerializer()


# ---- chat model configuration --------------------------------------------------------------------------


class LLMConfigStoredSerializer(serializers.Serializer):
    base_url = serializers.URLField()
    model = serializers.CharField()
    has_api_key = serializers.BooleanField()
    updated_at = serializers.DateTimeField()


class LLMEffectiveSerializer(serializers.Serializer):
    model = serializers.CharField()
    source = serializers.ChoiceField(choices=["org", "server"])


class LLMConfigOutputSerializer(serializers.Serializer):
    """GET/PUT llm-config: the org's stored model (null: none) and the model in effect (null: none)."""

    config = LLMConfigStoredSerializer(allow_null=True)
    effective = LLMEffectiveSerializer(allow_null=True)
