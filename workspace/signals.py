"""What workspace tells the layers above it; they connect in their AppConfig.ready()."""

from django.dispatch import Signal

# Sent inside subject_forget's transaction once the subject's rows are gone. kwargs: org_id, user_id,
# complete (everything about the subject was erased, not a project-restricted key's reach), deleted
# (counts per model).
subject_forgotten = Signal()
