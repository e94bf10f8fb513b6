"""The one set of memory filters: the API list and stats, the memory list page, search and context.

Access is not a filter: every surface starts from the rows projects.access lets the actor read, and
these filters only narrow them.
"""

from __future__ import annotations

import json

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.db.models import Q, QuerySet
from django.db.models.functions import Now
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from projects.access import project_by_ref
from projects.api.choices import invalid_choice_message
from projects.api.errors import unstorable_error

from .models import MemoryItem, MemoryType, Scope, Source, Status

# ---- form fields: how a query-string value is read (absent -> None) -----------------------------------


class TextField(forms.Field):
    """A string taken as given (not stripped); present but empty is "" and still filters."""

    def clean(self, value):
        if isinstance(value, str) and "\x00" in value:  # PostgreSQL refuses NUL in text and jsonb
            raise ValidationError(ProhibitNullCharactersValidator.message, code="null_characters_not_allowed")
        return super().clean(value)

    def to_python(self, value):
        return value


class CommaListField(TextField):
    """'a,b' -> ['a', 'b']; empty parts dropped; absent or empty -> None."""

    def to_python(self, value):
        if not value:
            return None
        return [part for part in value.split(",") if part]


class ChoiceListField(TextField):
    """'fact,event' -> ['fact', 'event']; every part must be one of the choices."""

    def __init__(self, *, choices, **kwargs):
        super().__init__(**kwargs)
        self.allowed = [value for value, _ in choices]

    def to_python(self, value):
        if not value:
            return None
        values = value.split(",")
        bad = [v for v in values if v not in self.allowed]
        if bad:
            # Params, not formatting: the message is %-formatted again on its way to the API body.
            message = invalid_choice_message(bad[0], self.allowed)
            raise ValidationError("%(text)s", code="invalid_choice", params={"text": message})
        return values


class YesNoField(TextField):
    def to_python(self, value):
        if not value:
            return None
        if value.lower() in ("1", "true", "yes"):
            return True
        if value.lower() in ("0", "false", "no"):
            return False
        raise ValidationError("expected true or false.", code="invalid")


_DATE_TIME = serializers.DateTimeField()  # the API's own parser: ISO 8601, naive times in the server's zone


class IsoDateTimeField(TextField):
    def to_python(self, value):
        if not value:
            return None
        try:
            return _DATE_TIME.to_internal_value(value)
        except serializers.ValidationError:
            raise ValidationError("expected an ISO 8601 date-time.", code="invalid") from None


class JsonObjectField(TextField):
    def to_python(self, value):
        if not value:
            return None
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            parsed = None
        if not isinstance(parsed, dict):
            raise ValidationError("expected a JSON object.", code="invalid")
        error = unstorable_error(parsed)
        if error is not None:
            where, message = error
            raise ValidationError(f"{where}: {message}", code="invalid")
        return parsed


# ---- filters: what a parsed (or typed) value keeps, as a Q ---------------------------------------------


class MemoryFilter(django_filters.Filter):
    """A filter that says which rows it keeps as a Q (None: all of them).

    MemoryFilterSet ANDs the Qs of all its filters into one filter() call, and search compiles the same
    Q into its SQL, so no surface has a filter of its own. `doc` describes the query parameter in the
    API schema."""

    field_class = TextField
    schema_type = "string"
    schema_format = ""

    def __init__(self, *args, doc: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        schema = {"type": self.schema_type, "description": doc}
        if self.schema_format:
            schema["format"] = self.schema_format
        extend_schema_field(schema)(self)

    def q(self, value) -> Q | None:
        return Q(**{f"{self.field_name}__{self.lookup_expr}": value})

    def filter(self, qs, value):
        q = None if value is None else self.q(value)
        return qs if q is None else qs.filter(q)


class ChoicesFilter(MemoryFilter):
    """Any of the listed values (comma list); an unknown value is an error."""

    field_class = ChoiceListField

    def __init__(self, field_name, choices, **kwargs):
        names = ", ".join(value for value, _ in choices)
        kwargs.setdefault("doc", f"Comma list, any of: {names}.")
        super().__init__(field_name, "in", choices=choices, **kwargs)

    def q(self, value):
        return super().q(value) if value else None


class YesNoFilter(MemoryFilter):
    field_class = YesNoField
    schema_type = "boolean"


class DateTimeFilter(MemoryFilter):
    field_class = IsoDateTimeField
    schema_format = "date-time"


class TagsFilter(MemoryFilter):
    """ALL of the given tags: a row must carry every one (jsonb @>)."""

    field_class = CommaListField

    def q(self, value):
        return Q(tags__contains=list(value)) if value else None


class MetadataFilter(MemoryFilter):
    """Metadata containment: every given key with the given value (jsonb @>)."""

    field_class = JsonObjectField

    def q(self, value):
        return Q(metadata__contains=value) if value else None


class SkillsFilter(MemoryFilter):
    """Rows of no skill, plus those of the listed skills (an empty list: no skill's rows)."""

    field_class = CommaListField

    def q(self, value):
        return Q(skill="") | Q(skill__in=list(value))


class ProjectFilter(MemoryFilter):
    """The project named by id or slug (MemoryFilterSet resolves it through projects.access)."""

    def q(self, value):
        return Q(project=value) if value else None


class IncludeExpiredFilter(YesNoFilter):
    """false: only rows without an expiry or expiring later (Now() is the statement's clock, so a
    compiled filter holds no time and memory.search may cache it)."""

    def q(self, value):
        return None if value else Q(expires_at__isnull=True) | Q(expires_at__gt=Now())


class IncludeSupersededFilter(YesNoFilter):
    """true: superseded rows join the listed statuses (MemoryFilterSet.values_q adds them)."""

    def q(self, value):
        return None


class MemoryFilterSet(django_filters.FilterSet):
    """Every memory filter, under the query-string names of GET /api/v1/memories.

    A filter that is absent keeps every row; several filters must all hold. Comma lists (memory_type,
    scope, status, source) keep rows with any of the values. `tags` keeps rows that carry ALL the given
    tags (an item tagged [a] does not match tags=a,b; one tagged [a, b, c] does) — on the API, the memory
    page, search and context alike. user_id, agent_id, session_id and skill are exact, and filter even
    when given empty (skill= keeps rows of no skill). Bad values are errors, never ignored: the API
    answers 400 "status: unknown value 'gone'.".

    Bound to query-string data (the API) it parses and validates; callers that already hold typed values
    (the memory page's form, search's MemoryFilters) use values_q / apply_values with the same filters.
    """

    user_id = MemoryFilter("user_id", doc="Exact (given empty: rows of no user).")
    agent_id = MemoryFilter("agent_id", doc="Exact (given empty: rows of no agent).")
    session_id = MemoryFilter("session_id", doc="Exact (given empty: rows of no session).")
    skill = MemoryFilter("skill", doc="Exact (given empty: rows of no skill).")
    scope = ChoicesFilter("scope", Scope.choices)
    memory_type = ChoicesFilter("memory_type", MemoryType.choices)
    status = ChoicesFilter(
        "status", Status.choices, doc="Comma list, any of: active, archived, superseded; all when absent."
    )
    source = ChoicesFilter("source", Source.choices)
    project = ProjectFilter("project", doc="A project's id or slug (404 when the caller cannot read it).")
    pinned = YesNoFilter("pinned", doc="true or false.")
    tags = TagsFilter("tags", doc="Comma list: rows carrying ALL of these tags.")
    created_after = DateTimeFilter("created_at", "gte", doc="ISO 8601; inclusive.")
    created_before = DateTimeFilter("created_at", "lt", doc="ISO 8601; exclusive.")
    occurred_after = DateTimeFilter("occurred_at", "gte", doc="ISO 8601; inclusive.")
    occurred_before = DateTimeFilter("occurred_at", "lt", doc="ISO 8601; exclusive.")
    metadata = MetadataFilter(
        "metadata", doc='A JSON object: rows whose metadata contains it, e.g. {"trip": "kdd"}.'
    )
    skills = SkillsFilter("skill", doc="Comma list: rows of no skill plus those of these skills.")
    include_superseded = IncludeSupersededFilter("status", doc="true: superseded rows join `status`.")
    include_expired = IncludeExpiredFilter("expires_at", doc="false: leave out rows past expires_at.")

    class Meta:
        model = MemoryItem
        fields: list[str] = []  # all declared above

    def __init__(self, data=None, queryset=None, *, request=None, prefix=None, actor=None):
        super().__init__(data, queryset, request=request, prefix=prefix)
        self.actor = actor if actor is not None else getattr(request, "actor", None)

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        values = dict(self.form.cleaned_data)
        values["project"] = project_by_ref(self.actor, values.get("project"))
        return queryset.filter(self.values_q(values))

    @classmethod
    def values_q(cls, values: dict) -> Q:
        """The rows that typed values keep ({filter name: value}; None or a missing name: no filter)."""
        unknown = set(values) - set(cls.base_filters)
        assert not unknown, f"not memory filters: {sorted(unknown)}"
        statuses = values.get("status")
        if values.get("include_superseded") and statuses and Status.SUPERSEDED not in statuses:
            values = {**values, "status": [*statuses, Status.SUPERSEDED]}
        q = Q()
        for name, filter_ in cls.base_filters.items():
            value = values.get(name)
            part = None if value is None else filter_.q(value)
            if part is not None:
                q &= part
        return q

    @classmethod
    def apply_values(cls, queryset: QuerySet, values: dict) -> QuerySet:
        return queryset.filter(cls.values_q(values))
