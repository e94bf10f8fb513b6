from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit log"

    def ready(self):
        from projects.signals import audited

        from .services import record

        def on_audited(sender, actor, action, signal=None, **kwargs):
            record(actor, action, **kwargs)

        audited.connect(on_audited, dispatch_uid="engram-audit-record", weak=False)
