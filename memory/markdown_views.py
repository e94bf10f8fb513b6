"""The Markdown editor: the user's document and each skill's, with a live preview, saved through memory.markdown."""

from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from projects.web import org_page, render_page

from .markdown import MarkdownError, Subject, document_apply, document_get
from .selectors import own_skill_names

SKILL_RE = re.compile(r"^[\w.-]{1,100}$")


class MarkdownForm(forms.Form):
    document = forms.CharField(
        label=gettext_lazy("Document"), widget=forms.Textarea, max_length=200_000, strip=False
    )
    base_version = forms.CharField(widget=forms.HiddenInput, max_length=200)


def _inline(text: str) -> str:
    text = escape(text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"(?<![*\w])\*([^*]+)\*(?!\w)", r"<em>\1</em>", text)


def preview_html(document: str) -> str:
    """A small, safe Markdown preview (headings, bullets, paragraphs, inline code/bold/italics).

    Everything is escaped first; HTML comments (the m:<id> marks) are hidden, as a Markdown viewer would.
    """
    out, in_list = [], False
    text = re.sub(r"<!--.*?-->", "", document, flags=re.S)
    for raw in text.splitlines():
        line = raw.rstrip()
        bullet = re.match(r"^\s*[-*+]\s+(.*)$", line)
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if bullet:
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{_inline(bullet.group(1))}</li>")
            continue
        if in_list and line.startswith("  ") and line.strip():
            out[-1] = out[-1][: -len("</li>")] + "<br>" + _inline(line.strip()) + "</li>"
            continue
        if in_list:
            out.append("</ul>")
            in_list = False
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif line.strip():
            out.append(f"<p>{_inline(line.strip())}</p>")
    if in_list:
        out.append("</ul>")
    return mark_safe("\n".join(out))  # noqa: S308 — built from escaped text only


def _context(request, skill, form=None, **extra):
    actor = request.actor
    subject = Subject(org=actor.org, user_id=actor.user_id, skill=skill)
    doc = document_get(actor=actor, subject=subject)
    if form is None:
        form = MarkdownForm(initial={"document": doc["document"], "base_version": doc["version"]})
    text = form["document"].value() or ""
    return {
        "form": form,
        "doc": doc,
        "skill": skill,
        "skills": own_skill_names(actor=actor),
        "preview": preview_html(text),
        **extra,
    }


@org_page
def markdown_editor(request, skill: str = ""):
    if skill and not SKILL_RE.match(skill):
        skill = ""
    if request.method != "POST":
        if request.GET.get("new_skill"):
            new = request.GET["new_skill"].strip()
            if SKILL_RE.match(new):
                return redirect("markdown-skill", skill=new)
        return render_page(request, "memory/markdown.html", _context(request, skill))
    form = MarkdownForm(request.POST)
    errors, conflict = [], None
    if form.is_valid():
        subject = Subject(org=request.actor.org, user_id=request.actor.user_id, skill=skill)
        try:
            result = document_apply(
                actor=request.actor,
                subject=subject,
                document=form.cleaned_data["document"],
                base_version=form.cleaned_data["base_version"],
            )
        except MarkdownError as exc:
            if exc.status == 409:
                conflict = exc.details or {}
            errors = [e["message"] for e in (exc.details or {}).get("errors", [])] or [exc.message]
        else:
            applied = result["applied"]
            messages.success(
                request,
                _("Saved: %(added)s added, %(updated)s changed, %(archived)s removed.")
                % {k: len(applied.get(k, [])) for k in ("added", "updated", "archived")},
            )
            return redirect("markdown-skill", skill=skill) if skill else redirect("markdown")
    context = _context(request, skill, form=form, errors=errors, conflict=conflict)
    return render_page(request, "memory/markdown.html", context, status=409 if conflict else 400)


@org_page
@require_POST
def markdown_preview(request):
    return render_page(
        request,
        "memory/markdown.html",
        {"preview": preview_html(request.POST.get("document", ""))},
        partial="preview",
    )
