"""What memory tells the layers above it. They connect in their AppConfig.ready(); memory imports none of them."""

from django.dispatch import Signal

# Sent inside the writing transaction whenever memories were added, changed or removed.
# kwargs: org_id; items, the MemoryItems touched (possibly empty); user_id, set when every memory of
# that subject was removed at once. Receivers that do work later use transaction.on_commit.
memories_changed = Signal()
