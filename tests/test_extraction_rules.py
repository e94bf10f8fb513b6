"""The rule path (no chat model): Chinese and English markers, corrections, and turns with nothing to keep."""

import pytest

from checkpoints.services import messages_append
from memory.extraction.rules import extract_rules
from memory.extraction.services import extraction_job_run
from memory.models import ExtractionJob, MemoryItem


def human(text, message_id=""):
    return {"role": "human", "content": text, "message_id": message_id}


@pytest.mark.parametrize(
    "text, content, memory_type",
    [
        ("请记住，我对花生过敏，点菜时注意。", "我对花生过敏，点菜时注意", "fact"),
        ("记住我喜欢简洁的回答，不要长篇大论", "我喜欢简洁的回答，不要长篇大论", "preference"),
        ("我是一名外贸公司的采购经理", "我是一名外贸公司的采购经理", "core"),
        ("以后回复我的时候都用中文", "以后回复我的时候都用中文", "preference"),
        ("不要在代码里加任何注释了", "不要在代码里加任何注释了", "constraint"),
        ("我通常晚上十点以后才有空看消息", "我通常晚上十点以后才有空看消息", "habit"),
        ("Remember that I'm allergic to shellfish.", "I'm allergic to shellfish", "fact"),
        ("I prefer tables over long paragraphs.", "I prefer tables over long paragraphs", "preference"),
        ("Call me Sam from now on, please.", "Call me Sam from now on, please", "core"),
        ("Never use emojis in your replies.", "Never use emojis in your replies", "constraint"),
        (
            "I'm a backend engineer working mostly in Go.",
            "I'm a backend engineer working mostly in Go",
            "core",
        ),
    ],
)
def test_it_keeps_the_users_own_sentence_with_its_type(text, content, memory_type):
    [candidate] = extract_rules([human(text, "m1")])
    assert (candidate.content, candidate.memory_type) == (content, memory_type)
    assert candidate.confidence >= 0.7 and candidate.source_message_id == "m1"


@pytest.mark.parametrize(
    "text, content",
    [
        ("不对，我现在住在上海了", "我现在住在上海了"),
        ("不是这样的，我已经不在字节工作了", "我已经不在字节工作了"),
        ("Actually, I live in Munich now.", "I live in Munich now"),
        ("I no longer drink coffee, only tea.", "I no longer drink coffee, only tea"),
    ],
)
def test_it_marks_corrections(text, content):
    [candidate] = extract_rules([human(text)])
    assert candidate.content == content and candidate.correction is True


@pytest.mark.parametrize(
    "messages",
    [
        [human("今天天气真不错，我们随便聊聊吧")],
        [human("这个函数总是报错，帮我看看怎么回事")],
        [human("你还记得我叫什么名字吗？")],
        [human("Can you fix this bug? It always crashes on start.")],
        [human("Thanks, that was really helpful!")],
        [human("I'm a bit tired today, let's keep it short")],
        [human("不对，不是这样的")],  # a correction without a new value
        [human("我是说这个方案不太行")],
        [human("记住我")],  # under 10 characters: skipped (seed 004)
        [{"role": "ai", "content": "I'll remember that you prefer tables.", "message_id": ""}],
    ],
)
def test_it_finds_nothing_in_chit_chat_questions_and_assistant_text(messages):
    assert extract_rules(messages) == []


def test_it_reads_every_user_message_of_a_turn_and_drops_repeats():
    found = extract_rules(
        [
            human("我叫李雷，是一名数据分析师。以后请用表格给我结果。", "m1"),
            {"role": "ai", "content": "好的，李雷。", "message_id": "m2"},
            human("我叫李雷，是一名数据分析师", "m3"),
        ]
    )
    assert [(c.content, c.memory_type, c.source_message_id) for c in found] == [
        ("我叫李雷，是一名数据分析师", "core", "m1"),
        ("以后请用表格给我结果", "preference", "m1"),
    ]


def _run(org, session_id, messages, user_id="u1"):
    _, _, job = messages_append(org=org, session_id=session_id, user_id=user_id, messages=messages)
    assert extraction_job_run(job_id=job.pk) == "done"
    job.refresh_from_db()
    return job


def test_it_turns_a_conversation_into_memories_without_a_model(org_a):
    job = _run(
        org_a,
        "s1",
        [
            human("请记住，我对花生过敏，点菜时注意。", "m1"),
            {"role": "ai", "content": "好的，已记住。", "message_id": "m2"},
            human("Also, I prefer answers in English from now on.", "m3"),
            human("ok", "m4"),
        ],
    )
    assert (job.status, job.method, job.attempts, job.error) == ("done", "rules", 1, "")
    assert [a["content"] for a in job.result["added"]] == [
        "我对花生过敏，点菜时注意",
        "Also, I prefer answers in English from now on",
    ]
    assert job.result["skipped"] == [
        {"message_id": "m4", "reason": "user message shorter than 10 characters"}
    ]
    items = MemoryItem.objects.filter(org=org_a, user_id="u1").order_by("id")
    assert [(i.memory_type, i.source, i.session_id, i.source_message_id) for i in items] == [
        ("fact", "auto", "s1", "m1"),
        ("preference", "auto", "s1", "m3"),
    ]
    assert all(i.source_id == f"extraction-job:{job.pk}" and i.embedding is not None for i in items)


def test_it_finishes_a_turn_with_nothing_to_keep_as_done_and_empty(org_a):
    job = _run(org_a, "s2", [human("今天天气真不错，我们随便聊聊吧"), human("Thanks, that was helpful!")])
    assert job.status == "done" and job.result["candidates"] == 0
    assert job.result["added"] == job.result["rejected"] == []
    assert not MemoryItem.objects.filter(org=org_a).exists()


def test_it_records_what_the_gate_refused_without_the_secret(org_a):
    job = _run(org_a, "s3", [human("记住我的密码是 hunter2-Secret9，下次登录用")])
    [rejected] = job.result["rejected"]
    assert rejected["code"] == "sensitive_content" and rejected["content"] is None
    assert "hunter2" not in str(job.result)
    assert not MemoryItem.objects.filter(org=org_a).exists()


def test_it_allows_three_automatic_memories_per_session_and_day(org_a):
    job = _run(
        org_a,
        "busy",
        [
            human("记住我对花生过敏，点菜时一定注意"),
            human("I prefer dark roast coffee in the morning."),
            human("我是一名外贸公司的采购经理"),
            human("Never schedule meetings for me on Fridays."),
        ],
    )
    assert len(job.result["added"]) == 3
    assert [r["code"] for r in job.result["rejected"]] == ["rate_limited"]
    assert MemoryItem.objects.filter(org=org_a, session_id="busy").count() == 3
    # Another session of the same user has its own allowance.
    other = _run(org_a, "calm", [human("Never schedule meetings for me on Fridays.")])
    assert len(other.result["added"]) == 1


def test_it_claims_a_job_once(org_a):
    job = _run(org_a, "s4", [human("记住我喜欢用 Python 写脚本")])
    assert extraction_job_run(job_id=job.pk) == "skipped"  # already done: a redelivered task does nothing
    assert extraction_job_run(job_id=10**9) == "skipped"  # the row is gone
    assert ExtractionJob.objects.get(pk=job.pk).attempts == 1
    assert MemoryItem.objects.filter(org=org_a).count() == 1
