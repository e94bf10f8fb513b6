"""The access module's rules for what is not a memory, through the selectors built from them and the
routes that use those: sessions, messages, checkpoints, extraction and re-embed jobs, injection logs,
profiles, project memberships, API keys and the orgs an account may act in.

The cast (tests/conftest.py): alice owns org A (an org admin) and project atlas, bob is a plain member
of org A and a viewer in atlas, charlie owns org B. Each test asserts which ids are visible and which
are hidden ("leaked" in the message when a hidden one shows).
"""

from __future__ import annotations

import pytest
from django.http import Http404
from django.test import Client
from django.utils import timezone

from checkpoints.models import Checkpoint, CheckpointArchive, Message, Session
from checkpoints.selectors import checkpoint_get, messages_for, session_find, session_get, sessions_for
from memory.models import ExtractionJob, InjectionLog, MemoryItem, ReembedJob
from memory.selectors import (
    extraction_jobs_for,
    injections_for_memory,
    injections_for_user,
    reembed_jobs_for,
    usage_injections,
    usage_memories,
)
from profiles.models import ProfileRevision, ProjectProfile, UserProfile
from profiles.selectors import profile_revisions, project_profile_for, user_profile_for
from projects.access import (
    account_membership,
    account_membership_by_ref,
    actor_for_account,
    actor_for_key,
    readable_api_keys,
    readable_memberships,
)
from projects.models import ApiKey, Project
from projects.services import api_key_create, project_create
from workspace.selectors import memory_origin

from .conftest import client_for


def ids(qs) -> set[int]:
    return set(qs.values_list("pk", flat=True))


def assert_sees(qs, visible: set[int], hidden: set[int]) -> None:
    seen = ids(qs)
    assert visible <= seen, f"missing: {visible - seen}"
    assert not seen & hidden, f"leaked: {seen & hidden}"


@pytest.fixture
def cast(org_a, org_b, alice, bob, charlie, project):
    return {
        "alice": actor_for_account(alice, org_a),
        "bob": actor_for_account(bob, org_a),
        "charlie": actor_for_account(charlie, org_b),
        "key_a": actor_for_key(api_key_create(org=org_a, name="agent-a")[0]),
        "key_atlas": actor_for_key(api_key_create(org=org_a, name="atlas-only", projects=[project])[0]),
        "key_b": actor_for_key(api_key_create(org=org_b, name="agent-b")[0]),
    }


def _memory(org, **fields) -> MemoryItem:
    return MemoryItem.objects.create(org=org, content_hash="-", **{"content": "a fact", **fields})


# ---- extraction and re-embed jobs ---------------------------------------------------------------


def test_it_shows_each_account_its_own_jobs_and_the_org_admins_and_keys_the_orgs(cast, org_a, org_b):
    alice_job = ExtractionJob.objects.create(org=org_a, user_id="alice", status="failed")
    bob_job = ExtractionJob.objects.create(org=org_a, user_id="bob")
    charlie_job = ExtractionJob.objects.create(org=org_b, user_id="charlie")

    assert_sees(extraction_jobs_for(cast["bob"]), {bob_job.pk}, {alice_job.pk, charlie_job.pk})
    assert_sees(extraction_jobs_for(cast["alice"]), {alice_job.pk, bob_job.pk}, {charlie_job.pk})
    assert_sees(extraction_jobs_for(cast["key_a"]), {alice_job.pk, bob_job.pk}, {charlie_job.pk})
    assert_sees(extraction_jobs_for(cast["charlie"]), {charlie_job.pk}, {alice_job.pk, bob_job.pk})
    assert_sees(extraction_jobs_for(cast["key_b"]), {charlie_job.pk}, {alice_job.pk, bob_job.pk})


def test_it_answers_404_for_someone_elses_job_and_403_for_a_read_only_keys_retry(
    cast, org_a, bob, charlie_client, key_b
):
    job = ExtractionJob.objects.create(org=org_a, user_id="alice", status="failed")
    url = f"/api/v1/extraction-jobs/{job.pk}"
    assert client_for(bob).get(url).status_code == 404
    assert client_for(bob).post(f"{url}/retry").status_code == 404
    assert charlie_client.get(url).status_code == 404
    assert key_b[1].get(url).status_code == 404
    _, secret = api_key_create(org=org_a, name="reader", read_only=True)
    reader = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert reader.get(url).status_code == 200
    assert reader.post(f"{url}/retry").status_code == 403
    job.refresh_from_db()
    assert job.status == "failed"


def test_it_hides_other_peoples_jobs_on_the_queue_page(org_a, alice, bob):
    alice_job = ExtractionJob.objects.create(org=org_a, user_id="alice", status="failed")
    bob_web = Client()
    bob_web.force_login(bob)
    assert bob_web.get(f"/queue/{alice_job.pk}/").status_code == 404
    assert bob_web.post(f"/queue/{alice_job.pk}/retry/").status_code == 404
    alice_job.refresh_from_db()
    assert alice_job.status == "failed"


def test_it_shows_re_embed_jobs_to_their_org_only(cast, org_a, org_b):
    mine = ReembedJob.objects.create(org=org_a, model="m-a")
    theirs = ReembedJob.objects.create(org=org_b, model="m-b")
    for name in ("alice", "bob", "key_a"):
        assert_sees(reembed_jobs_for(cast[name]), {mine.pk}, {theirs.pk})
    assert_sees(reembed_jobs_for(cast["charlie"]), {theirs.pk}, {mine.pk})


# ---- sessions, messages, checkpoints -------------------------------------------------------------


@pytest.fixture
def sessions(org_a, org_b, project):
    other = Project.objects.create(org=org_a, name="Other", slug="other")
    rows = {
        "alice": Session.objects.create(org=org_a, session_id="s-alice", user_id="alice"),
        "alice_atlas": Session.objects.create(
            org=org_a, session_id="s-atlas", user_id="alice", project=project
        ),
        "bob_other": Session.objects.create(org=org_a, session_id="s-bob", user_id="bob", project=other),
        "charlie": Session.objects.create(org=org_b, session_id="s-charlie", user_id="charlie"),
    }
    for session in rows.values():
        Message.objects.create(
            org=session.org, session=session, user_id=session.user_id, role="human", content="hi"
        )
        Checkpoint.objects.create(org=session.org, session=session, user_id=session.user_id)
    return rows


def test_it_shows_sessions_to_their_subject_and_to_keys_of_the_org(cast, sessions):
    pk = {name: s.pk for name, s in sessions.items()}
    # An org admin is no exception: a conversation is its subject's.
    assert_sees(
        sessions_for(cast["alice"]), {pk["alice"], pk["alice_atlas"]}, {pk["bob_other"], pk["charlie"]}
    )
    assert_sees(sessions_for(cast["bob"]), {pk["bob_other"]}, {pk["alice"], pk["alice_atlas"], pk["charlie"]})
    assert_sees(
        sessions_for(cast["key_a"]), {pk["alice"], pk["alice_atlas"], pk["bob_other"]}, {pk["charlie"]}
    )
    # A key restricted to atlas: sessions of no project or of atlas.
    assert_sees(
        sessions_for(cast["key_atlas"]), {pk["alice"], pk["alice_atlas"]}, {pk["bob_other"], pk["charlie"]}
    )
    assert_sees(
        sessions_for(cast["key_b"]), {pk["charlie"]}, {pk["alice"], pk["alice_atlas"], pk["bob_other"]}
    )


def test_it_gives_404_for_a_session_of_someone_else_and_none_for_a_new_one(cast, sessions):
    assert session_get(cast["alice"], "s-alice") == sessions["alice"]
    for actor, session_id in [
        ("bob", "s-alice"),
        ("charlie", "s-alice"),
        ("key_atlas", "s-bob"),
        ("alice", "s-bob"),
    ]:
        with pytest.raises(Http404):
            session_get(cast[actor], session_id)
    with pytest.raises(Http404):
        session_find(cast["bob"], "s-alice")
    assert session_find(cast["bob"], "s-new") is None
    # Another org's session id is free in this org: it does not exist here.
    assert session_find(cast["alice"], "s-charlie") is None


def test_it_keeps_messages_and_checkpoints_with_their_session(cast, sessions):
    messages = {name: Message.objects.get(session=s).pk for name, s in sessions.items()}
    assert_sees(messages_for(cast["bob"]), {messages["bob_other"]}, {messages["alice"], messages["charlie"]})
    assert_sees(
        messages_for(cast["key_atlas"]), {messages["alice"], messages["alice_atlas"]}, {messages["bob_other"]}
    )

    alice_cp = Checkpoint.objects.get(session=sessions["alice"])
    other_cp = Checkpoint.objects.get(session=sessions["bob_other"])
    assert checkpoint_get(cast["alice"], alice_cp.pk) == alice_cp
    for actor, row in [
        ("bob", alice_cp),
        ("charlie", alice_cp),
        ("key_b", alice_cp),
        ("key_atlas", other_cp),
    ]:
        with pytest.raises(Http404):
            checkpoint_get(cast[actor], row.pk)

    archive = CheckpointArchive.objects.create(
        org=alice_cp.org,
        original_id=alice_cp.pk + 10_000,
        session=sessions["alice"],
        user_id="alice",
        payload=b"x\x9c\x03\x00\x00\x00\x00\x01",
        created_at=timezone.now(),
    )
    assert checkpoint_get(cast["alice"], archive.original_id) == archive
    with pytest.raises(Http404):
        checkpoint_get(cast["bob"], archive.original_id)


def test_it_answers_404_for_someone_elses_session_and_checkpoint_over_the_api(sessions, bob, alice):
    cp = Checkpoint.objects.get(session=sessions["alice"])
    bob_api = client_for(bob)
    assert bob_api.get("/api/v1/sessions/s-alice").status_code == 404
    assert bob_api.delete("/api/v1/sessions/s-alice").status_code == 404
    assert bob_api.get(f"/api/v1/checkpoints/{cp.pk}").status_code == 404
    assert bob_api.post(f"/api/v1/checkpoints/{cp.pk}/approve", {}, format="json").status_code == 404
    assert Session.objects.filter(session_id="s-alice").exists()
    assert client_for(alice).get(f"/api/v1/checkpoints/{cp.pk}").status_code == 200


# ---- injection logs and the usage page's figures ------------------------------------------------


def test_it_shows_injection_logs_to_their_subject_even_to_an_org_admin(cast, org_a, org_b, project):
    item = _memory(org_a, scope="project", project=project, visibility="public")
    alice_log = InjectionLog.objects.create(org=org_a, user_id="alice", memory_ids=[item.pk], query="mine")
    bob_log = InjectionLog.objects.create(org=org_a, user_id="bob", memory_ids=[item.pk], query="bob's")
    charlie_log = InjectionLog.objects.create(org=org_b, user_id="charlie", memory_ids=[item.pk])

    assert_sees(
        injections_for_memory(actor=cast["alice"], item=item), {alice_log.pk}, {bob_log.pk, charlie_log.pk}
    )
    assert_sees(
        injections_for_memory(actor=cast["bob"], item=item), {bob_log.pk}, {alice_log.pk, charlie_log.pk}
    )
    assert_sees(
        injections_for_memory(actor=cast["key_a"], item=item), {alice_log.pk, bob_log.pk}, {charlie_log.pk}
    )
    assert_sees(injections_for_user(actor=cast["key_a"], user_id="bob"), {bob_log.pk}, {alice_log.pk})
    assert_sees(injections_for_user(actor=cast["key_b"], user_id="alice"), set(), {alice_log.pk})
    # The usage page counts the org's calls for its owners and admins, one's own for everyone else.
    assert_sees(usage_injections(cast["alice"]), {alice_log.pk, bob_log.pk}, {charlie_log.pk})
    assert_sees(usage_injections(cast["bob"]), {bob_log.pk}, {alice_log.pk, charlie_log.pk})


def test_it_lists_only_the_readers_own_injections_on_a_memory_page(org_a, alice, bob, project):
    item = _memory(org_a, scope="project", project=project, visibility="public")
    InjectionLog.objects.create(org=org_a, user_id="alice", memory_ids=[item.pk], query="alice asked this")
    InjectionLog.objects.create(org=org_a, user_id="bob", memory_ids=[item.pk], query="bob asked that")
    web = Client()
    web.force_login(alice)
    body = web.get(f"/memories/{item.pk}/").content.decode()
    assert "alice asked this" in body
    assert "bob asked that" not in body, "leaked: bob's query"


def test_it_counts_the_orgs_memories_for_org_admins_only(cast, org_a, org_b):
    bob_private = _memory(org_a, user_id="bob")
    alice_private = _memory(org_a, user_id="alice")
    other_org = _memory(org_b, user_id="charlie")
    assert_sees(usage_memories(cast["alice"]), {bob_private.pk, alice_private.pk}, {other_org.pk})
    assert_sees(usage_memories(cast["bob"]), {bob_private.pk}, {alice_private.pk, other_org.pk})


# ---- where a memory came from ---------------------------------------------------------------------


def test_it_shows_a_memorys_origin_to_its_subject_only(cast, org_a, project):
    session = Session.objects.create(org=org_a, session_id="s-bob", user_id="bob")
    Message.objects.create(
        org=org_a, session=session, user_id="bob", role="human", content="we ship", message_id="m1"
    )
    job = ExtractionJob.objects.create(org=org_a, user_id="bob", session_id="s-bob")
    item = _memory(
        org_a,
        scope="project",
        project=project,
        visibility="public",
        user_id="bob",
        source_id=f"extraction-job:{job.pk}",
        source_message_id="m1",
    )
    found_job, message = memory_origin(actor=cast["bob"], item=item)
    assert found_job == job and message.content == "we ship"
    # alice is an org admin and sees bob's job in the queue, but not the conversation a memory came from.
    assert memory_origin(actor=cast["alice"], item=item) == (None, None)


# ---- profiles ----------------------------------------------------------------------------------------


def test_it_shows_user_profiles_to_their_subject_and_project_profiles_to_project_readers(
    cast, org_a, org_b, project
):
    alice_profile = UserProfile.objects.create(org=org_a, user_id="alice", background="tea")
    project_profile = ProjectProfile.objects.create(org=org_a, project=project, project_goal="ship")
    UserProfile.objects.create(org=org_b, user_id="alice", background="another org's alice")
    user_rev = ProfileRevision.objects.create(org=org_a, user_id="alice", actor="x")
    project_rev = ProfileRevision.objects.create(org=org_a, project=project, actor="x")

    assert user_profile_for(actor=cast["alice"], user_id="alice") == alice_profile
    assert user_profile_for(actor=cast["key_a"], user_id="alice") == alice_profile
    assert user_profile_for(actor=cast["bob"], user_id="alice") is None
    assert user_profile_for(actor=cast["key_b"], user_id="alice").background == "another org's alice"

    assert project_profile_for(actor=cast["bob"], project=project) == project_profile  # a viewer reads it
    assert project_profile_for(actor=cast["charlie"], project=project) is None

    assert [r.pk for r in profile_revisions(actor=cast["alice"], user_id="alice")] == [user_rev.pk]
    assert profile_revisions(actor=cast["bob"], user_id="alice") == []
    assert [r.pk for r in profile_revisions(actor=cast["bob"], project=project)] == [project_rev.pk]
    assert profile_revisions(actor=cast["key_b"], project=project) == []


# ---- memberships, API keys, orgs -----------------------------------------------------------------


def test_it_lists_members_of_visible_projects_and_keys_of_the_own_org(
    cast, org_a, org_b, alice, bob, project
):
    hidden = project_create(actor=cast["alice"], name="Hidden", slug="hidden")  # bob is not in it
    theirs = project_create(actor=cast["charlie"], name="Bravo", slug="bravo")
    assert set(readable_memberships(cast["bob"]).values_list("project_id", flat=True)) == {project.pk}
    assert {project.pk, hidden.pk} <= set(
        readable_memberships(cast["alice"]).values_list("project_id", flat=True)
    )
    assert theirs.pk not in set(readable_memberships(cast["alice"]).values_list("project_id", flat=True))

    keys_a = set(ApiKey.objects.filter(org=org_a).values_list("pk", flat=True))
    keys_b = set(ApiKey.objects.filter(org=org_b).values_list("pk", flat=True))
    assert_sees(readable_api_keys(cast["alice"]), keys_a, keys_b)
    assert_sees(readable_api_keys(cast["charlie"]), keys_b, keys_a)
    key = ApiKey.objects.filter(org=org_a).first()
    assert client_for(bob).get(f"/api/v1/api-keys/{key.pk}").status_code == 403  # a member: too low a role
    assert client_for(cast["charlie"].account).get(f"/api/v1/api-keys/{key.pk}").status_code == 404


def test_it_lets_an_account_act_only_in_its_own_orgs(org_a, org_b, alice, charlie):
    assert account_membership(alice, org_a.pk).org == org_a
    assert account_membership(alice, org_b.pk) is None
    assert account_membership_by_ref(alice, "org-a").org == org_a
    assert account_membership_by_ref(alice, str(org_a.pk)).org == org_a
    assert account_membership_by_ref(alice, "org-b") is None
    assert client_for(alice).get("/api/v1/projects", HTTP_X_ENGRAM_ORG="org-b").status_code == 404
