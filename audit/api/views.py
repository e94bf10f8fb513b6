"""GET /api/v1/audit-log: the org's audit events, newest first (org owners and admins)."""

from rest_framework import mixins

from audit.models import AuditEvent
from audit.selectors import audit_events
from projects.api.base import EngramViewSet

from ..filters import AuditEventFilterSet
from .serializers import AuditEventSerializer


class AuditEventViewSet(mixins.ListModelMixin, EngramViewSet):
    """Who changed, exported, forgot or reconfigured what in the org, when and from where."""

    serializer_class = AuditEventSerializer
    filterset_class = AuditEventFilterSet
    queryset = AuditEvent.objects.none()  # for the schema; get_queryset() is the real one

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return AuditEvent.objects.none()
        return audit_events(self.actor)
