"""HTML forms for projects, members and API keys (parsing only; services decide)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import ProjectRole

ROLE_CHOICES = [
    (ProjectRole.OWNER.value, _("Owner")),
    (ProjectRole.ADMIN.value, _("Admin")),
    (ProjectRole.EDITOR.value, _("Editor")),
    (ProjectRole.VIEWER.value, _("Viewer")),
]


class ProjectForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    slug = forms.SlugField(label=_("Short name (slug)"), max_length=64, required=False)
    description = forms.CharField(
        label=_("Description"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )


class MemberAddForm(forms.Form):
    username = forms.CharField(label=_("Account"), max_length=150)
    role = forms.ChoiceField(label=_("Role"), choices=ROLE_CHOICES, initial=ProjectRole.VIEWER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Role"), choices=ROLE_CHOICES)


class ApiKeyForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    read_only = forms.BooleanField(label=_("Read-only"), required=False)
    projects = forms.MultipleChoiceField(
        label=_("Only these projects"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("none ticked = every project of the organization"),
    )

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.project_map = {str(p.pk): p for p in projects}
        self.fields["projects"].choices = [(str(p.pk), p.name) for p in projects]

    def clean_projects(self):
        return [self.project_map[pk] for pk in self.cleaned_data["projects"]]
