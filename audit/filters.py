"""Filters of the audit log, shared by the API (query parameters) and the page (its form)."""

from __future__ import annotations

import datetime

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.translation import gettext_lazy as _

from .models import Action, ActorKind, AuditEvent
from .services import subject_hash


class MomentField(forms.CharField):
    """An ISO 8601 date-time, or a date (its midnight in the server's zone)."""

    def to_python(self, value):
        value = super().to_python(value)
        if not value:
            return None
        try:
            moment = parse_datetime(value)
            if moment is None and (day := parse_date(value)) is not None:
                moment = datetime.datetime.combine(day, datetime.time())
        except ValueError:
            moment = None
        if moment is None:
            raise ValidationError(_("Expected an ISO 8601 date or date-time."), code="invalid")
        return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


class MomentFilter(django_filters.Filter):
    field_class = MomentField


class AuditEventFilterSet(django_filters.FilterSet):
    """action, actor (username or key prefix), actor_kind, project (id or slug), subject, since, until."""

    action = django_filters.ChoiceFilter(
        choices=Action.choices, label=_("Action"), empty_label=_("all"), help_text="One action."
    )
    actor = django_filters.CharFilter(
        method="filter_actor", label=_("Actor"), max_length=200, help_text="A username or an API key prefix."
    )
    actor_kind = django_filters.ChoiceFilter(
        choices=ActorKind.choices, label=_("Actor kind"), empty_label=_("all")
    )
    project = django_filters.CharFilter(
        method="filter_project", label=_("Project"), max_length=64, help_text="A project id or slug."
    )
    subject = django_filters.CharFilter(
        method="filter_subject",
        label=_("Subject"),
        max_length=255,
        help_text="A subject's user_id; also finds the events of a subject since forgotten.",
    )
    since = MomentFilter(
        field_name="created_at",
        lookup_expr="gte",
        label=_("Since"),
        help_text="ISO 8601 date or date-time (inclusive).",
    )
    until = MomentFilter(
        field_name="created_at",
        lookup_expr="lt",
        label=_("Until"),
        help_text="ISO 8601 date or date-time (exclusive).",
    )

    class Meta:
        model = AuditEvent
        fields = ["action", "actor", "actor_kind", "project", "subject", "since", "until"]

    def filter_actor(self, qs, name, value):
        if not value:
            return qs
        return qs.filter(Q(actor_label=value) | Q(actor_account__username=value) | Q(actor_key__prefix=value))

    def filter_project(self, qs, name, value):
        if not value:
            return qs
        if value.isascii() and value.isdigit() and len(value) < 19:  # an id (bigint); anything else a slug
            return qs.filter(project_id=int(value))
        return qs.filter(project__slug=value)

    def filter_subject(self, qs, name, value):
        """The subject's id, or for a forgotten subject the hash of the id the admin was given."""
        if not value:
            return qs
        org_id = self.request.actor.org.pk
        return qs.filter(Q(subject_id=value) | Q(subject_hash=subject_hash(org_id, value)))
