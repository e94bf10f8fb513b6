from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "profiles"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from memory.signals import memories_changed

        from .tasks import profiles_follow_memories

        # Profiles follow their memories (debounced rebuilds after commit).
        memories_changed.connect(profiles_follow_memories, dispatch_uid="profiles-follow-memories")
