from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from memory.signals import extraction_finished, revisions_written
        from workspace.signals import subject_forgotten

        from . import events

        # Webhooks follow memory, extraction and forget; those apps send signals and never import this one.
        revisions_written.connect(events.on_revisions, dispatch_uid="webhooks-revisions")
        extraction_finished.connect(events.on_extraction, dispatch_uid="webhooks-extraction")
        subject_forgotten.connect(events.on_forget, dispatch_uid="webhooks-forget")
