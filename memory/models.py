"""Long-term memory: items, their revisions, the extraction queue and injection logs."""

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import HnswIndex, VectorField

from projects.models import ApiKey, Organization, Project

EMBEDDING_DIM = settings.ENGRAM_EMBEDDING_DIM


class MemoryType(models.TextChoices):
    PREFERENCE = "preference"
    FACT = "fact"
    SKILL = "skill"
    HABIT = "habit"
    EVENT = "event"
    CONTEXT = "context"
    CONSTRAINT = "constraint"
    DECISION = "decision"
    CORE = "core"
    SUMMARY = "summary"
    NOTE = "note"


class Scope(models.TextChoices):
    USER = "user"
    PROJECT = "project"
    SESSION = "session"


class Source(models.TextChoices):
    AUTO = "auto"
    AGENT = "agent"
    USER = "user"
    ADMIN = "admin"
    IMPORT = "import"
    KNOWLEDGE_BASE = "knowledge_base"
    PROJECT_RESOURCE = "project_resource"


class Visibility(models.TextChoices):
    PUBLIC = "public"
    MEMBERS = "members"
    OWNER_ONLY = "owner_only"


class Status(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"


class MemoryItem(models.Model):
    """One remembered statement about a user, a project or a session."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memories")
    content = models.TextField()
    memory_type = models.CharField(max_length=16, choices=MemoryType.choices, default=MemoryType.FACT)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.USER)
    user_id = models.CharField(max_length=255, blank=True, default="")
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="memories", db_constraint=False
    )
    session_id = models.CharField(max_length=255, blank=True, default="")
    agent_id = models.CharField(max_length=255, blank=True, default="")
    skill = models.CharField(max_length=100, blank=True, default="")
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.USER)
    source_id = models.CharField(max_length=255, blank=True, default="")
    source_message_id = models.CharField(max_length=255, blank=True, default="")
    confidence = models.FloatField(default=1.0)
    visibility = models.CharField(max_length=12, choices=Visibility.choices, default=Visibility.MEMBERS)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    superseded_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="supersedes",
        db_constraint=False,
    )
    pinned = models.BooleanField(default=False)
    tags = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    search_tokens = SearchVectorField(null=True, blank=True)
    content_hash = models.CharField(max_length=64, db_index=True)
    access_count = models.PositiveIntegerField(default=0)
    # How many adds found this memory already stored and merged into it (each one a merge revision).
    confirmations = models.PositiveIntegerField(default=0)
    # The subjects' feedback (MemoryFeedback) as one bounded number in [-1, 1] (memory.feedback.signal):
    # a small adjustment in search ranking.
    feedback = models.FloatField(default=0.0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    occurred_at = models.DateTimeField(null=True, blank=True)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)

    class Meta:
        indexes = [
            models.Index(fields=["org", "user_id", "status"], name="mem_org_user_status"),
            models.Index(fields=["org", "project"], name="mem_org_project"),
            models.Index(fields=["org", "session_id"], name="mem_org_session"),
            models.Index(fields=["org", "agent_id"], name="mem_org_agent"),
            models.Index(fields=["org", "content_hash"], name="mem_org_hash"),
            GinIndex(fields=["search_tokens"], name="mem_search_tokens"),
            HnswIndex(
                name="mem_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_memoryitem_id_org")]

    def __str__(self) -> str:
        return f"memory #{self.pk}"  # ids only: staff pages and logs never show a memory's content


class RevisionAction(models.TextChoices):
    ADD = "add"
    UPDATE = "update"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    ARCHIVE = "archive"
    RESTORE = "restore"
    DELETE = "delete"
    SPLIT = "split"


class MemoryRevision(models.Model):
    """One change to a memory item: who, why, and the fields before and after."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    # Kept after a hard delete (item set null) so the fact of the deletion survives.
    item = models.ForeignKey(
        MemoryItem,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="revisions",
        db_constraint=False,
    )
    item_ref = models.BigIntegerField(db_index=True)
    user_id = models.CharField(max_length=255, blank=True, default="", db_index=True)
    number = models.PositiveIntegerField()
    action = models.CharField(max_length=12, choices=RevisionAction.choices)
    actor = models.CharField(max_length=255, blank=True, default="")
    reason = models.TextField(blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # A merge: the add that was merged into the item, every field of it (memory.revisions.incoming_of),
    # so a false merge can be split back out (memory.services.memory_split) with nothing lost.
    incoming = models.JSONField(null=True, blank=True)
    # The id of the memory this merge was split back out into (null until it is).
    split_into = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_ref", "number"]
        indexes = [models.Index(fields=["org", "item_ref", "number"], name="rev_org_item_number")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_memoryrevision_id_org")]

    def __str__(self) -> str:
        return f"rev {self.number} of #{self.item_ref}: {self.action}"


class JobStatus(models.TextChoices):
    PENDING = "pending"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"


class ExtractionJob(models.Model):
    """The extraction queue (seed 003): one conversation turn to turn into memories."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="extraction_jobs")
    user_id = models.CharField(max_length=255, db_index=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    session_id = models.CharField(max_length=255, blank=True, default="")
    agent_id = models.CharField(max_length=255, blank=True, default="")
    messages = models.JSONField(default=list)
    status = models.CharField(
        max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    method = models.CharField(max_length=12, blank=True, default="")  # "llm" or "rules"
    result = models.JSONField(default=dict, blank=True)  # added/merged/superseded/rejected with reasons
    created_by_key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Stamped by the worker while it runs the job (memory.heartbeat); the sweep re-queues it when stale.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["org", "status", "created_at"], name="job_org_status")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_extractionjob_id_org")]

    def __str__(self) -> str:
        return f"job {self.pk} {self.status}"


class InjectionLog(models.Model):
    """Which memories a context or search call handed to an agent, and why."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=255, db_index=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    session_id = models.CharField(max_length=255, blank=True, default="")
    kind = models.CharField(max_length=12, default="context")  # context / search / tool
    query = models.TextField(blank=True, default="")
    caller = models.CharField(max_length=255, blank=True, default="")
    memory_ids = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [GinIndex(fields=["memory_ids"], name="inj_memory_ids")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_injectionlog_id_org")]

    def __str__(self) -> str:
        return f"injection {self.pk} for {self.user_id}"


class EmbeddingConfig(models.Model):
    """An org's (user_id blank) or a user's embedding provider; the API key is encrypted."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="embedding_configs")
    user_id = models.CharField(max_length=255, blank=True, default="")
    provider = models.CharField(max_length=20, default="local")  # local / openai
    model = models.CharField(max_length=200)
    base_url = models.CharField(max_length=500, blank=True, default="")
    dimensions = models.PositiveIntegerField(default=EMBEDDING_DIM)
    api_key_encrypted = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "user_id"], name="uniq_embedding_config"),
            models.UniqueConstraint(fields=["id", "org"], name="memory_embeddingconfig_id_org"),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


class LLMConfig(models.Model):
    """An org's OpenAI-compatible chat model for extraction and summaries; the key is encrypted."""

    org = models.OneToOneField(Organization, on_delete=models.CASCADE, related_name="llm_config")
    base_url = models.CharField(max_length=500)
    model = models.CharField(max_length=200)
    api_key_encrypted = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_llmconfig_id_org")]

    def __str__(self) -> str:
        return self.model


class ReembedJob(models.Model):
    """Re-embedding an org's memories after a model change; progress lives here."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="reembed_jobs")
    model = models.CharField(max_length=200)
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)  # as ExtractionJob's
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_reembedjob_id_org")]

    def __str__(self) -> str:
        return f"re-embed {self.model} {self.done}/{self.total}"


class MemoryPause(models.Model):
    """Memory paused for a subject (session_id blank) or for one of its conversations ("don't remember this").

    While a pause applies, every way of storing a memory about the subject (memory.pause.check) stores
    nothing and answers "paused"; search and context keep working. A setting, not data about the subject:
    forgetting the subject leaves it in place."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=255)
    session_id = models.CharField(max_length=255, blank=True, default="")
    actor = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "user_id", "session_id"], name="uniq_memory_pause"),
            models.UniqueConstraint(fields=["id", "org"], name="memory_memorypause_id_org"),
        ]

    def __str__(self) -> str:
        return f"pause {self.pk}"


class FeedbackValue(models.TextChoices):
    USEFUL = "useful"
    WRONG = "wrong"
    OUTDATED = "outdated"


class MemoryFeedback(models.Model):
    """What a person the memory is about said of it after an agent was given it: useful, wrong or outdated.

    Each subject's latest word on a memory counts once in MemoryItem.feedback (memory.feedback), a small,
    bounded signal in ranking."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(
        MemoryItem, on_delete=models.CASCADE, related_name="feedback_rows", db_constraint=False
    )
    subject = models.CharField(max_length=255, db_index=True)  # the user_id giving it
    injection = models.ForeignKey(
        InjectionLog,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="feedback_rows",
        db_constraint=False,
    )
    value = models.CharField(max_length=12, choices=FeedbackValue.choices)
    note = models.TextField(blank=True, default="")
    actor = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["org", "memory", "subject"], name="feedback_org_memory_subject")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="memory_memoryfeedback_id_org")]

    def __str__(self) -> str:
        return f"feedback {self.pk} on #{self.memory_id}: {self.value}"


class StoreItem(models.Model):
    """One item of the LangGraph store API (memory.store): a JSON value under a namespace and a key the
    caller chooses. Kept apart from memories: no gate on length, no dedup, no history; the content gate
    still reads its strings."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    namespace = ArrayField(models.CharField(max_length=255))
    path = models.TextField()  # the namespace joined with ".", for prefix matching
    key = models.CharField(max_length=1024)
    value = models.JSONField(default=dict)
    # What semantic search embeds: null the whole value, [] nothing (index: false), else field paths.
    index_fields = models.JSONField(null=True, blank=True)
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    ttl_minutes = models.FloatField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "path", "key"], name="uniq_store_item"),
            models.UniqueConstraint(fields=["id", "org"], name="memory_storeitem_id_org"),
        ]

    def __str__(self) -> str:
        return f"{self.path}/{self.key}"
