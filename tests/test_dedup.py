"""Deduplication beyond cosine: the veto table, per-model and per-language thresholds, and merges with the
real local model through the services."""

import pytest

from memory.classify import classify
from memory.dedup import differs_materially, is_cross_lingual, numbers
from memory.drafts import MemoryDraft
from memory.models import MemoryItem, MemoryRevision
from memory.services import memory_create
from memory.thresholds import duplicate_threshold

VETOED = [
    ("用户住在北京", "用户住在上海"),
    ("用户养了两只猫", "用户养了三只猫"),
    ("用户的预算是五千元", "用户的预算是八千元"),
    ("用户喜欢喝咖啡", "用户不喜欢喝咖啡"),
    ("用户吃素", "用户不再吃素了"),
    ("团队每周一开例会", "团队每周三开例会"),
    ("用户的经理是张伟", "用户的经理是李娜"),
    ("The user lives in Berlin", "The user lives in Munich"),
    ("The standup is at 9:30", "The standup is at 10:00"),
    ("The user's budget is $5,000", "The user's budget is $8,000"),
    ("The user likes coffee", "The user does not like coffee"),
    ("The user prefers dark mode", "The user now prefers light mode"),
    ("The user's birthday is May 20", "The user's birthday is June 20"),
    ("Sarah is the user's manager", "Priya is the user's manager"),
    ("用户住在北京", "The user lives in Shanghai"),
    ("用户在 Google 工作", "The user works at Microsoft"),
    ("会议定在下午三点", "The meeting is at 4 pm"),
]
KEPT = [
    ("用户每天早上六点起床", "用户每天早晨 6 点起床"),
    ("密码策略要求至少十二位", "密码策略要求至少 12 位"),
    ("用户不喜欢开会", "用户讨厌开会"),
    ("用户的生日是 5 月 20 日", "用户生日在五月二十日"),
    ("用户周末通常去爬山", "用户周末一般会去爬山"),
    ("The user has two cats", "The user owns 2 cats"),
    ("The user does not eat meat", "The user doesn't eat meat"),
    ("The user dislikes long meetings", "The user doesn't like long meetings"),
    ("Sarah is the user's manager", "The user's manager is Sarah"),
    ("We are currently building the payments module", "The team is working on the payments module right now"),
    ("用户住在杭州", "The user lives in Hangzhou"),
    ("用户的生日是 5 月 20 日", "The user's birthday is May 20"),
    ("团队选择了 Next.js 而不是 Remix", "The team chose Next.js over Remix"),
]


@pytest.mark.parametrize(("a", "b"), VETOED)
def test_it_vetoes_hard_differences(a, b):
    assert differs_materially(a, b)
    assert differs_materially(b, a)


@pytest.mark.parametrize(("a", "b"), KEPT)
def test_it_lets_paraphrases_through(a, b):
    assert not differs_materially(a, b)


def test_it_reads_numbers_in_both_languages():
    assert numbers("五千元") == {"5000"} == numbers("5,000 yuan")
    assert numbers("十二位") == {"12"} == numbers("twelve characters")
    assert numbers("用户周末一般会去爬山") == set()
    assert numbers("May 20") == {"5", "20"} == numbers("5 月 20 日")
    assert numbers("you may 2 go") == {"2"}


def test_it_uses_per_model_and_per_language_thresholds(settings):
    settings.MEMORY_DUPLICATE_THRESHOLD = None
    assert duplicate_threshold("multilingual-e5-small") == 0.955
    assert duplicate_threshold("multilingual-e5-small", cross_lingual=True) == 0.835
    assert duplicate_threshold("text-embedding-3-small") == 0.92
    assert is_cross_lingual("用户住在杭州", "lives in Hangzhou") and not is_cross_lingual("a b", "c d")
    assert is_duplicate("用户住在杭州", "The user lives in Hangzhou", 0.84)
    assert not is_duplicate("用户住在杭州", "The user lives in Hangzhou", 0.83)
    assert not is_duplicate("用户住在杭州", "用户目前住在杭州", 0.85)
    settings.MEMORY_DUPLICATE_THRESHOLD = 0.8  # the env override wins for every model and language pair
    assert duplicate_threshold("multilingual-e5-small") == 0.8
    assert duplicate_threshold("multilingual-e5-small", cross_lingual=True) == 0.8
    assert is_duplicate("用户住在杭州", "用户目前住在杭州", 0.85)


def is_duplicate(existing: str, new: str, similarity: float) -> bool:
    """The write path's decision (memory.classify) is a merge."""
    return classify(existing, new, similarity, "multilingual-e5-small").kind == "duplicate"


def test_it_merges_paraphrases_and_translations_with_the_real_model(alice_actor, org_a):
    def create(text, **kw):
        return memory_create(
            actor=alice_actor, org=org_a, draft=MemoryDraft(content=text, user_id="alice", **kw)
        )

    first = create("用户对花生过敏", tags=["health"])
    assert first.created
    same = create("用户有花生过敏", tags=["food"])
    assert not same.created and same.duplicate_of == first.item.pk
    translated = create("The user wants replies in Chinese")
    assert translated.created
    translated = create("用户希望用中文回复")
    assert not translated.created and translated.duplicate_of != first.item.pk
    first.item.refresh_from_db()
    assert first.item.tags == ["health", "food"]
    assert MemoryRevision.objects.filter(item_ref=first.item.pk, action="merge").count() == 1
    # Close vectors, different facts: both kept.
    beijing = create("用户住在北京")
    shanghai = create("用户住在上海")
    cats2 = create("The user has two cats")
    cats3 = create("The user has three cats")
    assert all(r.created for r in (beijing, shanghai, cats2, cats3))
    assert MemoryItem.objects.filter(org=org_a).count() == 6


def test_it_does_not_merge_across_subjects(alice_actor, org_a, key_a):
    from projects.access import actor_for_key

    key_actor = actor_for_key(key_a[0])
    a = memory_create(
        actor=key_actor, org=org_a, draft=MemoryDraft(content="Likes black coffee", user_id="u1")
    )
    b = memory_create(
        actor=key_actor, org=org_a, draft=MemoryDraft(content="Likes black coffee", user_id="u2")
    )
    c = memory_create(
        actor=key_actor,
        org=org_a,
        draft=MemoryDraft(content="Likes black coffee", user_id="u1"),
        dedup="none",
    )
    assert a.created and b.created and c.created
