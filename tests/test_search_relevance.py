"""Relevance decides the order (memory/search/ranking.py): the current fact first, questions about the
past, nothing for an unknown topic, the threshold, long and odd queries. Through the API, with the local
embedding model, on memories stored with infer=false (nothing superseded at write time)."""

from datetime import UTC, datetime

import pytest
from django.utils import timezone

from memory.search.ranking import (
    SCOPE_PRIORITY,
    Hit,
    asks_when,
    before_what,
    cross_language_offset,
    current_first,
    final_score,
    final_weights,
    holder,
    neighbour_similarities,
    people_asked,
    previous_first,
    question_time,
    says_when,
    speaker,
    version_groups,
)

MEMORIES = [
    ("用户住在北京朝阳区，离望京SOHO不远", "2022-03-01T09:00:00Z"),
    ("用户今年四月搬到了上海徐汇区，租了一套两居室", "2025-04-18T09:00:00Z"),
    ("用户对花生过敏，吃到会起荨麻疹", "2023-09-12T09:00:00Z"),
    ("用户每周二和周四晚上去健身房练力量", "2024-11-03T09:00:00Z"),
    ("用户喝咖啡只喝美式，不加糖不加奶", "2024-05-02T09:00:00Z"),
    ("用户在一家做跨境电商的公司当后端工程师，主要写 Go", "2024-01-10T09:00:00Z"),
    ("The user's dog Biscuit is a twelve-year-old border collie", "2024-03-16T09:00:00Z"),
]


@pytest.fixture(autouse=True)
def relevance_ranking(settings):
    """These tests are about SEARCH_RANKING=relevance (the default), whatever the environment says."""
    settings.SEARCH_RANKING = "relevance"


def _store(client, memories) -> list[int]:
    """Store (text, occurred_at) pairs as alice's facts with infer=false; their ids in order."""
    body = {
        "memories": [
            {"content": text, "user_id": "alice", "memory_type": "fact", "occurred_at": when}
            for text, when in memories
        ],
        "infer": False,
    }
    response = client.post("/api/v1/memories/batch", body, format="json")
    assert response.status_code in (200, 201, 207), response.content
    return [row["id"] for row in sorted(response.json()["results"], key=lambda r: r["index"])]


@pytest.fixture
def stored(alice_client):
    return dict(zip([text for text, _ in MEMORIES], _store(alice_client, MEMORIES), strict=True))


def _search(client, query, **extra):
    body = {"query": query, "user_id": "alice", "top_k": 8, "explain": True, **extra}
    response = client.post("/api/v1/memories/search", body, format="json")
    assert response.status_code == 200, response.content
    return response.json()["results"]


def test_the_current_version_comes_first_and_the_stale_one_below_the_other_hits(alice_client, stored):
    beijing, shanghai = stored[MEMORIES[0][0]], stored[MEMORIES[1][0]]
    for query in ("我现在住在哪里？", "where do I live now?"):
        results = _search(alice_client, query, threshold=0)
        order = [r["id"] for r in results]
        assert order[0] == shanghai, (query, results)
        # Nothing is deleted: the old address is still there, marked stale, below every other hit above it
        assert beijing in order
        stale = next(r for r in results if r["id"] == beijing)
        assert stale["explain"]["stale"] is True
        # ... below every other hit at or above the floor (threshold 0 here: every hit), with a lower score
        others = [r for r in results if r["id"] != beijing]
        assert len(others) == len(MEMORIES) - 1
        assert order.index(beijing) == len(order) - 1
        assert stale["score"] < min(r["score"] for r in others)
    # Both rows are active: nothing was superseded at write time.
    statuses = {alice_client.get(f"/api/v1/memories/{pk}").json()["status"] for pk in (beijing, shanghai)}
    assert statuses == {"active"}


def test_a_question_about_the_past_finds_the_old_version(alice_client, stored):
    beijing = stored[MEMORIES[0][0]]
    for query in ("我搬家之前住在哪个区", "where did I live in 2022", "我以前住在哪"):
        results = _search(alice_client, query, threshold=0)
        assert results[0]["id"] == beijing, (query, results)
        assert not results[0]["explain"]["stale"]


def test_an_unknown_topic_answers_nothing(alice_client, stored):
    for query in ("xyzzy", "qwrtplk zzvx", "🦄🦄🦄"):
        assert _search(alice_client, query) == [], query
    # the same through /context: "relevant" stays empty, core and profile are unaffected
    response = alice_client.post("/api/v1/context", {"user_id": "alice", "query": "xyzzy"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["relevant"] == []
    # a real question still answers, with the right memory first
    results = _search(alice_client, "我对什么食物过敏")
    assert results and results[0]["id"] == stored[MEMORIES[2][0]]


def test_the_threshold_leaves_out_weaker_hits_and_scores_stay_in_0_1(alice_client, stored):
    everything = _search(alice_client, "我对什么食物过敏", threshold=0)
    assert len(everything) == len(MEMORIES)
    assert all(0 <= r["score"] <= 1 for r in everything)
    assert everything[0]["id"] == stored[MEMORIES[2][0]]
    # Scores are rounded to 4 places in the answer: a threshold just under the best one's keeps it alone.
    cut = everything[0]["score"] - 0.001
    assert everything[1]["score"] < cut
    strict = _search(alice_client, "我对什么食物过敏", threshold=cut)
    assert [r["id"] for r in strict] == [everything[0]["id"]]
    assert all(r["score"] >= cut for r in strict)
    for bad in (1.5, -0.1, "high"):
        response = alice_client.post(
            "/api/v1/memories/search", {"query": "x", "user_id": "alice", "threshold": bad}, format="json"
        )
        assert response.status_code == 400
        assert "threshold" in response.content.decode()


def test_long_and_odd_queries_are_answered(alice_client, stored):
    allergy = stored[MEMORIES[2][0]]
    # one 3,000-character word: no 500 (PostgreSQL refuses words over 2,047 characters in a tsquery)
    response = alice_client.post(
        "/api/v1/memories/search", {"query": "a" * 3000, "user_id": "alice"}, format="json"
    )
    assert response.status_code == 200, response.content
    # a 10,000-character query: the question first, then a long paste; still answered
    query = "我对什么食物过敏？" + " ".join(f"词{i} word{i}" for i in range(1200))
    query = query[:10_000]
    assert len(query) == 10_000
    results = _search(alice_client, query, threshold=0)
    assert allergy in [r["id"] for r in results[:3]]
    # emoji and other scripts
    for text in ("☕ 咖啡", "кофе", "コーヒー", "커피"):
        assert (
            alice_client.post(
                "/api/v1/memories/search", {"query": text, "user_id": "alice"}, format="json"
            ).status_code
            == 200
        )
    # a NUL byte is a 400 naming the field
    response = alice_client.post(
        "/api/v1/memories/search", {"query": "peanut\x00", "user_id": "alice"}, format="json"
    )
    assert response.status_code == 400
    assert "query" in response.json()["error"]["message"]


# ---- without the database ---------------------------------------------------------------------------


def test_question_time_tells_past_from_present():
    assert question_time("where did I live in 2022", 2026) == ("past", 2022)
    assert question_time("我搬家之前住在哪", 2026) == ("past", None)
    assert question_time("what did I use before", 2026) == ("past", None)
    assert question_time("我现在住在哪里", 2026) == ("present", None)
    assert question_time("where do I live now", 2026) == ("present", None)
    assert question_time("目前的领导是谁", 2026) == ("present", None)
    assert question_time("where do I live", 2026) == ("", None)
    assert question_time("what is planned for 2027", 2026) == ("", None)  # a future year is no past


def _hit(pk, score, content, year, memory_type="fact"):
    when = datetime(year, 6, 1, tzinfo=UTC)
    row = {"id": pk, "content": content, "memory_type": memory_type, "occurred_at": when, "created_at": when}
    return Hit(row=row, vector_similarity=0.9, keyword_raw=0, relevance=score, score=score)


def _paired(*hits):
    """A version group as version_groups makes it: every two of these paired."""
    for h in hits:
        h.paired |= {o.id for o in hits if o is not h}
    return list(hits)


def test_current_first_orders_versions_by_time_and_drops_the_stale_one():
    old = _hit(1, 0.9, "lives in Beijing", 2022)
    other = _hit(2, 0.6, "likes tea", 2024)
    weak = _hit(3, 0.05, "has a dog", 2024)
    new = _hit(4, 0.5, "moved to Shanghai", 2025)
    hits = [old, other, new, weak]
    out = current_first(list(hits), [_paired(old, new)], past=False, year=None, floor=0.1)
    # the newest takes the group's best place and score; the old one drops below the other hits above
    # the floor, with a score under theirs; the hit under the floor stays last
    assert [h.id for h in out] == [4, 2, 1, 3]
    assert new.score == 0.9 and old.stale and old.score < other.score
    # a question about the past: the old version first, nothing dropped
    for h, score in ((old, 0.9), (new, 0.5)):
        h.score, h.stale = score, False
    out = current_first([old, other, new, weak], [_paired(old, new)], past=True, year=None, floor=0.1)
    assert [h.id for h in out] == [1, 4, 2, 3] and not any(h.stale for h in out)  # the versions together
    # a year: the version stated by the end of that year
    mid = _hit(5, 0.7, "moved to Hangzhou", 2023)
    out = current_first([old, mid, new], [_paired(old, mid, new)], past=True, year=2023, floor=0.1)
    assert out[0].id == 5


def test_a_version_that_may_be_something_else_stays_right_after_the_newest():
    # "what car do I drive now": a newer memory that answers too but names another attribute (and says
    # "switched") may be a wrong version; the answer follows it instead of dropping below every other hit
    car = _hit(1, 0.9, "Leases a Kia EV6", 2024)
    other = _hit(2, 0.5, "Parks in the garage under the office", 2023)
    third = _hit(3, 0.4, "Washes the car on Sundays", 2022)
    desk = _hit(4, 0.3, "Switched to a standing desk at the office", 2025, memory_type="event")
    out = current_first([car, other, third, desk], [_paired(car, desk)], past=False, year=None, floor=0.1)
    assert [h.id for h in out] == [4, 1, 2, 3] and not car.stale and car.score == 0.9
    # the same attribute named in both: the old version drops
    old = _hit(5, 0.9, "Drives a 2012 Honda Civic", 2021)
    new = _hit(6, 0.3, "Now drives a Kia EV6", 2024)
    out = current_first([old, other, third, new], [_paired(old, new)], past=False, year=None, floor=0.1)
    assert [h.id for h in out] == [6, 2, 3, 5] and old.stale


def test_a_member_only_paired_with_another_member_does_not_go_first():
    # "我现在用的是什么手机": the new phone is paired with the old one, and a newer memory about a water heater
    # ("换了台新的") only with the new phone; the group holds all three, the heater is no version of the answer
    old = _hit(1, 0.95, "用户用的手机是华为 Mate 40", 2021)
    new = _hit(2, 0.3, "用户换了 iPhone 15 Pro，华为那台给爸爸用了", 2024)
    heater = _hit(3, 0.2, "用户家里的热水器上个月坏了，刚换了台新的", 2025)
    other = _hit(4, 0.25, "用户喜欢看悬疑小说", 2023)
    _paired(old, new)
    _paired(new, heater)
    out = current_first([old, other, new, heater], [[old, new, heater]], past=False, year=None, floor=0.1)
    assert out[0].id == 2 and out[0].score == 0.95
    # the heater still follows right after (a group can be wrong); the old phone, the same attribute, drops
    assert [h.id for h in out] == [2, 3, 4, 1] and old.stale and not heater.stale
    # a question about the past: the version of that time among the answer's versions, the heater never
    for h, score in ((old, 0.95), (new, 0.3), (heater, 0.2)):
        h.score, h.stale = score, False
    out = current_first([old, heater, new], [[old, heater, new]], past=True, year=None, floor=0.1)
    assert out[0].id == 1
    out = current_first([old, heater, new], [[old, heater, new]], past=True, year=2025, floor=0.1)
    assert out[0].id == 2


def test_a_move_told_as_an_event_in_chinese_is_a_new_version():
    import numpy as np

    # "我现在住在成都哪个区": the old address's most similar hit is the job, not the move; the move is an
    # event, and one that states a change ("搬到了", as "moved" in English) is a version all the same
    old = _hit(1, 0.99, "用户住在成都武侯区的玉林小区。", 2017)
    job = _hit(2, 0.96, "用户是一名小学语文老师，在成都工作。", 2017)
    moved = _hit(3, 0.94, "用户一家搬到了成都高新区的大源，离丈夫单位更近。", 2021, "event")
    sims = np.array([[1.0, 0.937, 0.932], [0.937, 1.0, 0.928], [0.932, 0.928, 1.0]])
    groups = version_groups([old, job, moved], sims, "multilingual-e5-small", 0.0, gap=1.0, mutual=False)
    group = next(g for g in groups if 3 in {h.id for h in g})
    assert 1 in {h.id for h in group}
    out = current_first([old, job, moved], groups, past=False, year=None, floor=0.1)
    assert out[0].id == 3
    # a trip told the same way is still no version
    trip = _hit(4, 0.94, "用户国庆节带女儿去重庆玩了三天。", 2023, "event")
    groups = version_groups([old, job, trip], sims, "multilingual-e5-small", 0.0, gap=1.0, mutual=False)
    assert all(4 not in {h.id for h in g} for g in groups)


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("What car did I drive before the Tesla?", {"tesla"}),
        ("Where did I live before Manchester?", {"manchester"}),
        ("我怀孕前下午习惯喝什么？", {"怀孕"}),
        ("读博之前我在哪个学校念的书？", {"读博"}),
        ("我以前住在哪里？", set()),  # "before" without X: previously
        ("Which phone did I have before?", set()),
        ("以前我测血糖是怎么测的？", set()),
    ],
)
def test_before_what_reads_the_newer_value_a_question_names(query, named):
    assert before_what(query) == frozenset(named)


def test_the_value_before_the_one_named_goes_first():
    import numpy as np

    # "What car did I drive before the Tesla?": the Tesla memory matches best; the older car, the memory most
    # similar to it, is the answer; an older memory that is merely related (e5-small: most are) is not
    tesla = _hit(1, 0.94, "用户的车是 Tesla Model Y。", 2022)
    weekend = _hit(2, 0.79, "用户周末常开 Tesla 带孩子去杭州看外公外婆。", 2025)
    kevin = _hit(3, 0.05, "Kevin 离开了 McKinsey，去一家新能源车企做战略总监。", 2020)
    vw = _hit(4, 0.04, "用户开一辆 Volkswagen Tiguan。", 2018)
    tea = _hit(5, 0.03, "用户爱喝龙井。", 2019)
    hits = [tesla, weekend, kevin, vw, tea]
    sims = np.array(
        [
            [1.0, 0.90, 0.84, 0.91, 0.83],
            [0.90, 1.0, 0.82, 0.86, 0.82],
            [0.84, 0.82, 1.0, 0.83, 0.81],
            [0.91, 0.86, 0.83, 1.0, 0.82],
            [0.83, 0.82, 0.81, 0.82, 1.0],
        ]
    )
    named = before_what("What car did I drive before the Tesla?")
    out = previous_first(hits, sims, named, "multilingual-e5-small")
    assert [h.id for h in out] == [4, 1, 2, 3, 5] and vw.score == 0.94
    # the older value above the named one already: it stays where it is
    order = [3, 2, 0, 1, 4]
    above = [hits[i] for i in order]
    assert previous_first(above, sims[np.ix_(order, order)], named, "multilingual-e5-small") == above
    # the question names nothing the hits hold: nothing moves
    assert (
        previous_first(
            hits, sims, before_what("What did I drive before the Subaru?"), "multilingual-e5-small"
        )
        == hits
    )
    # the only older hit is not even "related" to the named one: nothing moves
    tea_far = _hit(6, 0.03, "用户爱喝龙井。", 2019)
    sub = np.array([[1.0, 0.90, 0.80], [0.90, 1.0, 0.80], [0.80, 0.80, 1.0]])
    out = previous_first([tesla, weekend, tea_far], sub, named, "multilingual-e5-small")
    assert [h.id for h in out] == [1, 2, 6]


def test_an_event_that_states_a_change_is_a_version_and_other_events_are_not():
    import numpy as np

    old = _hit(1, 0.6, "Uses a Google Pixel 4a", 2021)
    switched = _hit(2, 0.4, "Switched to an iPhone 14 after the Pixel's screen cracked", 2023, "event")
    trip = _hit(3, 0.4, "Bought a phone case for the Pixel in Tokyo", 2024, "event")
    sims = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, 0.85], [0.9, 0.85, 1.0]])
    groups = version_groups([old, switched, trip], sims, "multilingual-e5-small", 0.0, gap=1.0, mutual=False)
    assert [sorted(h.id for h in g) for g in groups] == [[1, 2]]


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("用户的妈妈住在绵阳", "mother"),
        ("The user's mum is a retired head teacher", "mother"),
        ("用户父母住在香港屯门", "parents"),
        ("Partner João runs a surf school", "partner"),
        ("The user's best friend lives in Oslo", "friend"),
        ("用户住在成都高新区", ""),
        ("用户和男朋友在高新区合租", ""),  # with him: still the user's home
        ("用户在朋友圈看到老同学结婚了", ""),  # 朋友圈 is WeChat Moments
        ("The user's thesis supervisor is Dr. Amara Osei", ""),  # who the supervisor is: the user's own
    ],
)
def test_holder_tells_whose_attribute_a_memory_states(text, person):
    assert holder(text) == person


def test_a_question_names_the_people_it_asks_about():
    assert people_asked("我妈住在哪") == {"mother"}
    assert people_asked("What do my parents do for a living?") == {"parents"}
    assert people_asked("我兄弟是做什么的") == {"sibling"}
    # spoken words for a spouse name the spouse the memory states ("用户的妻子…")
    assert people_asked("我媳妇在哪上班？") == {"spouse"} == {holder("用户的妻子叫刘婷，是儿科医生")}
    assert people_asked("我老伴爱吃什么") == {"spouse"}
    assert people_asked("我闺女几岁了") == {"child"}
    assert people_asked("我现在住在哪") == set()
    assert people_asked("Where do I live now?") == set()


def test_another_persons_attribute_comes_after_the_users_own_unless_asked():
    from memory.search.ranking import score_hits

    def hit(pk, content, cosine, bm25, coverage):
        row = {"id": pk, "content": content, "confidence": 1.0, "scope": "user"}
        return Hit(row=row, vector_similarity=cosine, keyword_raw=bm25, coverage=coverage)

    def hits():
        # the same match in every respect; on a tie the higher id would go first
        return [
            hit(1, "Lives in Bristol, near the harbour", 0.86, 1.0, 0.3),
            hit(2, "The user's mum lives in Leeds", 0.86, 1.0, 0.3),
            *(hit(10 + k, f"Filler {k}", 0.80, 0.0, 0.0) for k in range(6)),
        ]

    mine = hits()
    score_hits(mine, "multilingual-e5-small", "Where do I live?")
    assert [h.id for h in mine[:2]] == [1, 2] and mine[0].fused > mine[1].fused
    theirs = hits()
    score_hits(theirs, "multilingual-e5-small", "Where does my mum live?")
    assert [h.id for h in theirs[:2]] == [2, 1]


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("Caroline: I went to a LGBTQ support group yesterday", "caroline"),
        ("John Smith: Just finished rereading Dune", "john"),
        ("王磊：我下周去杭州出差", "王磊"),
        ("The user's mum lives in Leeds", ""),
        ("用户住在成都高新区", ""),
        ("https://example.com: a link", ""),
        ("Prefers answers in Python: no Java examples", ""),
    ],
)
def test_speaker_tells_who_said_a_transcript_line(text, who):
    assert speaker(text) == who


def test_a_line_another_speaker_said_comes_after_the_named_speakers():
    from memory.search.ranking import score_hits

    def hit(pk, content):
        # the same match in every respect; on a tie the higher id would go first
        row = {"id": pk, "content": content, "confidence": 1.0, "scope": "user"}
        return Hit(row=row, vector_similarity=0.86, keyword_raw=1.0, coverage=0.3)

    def hits():
        return [
            hit(1, "Caroline: I've been looking into adoption agencies lately"),
            hit(2, "Melanie: Caroline, I read about adoption agencies too!"),
            *(
                Hit(
                    row={"id": 10 + k, "content": f"Melanie: filler {k}", "confidence": 1.0, "scope": "user"},
                    vector_similarity=0.80,
                    keyword_raw=0.0,
                    coverage=0.0,
                )
                for k in range(6)
            ),
        ]

    asked = hits()
    score_hits(asked, "multilingual-e5-small", "What did Caroline research?")
    assert [h.id for h in asked[:2]] == [1, 2] and asked[0].fused > asked[1].fused
    other = hits()
    score_hits(other, "multilingual-e5-small", "What did Melanie read about?")
    assert [h.id for h in other[:2]] == [2, 1]
    # A question that names neither speaker leaves the tie as it is (the higher id first).
    neither = hits()
    score_hits(neither, "multilingual-e5-small", "Who looked into adoption agencies?")
    assert [h.id for h in neither[:2]] == [2, 1] and neither[0].fused == neither[1].fused


@pytest.mark.parametrize(
    ("query", "when"),
    [
        ("When did Caroline go to the support group?", True),
        ("How long has Melanie been painting?", True),
        ("我什么时候拿到驾照的？", True),
        ("豆包是哪年领养的", True),
        ("What did Caroline research?", False),
        ("我现在住在哪？", False),
        ("What does Jon do when he is stressed?", False),  # "when" inside: not a question about a time
    ],
)
def test_asks_when_tells_a_question_about_a_time(query, when):
    assert asks_when(query) is when


@pytest.mark.parametrize(
    ("text", "when"),
    [
        ("Caroline: I went to a LGBTQ support group yesterday", True),
        ("用户2024年11月拿到了驾照", True),
        ("用户上个月搬到了杭州", True),
        ("The user moved to Leeds in March", True),
        ("Melanie: That's so cool, I love it!", False),
        ("用户对芒果过敏", False),
    ],
)
def test_says_when_tells_a_memory_that_states_a_time(text, when):
    assert says_when(text) is when


def test_a_question_about_when_puts_the_memory_that_says_when_first():
    from memory.search.ranking import score_hits

    def hit(pk, content, cosine=0.86, bm25=1.0, coverage=0.3):
        row = {"id": pk, "content": content, "confidence": 1.0, "scope": "user"}
        return Hit(row=row, vector_similarity=cosine, keyword_raw=bm25, coverage=coverage)

    def hits():
        # the same match in every respect; on a tie the higher id would go first
        return [
            hit(1, "Went to a pottery workshop last Friday with the kids"),
            hit(2, "Loves the pottery workshop, it is so calming"),
            *(hit(10 + k, f"Filler {k}", 0.80, 0.0, 0.0) for k in range(6)),
        ]

    when = hits()
    score_hits(when, "multilingual-e5-small", "When did I go to the pottery workshop?")
    assert [h.id for h in when[:2]] == [1, 2] and when[0].fused > when[1].fused
    what = hits()
    score_hits(what, "multilingual-e5-small", "What do I think of the pottery workshop?")
    assert [h.id for h in what[:2]] == [2, 1] and what[0].fused == what[1].fused


def test_another_persons_attribute_is_no_version_of_the_users():
    import numpy as np

    home = _hit(1, 0.6, "用户搬到了成都高新区天府三街，和男朋友一起住", 2024)
    mother = _hit(2, 0.9, "用户的妈妈住在绵阳，是退休的中学语文老师", 2025)
    old_home = _hit(3, 0.5, "用户住在成都武侯区玉林路附近", 2022)
    sims = np.array([[1.0, 0.9, 0.95], [0.9, 1.0, 0.9], [0.95, 0.9, 1.0]])
    groups = version_groups(
        [mother, home, old_home],
        sims[np.ix_([1, 0, 2], [1, 0, 2])],
        "multilingual-e5-small",
        0.0,
        gap=1.0,
        mutual=False,
    )
    assert [sorted(h.id for h in g) for g in groups] == [[1, 3]]


def test_only_mutually_closest_hits_are_versions_unless_the_question_names_a_time():
    import numpy as np

    answer = _hit(1, 0.6, "Takes warfarin, so keeps leafy greens to small amounts", 2023)
    filler = _hit(2, 0.5, "Switched to a standing desk at the office", 2025)
    desk = _hit(3, 0.4, "Sits by the window at the office", 2025)
    old_phone, new_phone = (
        _hit(4, 0.45, "Uses an Android phone", 2022),
        _hit(5, 0.44, "Switched to an iPhone", 2025),
    )
    hits = [answer, filler, desk, old_phone, new_phone]
    sims = np.array(
        [
            [0.0, 0.83, 0.80, 0.78, 0.78],
            [0.83, 0.0, 0.93, 0.79, 0.80],
            [0.80, 0.93, 0.0, 0.78, 0.78],
            [0.78, 0.79, 0.78, 0.0, 0.91],
            [0.78, 0.80, 0.78, 0.91, 0.0],
        ],
        dtype=np.float32,
    )
    model = "multilingual-e5-small"
    # The newer filler says "switched" and reaches the related cosine with the answer, but it is closest to
    # another hit: no version group, so the answer is not made stale. The phones are each other's closest.
    groups = version_groups(hits, sims, model, 0.1)
    assert [[h.id for h in g] for g in groups] == [[4, 5]]
    # Without the mutual condition (a question about now or the past asks for versions) the filler pairs too.
    loose = version_groups(hits, sims, model, 0.1, gap=1.0, mutual=False)
    assert sorted(sorted(h.id for h in g) for g in loose) == [[1, 2], [4, 5]]


def test_for_a_question_about_a_time_each_others_closest_hits_are_versions():
    import numpy as np

    # The newer states the new value plainly: no change word, no attribute named in both.
    old = _hit(1, 0.95, "Drives a 2012 Honda Odyssey minivan", 2023)
    new = _hit(2, 0.2, "Leases a Kia EV6", 2025)
    tea = _hit(3, 0.15, "Drinks oolong tea in the afternoon", 2024)
    sims = np.array([[0.0, 0.88, 0.80], [0.88, 0.0, 0.79], [0.80, 0.79, 0.0]], dtype=np.float32)
    model = "multilingual-e5-small"
    # A question about now: each other's most similar hits, so versions (the newer goes first).
    groups = version_groups([old, new, tea], sims, model, 0.1, gap=1.0, mutual=False)
    assert [[h.id for h in g] for g in groups] == [[1, 2]]
    ordered = current_first([old, new, tea], groups, past=False, year=None, floor=0.1)
    assert [h.id for h in ordered][:2] == [2, 1]
    # Without a word about time they are two facts, even as close in relevance as can be.
    close_new = _hit(2, 0.9, "Leases a Kia EV6", 2025)
    assert version_groups([old, close_new, tea], sims, model, 0.1) == []
    # With a change word they would be versions then.
    switched = _hit(2, 0.9, "Switched to a leased Kia EV6", 2025)
    assert [[h.id for h in g] for g in version_groups([old, switched, tea], sims, model, 0.1)] == [[1, 2]]


def test_for_a_question_about_now_a_version_must_be_among_the_closest_hits():
    import numpy as np

    old = _hit(1, 0.9, "Lives in a flat in Leeds", 2021)
    new = _hit(2, 0.2, "Moved to Bristol in February", 2024)
    hijacker = _hit(3, 0.05, "Now writes all code in VS Code", 2025)
    others = [
        _hit(4 + n, 0.04, text, 2021) for n, text in enumerate(("Has a cat", "Likes tea", "Plays chess"))
    ]
    hits = [old, new, hijacker, *others]
    sims = np.full((6, 6), 0.79, dtype=np.float32)
    np.fill_diagonal(sims, 0.0)
    sims[0, 1] = sims[1, 0] = 0.90  # the two addresses are each other's closest
    sims[0, 3:] = sims[3:, 0] = 0.83
    sims[2, 3:] = sims[3:, 2] = 0.86
    sims[0, 2] = sims[2, 0] = 0.82  # "related", but the fifth of the old address's neighbours
    groups = version_groups(hits, sims, "multilingual-e5-small", 0.0, gap=1.0, mutual=False)
    # The newer memory that says "now" about something else is not the old address's new version.
    assert next(sorted(h.id for h in g) for g in groups if old in g) == [1, 2]


def test_a_new_value_in_the_other_language_is_a_version_for_a_question_about_now(settings):
    import numpy as np

    settings.SEARCH_RANKING = "relevance"
    # A mostly Chinese subject: the old car in Chinese, the new one in English. Across languages e5-small puts
    # even a translation below the Chinese fillers, so the English new value was among neither's nearest.
    old = _hit(1, 0.31, "用户开一辆白色的大众朗逸。", 2018)
    fillers = [
        _hit(2 + n, 0.03, text, 2020) for n, text in enumerate(("用户养了一只柯基。", "用户在携程上班。"))
    ]
    runners = [
        _hit(4 + n, 0.01, text, 2021)
        for n, text in enumerate(
            ("The user ran a marathon.", "The user plays Go.", "The user reads Le Monde.")
        )
    ]
    new = _hit(7, 0.004, "The user drives a blue Tesla Model 3.", 2022)
    hits = [old, *fillers, *runners, new]
    sims = np.full((7, 7), 0.75, dtype=np.float32)  # across languages
    sims[:3, :3] = 0.92  # the Chinese memories among themselves
    sims[3:, 3:] = 0.80  # the English ones
    sims[0, 1:3] = sims[1:3, 0] = 0.905
    sims[0, 6] = sims[6, 0] = 0.785  # the two cars: "related" across languages (0.77), fourth in raw order
    np.fill_diagonal(sims, 0.0)
    model = "multilingual-e5-small"
    near = neighbour_similarities(hits, sims, model)
    # Each over the old one's own background in the other's language: the median of its cosines with the four
    # English hits; with two other Chinese hits (under NEIGHBOUR_LEVEL_COUNT) its Chinese background is the
    # English one plus the model's gap between the languages (0.065).
    assert near[0, 6] == pytest.approx(0.785 - 0.75, abs=1e-4)
    assert near[0, 1] == pytest.approx(0.905 - (0.75 + 0.065), abs=1e-4)
    # the new car's nearest hit is the old one (its English hits sit at 0.80 to it, the Chinese at 0.75)
    assert int(np.argmax(near[6])) == 0 and near[6, 6] < near[6].min() + 1e-6
    groups = version_groups(hits, sims, model, 0.0, gap=1.0, mutual=False)
    assert next(sorted(h.id for h in g) for g in groups if old in g) == [1, 7]
    ordered = current_first(hits, groups, past=False, year=None, floor=0.0)
    assert ordered[0] is new


def test_a_hits_neighbours_are_told_over_its_own_background_in_each_language(settings):
    import numpy as np

    settings.SEARCH_RANKING = "relevance"
    # A mostly English subject with some Chinese fillers. The new car is an English memory whose most similar hit
    # is the old car (0.88; other English hits 0.80). A fixed gap added to every pair across languages made a
    # Chinese filler at 0.82 (0.885 with it) the new car's nearest, so the two were no versions.
    old = _hit(1, 0.99, "Drives a 2012 Honda Odyssey minivan", 2023)
    new = _hit(2, 0.12, "Traded the Odyssey for a used Subaru Outback", 2025)
    english = [
        _hit(3 + n, 0.05, t, 2024) for n, t in enumerate(("Listens to podcasts", "Grades essays", "Runs"))
    ]
    chinese = [
        _hit(6 + n, 0.02, t, 2024)
        for n, t in enumerate(("用户的电动牙刷是飞利浦的", "用户喜欢喝茶", "用户养猫"))
    ]
    hits = [old, new, *english, *chinese]
    sims = np.full((8, 8), 0.80, dtype=np.float32)
    sims[:5, 5:] = sims[5:, :5] = 0.76  # across languages
    sims[5:, 5:] = 0.90  # the Chinese fillers among themselves
    sims[0, 1] = sims[1, 0] = 0.88  # the two cars
    sims[1, 5] = sims[5, 1] = 0.82  # the toothbrush, near the new car for a text in the other language
    np.fill_diagonal(sims, 0.0)
    model = "multilingual-e5-small"
    near = neighbour_similarities(hits, sims, model)
    assert int(np.argmax(near[1])) == 0 and int(np.argmax(near[0])) == 1  # each other's nearest
    assert sims[1, 5] + cross_language_offset(model) > sims[1, 0]  # which the fixed gap did not see
    groups = version_groups(hits, sims, model, 0.0, gap=1.0, mutual=False)
    assert [sorted(h.id for h in g) for g in groups] == [[1, 2]]
    assert current_first(hits, groups, past=False, year=None, floor=0.0)[0] is new


def test_confidence_and_scope_only_break_ties(settings):
    settings.SEARCH_RANKING = "relevance"
    settings.SEARCH_ADJUSTMENT = 0.06
    weights = final_weights()
    strong = Hit(row={"id": 1, "confidence": 0.2, "scope": "user"}, vector_similarity=0.9, keyword_raw=0)
    weak = Hit(row={"id": 2, "confidence": 1.0, "scope": "session"}, vector_similarity=0.9, keyword_raw=0)
    strong.relevance, weak.relevance = 0.8, 0.7
    final_score(strong, weights)
    final_score(weak, weights)
    # a clearly better match wins whatever its confidence and scope; the adjustment is at most 0.06
    assert strong.score > weak.score
    band = settings.SEARCH_FEEDBACK_WEIGHT
    assert 0.8 - (strong.score - band) / (1 - 2 * band) <= 0.06 + 1e-9
    assert (weak.score - band) / (1 - 2 * band) - 0.7 <= 0.06 + 1e-9
    # comparable matches: the confident session memory goes first
    strong.relevance = 0.71
    final_score(strong, weights)
    assert weak.score > strong.score
    assert SCOPE_PRIORITY["session"] > SCOPE_PRIORITY["user"]
    # the seed formula stays available
    settings.SEARCH_RANKING = "seed"
    final_score(strong)
    assert strong.score == pytest.approx(0.5 * 0.71 + 0.3 * 0.2 + 0.2 * 0.6)
    assert timezone.now()  # settings restored by the fixture


def test_a_chinese_question_finds_its_english_answer_among_chinese_memories(alice_client, stored):
    # e5 scores two texts of one language higher than a text and its translation: each language pair is
    # measured against its own background, so the English answer is not outranked by Chinese memories.
    dog = stored[MEMORIES[6][0]]
    for query in ("我的狗是什么品种", "我家狗狗几岁了"):
        results = _search(alice_client, query)
        assert results and results[0]["id"] == dog, (query, results)
        assert results[0]["explain"]["language_pair"] == "zh-en"


def test_a_subject_with_one_memory_gets_it_back(alice_client):
    response = alice_client.post(
        "/api/v1/memories",
        {"content": "The user's cat is called Miso", "user_id": "alice"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = {"query": "what is my cat's name", "user_id": "alice", "explain": True}
    results = alice_client.post("/api/v1/memories/search", body, format="json").json()["results"]
    # One memory measures no background: the floor does not apply (five candidates with a vector do).
    assert [r["id"] for r in results] == [response.json()["id"]]


@pytest.mark.parametrize(
    ("old", "new", "now_question", "past_question"),
    [
        (
            "Takes the number 12 bus to the office",
            "Cycles to the office along the canal path",
            "How do I get to the office these days?",
            "How did I get to the office before?",
        ),
        (
            "Follows a low-carb diet",
            "Eats a plant-based diet with lots of lentils",
            "What diet am I on now?",
            "What diet was I on before?",
        ),
    ],
)
def test_two_answers_to_a_question_about_now_are_versions_without_a_change_word(
    alice_client, old, new, now_question, past_question
):
    # Neither memory says what changed: the question about now says its answer changed, so two related
    # memories that both answer it are versions (ranking.VERSION_BOTH_ANSWER).
    memories = [
        (old, "2021-04-01T09:00:00Z"),
        (new, "2024-06-01T09:00:00Z"),
        ("Plays five-a-side football on Tuesdays", "2023-02-01T09:00:00Z"),
        ("Allergic to penicillin", "2022-08-01T09:00:00Z"),
        ("Has a sister in Glasgow", "2022-09-01T09:00:00Z"),
        ("Reads a chapter of a novel before bed", "2024-01-01T09:00:00Z"),
    ]
    ids = _store(alice_client, memories)
    now = _search(alice_client, now_question, threshold=0)
    assert now[0]["id"] == ids[1], now
    # the old one drops below the other hits when both name the attribute (the commute), else it follows
    # the current one (the diets: see ranking.current_first)
    stale = next(r for r in now if r["id"] == ids[0])["explain"]["stale"]
    assert stale is ("office" in old) and (stale or now[1]["id"] == ids[0]), now
    past = _search(alice_client, past_question, threshold=0)
    assert past[0]["id"] == ids[0], past


CHINESE_LIFE = [
    "用户在杭州一家电商公司做运营",
    "用户每天早上喝一杯豆浆",
    "用户周末喜欢去西湖边骑自行车",
    "用户养了一只橘猫，叫大橘",
    "用户的女儿今年上小学二年级",
    "用户用的手机是小米14",
    "用户不吃香菜",
    "用户每周三晚上打羽毛球",
    "用户的老家在安徽黄山",
    "用户正在学做烘焙，最拿手的是戚风蛋糕",
    "用户开一辆白色的比亚迪秦",
    "用户希望回答尽量简短，用要点列出来",
    "用户的妻子是中学英语老师",
    "用户每年春节都回黄山过年",
    "用户喜欢看悬疑小说，最喜欢东野圭吾",
    "用户住在杭州滨江区的一个小区",
    "用户有轻度腰椎间盘突出，不能久坐",
    "用户上班坐地铁6号线",
    "用户喜欢喝龙井茶，不太喝咖啡",
    "用户去年在云南大理玩了一周",
    "用户的父母住在黄山市区",
    "用户在公司负责618和双十一的大促活动",
    "用户近视五百度，平时戴眼镜",
    "用户的女儿在学钢琴，每周六上课",
    "用户打算明年换一套大一点的房子",
    "用户习惯用飞书写周报",
    "用户每天晚上十一点前睡觉",
    "用户喜欢吃辣，但不能吃太辣",
    "用户的大学是在合肥读的",
    "用户的微信步数每天大概八千步",
]


def test_a_memory_in_the_other_language_is_a_candidate_however_many_memories_come_first(alice_client):
    """e5-small scores a text and its translation lower than two texts of one language: among thirty Chinese
    memories the one English answer to a Chinese question comes last by raw distance, and with top_k 3 it
    was no candidate at all (the candidates are the nearest by raw distance, 24 or top_k x 3)."""
    when = "2024-05-01T09:00:00Z"
    ids = _store(
        alice_client,
        [(text, when) for text in CHINESE_LIFE] + [("The user is allergic to penicillin.", when)],
    )
    answer = ids[-1]
    results = _search(alice_client, "我对哪种药过敏？", top_k=3, threshold=0)
    assert answer in [r["id"] for r in results[:3]], [r["content"] for r in results]
    # The baseline of the raw cosine (mode=vector) still takes the nearest by raw distance.
    raw = _search(alice_client, "我对哪种药过敏？", top_k=3, threshold=0, mode="vector")
    assert answer not in [r["id"] for r in raw]


def test_an_event_stating_a_new_state_is_a_version_only_for_a_question_about_a_time():
    import numpy as np

    old = _hit(1, 0.95, "用户住在成都武侯区一个老小区的六楼，没有电梯", 2021)
    moved = _hit(2, 0.2, "用户和老伴搬进了温江区一个带电梯的新小区", 2024, "event")
    other = _hit(3, 0.15, "用户去年在云南大理玩了一周", 2024, "event")
    sims = np.array([[0.0, 0.93, 0.80], [0.93, 0.0, 0.81], [0.80, 0.81, 0.0]], dtype=np.float32)
    model = "multilingual-e5-small"
    # A question about now: the event and the old state are each other's closest, so versions.
    groups = version_groups([old, moved, other], sims, model, 0.1, gap=1.0, mutual=False)
    assert [[h.id for h in g] for g in groups] == [[1, 2]]
    # Without a word about time an event that states no change is no version, however close.
    close = _hit(2, 0.9, "用户和老伴搬进了温江区一个带电梯的新小区", 2024, "event")
    assert version_groups([old, close, other], sims, model, 0.1) == []


def test_lines_of_a_transcript_are_no_versions_without_a_change_word():
    import numpy as np

    first = _hit(1, 0.9, "Caroline: I went to a LGBTQ support group yesterday", 2023, "event")
    later = _hit(2, 0.8, "Caroline: The support group was so inspiring again this week", 2024, "event")
    other = _hit(3, 0.1, "Melanie: We went camping with the kids", 2024, "event")
    sims = np.array([[0.0, 0.93, 0.80], [0.93, 0.0, 0.81], [0.80, 0.81, 0.0]], dtype=np.float32)
    groups = version_groups([first, later, other], sims, "multilingual-e5-small", 0.05, gap=1.0, mutual=False)
    assert groups == []


def test_the_value_before_the_one_named_is_the_close_hit_that_answers():
    import numpy as np

    # "Where did I live before buying the house in Redmond?": the wedding is as close to the house as the flat
    # before it, but the flat answers the question
    house = _hit(1, 0.9, "The user bought a house in Redmond in 2026.", 2026)
    wedding = _hit(2, 0.3, "The user and Emily got married in Hawaii in 2022.", 2022)
    flat = _hit(3, 0.2, "用户住在西雅图 Capitol Hill 的一间公寓。", 2020)
    house.fused, wedding.fused, flat.fused = 0.9, 0.05, 0.4
    hits = [house, wedding, flat]
    sims = np.array([[1.0, 0.88, 0.86], [0.88, 1.0, 0.80], [0.86, 0.80, 1.0]], dtype=np.float32)
    named = before_what("Where did I live before buying the house in Redmond?")
    out = previous_first(hits, sims, named, "multilingual-e5-small")
    assert [h.id for h in out] == [3, 1, 2]


def test_a_new_car_or_home_told_in_chinese_names_its_attribute():
    from memory.classify import slots

    # the old value in English, the new one in Chinese without a change word: the same attribute either way
    assert "vehicle" in slots("The user drives a second-hand white Volkswagen Polo.")
    assert "vehicle" in slots("用户提了一辆蓝色的比亚迪海豚。")
    assert "residence" in slots("用户在深圳南山区和两个室友合租。")
    assert "medication" in slots("医生让用户把降压药换成了氨氯地平。")
    assert "medication" in slots("The user takes metformin twice a day.")
    # buying medicine online says nothing of what the user takes
    assert "medication" not in slots("用户用美团App买药，常买血糖试纸。")


def test_the_model_reads_about_as_many_tokens_of_a_long_query_in_any_script():
    from memory.search.service import EMBED_QUERY_UNITS, embed_part

    # 256 Latin characters or 64 Chinese ones: about the same number of the model's tokens either way
    assert embed_part("x" * 2000) == "x" * (EMBED_QUERY_UNITS * 4)
    assert embed_part("我住在成都" * 400) == ("我住在成都" * 400)[:EMBED_QUERY_UNITS]
    mixed = "用户 uses " * 300
    part = embed_part(mixed)
    assert mixed.startswith(part) and 0 < len(part) < 256
    # a question as asked is read whole
    assert embed_part("我现在住哪个城市来着？") == "我现在住哪个城市来着？"
    assert embed_part("Where did I live before buying the house in Redmond?") == (
        "Where did I live before buying the house in Redmond?"
    )


def test_a_weak_newer_match_is_no_version_unless_it_states_a_change():
    import numpy as np

    # "我现在每个词收多少钱？": the answer matches strongly; a newer memory about something else matches weakly
    # (a third of the answer's relevance) and reaches the "related" cosine with it, but is closer to others.
    price = _hit(1, 0.99, "用户的翻译报价是每个英文词0.08英镑。", 2017)
    plan = _hit(2, 0.34, "用户计划明年带女儿回上海住三个月。", 2025)
    fillers = [_hit(3 + k, 0.05, f"用户的第{k}件事。", 2020 + k) for k in range(4)]
    hits = [price, plan, *fillers]
    n = len(hits)
    sims = np.full((n, n), 0.84, dtype=np.float32)
    np.fill_diagonal(sims, 0.0)
    sims[0, 1] = sims[1, 0] = 0.82  # related, but neither is the other's closest
    model = "multilingual-e5-small"
    groups = version_groups(hits, sims, model, 0.01, gap=1.0, mutual=False)
    assert not any({1, 2} <= {h.id for h in g} for g in groups)
    # The same weak match stating a change is the new value ("跑鞋换成了 Hoka" for "Which running shoes now?").
    switched = _hit(2, 0.34, "用户的翻译报价换成了每词0.12英镑。", 2025)
    groups = version_groups([price, switched, *fillers], sims, model, 0.01, gap=1.0, mutual=False)
    assert any({1, 2} <= {h.id for h in g} for g in groups)


def test_a_web_process_reads_the_dictionary_before_its_first_search():
    import importlib
    import time

    import config.wsgi
    from memory.search import crosslingual

    crosslingual._tables.cache_clear()
    importlib.reload(config.wsgi)  # what a gunicorn worker does when it starts
    deadline = time.monotonic() + 60
    while crosslingual._tables.cache_info().currsize == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert crosslingual._tables.cache_info().currsize == 1
    assert crosslingual.translations([("peanut", True)])  # and a search uses what was read


def test_a_query_word_matches_its_translation_on_the_keyword_side(alice_client, settings):
    """A memory in the other language shares a word with the question through its translation (CC-CEDICT):
    "peanut" in an English memory for "花生" in a Chinese question, "过敏" in a Chinese memory for "allergy"."""
    english, chinese = _store(
        alice_client,
        [
            ("The user is allergic to peanuts and carries an EpiPen", "2024-01-01T09:00:00Z"),
            ("用户对猫毛过敏，家里不能养猫", "2024-02-01T09:00:00Z"),
        ],
    )
    for query, memory in (("我吃花生有什么要注意的", english), ("Do I have any allergy?", chinese)):
        hit = next(r for r in _search(alice_client, query, threshold=0) if r["id"] == memory)
        assert hit["explain"]["keyword_coverage"] > 0, (query, hit)
        settings.SEARCH_CROSS_LINGUAL_TERMS = False
        hit = next(r for r in _search(alice_client, query, threshold=0) if r["id"] == memory)
        assert hit["explain"]["keyword_coverage"] == 0, (query, hit)
        settings.SEARCH_CROSS_LINGUAL_TERMS = True


def test_translations_come_from_whole_glosses_and_leave_vague_words_alone():
    from memory.search.crosslingual import translations
    from memory.search.ranking import query_terms

    found = translations(query_terms("peanut allergy 足球"))
    assert ("花生", False) in found[("peanut", True)]
    assert ("football", True) in found[("足球", False)]
    # a word glossing many Chinese words ("work") carries nothing over; single characters carry nothing
    assert ("work", True) not in translations(query_terms("work"))
    assert translations(query_terms("猫")) == {}
    # a translation already among the query's terms is not added again
    assert ("花生", False) not in translations(query_terms("peanut 花生")).get(("peanut", True), ())
    # only a query's first terms with translations get them, and a long query (a pasted text) none
    from memory.search.crosslingual import LONG_QUERY_TERMS, MAX_TRANSLATED_TERMS

    many = "peanut podcast cheese headphones grocery soccer dentist pharmacy umbrella violin piano bicycle elevator kitten"
    assert len(query_terms(many)) <= LONG_QUERY_TERMS
    assert len(translations(query_terms(many))) == MAX_TRANSLATED_TERMS
    long = " ".join(f"word{k}" for k in range(LONG_QUERY_TERMS)) + " football peanut"
    assert translations(query_terms(long)) == {}


def test_a_word_shared_by_a_memory_that_means_something_else_counts_for_less(monkeypatch):
    """KEYWORD_LIFT_SHARE: the keyword match of a hit whose own vector match barely clears the background counts at
    that share of itself, so the memory that answers in other words comes first; one with the best vector match
    keeps its keyword match whole."""
    from memory.search import ranking
    from memory.search.ranking import score_hits

    def hit(pk, content, cosine, bm25, coverage):
        row = {"id": pk, "content": content, "confidence": 1.0, "scope": "user"}
        return Hit(row=row, vector_similarity=cosine, keyword_raw=bm25, coverage=coverage)

    def search():
        hits = [
            hit(1, "Surfs at Carcavelos before breakfast when the swell is good", 0.866, 0.0, 0.0),
            hit(2, "Drinks a galão every morning, never espresso after 4pm", 0.82, 1.0, 0.3),
            *(hit(10 + k, f"Filler {k}", 0.81, 0.0, 0.0) for k in range(6)),
        ]
        score_hits(hits, "multilingual-e5-small", "Where do I catch waves in the morning?")
        return hits

    whole = 0.548  # sqrt(BM25 share 1.0 x coverage 0.3)
    hits = search()
    assert [h.id for h in hits[:2]] == [1, 2]
    assert hits[1].keyword == pytest.approx(ranking.KEYWORD_LIFT_SHARE * whole, abs=1e-3)
    monkeypatch.setattr(ranking, "KEYWORD_LIFT_SHARE", 1.0)  # the keyword match counted whole
    assert [h.id for h in search()[:2]] == [2, 1]

    # the hit with the best vector match keeps its keyword match whole
    both = [
        hit(1, "Surfs at Carcavelos every morning before breakfast", 0.866, 1.0, 0.3),
        *(hit(10 + k, f"Filler {k}", 0.81, 0.0, 0.0) for k in range(6)),
    ]
    score_hits(both, "multilingual-e5-small", "Where do I catch waves in the morning?")
    assert both[0].id == 1 and both[0].keyword == pytest.approx(whole, abs=1e-3)
