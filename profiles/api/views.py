"""GET/PATCH of user and project profiles; the access rules are the memories' (projects.access)."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from projects.access import readable_projects, require_edit_project_profile, require_project, require_subject
from projects.api.base import EngramAPIView
from projects.models import Project

from .. import services
from ..selectors import (
    profile_revisions,
    project_profile_dict,
    project_profile_for,
    user_profile_dict,
    user_profile_for,
)
from .serializers import (
    ProfileRevisionSerializer,
    ProjectProfileInputSerializer,
    ProjectProfileSerializer,
    UserProfileInputSerializer,
    UserProfileSerializer,
)


def _body(profile, fields: dict, revisions) -> dict:
    return {
        **fields,
        "edited_fields": list(profile.edited_fields) if profile else [],
        "sources": dict(profile.sources or {}) if profile else {},
        "aggregated_at": profile.aggregated_at if profile else None,
        "updated_at": profile.updated_at if profile else None,
        "history": ProfileRevisionSerializer(revisions, many=True).data,
    }


class UserProfileView(EngramAPIView):
    """A subject's profile: the subject themself or an org API key; anyone else gets 404."""

    def _render(self, user_id: str):
        profile = user_profile_for(actor=self.actor, user_id=user_id)
        body = _body(
            profile,
            user_profile_dict(profile),
            profile_revisions(actor=self.actor, user_id=user_id, limit=20),
        )
        return Response({"user_id": user_id, **body})

    @extend_schema(responses=UserProfileSerializer)
    def get(self, request, user_id: str):
        require_subject(self.actor, user_id)
        return self._render(user_id)

    @extend_schema(request=UserProfileInputSerializer, responses=UserProfileSerializer)
    def patch(self, request, user_id: str):
        require_subject(self.actor, user_id, write=True)
        data = UserProfileInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        clear = values.pop("clear_edited", [])
        services.user_profile_update(
            actor=self.actor, org=self.org, user_id=user_id, values=values, clear_edited=clear
        )
        return self._render(user_id)


class ProjectProfileView(EngramAPIView):
    """A project's profile: members read, Editors and up edit, outsiders get 404."""

    def _project(self, pk: int) -> Project:
        project = readable_projects(self.actor).filter(pk=pk).first()
        require_project(self.actor, project)  # 404 for an outsider
        return project

    def _render(self, project: Project):
        profile = project_profile_for(actor=self.actor, project=project)
        body = _body(
            profile,
            project_profile_dict(profile),
            profile_revisions(actor=self.actor, project=project, limit=20),
        )
        return Response({"project": project.id, **body})

    @extend_schema(responses=ProjectProfileSerializer)
    def get(self, request, pk: int):
        return self._render(self._project(pk))

    @extend_schema(request=ProjectProfileInputSerializer, responses=ProjectProfileSerializer)
    def patch(self, request, pk: int):
        project = self._project(pk)
        require_edit_project_profile(self.actor, project)
        data = ProjectProfileInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        clear = values.pop("clear_edited", [])
        services.project_profile_update(actor=self.actor, project=project, values=values, clear_edited=clear)
        return self._render(project)
