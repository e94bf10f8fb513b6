from django.apps import AppConfig


class Mem0CompatConfig(AppConfig):
    """Mem0's REST API over Engram's memories (mem0ai's MemoryClient works by changing only `host`)."""

    name = "mem0compat"
    default_auto_field = "django.db.models.BigAutoField"
