"""Every access rule lives in projects.access: the modules that face people and agents (views, API
modules, forms, template tags, the dashboards) never build a tenant filter of their own.

A tenant filter is a query call (`.filter(`, `.exclude(`, `.get(`, `.get_or_create(`,
`.update_or_create(`, `Q(`, `get_object_or_404(`, `get_list_or_404(`) that
- names the org (`org=`, `org_id=`, `org__slug=`, `project__org=`): scoping to a tenant is projects.access.org_q and the
  kinds' `*_read_q` filters, used by the apps' selectors.py; or
- names a subject taken from the actor or from a row (`user_id=actor.user_id`, `user_id=item.user_id`),
  or any subject straight on a model's manager (`Model.objects.filter(user_id=...)`): "whose rows these
  are" is the subject rule of projects.access. Narrowing a readable queryset by a subject the request
  names (`readable_memories(actor).filter(user_id=params["user_id"])`) is a filter, not a rule.
Also an inline comparison of a subject with the actor's (`job.user_id == request.actor.user_id`): that is
projects.access.is_subject.

Selectors, services (where a write needs it), tasks, migrations, tests and bench scripts are not scanned:
they are where the querysets are built, from the access module's filters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The scanned modules, as globs from the repository root. Keep this list explicit: a new kind of
# person- or agent-facing module (say */feeds.py) is added here.
SCANNED = (
    "*/views.py",
    "*/*_views.py",  # memory/dashboard_views.py, memory/markdown_views.py, memory/api/*_views.py ...
    "*/api/*.py",
    "*/forms.py",
    "*/templatetags/*.py",
    "projects/web.py",
    "projects/middleware.py",
    "projects/context_processors.py",
)

QUERY_METHODS = {"filter", "exclude", "get", "get_or_create", "update_or_create"}
QUERY_FUNCTIONS = {"Q", "get_object_or_404", "get_list_or_404"}
ORG_FIELDS = {"org", "org_id"}
MANAGERS = {"objects", "_default_manager"}


def scanned_files() -> list[Path]:
    found = set()
    for pattern in SCANNED:
        found.update(p for p in ROOT.glob(pattern) if ".venv" not in p.parts)
    return sorted(found)


def _dotted(node) -> str:
    """'request.actor.user_id' for an attribute chain ('' for anything else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _on_manager(call: ast.Call) -> bool:
    """The query starts from a model's manager (Model.objects...), or get_object_or_404(Model, ...)."""
    func = call.func
    if isinstance(func, ast.Name):  # get_object_or_404(Model, ...): a class, not a queryset
        return bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id[:1].isupper()
    node = func.value
    while True:
        if isinstance(node, ast.Attribute):
            if node.attr in MANAGERS:
                return True
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return False


def _names_subject_of_row_or_actor(value) -> bool:
    dotted = _dotted(value)
    return dotted.endswith(".user_id")


def _is_query_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in QUERY_METHODS
    return isinstance(func, ast.Name) and func.id in QUERY_FUNCTIONS


def violations(source: str, name: str = "<source>") -> list[str]:
    """Each tenant filter or inline subject check in the source, as 'name:line: code'."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = []

    def report(node, why):
        found.append(f"{name}:{node.lineno}: {why}: {lines[node.lineno - 1].strip()}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _is_query_call(node):
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                parts = kw.arg.split("__")
                if ORG_FIELDS.intersection(parts):
                    report(node, f"filters by {kw.arg}")
                elif "user_id" in parts and (_names_subject_of_row_or_actor(kw.value) or _on_manager(node)):
                    report(node, f"filters by {kw.arg}")
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_dotted(s).endswith("actor.user_id") for s in sides) and any(
                _dotted(s).endswith("user_id") and not _dotted(s).endswith("actor.user_id") for s in sides
            ):
                report(node, "compares a subject with the actor's")
    return found


def test_the_scan_list_finds_the_modules_it_names():
    files = {str(p.relative_to(ROOT)) for p in scanned_files()}
    for pattern in SCANNED:
        assert any(Path(f).match(pattern) for f in files), f"{pattern} matches no module: fix SCANNED"
    for expected in (
        "memory/views.py",
        "memory/dashboard_views.py",
        "memory/markdown_views.py",
        "memory/api/jobs_views.py",
        "memory/api/views.py",
        "checkpoints/api/views.py",
        "profiles/views.py",
        "profiles/api/views.py",
        "projects/views.py",
        "projects/api/base.py",
        "workspace/views.py",
        "workspace/api/subjects_views.py",
    ):
        assert expected in files


def test_it_finds_no_tenant_filter_outside_the_access_module_and_selectors():
    found = []
    for path in scanned_files():
        found += violations(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "access rules belong in projects.access (used through selectors):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "ExtractionJob.objects.filter(org=request.actor.org, user_id=request.actor.user_id)",
        "Model.objects.filter(org=actor.org)",
        "InjectionLog.objects.filter(user_id=user_id)",
        "Message.objects.select_related('session').filter(user_id=wanted).first()",
        "logs.filter(user_id=actor.user_id)",
        "qs.exclude(org_id=self.org.pk)",
        "get_object_or_404(ApiKey, org=actor.org, pk=pk)",
        "get_object_or_404(Session, user_id=name)",
        "Q(user_id=item.user_id)",
        "qs.filter(org__slug=wanted)",
        "qs.filter(project__org=actor.org)",
        "Checkpoint.objects.filter(session__user_id=actor.user_id)",
        "own = job.user_id == request.actor.user_id",
        "if item.user_id != actor.user_id:\n    pass",
    ],
)
def test_it_catches_a_tenant_filter_written_in_a_view(code):
    assert violations(code), f"not caught: {code}"


@pytest.mark.parametrize(
    "code",
    [
        "readable_memories(actor).filter(user_id=params['user_id'])",  # a request's filter, on a readable set
        "extraction_jobs_for(actor).filter(pk=pk)",
        "selectors.sessions_for(actor, user_id=request.query_params.get('user_id'))",
        "user_profile_for(actor=actor, user_id=actor.user_id)",
        "request.query_params.get('user_id')",
        "MemoryFilters(user_id=actor.user_id, project=None)",
        "user_id = data['user_id'] or actor.user_id",
    ],
)
def test_it_lets_selector_calls_and_request_filters_pass(code):
    assert not violations(code)


def test_the_projects_layer_imports_no_app_above_it():
    """projects.access decides for memory, profiles, checkpoints and workspace without importing them."""
    above = {"memory", "profiles", "checkpoints", "workspace"}
    for path in sorted((ROOT / "projects").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                assert node.module.split(".")[0] not in above, (
                    f"{path.relative_to(ROOT)} imports {node.module}"
                )
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] not in above, (
                        f"{path.relative_to(ROOT)} imports {alias.name}"
                    )
