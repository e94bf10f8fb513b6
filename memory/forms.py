"""HTML forms for memories: they parse input; the services decide (gate, access, versions)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from projects.templatetags.engram import LABELS

from .models import MemoryType, Scope, Status, Visibility

TYPE_CHOICES = [(t.value, LABELS[t.value]) for t in MemoryType]
VISIBILITY_CHOICES = [
    (Visibility.PUBLIC.value, _("public — everyone in the organization")),
    (Visibility.MEMBERS.value, _("members — the project's members")),
    (Visibility.OWNER_ONLY.value, _("owner only — just me")),
]


def parse_tags(text: str) -> list[str]:
    """'a, b，c' → ['a', 'b', 'c'] (ASCII or Chinese commas), order kept, duplicates dropped."""
    parts = [p.strip() for p in text.replace("，", ",").split(",")]
    return list(dict.fromkeys(p for p in parts if p))


class MemoryFilterForm(forms.Form):
    q = forms.CharField(required=False, label=_("Search"))
    memory_type = forms.ChoiceField(
        required=False, label=_("Type"), choices=[("", _("any type"))] + TYPE_CHOICES
    )
    scope = forms.ChoiceField(
        required=False,
        label=_("Scope"),
        choices=[("", _("any scope"))] + [(s.value, LABELS[s.value]) for s in Scope],
    )
    status = forms.ChoiceField(
        required=False,
        label=_("Status"),
        choices=[
            ("", _("active")),
            ("archived", _("deleted (archived)")),
            ("superseded", _("superseded")),
            ("all", _("all")),
        ],
    )
    pinned = forms.ChoiceField(
        required=False,
        label=_("Pinned"),
        choices=[("", _("pinned or not")), ("yes", _("pinned")), ("no", _("not pinned"))],
    )
    tag = forms.CharField(required=False, label=_("Tag"), max_length=100)
    skill = forms.CharField(required=False, label=_("Skill"), max_length=100)

    def clean_tag(self) -> list[str]:
        return parse_tags(self.cleaned_data["tag"])  # "a, b": rows tagged a and b

    def statuses(self) -> list[str]:
        wanted = self.cleaned_data.get("status") or Status.ACTIVE
        return [s.value for s in Status] if wanted == "all" else [wanted]

    def filter_values(self) -> dict:
        """The page's choices as memory.filters.MemoryFilterSet values (a field with a bad value: no filter)."""
        data = self.cleaned_data
        return {
            "status": self.statuses(),
            "memory_type": [data["memory_type"]] if data.get("memory_type") else None,
            "scope": [data["scope"]] if data.get("scope") else None,
            "pinned": {"yes": True, "no": False}.get(data.get("pinned", "")),
            "tags": data.get("tag") or None,
            "skill": data.get("skill") or None,
        }


class MemoryAddForm(forms.Form):
    content = forms.CharField(label=_("Content"), widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)
    memory_type = forms.ChoiceField(label=_("Type"), choices=TYPE_CHOICES, initial=MemoryType.FACT)
    project = forms.ChoiceField(label=_("Where"), required=False)
    visibility = forms.ChoiceField(
        label=_("Visibility"), choices=VISIBILITY_CHOICES, initial=Visibility.MEMBERS
    )
    tags = forms.CharField(label=_("Tags"), required=False, help_text=_("comma separated"))
    skill = forms.CharField(label=_("Skill"), required=False, max_length=100)

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.projects = {str(p.pk): p for p in projects}
        self.fields["project"].choices = [("", _("about me (user scope)"))] + [
            (str(p.pk), _("project %(name)s") % {"name": p.name}) for p in projects
        ]

    def clean_tags(self):
        return parse_tags(self.cleaned_data["tags"])

    def clean_project(self):
        value = self.cleaned_data["project"]
        return self.projects.get(value) if value else None


class MemoryEditForm(forms.Form):
    content = forms.CharField(label=_("Content"), widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)
    memory_type = forms.ChoiceField(label=_("Type"), choices=TYPE_CHOICES)
    tags = forms.CharField(label=_("Tags"), required=False)
    skill = forms.CharField(label=_("Skill"), required=False, max_length=100)
    visibility = forms.ChoiceField(label=_("Visibility"), choices=VISIBILITY_CHOICES, required=False)
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    @classmethod
    def for_item(cls, item, data=None):
        initial = {
            "content": item.content,
            "memory_type": item.memory_type,
            "tags": ", ".join(item.tags or []),
            "skill": item.skill,
            "visibility": item.visibility,
            "version": item.version,
        }
        form = cls(data=data, initial=initial)
        if item.scope != Scope.PROJECT:
            del form.fields["visibility"]
        return form

    def clean_tags(self):
        return parse_tags(self.cleaned_data["tags"])

    def changes(self) -> dict:
        data = dict(self.cleaned_data)
        data.pop("version")
        if not data.get("visibility"):
            data.pop("visibility", None)
        return data


class VisibilityForm(forms.Form):
    visibility = forms.ChoiceField(choices=VISIBILITY_CHOICES)
