"""Tenant isolation over every API route: org B (an account and a key) never reaches org A's rows.

The suite is built from the URL resolver, so a route added under /api/v1/ is covered without editing
this file. For each route and each method it serves:

- every id kwarg is filled with the id of an org-A object (each tenant model has one, see `world`);
  `pk`/`id` are tried with the ids of *every* tenant model, which works because each tenant table gets
  its own id range here (an id of one table is never a valid id in another);
- the response must be 404 (or 405), or exactly what the same call answers for an id that exists
  nowhere: an outsider must not be able to tell A's object from nothing;
- string kwargs (user_id, session_id, agent_id) name subjects inside the caller's own org, so B may
  get 2xx there, but again only what a never-used name gets;
- the body must never carry MARK (a token that only org A's rows contain), and org A's rows must be
  byte-for-byte the same afterwards (each call runs in a savepoint that is rolled back after the check).

A route with a kwarg this file does not know fails with a message naming it: add it to KWARG_VALUES.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection, models, transaction
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from projects.api.base import ActorMixin
from projects.models import ApiKey, Organization, ProjectRole
from projects.services import api_key_create, project_create, project_member_add

from .conftest import client_for, key_client

MARK = "zqxmarkA7"  # appears only in org A's rows; never in a URL or a query we send
MISSING_INT = 8_999_999_999_999
MISSING_STR = "zz-missing-subject"
BODY_METHODS = {"post", "put", "patch"}
HTTP_METHODS = ["get", "post", "put", "patch", "delete"]


# ---- the routes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    template: str  # "api/v1/memories/{pk}"
    kwargs: tuple[tuple[str, str], ...]  # (name, "int" | "str")
    methods: tuple[str, ...]
    view: str

    def url(self, values: dict) -> str:
        return "/" + self.template.format(**values)


_REGEX_GROUP = re.compile(r"\(\?P<(\w+)>([^)]*)\)")
_ROUTE_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def _as_template(piece: str) -> tuple[str, list[tuple[str, str]]]:
    """Turn one pattern (regex or path syntax) into a format string and its kwargs."""
    found: list[tuple[str, str]] = []
    if piece.startswith("^") or piece.endswith("$") or "(?P<" in piece:

        def group(m):
            found.append((m.group(1), "int" if m.group(2) in (r"\d+", "[0-9]+") else "str"))
            return "{" + m.group(1) + "}"

        text = _REGEX_GROUP.sub(group, piece).lstrip("^").rstrip("$").replace("\\.", ".")
        return text, found

    def param(m):
        found.append((m.group(2), "int" if m.group(1) == "int" else "str"))
        return "{" + m.group(2) + "}"

    return _ROUTE_PARAM.sub(param, piece), found


def _methods(callback) -> tuple[str, ...]:
    actions = getattr(callback, "actions", None)
    if actions:
        return tuple(m for m in HTTP_METHODS if m in actions)
    cls = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if cls is not None:
        return tuple(m for m in HTTP_METHODS if hasattr(cls, m))
    return tuple(HTTP_METHODS)  # a plain function view: try everything


def _walk(patterns, prefix="", kwargs=()):
    for p in patterns:
        text, found = _as_template(str(p.pattern))
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, prefix + text, (*kwargs, *found))
        elif isinstance(p, URLPattern):
            yield prefix + text, (*kwargs, *found), p.callback


# Engram's API, and the compatibility surfaces at the root under the paths their clients call (Mem0's).
API_PREFIXES = ("api/v1/", "v1/", "v2/", "v3/")


def api_routes() -> list[Route]:
    routes = []
    for template, kwargs, callback in _walk(get_resolver().url_patterns):
        if not template.startswith(API_PREFIXES):
            continue
        cls = getattr(callback, "cls", None)
        routes.append(
            Route(
                template=template,
                kwargs=tuple(kwargs),
                methods=_methods(callback),
                view=cls.__name__ if cls else getattr(callback, "__name__", "?"),
            )
        )
    return routes


ROUTES = api_routes()


# ---- org A's world: one object of every tenant model --------------------------------------------


def tenant_models() -> list[type[models.Model]]:
    """Every model with an `org` link: each such row belongs to one tenant."""
    found = []
    for model in apps.get_models():
        try:
            field = model._meta.get_field("org")
        except Exception:  # noqa: BLE001 - no such field
            continue
        if field.is_relation and field.related_model is Organization:
            found.append(model)
    return sorted(found, key=lambda m: m._meta.label)


def _spread_ids(models_: list) -> None:
    """Give each tenant table its own id range, so an id of one table is never valid in another."""
    with connection.cursor() as cursor:
        for index, model in enumerate(models_):
            base = (index + 1) * 10_000_000
            cursor.execute(
                "SELECT pg_get_serial_sequence(%s, %s)", [model._meta.db_table, model._meta.pk.column]
            )
            (sequence,) = cursor.fetchone()
            if sequence is None:
                continue
            cursor.execute("SELECT nextval(%s)", [sequence])
            if cursor.fetchone()[0] < base:
                cursor.execute("SELECT setval(%s, %s)", [sequence, base])


def _generic_value(field, world):
    """A value for a required field of a tenant model this file has no builder for."""
    if field.is_relation:
        target = field.related_model
        if target is Organization:
            return world.org
        if target is get_user_model():
            return world.alice
        return world.of(target)
    if field.choices:
        return field.choices[0][0]
    if isinstance(field, models.JSONField):
        return {"note": MARK}
    if isinstance(field, models.BinaryField):
        return MARK.encode()
    if isinstance(field, models.BooleanField):
        return False
    if isinstance(field, (models.IntegerField, models.DecimalField, models.FloatField)):
        return 1
    if isinstance(field, models.DateTimeField):
        return timezone.now()
    if isinstance(field, models.DateField):
        return timezone.now().date()
    if isinstance(field, models.UUIDField):
        import uuid

        return uuid.uuid4()
    if isinstance(field, (models.CharField, models.TextField)):
        if field.name == "user_id":
            return "alice"
        value = f"{MARK}-{field.name}"
        return value[: field.max_length] if field.max_length else value
    raise TypeError(f"no generic value for {field.__class__.__name__} {field.model.__name__}.{field.name}")


def _build_generic(model, world):
    values = {}
    for field in model._meta.concrete_fields:
        if field.primary_key or field.null or field.has_default():
            continue
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            continue
        if field.blank and isinstance(field, (models.CharField, models.TextField)):
            continue
        values[field.name] = _generic_value(field, world)
    return model.objects.create(**values)


_EMBEDDING: dict = {}


def _embedding(org) -> dict:
    """One real vector, computed once: every world's memories share it (embedding takes a second each)."""
    if not _EMBEDDING:
        from memory.embeddings import provider_for

        provider = provider_for(org, "alice")
        _EMBEDDING["embedding"] = provider.embed_passages([f"Alice likes tea {MARK}"])[0]
        _EMBEDDING["embedding_model"] = provider.model_name
    return dict(_EMBEDDING)


class World:
    """Org A with one object of each tenant model (ids in `ids`), org B with an account and a key."""

    def __init__(self, *, org_a, org_b, alice, bob, charlie):
        from checkpoints.models import Checkpoint, CheckpointArchive, Message, Session
        from memory.drafts import MemoryDraft
        from memory.models import (
            EmbeddingConfig,
            ExtractionJob,
            InjectionLog,
            LLMConfig,
            MemoryItem,
            ReembedJob,
            StoreItem,
        )
        from memory.services import memory_create
        from profiles.models import ProfileRevision, ProjectProfile, UserProfile
        from projects.access import actor_for_account

        self.org, self.alice = org_a, alice
        self.objects: dict[type, models.Model] = {}
        alice_actor = actor_for_account(alice, org_a)
        project = project_create(actor=alice_actor, name=f"{MARK} atlas", slug="atlas-a")
        project.description = f"{MARK} project"
        project.save()
        membership = project_member_add(
            actor=alice_actor, project=project, account=bob, role=ProjectRole.EDITOR
        )
        self.project = project
        key_a, self.key_a_secret = api_key_create(org=org_a, name=f"{MARK}-key", projects=[project])
        common = {"actor": alice_actor, "org": org_a, "dedup": "none", **_embedding(org_a)}
        user_item = memory_create(
            draft=MemoryDraft(content=f"Alice likes tea {MARK}", user_id="alice"), **common
        ).item
        project_item = memory_create(
            draft=MemoryDraft(
                content=f"The team ships on Fridays {MARK}",
                scope="project",
                project=project,
                visibility="public",
                user_id="alice",
            ),
            **common,
        ).item
        agent_item = memory_create(
            draft=MemoryDraft(
                content=f"Agent note {MARK}", user_id="alice", agent_id="agent-a", skill="skill-a"
            ),
            **common,
        ).item
        session = Session.objects.create(
            org=org_a, session_id="sess-a", user_id="alice", project=project, summary=f"{MARK} summary"
        )
        session_item = memory_create(
            draft=MemoryDraft(
                content=f"Session fact {MARK}", scope="session", session_id="sess-a", user_id="alice"
            ),
            **common,
        ).item
        message = Message.objects.create(
            org=org_a, session=session, user_id="alice", role="human", content=f"hello {MARK}"
        )
        checkpoint = Checkpoint.objects.create(
            org=org_a, session=session, user_id="alice", agent_state={"note": MARK}, messages=[MARK]
        )
        archive = CheckpointArchive.objects.create(
            org=org_a,
            original_id=checkpoint.pk,
            session=session,
            user_id="alice",
            payload=b"x\x9c\x03\x00\x00\x00\x00\x01",  # zlib of b""
            created_at=timezone.now(),
        )
        job = ExtractionJob.objects.create(
            org=org_a, user_id="alice", project=project, session_id="sess-a", messages=[{"content": MARK}]
        )
        injection = InjectionLog.objects.create(
            org=org_a, user_id="alice", project=project, session_id="sess-a"
        )
        user_profile = UserProfile.objects.create(org=org_a, user_id="alice", background=f"{MARK} background")
        project_profile = ProjectProfile.objects.create(
            org=org_a, project=project, project_goal=f"{MARK} goal"
        )
        profile_revision = ProfileRevision.objects.create(org=org_a, user_id="alice", actor=f"{MARK}")
        # Created last: the org's provider settings must not change how the memories above were embedded.
        embedding_config = EmbeddingConfig.objects.create(org=org_a, user_id="alice", model=f"{MARK}-model")
        llm_config = LLMConfig.objects.create(
            org=org_a, base_url="http://127.0.0.1:9/v1", model=f"{MARK}-chat"
        )
        reembed = ReembedJob.objects.create(org=org_a, model=f"{MARK}-model")
        store_item = StoreItem.objects.create(
            org=org_a, namespace=["ns-a"], path="ns-a", key="key-a", value={"note": MARK}, **_embedding(org_a)
        )
        from memory.models import MemoryRevision

        for obj in (
            project,
            membership,
            key_a,
            user_item,
            MemoryRevision.objects.filter(org=org_a).first(),
            session,
            message,
            checkpoint,
            archive,
            job,
            injection,
            user_profile,
            project_profile,
            profile_revision,
            embedding_config,
            llm_config,
            reembed,
            store_item,
        ):
            self.objects[type(obj)] = obj
        self.objects[MemoryItem] = user_item
        self.project_item = project_item
        self.more_memories = [project_item, agent_item, session_item]
        self.objects[type(alice.org_memberships.get(org=org_a))] = alice.org_memberships.get(org=org_a)
        for model in tenant_models():
            if model not in self.objects and not model.objects.filter(org=org_a).exists():
                self.objects[model] = _build_generic(model, self)  # a model added after this file
            elif model not in self.objects:
                self.objects[model] = model.objects.filter(org=org_a).first()

        # Org B: an owner account with a project of its own, and a read-write key.
        project_create(actor=actor_for_account(charlie, org_b), name="Bravo", slug="bravo")
        _, secret_b = api_key_create(org=org_b, name="agent-b")
        self.b_clients = {"account of org B": client_for(charlie), "key of org B": key_client(secret_b)}

    def of(self, model):
        if model not in self.objects:
            self.objects[model] = _build_generic(model, self)
        return self.objects[model]

    def ids(self) -> list[tuple[str, int]]:
        """(model, id) of every org-A object, and of each kind of memory (user, project, agent, session)."""
        out = [(m._meta.label, o.pk) for m, o in self.objects.items()]
        return [*out, *(("memory.MemoryItem", item.pk) for item in self.more_memories)]


def fingerprint(org) -> dict:
    """A digest of every org-A row of every tenant model, per table, in one query."""
    tables = [Organization, *tenant_models()]
    parts = []
    for model in tables:
        table = connection.ops.quote_name(model._meta.db_table)
        column = "id" if model is Organization else model._meta.get_field("org").column
        pk = connection.ops.quote_name(model._meta.pk.column)
        parts.append(
            f"(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t.{pk}), '')) FROM {table} t WHERE t.{column} = %s)"
        )
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(parts), [org.pk] * len(tables))
        digests = cursor.fetchone()
    return {model._meta.label: digest for model, digest in zip(tables, digests, strict=True)}


@pytest.fixture
def world(org_a, org_b, alice, bob, charlie):
    _spread_ids(tenant_models())
    return World(org_a=org_a, org_b=org_b, alice=alice, bob=bob, charlie=charlie)


# ---- kwargs -------------------------------------------------------------------------------------

# kwarg name -> how to fill it from org A's world: "any" tries the id of every tenant object;
# a model label picks that model's id; a plain string is used as it is (a subject name inside an org).
KWARG_VALUES: dict[str, object] = {
    "pk": "any",
    "id": "any",
    "project_pk": "projects.Project",
    "project_id": "projects.Project",
    "memory_pk": "memory.MemoryItem",
    "memory_id": "memory.MemoryItem",
    "item_id": "memory.MemoryItem",
    "checkpoint_pk": "checkpoints.Checkpoint",
    "checkpoint_id": "checkpoints.Checkpoint",
    "job_id": "any",
    "job_pk": "any",
    "key_id": "projects.ApiKey",
    "member_pk": "projects.ProjectMembership",
    "membership_id": "projects.ProjectMembership",
    "revision": 1,
    "number": 1,
    "user_id": "alice",
    "session_id": "sess-a",
    "agent_id": "agent-a",
    "skill": "skill-a",
    "slug": "atlas-a",
    "project_slug": "atlas-a",
    "webhook_pk": "webhooks.WebhookEndpoint",
    "entity_id": "alice",  # Mem0's DELETE v2/entities/{entity_type}/{entity_id}/: a subject, by name
}

# Kwargs that name something global, not a tenant's row (a tool's name): the same value for both calls.
GLOBAL_KWARGS: dict[str, str] = {"name": "memory_search", "format": "json", "entity_type": "user"}

# Routes whose kwargs are deliberately not checked here, with the reason. Keep it short.
ALLOWED_UNFILLED: dict[str, str] = {}


def kwarg_choices(route: Route, world: World) -> list[dict]:
    """Each dict fills every kwarg of the route with org-A values (one dict per candidate id)."""
    combos: list[dict] = [{}]
    for name, kind in route.kwargs:
        spec = KWARG_VALUES.get(name, GLOBAL_KWARGS.get(name))
        if spec is None:
            pytest.fail(
                f"Route {route.template} ({route.view}) has the kwarg {name!r}, which "
                "tests/test_isolation.py cannot fill: add it to KWARG_VALUES so org B is tried on it."
            )
        if spec == "any":
            values = [pk for _, pk in world.ids()]
        elif isinstance(spec, str) and "." in spec and spec[0].islower() and spec.split(".")[1][0].isupper():
            model = apps.get_model(spec)
            values = [world.of(model).pk]
            if kind == "str" and name in ("project_id", "project_pk"):
                values.append(world.project.slug)
        else:
            values = [spec]
        combos = [{**c, name: v} for c in combos for v in values]
    return combos


def missing_values(route: Route) -> dict:
    return {
        name: GLOBAL_KWARGS.get(name, MISSING_INT if kind == "int" else MISSING_STR)
        for name, kind in route.kwargs
    }


STRING_SUBJECT_KWARGS = {"user_id", "session_id", "agent_id", "skill", "entity_id", "entity_type"}


def _call(client, method: str, url: str, body=None, query=None):
    kwargs = {"format": "json"} if method in BODY_METHODS else {}
    if method in BODY_METHODS:
        return getattr(client, method)(url, body if body is not None else {}, **kwargs)
    return getattr(client, method)(url, query or {})


def _isolated_call(client, method, url, org, before, body=None, query=None):
    """Make one call in a savepoint; check org A's rows inside it, then roll the call back."""
    with transaction.atomic():
        response = _call(client, method, url, body, query)
        after = fingerprint(org)
        transaction.set_rollback(True)
    changed = [label for label in before if before[label] != after.get(label)]
    assert not changed, f"{method.upper()} {url} changed org A's rows in {changed}"
    return response


def _no_mark(response, what: str) -> None:
    body = response.content.decode("utf-8", errors="replace")
    assert MARK not in body, f"LEAK: {what} answered {response.status_code} with org A's data: {body[:400]}"


def _error_code(response):
    try:
        return response.json().get("error", {}).get("code")
    except Exception:  # noqa: BLE001 - not JSON: compare statuses only
        return None


def check_route_isolated(route: Route, world: World, clients: dict) -> int:
    """Run every check on one route; returns the number of requests made."""
    made = 0
    before = fingerprint(world.org)
    a_query = {
        "user_id": "alice",
        "project": world.project.pk,
        "project_id": world.project.pk,
        "session_id": "sess-a",
        "agent_id": "agent-a",
        "q": MARK,
        "query": MARK,
    }
    bodies = [None, {"query": MARK, "user_id": "alice", "project": world.project.pk, "session_id": "sess-a"}]
    for who, client in clients.items():
        for method in route.methods:
            # A collection is also asked with org A's names in the body and the query string.
            variants = bodies if method in BODY_METHODS and not route.kwargs else [None]
            queries = [None, a_query] if method in ("get", "delete") and not route.kwargs else [None]
            for body in variants:
                for query in queries:
                    missing_url = route.url(missing_values(route))
                    missing = _isolated_call(client, method, missing_url, world.org, before, body, query)
                    made += 1
                    for values in kwarg_choices(route, world):
                        url = route.url(values)
                        what = f"{who}: {method.upper()} {url}" + (f" ?{query}" if query else "")
                        response = _isolated_call(client, method, url, world.org, before, body, query)
                        made += 1
                        _no_mark(response, what)
                        if not route.kwargs:
                            continue  # a collection: no A row shown (above) and none changed is the test
                        assert response.status_code != 500, f"{what} -> 500"
                        int_kwargs = [n for n, _ in route.kwargs if n not in STRING_SUBJECT_KWARGS]
                        if response.status_code in (404, 405):
                            continue
                        if int_kwargs:
                            assert response.status_code >= 400, (
                                f"LEAK: {what} -> {response.status_code} on an object of org A"
                            )
                        assert (response.status_code, _error_code(response)) == (
                            missing.status_code,
                            _error_code(missing),
                        ), (
                            f"{what} -> {response.status_code} {response.content[:200]!r}, but "
                            f"{missing.status_code} for an id that exists nowhere: the answer tells them apart"
                        )
    return made


# ---- the tests ----------------------------------------------------------------------------------


def test_it_finds_the_api_routes():
    templates = {r.template for r in ROUTES}
    assert "api/v1/projects/{pk}" in templates
    assert "api/v1/projects/{project_pk}/members/{pk}" in templates
    assert len(ROUTES) >= 7


@pytest.mark.parametrize("route", ROUTES, ids=[r.template.removeprefix("api/v1/") or "root" for r in ROUTES])
def test_it_keeps_org_b_out_of_every_route(route, world):
    if route.template in ALLOWED_UNFILLED:
        pytest.skip(ALLOWED_UNFILLED[route.template])
    assert route.methods, f"{route.template} serves no method"
    assert check_route_isolated(route, world, world.b_clients) > 0


@pytest.mark.parametrize("route", ROUTES, ids=[r.template.removeprefix("api/v1/") or "root" for r in ROUTES])
def test_it_scopes_every_api_view_through_the_actor_base(route):
    from django.urls import resolve

    url = route.url({name: (1 if kind == "int" else "x") for name, kind in route.kwargs})
    cls = getattr(resolve(url).func, "cls", None)
    assert cls is not None and issubclass(cls, ActorMixin), (
        f"{route.template} is served by {route.view}, which does not derive from EngramAPIView/EngramViewSet"
    )


def test_it_has_an_org_a_object_of_every_tenant_model(world, org_a):
    for model in tenant_models():
        assert model.objects.filter(org=org_a).exists(), f"no org-A row of {model._meta.label}"
    # and the id ranges really are disjoint, which the "any" kwarg relies on
    ids = [pk for _, pk in world.ids()]
    assert len(ids) == len(set(ids))


def test_it_would_see_a_leak(world):
    """The checks are able to fail: org A's own key does see A's rows through the same harness."""
    own = {"key of org A": key_client(world.key_a_secret)}
    ApiKey.objects.filter(org=world.org).update(last_used_at=timezone.now())  # so using it changes no row
    detail = next(r for r in ROUTES if r.template == "api/v1/projects/{pk}")
    with pytest.raises(AssertionError, match="LEAK"):
        check_route_isolated(detail, world, own)
    listing = next(r for r in ROUTES if r.template == "api/v1/projects")
    with pytest.raises(AssertionError, match="LEAK"):
        check_route_isolated(listing, world, own)
    mem0_detail = next(r for r in ROUTES if r.template == "v1/memories/{memory_id}/")
    with pytest.raises(AssertionError, match="LEAK"):
        check_route_isolated(mem0_detail, world, own)


def test_it_notices_writes_to_org_a(world, org_a):
    before = fingerprint(org_a)
    client = key_client(world.key_a_secret)
    with pytest.raises(AssertionError, match="changed org A's rows"):
        _isolated_call(
            client, "patch", f"/api/v1/projects/{world.project.pk}", org_a, before, {"name": "renamed"}
        )
    # the savepoint was rolled back: nothing stays changed
    assert fingerprint(org_a) == before


def test_it_lists_nothing_of_org_a_for_org_b(world, org_b):
    """The plain reading of the rule, on the project collection."""
    for client in world.b_clients.values():
        projects = client.get("/api/v1/projects").json()["results"]
        assert [p["slug"] for p in projects] == ["bravo"]


def test_the_store_shows_org_b_nothing_of_org_a(world, org_a):
    """The LangGraph store's routes take the namespace and key in the body or the query string, which the
    resolver-built checks above do not name: org B asks for org A's item by its namespace and key, by prefix
    and by meaning, and writes and deletes under the same namespace and key."""
    before = fingerprint(org_a)
    for who, client in world.b_clients.items():
        got = client.get("/api/v1/store/items", {"namespace": "ns-a", "key": "key-a"})
        missing = client.get("/api/v1/store/items", {"namespace": "ns-zz", "key": "key-zz"})
        assert (got.status_code, _error_code(got)) == (missing.status_code, _error_code(missing)), who
        for body in ({}, {"namespace_prefix": ["ns-a"]}, {"query": MARK}, {"filter": {"note": MARK}}):
            found = client.post("/api/v1/store/items/search", body, format="json")
            assert found.status_code == 200 and found.json() == {"items": []}, (who, body, found.content)
        listed = client.post("/api/v1/store/namespaces", {}, format="json")
        assert listed.json() == {"namespaces": []}, who
        put = client.put(
            "/api/v1/store/items", {"namespace": ["ns-a"], "key": "key-a", "value": {"b": 1}}, format="json"
        )
        assert put.status_code == 204, (who, put.content)
        deleted = client.delete("/api/v1/store/items", {"namespace": ["ns-a"], "key": "key-a"}, format="json")
        assert deleted.status_code == 204, who
        _no_mark(got, who)
    assert fingerprint(org_a) == before
