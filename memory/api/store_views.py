"""The LangGraph server's store API (memory.store), so that `langgraph_sdk.get_client(url=..., api_key=...)
.store` and the Python client's `EngramStore` work against Engram: items under namespaces with caller-chosen
keys, search by namespace prefix, filter and meaning, namespaces, TTL.

LangGraph's client sends the key as `X-Api-Key`; `Authorization: Bearer` works as everywhere else.
"""

from __future__ import annotations

from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.response import Response

from core.times import rfc3339
from memory import store
from memory.api.serializers import PausedSerializer
from memory.gate import GateRejection
from projects.api.base import EngramAPIView, StrictSerializer
from projects.api.errors import ApiError, unstorable_error
from projects.api.schema import errors
from projects.authentication import ApiKeyAuthentication, ApiKeyHeaderAuthentication

# ---- the shapes ---------------------------------------------------------------------------------


class _Labels(serializers.ListField):
    child = serializers.CharField(max_length=255, trim_whitespace=False)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "boolean", "enum": [False]},
            {"type": "array", "items": {"type": "string"}},
        ],
        "nullable": True,
        "description": "What semantic search embeds: null the whole value, false nothing, or field paths "
        '("title", "a.b", "items[*].text").',
    }
)
class IndexField(serializers.JSONField):
    pass


@extend_schema_field({"type": "object", "additionalProperties": True, "description": "A JSON object."})
class ObjectField(serializers.JSONField):
    pass


class StoreItemSerializer(serializers.Serializer):
    namespace = _Labels()
    key = serializers.CharField()
    value = ObjectField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class StoreSearchItemSerializer(StoreItemSerializer):
    score = serializers.FloatField(allow_null=True, help_text="Similarity to the query (null without one).")


class StoreSearchResultsSerializer(serializers.Serializer):
    items = StoreSearchItemSerializer(many=True)


class StoreNamespacesSerializer(serializers.Serializer):
    namespaces = serializers.ListField(child=_Labels())


class StoreInput(StrictSerializer):
    """Text PostgreSQL cannot store (a NUL, a lone surrogate), anywhere in the body, is a 400 naming where."""

    def validate(self, attrs):
        for name, value in attrs.items():
            error = unstorable_error(value, name)
            if error is not None:
                where, message = error
                raise serializers.ValidationError({where: [message]})
        return attrs


class StorePutInput(StoreInput):
    namespace = serializers.JSONField(help_text="A list of labels (no label holds a period).")
    key = serializers.JSONField(help_text="The item's key, chosen by the caller.")
    value = ObjectField()
    index = IndexField(required=False, allow_null=True, default=None)
    ttl = serializers.FloatField(
        required=False, allow_null=True, default=None, help_text="Minutes until the item expires."
    )


class StoreDeleteInput(StoreInput):
    namespace = serializers.JSONField(help_text="A list of labels.")
    key = serializers.JSONField()


class StoreSearchInput(StoreInput):
    namespace_prefix = serializers.JSONField(required=False, default=list, help_text="A list of labels.")
    filter = serializers.JSONField(
        required=False,
        allow_null=True,
        default=None,
        help_text='{"field": value} or {"field": {"$eq"|"$ne"|"$gt"|"$gte"|"$lt"|"$lte": value}}',
    )
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=store.MAX_LIMIT)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=1_000_000)
    query = serializers.CharField(
        required=False, allow_null=True, allow_blank=True, max_length=4000, default=None
    )
    refresh_ttl = serializers.BooleanField(required=False, allow_null=True, default=None)


class StoreNamespacesInput(StoreInput):
    prefix = serializers.JSONField(required=False, allow_null=True, default=None)
    suffix = serializers.JSONField(required=False, allow_null=True, default=None)
    max_depth = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=100
    )
    limit = serializers.IntegerField(required=False, default=100, min_value=1, max_value=store.MAX_LIMIT)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=1_000_000)


class StoreGetInput(StoreInput):
    namespace = serializers.CharField(
        max_length=store.MAX_LABELS * (store.MAX_LABEL + 1), trim_whitespace=False
    )
    key = serializers.CharField(max_length=store.MAX_KEY, trim_whitespace=False)
    refresh_ttl = serializers.BooleanField(required=False, allow_null=True, default=None)


def item_out(item, score=None, *, with_score: bool = False) -> dict:
    out = {
        "namespace": list(item.namespace),
        "key": item.key,
        "value": item.value,
        "created_at": rfc3339(item.created_at),
        "updated_at": rfc3339(item.updated_at),
    }
    if with_score:
        out["score"] = score
    return out


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class _Store(EngramAPIView):
    authentication_classes = [ApiKeyAuthentication, ApiKeyHeaderAuthentication, SessionAuthentication]

    def handle_exception(self, exc):
        if isinstance(exc, store.StoreError):
            exc = ApiError(400, "invalid", exc.message)
        elif isinstance(exc, GateRejection):
            exc = ApiError(422, exc.code, exc.message)
        return super().handle_exception(exc)


class StoreItemsView(_Store):
    @extend_schema(
        request=StorePutInput,
        responses={
            204: OpenApiResponse(description="Stored (created or replaced)."),
            200: OpenApiResponse(
                PausedSerializer,
                description="Memory is paused for a person a namespace label names: nothing was stored.",
            ),
            **errors(422),
        },
    )
    def put(self, request):
        """Store an item (create or replace the one with this namespace and key)."""
        data = _valid(StorePutInput, request.data)
        store.store_put(
            actor=self.actor,
            namespace=data["namespace"],
            key=data["key"],
            value=data["value"],
            index=data["index"],
            ttl=data["ttl"],
        )
        return Response(status=204)

    @extend_schema(
        parameters=[
            OpenApiParameter("namespace", str, required=True, description="The labels joined with periods."),
            OpenApiParameter("key", str, required=True),
            OpenApiParameter(
                "refresh_ttl", bool, required=False, description="Restart the TTL (default yes)."
            ),
        ],
        responses={200: StoreItemSerializer},
    )
    def get(self, request):
        """Get an item by namespace and key."""
        params = _valid(StoreGetInput, request.query_params)
        item = store.store_get(
            actor=self.actor,
            namespace=store.parse_namespace(params["namespace"]),
            key=params["key"],
            refresh_ttl=params["refresh_ttl"] is not False,
        )
        if item is None:
            raise Http404(_("No such item."))
        return Response(item_out(item))

    @extend_schema(
        request=StoreDeleteInput, responses={204: OpenApiResponse(description="Deleted (or was not there).")}
    )
    def delete(self, request):
        """Delete an item."""
        data = _valid(StoreDeleteInput, request.data)
        store.store_delete(actor=self.actor, namespace=data["namespace"], key=data["key"])
        return Response(status=204)


class StoreSearchView(_Store):
    @extend_schema(request=StoreSearchInput, responses={200: StoreSearchResultsSerializer})
    def post(self, request):
        """Search items by namespace prefix, filter and (with `query`) meaning."""
        data = _valid(StoreSearchInput, request.data)
        found = store.store_search(
            actor=self.actor,
            namespace_prefix=data["namespace_prefix"],
            filters=data["filter"],
            limit=data["limit"],
            offset=data["offset"],
            query=data["query"] or None,
            refresh_ttl=data["refresh_ttl"] is not False,
        )
        return Response({"items": [item_out(f.item, f.score, with_score=True) for f in found]})


class StoreNamespacesView(_Store):
    @extend_schema(request=StoreNamespacesInput, responses={200: StoreNamespacesSerializer})
    def post(self, request):
        """List the namespaces (by prefix, suffix, depth)."""
        data = _valid(StoreNamespacesInput, request.data)
        namespaces = store.store_namespaces(
            actor=self.actor,
            prefix=data["prefix"],
            suffix=data["suffix"],
            max_depth=data["max_depth"],
            limit=data["limit"],
            offset=data["offset"],
        )
        return Response({"namespaces": namespaces})
