"""The Markdown editor: the user's document and each skill's, with a preview, saved through memory.markdown."""

from projects.web import org_page, render_page


@org_page
def markdown_editor(request, skill: str = ""):
    return render_page(request, "memory/markdown.html", {"skill": skill})
