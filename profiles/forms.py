"""Profile forms: text fields as inputs, list fields one entry per line (key decisions: decision | reason | date)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .selectors import _LIST_FIELDS, PROJECT_FIELDS, USER_FIELDS

LABELS = {
    "username": _("Name"),
    "background": _("Background"),
    "profession": _("Profession"),
    "communication_style": _("Communication style"),
    "response_format": _("Preferred response format"),
    "language_preference": _("Preferred language"),
    "characteristics": _("Characteristics"),
    "content": _("Custom instructions"),
    "expertise_areas": _("Expertise"),
    "programming_languages": _("Programming languages"),
    "frequently_used_tools": _("Frequently used tools"),
    "project_goal": _("Project goal"),
    "tech_stack": _("Tech stack"),
    "constraints": _("Constraints"),
    "key_decisions": _("Key decisions"),
    "team_conventions": _("Team conventions"),
    "current_phase": _("Current phase"),
}
CHOICES = {
    "communication_style": [
        ("", "—"),
        ("concise", _("concise")),
        ("detailed", _("detailed")),
        ("technical", _("technical")),
    ],
    "response_format": [("", "—"), ("markdown", "Markdown"), ("plain", _("plain text")), ("code", _("code"))],
}
LONG_TEXT = {"background", "content", "project_goal"}
MAX_LENGTH = {"username": 200, "profession": 200, "language_preference": 20, "current_phase": 200}


def to_lines(name: str, value) -> str:
    if name == "key_decisions":
        return "\n".join(
            " | ".join(str(d.get(k, "")) for k in ("decision", "reason", "date")).rstrip(" |")
            if isinstance(d, dict)
            else str(d)
            for d in value or []
        )
    return "\n".join(str(v) for v in value or [])


def from_lines(name: str, text: str) -> list:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if name != "key_decisions":
        return list(dict.fromkeys(lines))
    out = []
    for line in lines:
        parts = [p.strip() for p in line.split("|")] + ["", ""]
        out.append({"decision": parts[0], "reason": parts[1], "date": parts[2]})
    return out


class ProfileForm(forms.Form):
    """Built for the user or the project field list; changed() gives only what the person changed."""

    def __init__(self, *args, names: list[str], values: dict, **kwargs):
        self.names, self.values = names, values
        initial = {n: to_lines(n, values[n]) if n in _LIST_FIELDS else values[n] for n in names}
        super().__init__(*args, initial=initial, **kwargs)
        for name in names:
            label = LABELS.get(name, name)
            if name in CHOICES:
                self.fields[name] = forms.ChoiceField(label=label, choices=CHOICES[name], required=False)
            elif name in _LIST_FIELDS:
                help_text = (
                    _("one per line: decision | reason | date")
                    if name == "key_decisions"
                    else _("one per line")
                )
                self.fields[name] = forms.CharField(
                    label=label, required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text=help_text
                )
            elif name in LONG_TEXT:
                self.fields[name] = forms.CharField(
                    label=label, required=False, widget=forms.Textarea(attrs={"rows": 3}), max_length=5000
                )
            else:
                self.fields[name] = forms.CharField(
                    label=label, required=False, max_length=MAX_LENGTH.get(name, 200)
                )

    def changed(self) -> dict:
        out = {}
        for name in self.names:
            value = self.cleaned_data.get(name, "")
            value = from_lines(name, value) if name in _LIST_FIELDS else value.strip()
            if value != self.values[name]:
                out[name] = value
        return out


def user_form(data=None, *, values):
    return ProfileForm(data, names=USER_FIELDS, values=values, prefix="u")


def project_form(data=None, *, values):
    return ProfileForm(data, names=PROJECT_FIELDS, values=values, prefix="p")
