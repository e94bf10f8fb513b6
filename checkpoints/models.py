"""Short-term and episodic memory: sessions, messages, rolling summaries, checkpoints."""

from django.db import models

from projects.models import Organization, Project


class Session(models.Model):
    """A conversation thread of one subject, with its rolling summary."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="sessions")
    session_id = models.CharField(max_length=255)
    user_id = models.CharField(max_length=255, db_index=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )
    agent_id = models.CharField(max_length=255, blank=True, default="")
    summary = models.TextField(blank=True, default="")
    summarized_count = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=12, default="active")  # active / expired
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org", "session_id"], name="uniq_org_session"),
            models.UniqueConstraint(fields=["id", "org"], name="checkpoints_session_id_org"),
        ]

    def __str__(self) -> str:
        return self.session_id


class Message(models.Model):
    """One message of a session (short-term memory)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="messages", db_constraint=False
    )
    user_id = models.CharField(max_length=255, db_index=True)
    role = models.CharField(max_length=12)  # human / ai / system / tool
    content = models.TextField()
    message_id = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["session", "id"], name="msg_session_id")]
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="checkpoints_message_id_org")]

    def __str__(self) -> str:
        return f"message #{self.pk}"  # ids only, never the content


class Checkpoint(models.Model):
    """A resumable snapshot of an agent's state in a session (episodic memory)."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="checkpoints", db_constraint=False
    )
    user_id = models.CharField(max_length=255, db_index=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="children", db_constraint=False
    )
    # The parent's id even after the parent was archived (the foreign key then becomes null).
    parent_ref = models.BigIntegerField(null=True, blank=True)
    messages = models.JSONField(default=list)
    agent_state = models.JSONField(default=dict)
    tool_states = models.JSONField(default=dict)
    pending_tool_calls = models.JSONField(default=list)
    metadata = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["id", "org"], name="checkpoints_checkpoint_id_org")]

    def __str__(self) -> str:
        return f"checkpoint {self.pk} of {self.session_id}"


class CheckpointArchive(models.Model):
    """An old checkpoint, compressed; it can still be read or restored."""

    org = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    original_id = models.BigIntegerField(db_index=True)
    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, related_name="archived_checkpoints", db_constraint=False
    )
    user_id = models.CharField(max_length=255, db_index=True)
    parent_id_ref = models.BigIntegerField(null=True, blank=True)
    payload = models.BinaryField()  # zlib-compressed JSON of the checkpoint's fields
    created_at = models.DateTimeField()
    archived_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["id", "org"], name="checkpoints_checkpointarchive_id_org")
        ]

    def __str__(self) -> str:
        return f"archived checkpoint {self.original_id}"
