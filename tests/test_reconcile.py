"""Reconciliation without a model (real multilingual-e5-small vectors): merge, supersede, add; nothing lost."""

from checkpoints.services import messages_append
from memory.extraction.services import extraction_job_run
from memory.models import MemoryItem, MemoryRevision
from memory.services import memory_restore
from projects.access import system_actor


def say(org, session_id, text, user_id="u1"):
    _, _, job = messages_append(
        org=org, session_id=session_id, user_id=user_id, messages=[{"role": "human", "content": text}]
    )
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    return job.result


def test_it_merges_a_repeated_statement(org_a):
    first = say(org_a, "s1", "请记住，我对花生过敏，点菜时注意。")
    again = say(org_a, "s2", "记住：我对花生过敏，点菜时注意")
    [merged] = again["merged"]
    assert merged["id"] == first["added"][0]["id"] and again["added"] == []
    item = MemoryItem.objects.get(org=org_a)
    assert item.status == "active"
    assert list(MemoryRevision.objects.filter(item_ref=item.pk).values_list("action", flat=True)) == [
        "add",
        "merge",
    ]


def test_it_supersedes_on_a_chinese_correction_and_can_be_undone(org_a):
    old_id = say(org_a, "s1", "记住，我住在北京的朝阳区，离公司很近")["added"][0]["id"]
    result = say(org_a, "s2", "不对，我现在住在上海的浦东新区")
    [superseded] = result["superseded"]
    assert superseded["old_id"] == old_id
    old = MemoryItem.objects.get(pk=old_id)
    new = MemoryItem.objects.get(pk=superseded["id"])
    assert (old.status, old.superseded_by_id) == ("superseded", new.pk)
    assert (new.status, new.content) == ("active", "用户现在住在上海的浦东新区")
    supersede = MemoryRevision.objects.get(item_ref=old.pk, action="supersede")
    assert supersede.before["content"] == "用户住在北京的朝阳区"
    assert supersede.before["status"] == "active" and supersede.after["status"] == "superseded"
    # Undo from the history: the old text comes back as it was.
    memory_restore(actor=system_actor(old.org), item=old, number=1)
    old.refresh_from_db()
    assert (old.status, old.superseded_by_id, old.content) == (
        "active",
        None,
        "用户住在北京的朝阳区",
    )


def test_it_supersedes_on_an_english_correction(org_a):
    old_id = say(org_a, "s1", "I live in Berlin with my family.")["added"][0]["id"]
    result = say(org_a, "s2", "Actually, I live in Munich now.")
    assert [s["old_id"] for s in result["superseded"]] == [old_id]
    assert MemoryItem.objects.get(pk=old_id).status == "superseded"
    assert (
        MemoryItem.objects.filter(org=org_a, status="active").get().content == "The user lives in Munich now"
    )


def test_it_supersedes_a_changed_value_without_a_correction_word(org_a):
    old_id = say(org_a, "s1", "记住：我最喜欢的编程语言是 Python")["added"][0]["id"]
    result = say(org_a, "s2", "记住：我最喜欢的编程语言是 Rust")
    assert [s["old_id"] for s in result["superseded"]] == [old_id]
    assert "same subject, new value" in result["superseded"][0]["reason"]


def test_it_adds_unrelated_statements_side_by_side(org_a):
    say(org_a, "s1", "请记住，我对花生过敏，点菜时注意。")
    result = say(org_a, "s2", "不对，我现在更喜欢简洁的回答，不要长篇大论")
    # A correction with no close memory of its kind supersedes nothing.
    assert result["superseded"] == [] and result["added"]
    assert MemoryItem.objects.filter(org=org_a, status="active").count() == 1 + len(result["added"])


def test_it_keeps_subjects_apart(org_a):
    first = say(org_a, "s1", "记住，我住在北京的朝阳区，离公司很近", user_id="u1")
    result = say(org_a, "s2", "不对，我现在住在上海的浦东新区", user_id="u2")
    assert result["superseded"] == [] and len(result["added"]) == 1
    u1 = MemoryItem.objects.filter(org=org_a, user_id="u1")
    assert set(u1.values_list("status", flat=True)) == {"active"} and u1.count() == len(first["added"])


def turn(org, session_id, *messages, user_id="u1"):
    """One turn posted as an agent posts it (the user's message and the reply), its job run."""
    roles = ("human", "ai")
    _, _, job = messages_append(
        org=org,
        session_id=session_id,
        user_id=user_id,
        messages=[{"role": roles[i % 2], "content": text} for i, text in enumerate(messages)],
    )
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    return job.result


def active(org, user_id="u1"):
    return set(
        MemoryItem.objects.filter(org=org, user_id=user_id, status="active").values_list("content", flat=True)
    )


def test_a_statement_taken_back_in_a_later_turn_is_withdrawn_and_can_be_restored(org_a):
    first = turn(org_a, "s1", "我对芒果过敏，吃了嘴巴会肿。", "好的，记下了，以后推荐水果会避开芒果。")
    [added] = first["added"]
    assert added["content"] == "用户对芒果过敏"
    second = turn(org_a, "s1", "啊不是我，我帮同事问的 😂")
    [withdrawn] = second["withdrawn"]
    assert withdrawn["id"] == added["id"] and withdrawn["content"] == "用户对芒果过敏"
    item = MemoryItem.objects.get(pk=added["id"])
    assert item.status == "archived" and active(org_a) == set()
    revision = MemoryRevision.objects.filter(item_ref=item.pk).order_by("-number").first()
    assert revision.action == "archive" and "taken back" in revision.reason
    memory_restore(actor=system_actor(org_a), item=item, number=revision.number - 1)
    item.refresh_from_db()
    assert item.status == "active"


def test_a_value_corrected_in_a_later_turn_leaves_only_the_new_one(org_a):
    turn(
        org_a,
        "s1",
        "I coach my son's under-12 basketball team, we practice on Tuesdays after school.",
        "Nice! How can I help?",
    )
    assert "The user practices on Tuesdays after school" in active(org_a)
    result = turn(org_a, "s1", "oh wait, practice is on Thursdays now, they changed the gym schedule")
    # superseded by the new value when it is among the new one's nearest memories, else withdrawn
    replaced = [e["old_content"] for e in result["superseded"]] + [w["content"] for w in result["withdrawn"]]
    assert replaced == ["The user practices on Tuesdays after school"]
    kept = active(org_a)
    assert "The user practices on Thursdays after school" in kept
    assert "The user practices on Tuesdays after school" not in kept
    assert "The user coaches their son's under-12 basketball team" in kept


def test_a_take_back_touches_only_what_extraction_wrote_in_that_conversation(org_a):
    from memory.drafts import MemoryDraft
    from memory.services import memory_create

    # the same text told in another conversation, and written by hand, stay
    turn(org_a, "s0", "我对芒果过敏，吃了嘴巴会肿。", "好的。")
    memory_create(
        actor=system_actor(org_a),
        org=org_a,
        draft=MemoryDraft(content="用户对芒果过敏", user_id="u2"),
        dedup="none",
    )
    turn(org_a, "s1", "我对芒果过敏，吃了嘴巴会肿。", "好的，记下了。", user_id="u2")
    result = turn(org_a, "s1", "啊不是我，我帮同事问的 😂", user_id="u2")
    assert result["withdrawn"] == []  # u2's memory was written by hand; the turn merged into it
    assert active(org_a, "u2") == {"用户对芒果过敏"}
    assert active(org_a) == {"用户对芒果过敏"}


def test_the_job_page_lists_what_a_later_turn_withdrew(org_a, alice):
    from django.test import Client

    from memory.models import ExtractionJob

    turn(org_a, "s1", "我对芒果过敏，吃了嘴巴会肿。", "好的，记下了。", user_id="alice")
    withdrawn = turn(org_a, "s1", "啊不是我，我帮同事问的 😂", user_id="alice")["withdrawn"]
    job = ExtractionJob.objects.filter(org=org_a, user_id="alice").order_by("-id").first()
    web = Client()
    web.force_login(alice)
    queue = web.get("/queue/").content.decode()
    assert "withdrawn (taken back later) 1" in queue
    page = web.get(f"/queue/{job.pk}/").content.decode()
    assert "用户对芒果过敏" in page and f"/memories/{withdrawn[0]['id']}/" in page
    assert "taken back or corrected later in the conversation" in page
