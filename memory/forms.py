"""HTML forms for memories: they parse input; the services decide (gate, access, versions)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from projects.templatetags.engram import LABELS

from .extraction.rules import memory_type_of
from .models import MemoryType, Scope, Status, Visibility

TYPE_CHOICES = [(t.value, LABELS[t.value]) for t in MemoryType]


def visibility_choices(org=None, author: str | None = None) -> list[tuple[str, str]]:
    """The visibility choices named for who can see the memory: "owner_only" means its author (not the
    project's Owner); author is the author's name when that is not the person choosing."""
    everyone = (
        _("everyone in %(org)s") % {"org": org.name} if org is not None else _("everyone in the organization")
    )
    only_author = _("only its author (%(name)s)") % {"name": author} if author else _("only me (the author)")
    return [
        (Visibility.OWNER_ONLY.value, only_author),
        (Visibility.MEMBERS.value, _("project members")),
        (Visibility.PUBLIC.value, everyone),
    ]


VISIBILITY_CHOICES = visibility_choices()


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
    """Content, type, tags and skill for every memory; where (about me or a project) and, for a project
    memory only, who may see it. Left to "suggest", the type is read from the text by the extraction
    rules' typing (memory.extraction.rules.memory_type_of)."""

    content = forms.CharField(label=_("Content"), widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)
    memory_type = forms.ChoiceField(
        label=_("Type"), choices=[("", _("suggest from the text"))] + TYPE_CHOICES, required=False
    )
    project = forms.ChoiceField(label=_("Where"), required=False)
    visibility = forms.ChoiceField(
        label=_("Who can see it"), choices=VISIBILITY_CHOICES, initial=Visibility.MEMBERS, required=False
    )
    tags = forms.CharField(label=_("Tags"), required=False, help_text=_("comma separated"))
    skill = forms.CharField(label=_("Skill"), required=False, max_length=100)

    def __init__(self, *args, projects=(), org=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["visibility"].choices = visibility_choices(org)
        self.projects = {str(p.pk): p for p in projects}
        self.fields["project"].choices = [("", _("about me (user scope)"))] + [
            (str(p.pk), _("project %(name)s") % {"name": p.name}) for p in projects
        ]

    def clean_tags(self):
        return parse_tags(self.cleaned_data["tags"])

    def clean_project(self):
        value = self.cleaned_data["project"]
        return self.projects.get(value) if value else None

    def clean(self):
        data = super().clean()
        if not data.get("memory_type") and data.get("content"):
            data["memory_type"] = suggested_type(data["content"])
        if not data.get("project"):
            data["visibility"] = Visibility.MEMBERS  # about me: visibility does not apply
        elif not data.get("visibility"):
            data["visibility"] = Visibility.MEMBERS
        return data


def suggested_type(content: str) -> str:
    """The type the extraction rules would give this text."""
    return memory_type_of(content.strip())


class MemoryEditForm(forms.Form):
    content = forms.CharField(label=_("Content"), widget=forms.Textarea(attrs={"rows": 3}), max_length=20000)
    memory_type = forms.ChoiceField(label=_("Type"), choices=TYPE_CHOICES)
    tags = forms.CharField(label=_("Tags"), required=False)
    skill = forms.CharField(label=_("Skill"), required=False, max_length=100)
    visibility = forms.ChoiceField(label=_("Who can see it"), choices=VISIBILITY_CHOICES, required=False)
    confirm_hide = forms.BooleanField(label=_("Yes, hide it from me"), required=False)
    version = forms.IntegerField(widget=forms.HiddenInput, min_value=1)

    @classmethod
    def for_item(cls, item, data=None, actor=None):
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
        elif actor is not None:
            form.fields["visibility"].choices = item_visibility_choices(actor, item)
        return form

    def clean_tags(self):
        return parse_tags(self.cleaned_data["tags"])

    def changes(self) -> dict:
        data = dict(self.cleaned_data)
        data.pop("version")
        data.pop("confirm_hide", None)
        if not data.get("visibility"):
            data.pop("visibility", None)
        return data


def author_name(actor, item) -> str | None:
    """None when the actor wrote the item, else how to name its author."""
    if item.created_by_id is not None:
        mine = actor.account is not None and item.created_by_id == actor.account.pk
        return None if mine else item.created_by.username
    if item.created_by_key_id is not None:
        mine = actor.api_key is not None and item.created_by_key_id == actor.api_key.pk
        return None if mine else _("key %(prefix)s") % {"prefix": item.created_by_key.prefix}
    return "—"


def item_visibility_choices(actor, item) -> list[tuple[str, str]]:
    return visibility_choices(actor.org, author_name(actor, item))


class VisibilityForm(forms.Form):
    visibility = forms.ChoiceField(choices=VISIBILITY_CHOICES)
    confirm = forms.BooleanField(required=False)  # yes, hide it from me
