"""The create form of the webhooks page (parsing only; webhooks.services decides)."""

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from .models import SUBSCRIBABLE, Event

ORG_WIDE = ""


class EndpointForm(forms.Form):
    url = forms.URLField(label=_("URL"), max_length=500, assume_scheme="https")
    description = forms.CharField(label=_("Description"), max_length=200, required=False)
    project = forms.ChoiceField(label=_("Events of"), required=False)
    events = forms.MultipleChoiceField(
        label=_("Events"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        choices=[(e, format_lazy("{} · {}", e, Event(e).label)) for e in SUBSCRIBABLE],
        help_text=_("none ticked = every event"),
    )
    include_content = forms.BooleanField(
        label=_("Include memory content (content, tags, metadata) in payloads"), required=False
    )

    def __init__(self, *args, projects=(), org_wide: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.project_map = {str(p.pk): p for p in projects}
        choices = [(ORG_WIDE, _("The whole organization"))] if org_wide else []
        self.fields["project"].choices = choices + [(str(p.pk), p.name) for p in projects]
        if not org_wide:
            self.fields["project"].required = True

    def clean_project(self):
        return self.project_map.get(self.cleaned_data["project"])
