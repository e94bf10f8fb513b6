from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.response import Response

from projects import services
from projects.access import (
    readable_api_keys,
    readable_memberships,
    readable_projects,
    require_org_admin,
    require_project,
)
from projects.models import ApiKey, Project, ProjectMembership

from .base import EngramViewSet
from .errors import ApiError
from .serializers import (
    ApiKeyCreatedSerializer,
    ApiKeyCreateSerializer,
    ApiKeySerializer,
    MemberAddSerializer,
    MemberRoleSerializer,
    MemberSerializer,
    ProjectSerializer,
)


class ProjectViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    EngramViewSet,
):
    """Projects the caller can see; Owners/Admins change them."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.none()  # for the schema; get_queryset() is the real one
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Project.objects.none()
        return readable_projects(self.actor).order_by("-created_at", "-id")

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "actor": getattr(self, "actor", None)}

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = services.project_create(
            actor=self.actor,
            name=data["name"],
            slug=data.get("slug", ""),
            description=data.get("description", ""),
        )

    def perform_update(self, serializer):
        serializer.instance = services.project_update(
            actor=self.actor, project=serializer.instance, **serializer.validated_data
        )

    def perform_destroy(self, instance):
        services.project_delete(actor=self.actor, project=instance)


class ProjectMemberViewSet(EngramViewSet):
    """Members of one project: everyone who can see the project lists them; Owner/Admin manage."""

    serializer_class = MemberSerializer
    queryset = ProjectMembership.objects.none()  # for the schema

    def get_project(self):
        return get_object_or_404(readable_projects(self.actor), pk=self.kwargs["project_pk"])

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return ProjectMembership.objects.none()
        return readable_memberships(self.actor).filter(project=self.get_project()).select_related("account")

    def list(self, request, project_pk=None):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(MemberSerializer(page, many=True).data)

    @extend_schema(request=MemberAddSerializer, responses=MemberSerializer)
    def create(self, request, project_pk=None):
        project = self.get_project()
        require_project(self.actor, project, "manage_members")
        data = MemberAddSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        account = services.member_account(
            project.org, data.validated_data.get("account"), data.validated_data.get("username")
        )
        membership = services.project_member_add(
            actor=self.actor, project=project, account=account, role=data.validated_data["role"]
        )
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=MemberRoleSerializer, responses=MemberSerializer)
    def partial_update(self, request, project_pk=None, pk=None):
        membership = get_object_or_404(self.get_queryset(), pk=pk)
        require_project(self.actor, membership.project, "manage_members")
        data = MemberRoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.project_member_change_role(
            actor=self.actor, membership=membership, role=data.validated_data["role"]
        )
        return Response(MemberSerializer(membership).data)

    def destroy(self, request, project_pk=None, pk=None):
        membership = get_object_or_404(self.get_queryset(), pk=pk)
        services.project_member_remove(actor=self.actor, membership=membership)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ApiKeyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, EngramViewSet):
    """The org's API keys; only org owners/admins see and manage them. The secret is shown once."""

    serializer_class = ApiKeySerializer
    queryset = ApiKey.objects.none()  # for the schema; get_queryset() is the real one
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return ApiKey.objects.none()
        return readable_api_keys(self.actor).prefetch_related(Prefetch("projects")).order_by("-id")

    def get_object(self):
        key = super().get_object()  # 404 first: a key of another org does not exist for the caller
        require_org_admin(self.actor)
        return key

    def list(self, request, *args, **kwargs):
        require_org_admin(self.actor)
        return super().list(request, *args, **kwargs)

    @extend_schema(request=ApiKeyCreateSerializer, responses=ApiKeyCreatedSerializer)
    def create(self, request):
        require_org_admin(self.actor)
        data = ApiKeyCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = data.validated_data["projects"]
        projects = list(readable_projects(self.actor).filter(id__in=ids))
        if len(projects) != len(set(ids)):
            raise ApiError(400, "invalid", "Unknown project id in 'projects'.")
        key, secret = services.api_key_create(
            org=self.org,
            name=data.validated_data["name"],
            read_only=data.validated_data["read_only"],
            projects=projects,
            created_by=self.actor.account,
            actor=self.actor,
        )
        body = ApiKeySerializer(key).data
        body["secret"] = secret
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=ApiKeySerializer)
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        key = self.get_object()
        services.api_key_revoke(actor=self.actor, key=key)
        return Response(ApiKeySerializer(key).data)
