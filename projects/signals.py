"""The projects services announce their changes here for the audit log: audit sits above projects
(it stores ApiKey and Project references), so it listens rather than being called (audit.apps)."""

from django.dispatch import Signal

audited = (
    Signal()
)  # kwargs: actor (Actor or None for the system of org), action, org, target, project, details


def audit(actor, action: str, **kwargs) -> None:
    """One event for the audit log (an audit.models.Action value); recorded in the caller's transaction."""
    audited.send(sender=audit, actor=actor, action=action, **kwargs)
