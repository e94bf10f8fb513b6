"""What memory tells the layers above it. They connect in their AppConfig.ready(); memory imports none of them."""

from django.dispatch import Signal

# Sent inside the writing transaction whenever memories were added, changed or removed.
# kwargs: org_id; items, the MemoryItems touched (possibly empty); user_id, set when every memory of
# that subject was removed at once. Receivers that do work later use transaction.on_commit.
memories_changed = Signal()

# Sent inside the writing transaction after revisions were saved (one, or a bulk insert), while the items
# still exist (a delete's too). kwargs: org_id; revisions, the saved MemoryRevisions.
revisions_written = Signal()

# Sent when an extraction job ended (its row already says so). kwargs: job (the ExtractionJob), status.
extraction_finished = Signal()
