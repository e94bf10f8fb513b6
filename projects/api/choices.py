"""Every invalid-choice error names the valid values.

DRF's ChoiceField says only '"x" is not a valid choice.', django-filter's (Django's) only that x is not
one of the available choices. Both are wrapped once, at start-up (projects.apps), so every serializer
and filter, today's and tomorrow's, answers '"x" is not a valid choice. Valid values: a, b, c.' in the
request's language. Hand-written checks use invalid_choice_message() for the same sentence.
"""

from __future__ import annotations

from collections.abc import Iterable

import django_filters.fields
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from rest_framework import fields
from rest_framework.exceptions import ValidationError


def invalid_choice_message(value, choices: Iterable) -> str:
    return _('"%(input)s" is not a valid choice. Valid values: %(choices)s.') % {
        "input": value,
        "choices": ", ".join(str(c) for c in choices),
    }


def _drf_choice_listing(original):
    def to_internal_value(self, data):
        try:
            return original(self, data)
        except ValidationError as exc:
            if exc.get_codes() != ["invalid_choice"]:
                raise
            message = invalid_choice_message(data, self.choice_strings_to_values)
            raise ValidationError(message, code="invalid_choice") from None

    to_internal_value.lists_choices = True
    return to_internal_value


def _form_choice_listing(original):
    def validate(self, value):
        try:
            return original(self, value)
        except DjangoValidationError as exc:
            if getattr(exc, "code", None) != "invalid_choice":
                raise
            valid = [str(key) for key, _label in _flat(self.choices) if key not in ("", None)]
            # Params, not formatting: the message is %-formatted again on its way to the API body.
            raise DjangoValidationError(
                "%(text)s", code="invalid_choice", params={"text": invalid_choice_message(value, valid)}
            ) from None

    validate.lists_choices = True
    return validate


def _flat(choices):
    for key, label in choices:
        if isinstance(label, list | tuple):  # an option group
            yield from label
        else:
            yield key, label


def list_valid_choices() -> None:
    """Install the wrappers (once; AppConfig.ready may run again in tests)."""
    if not getattr(fields.ChoiceField.to_internal_value, "lists_choices", False):
        fields.ChoiceField.to_internal_value = _drf_choice_listing(fields.ChoiceField.to_internal_value)
    form_field = django_filters.fields.ChoiceField
    if not getattr(form_field.validate, "lists_choices", False):
        form_field.validate = _form_choice_listing(form_field.validate)
