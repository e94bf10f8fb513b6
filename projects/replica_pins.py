"""Changes of who may read what send the org's reads to the primary for a while (core.replicas.pin_org).

The search statement reads memberships, projects and a key's projects itself; on a streaming replica
that has not yet replayed a removed membership it would still grant access. Every save or delete of
these rows (services, admin, commands alike) pins the org, so that no read of the org meets a replica
behind the change. Without replicas configured this does nothing.
"""

from django.db.models.signals import post_delete, post_save

from core.replicas import pin_org

ACCESS_MODELS = (
    "projects.Organization",
    "projects.OrgMembership",
    "projects.Project",
    "projects.ProjectMembership",
    "projects.ApiKey",
    "projects.ApiKeyProject",
)


def _pin(sender, instance, **kwargs) -> None:
    pin_org(instance.pk if sender._meta.label == "projects.Organization" else instance.org_id)


def connect() -> None:
    for label in ACCESS_MODELS:
        post_save.connect(_pin, sender=label, dispatch_uid=f"engram-replica-pin-save-{label}")
        post_delete.connect(_pin, sender=label, dispatch_uid=f"engram-replica-pin-delete-{label}")
