"""The rule path (no chat model): Chinese and English markers, corrections, and turns with nothing to keep."""

import pytest
from django.test import Client

from checkpoints.services import messages_append
from core import text as core_text
from memory.drafts import MemoryDraft
from memory.extraction.rules import (
    _LOST_PART,
    _PASSING_STATE_EN,
    extract_rules,
    statement_form,
    validate_statement,
)
from memory.extraction.services import extraction_job_run
from memory.models import ExtractionJob, MemoryItem
from memory.services import memory_create
from projects.access import system_actor


def human(text, message_id=""):
    return {"role": "human", "content": text, "message_id": message_id}


@pytest.mark.parametrize(
    "text, content, memory_type",
    [
        ("我是一名外贸公司的采购经理", "用户是一名外贸公司的采购经理", "core"),
        ("我通常晚上十点以后才有空看消息", "用户通常晚上十点以后才有空看消息", "habit"),
        ("以后回复我的时候都用中文", "用户希望助手以后回复用户的时候都用中文", "preference"),
        ("不要在代码里加任何注释了", "用户要求助手不要在代码里加任何注释了", "constraint"),
        ("我叫王丹", "用户叫王丹", "core"),  # four characters: long enough (weighted like the gate)
        ("Remember that I'm allergic to shellfish.", "The user is allergic to shellfish", "fact"),
        (
            "I prefer tables over long paragraphs.",
            "The user prefers tables over long paragraphs",
            "preference",
        ),
        ("I mostly code in Go these days.", "The user mostly codes in Go these days", "fact"),
        ("My name is Priya, by the way.", "The user's name is Priya", "core"),
        (
            "Never use emojis in your replies.",
            "The user wants the assistant to never use emojis in its replies",
            "constraint",
        ),
    ],
)
def test_it_writes_third_person_statements_in_the_users_language(text, content, memory_type):
    [candidate] = extract_rules([human(text, "m1")])
    assert (candidate.content, candidate.memory_type) == (content, memory_type)
    assert statement_form(candidate.content)
    assert candidate.confidence >= 0.7 and candidate.source_message_id == "m1"


@pytest.mark.parametrize(
    "text, contents",
    [
        # The request is left out; the durable fact it came with is kept.
        ("帮我把这个 SQL 改成只用标准 SQL，我们公司数据库不让用存储过程", ["用户的公司数据库不让用存储过程"]),
        (
            "Suggest a few dinner ideas for tonight, I'm allergic to shellfish so skip anything with shrimp.",
            ["The user is allergic to shellfish"],
        ),
        # Two facts in one sentence are two statements; the subject carries over.
        ("我儿子今年上三年级，在学游泳", ["用户的儿子今年上三年级", "用户的儿子在学游泳"]),
        (
            "I live in Toronto and work from home most days.",
            ["The user lives in Toronto", "The user works from home most days"],
        ),
        (
            "My daughter is eight and she just started violin lessons.",
            ["The user's daughter is eight", "The user's daughter just started violin lessons"],
        ),
        # "Remember this background": the background is kept, the pointer to it is not.
        (
            "以下是我的背景，以后回答都参考：我在上海，做跨境物流，团队十五个人，日常用钉钉和 Excel。",
            ["用户在上海", "用户做跨境物流", "用户的团队有十五个人", "用户的团队日常用钉钉和 Excel"],
        ),
    ],
)
def test_it_leaves_the_request_out_and_splits_independent_facts(text, contents):
    found = extract_rules([human(text)])
    assert [c.content for c in found] == contents
    assert all(statement_form(c) for c in contents)


@pytest.mark.parametrize(
    "text, contents",
    [
        # An English header over Chinese content: the content is read as Chinese.
        (
            "Remember this for later：我是UX designer，主要用Figma。",
            ["用户是UX 设计师", "用户主要使用 Figma"],
        ),
        ("Translate this: 我是老师", []),  # material after a request, in either language
        # a sentence that opens with 我 is Chinese, whatever number of English terms it has
        ("我是 freelance UX designer", ["用户是自由职业 UX 设计师"]),
        # A fact before a request whose material follows a colon is kept; the material is not.
        (
            "我对花生过敏，帮我看看这个菜谱有哪些要换掉的：宫保鸡丁，鸡胸肉300克，花生米50克",
            ["用户对花生过敏"],
        ),
        # An object put before the subject goes back after the verb; a bare "this" is no object.
        ("坚果类我全都过敏", ["用户对坚果全都过敏"]),
        ("香菜我从来不吃", ["用户从来不吃香菜"]),
        ("咖啡我只喝美式", ["用户只喝美式咖啡"]),
        ("这个我不用", []),
        # A when-clause is the condition of the clause after it, not a statement cut short.
        ("以后回答我的时候，代码注释用English", ["用户希望助手以后回答用户的时候代码注释用英文"]),
        # A contrast without a verb belongs to the clause before it, not an instruction of its own.
        (
            "I only ever use grams in my kitchen, never cups.",
            ["The user only ever uses grams in their kitchen, never cups"],
        ),
        # A chatty header before the user's own clause is left out; hindsight is no request.
        (
            "Quick update on the project I mentioned: we've pushed the launch back to June.",
            ["The launch is now June"],
        ),
        (
            "Should have said this first: I've been a type 1 diabetic since I was twelve.",
            ["The user has been a type 1 diabetic since the user was twelve"],
        ),
        ("Summarise this paragraph: I live in Paris.", []),
    ],
)
def test_it_reads_headers_fronted_objects_and_tails_as_written(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # A hypothetical is no fact; a condition asked of the assistant or a courtesy is no hypothetical.
        ("If I ever move to Berlin I'd want to learn German.", []),
        ("要是我有钱，我就去环游世界", []),
        ("我是程序员，如果有机会想去日本工作", ["用户是程序员"]),
        ("If you recommend restaurants, remember I'm vegan.", ["The user is vegan"]),
        # What the user takes back in the same sentence is not kept; what they ask to keep instead is.
        (
            "记一下我每周三晚上打羽毛球……算了这个别记了，不一定每周都去。你就记我住天津河西区就行",
            ["用户住天津河西区"],
        ),
        (
            "Remember that I'm vegetarian. Also my gym is on Main St, don't save that part.",
            ["The user is vegetarian"],
        ),
        # A value taken back at once gives way to the one after it.
        ("我女儿生日是6月12号，哦不是，是6月21号", ["用户的女儿生日是6月21号"]),
        ("My cat is called Tom, no wait, Tim.", ["The user's cat is called Tim"]),
        ("Actually my son is nine, not seven.", ["The user's son is nine"]),
        # A colleague's or a friend's taste is theirs; the family's is kept, and so is who a colleague is.
        ("我同事小张天天说只用 Vim，那人就爱抬杠", []),
        ("My buddy Jake swears by standing desks.", []),
        ("My manager is Sarah.", ["The user's manager is Sarah"]),
        ("My wife loves hiking.", ["The user's wife loves hiking"]),
        ("我朋友小周特别能吃辣，无辣不欢那种", []),
        # a moment in a background list, a question without a question mark, a request for help
        (
            "记住：我是 Muslim，不吃 pork。今晚想去吃 dim sum，有啥要注意的",
            ["用户是 Muslim", "用户不吃 pork"],
        ),
        ("need help planning a birthday dinner, I'm vegan", ["The user is vegan"]),
        # what the user gave up beside what they have now; a gerund is no subject; an aside cut short
        ("我搬到杭州了，上海那个 apartment 已经退租了", ["用户住在杭州"]),
        ("Tipping still confuses me", []),
        ("we're in Portland (oregon, not maine lol)", ["The user is in Portland"]),
    ],
)
def test_it_leaves_out_hypotheticals_take_backs_and_other_peoples_tastes(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "first, second",
    [
        ("记住我最喜欢的颜色是紫色", "算了，刚才那个别记了，我随口说的"),
        (
            "remember that I'm moving to Denver in June",
            "hmm actually don't save that. nothing's confirmed yet",
        ),
    ],
)
def test_a_message_that_takes_back_the_one_before_leaves_nothing(first, second):
    assert extract_rules([human(first), {"role": "ai", "content": "OK"}, human(second)]) == []


def test_a_change_of_a_thing_named_before_corrects_its_statement_without_a_marker():
    """ "刚通知周会改到周三下午两点了" after "我们组每周一上午十点开周会": no "不对", still a correction."""
    found = extract_rules(
        [
            human("我们组每周一上午十点开周会，你帮我记着点"),
            {"role": "ai", "content": "好的"},
            human("诶，刚通知周会改到周三下午两点了，以后都是这个点", "m2"),
        ]
    )
    assert [c.content for c in found] == ["用户的团队每周三下午两点开周会"]
    assert found[0].correction and found[0].replaces == ("用户的团队每周一上午十点开周会",)


def test_a_take_back_that_states_a_value_of_the_same_kind_replaces_the_old_statement():
    """ "初二" … "哦说错了，她是初三": the new statement names a school year again, for the same subject."""
    found = extract_rules(
        [
            human("我女儿今年上初二，数学特别差"),
            {"role": "ai", "content": "初二的话"},
            human("哦说错了，她是初三"),
        ]
    )
    assert [c.content for c in found] == ["用户的女儿是初三"]
    assert found[0].replaces == ("用户的女儿今年上初二",)


@pytest.mark.parametrize(
    "first, second, content",
    [
        (
            "fyi I'm allergic to penicillin",
            "actually scratch that — it's sulfa drugs, not penicillin",
            "The user is allergic to sulfa drugs",
        ),
        (
            "记一下我用的是 MacBook Pro M1",
            "sorry 打错了，是 M3 Max，上个月刚换的",
            "用户使用 MacBook Pro M3 Max",
        ),
        ("我女儿六岁", "不对，不是六岁，是七岁", "用户的女儿七岁"),
        # a weekday is one word of the value; the owned-up mix-up is no statement
        (
            "记一下，我们组周会是每周一上午十点",
            "诶不对不对，是周二，周一那个是隔壁组的，我搞混了",
            "用户的团队周会是每周二上午十点",
        ),
        # the place moved to takes the old place's; the message's subjectless clause stands for it
        (
            "我的server在阿里云华东，帮我看下延迟",
            "sorry说错了，上个月已经迁到AWS新加坡了，不在阿里云了",
            "用户的服务器在AWS新加坡",
        ),
        # a weekday with its time of day, a month, a school year: a word of the same kind takes the old one's place
        (
            "我每周四晚上有吉他课，你帮我排一下",
            "啊不对不对，老师上个月调了，现在改成周六下午了",
            "用户每周六下午有吉他课",
        ),
        (
            "our team offsite is in March in Lisbon, help me budget",
            "actually it got pushed to May",
            "The user's team offsite is in May in Lisbon",
        ),
        (
            "My flight lessons are Mondays",
            "wait no, it's Tuesdays not Mondays",
            "The user's flight lessons are Tuesdays",
        ),
        # two values corrected at once; a value already said before the old one is not said twice
        (
            "Our team offsite is in April in Porto, help me draft an agenda",
            "hold on — offsite got moved to May, and it's Seville now, not Porto. ugh.",
            "The user's team offsite is in May in Seville",
        ),
        (
            "我的车是2019年的卡罗拉",
            "哦不对，我记错了，是2019年的雷凌，不是卡罗拉。",
            "用户的车是2019年的雷凌",
        ),
        ("我在上海张江那边上班", "啊不是张江了，上个月team整个搬去徐汇滨江了", "用户住在徐汇滨江"),
    ],
)
def test_a_take_back_with_only_a_value_corrects_the_statement_before_it(first, second, content):
    """The message that takes back says only the new value: it takes the old value's place."""
    found = extract_rules([human(first, "m1"), {"role": "ai", "content": "好的 / OK"}, human(second, "m2")])
    [candidate] = found
    assert candidate.content == content and candidate.correction and candidate.source_message_id == "m2"
    assert len(candidate.replaces) == 1


@pytest.mark.parametrize(
    "text, contents",
    [
        # The bare items of a background: a role is what the user is, an instruction is the assistant's, a
        # pointer at what the talk left out ("flag it") is nothing.
        (
            "use this as my profile going forward: 3rd year PhD student, computational linguistics",
            ["The user is a 3rd year PhD student", "The user's profile: computational linguistics"],
        ),
        (
            "Background for all future chats: I run a bakery in Halifax. Keep answers practical, no fluff.",
            [
                "The user runs a bakery in Halifax",
                "The user wants the assistant to keep answers practical",
                "The user wants no fluff",
            ],
        ),
        (
            "Remember that my daughter Maya has a tree nut allergy. Anything food related, flag it.",
            ["The user's daughter Maya has a tree nut allergy"],
        ),
        ("remember 我的 GitHub username 是 kaiwen-dev", ["用户的 GitHub username 是 kaiwen-dev"]),
        # a head count of "we" is the team's; a cleft "是在…的" says where
        ("we're 12 people, fully remote. whats a good standup format", ["The user's team has 12 people"]),
        ("我们公司一共就二十来个人", ["用户的公司有二十来个人"]),
        # an object said without its subject after a statement of the user's is the user's
        ("我吃素的，而且花生过敏，帮我推荐几个带饭的菜呗", ["用户吃素的", "用户对花生过敏"]),
        ("他不吃辣，香菜也不吃", []),
        # the household's pet after a "～"; a moment after a "remember" is no part of it
        (
            "我住在杭州，家里还养了只柯基叫馒头～ 先帮我理一下周报吧",
            ["用户住在杭州", "用户家还养了一只柯基叫馒头"],
        ),
        ("记住我车牌尾号是7。明天正好周一", ["用户车牌尾号是7"]),
        ("I read a ton, mostly on my Kindle.", ["The user read a ton, mostly on their Kindle"]),
        # what is said of both is said of each
        ("说来好笑我跟我老公都是写代码的", ["用户是写代码的", "用户的丈夫是写代码的"]),
        ("My wife and I are both nurses.", ["The user is a nurse", "The user's wife is a nurse"]),
        (
            "My husband and I are both vegetarian.",
            ["The user is vegetarian", "The user's husband is vegetarian"],
        ),
        # "anyway" ends what was to be remembered: a moment after it is not carried by the request
        ("remember: I'm left-handed. anyway today is a mess", ["The user is left-handed"]),
        # alone is no count of people; an aside's tail and how the user sounds now are no facts
        (
            "我是 indie game dev，一个人在做一个 pixel art 的 roguelike",
            ["用户是 indie game dev", "用户独自在做一个 pixel art 的 roguelike"],
        ),
        ("I have two cats (they're sitting on my keyboard rn)", ["The user has two cats"]),
        ("My neighbor won't care", []),
        # how answers are written holds beyond the turn, with or without "always"
        ("还有，回复用简体中文，别中英夹杂。", ["用户希望助手回复用简体中文", "用户要求助手别中英夹杂"]),
        (
            "cite papers when you can, and British spelling pls",
            ["The user wants the assistant to cite papers when it can", "The user wants British spelling"],
        ),
        ("Write it in English", []),
        # a plan under a condition, a pointer at the talk, where the user is right now
        (
            "我在郑州开了家宠物美容店。以后要是开分店的话可能去洛阳，不过这个八字还没一撇",
            ["用户在郑州开了家宠物美容店"],
        ),
        ("我现在在高铁上，网不好", []),
        # someone else's (a neighbour's child, a colleague's fandom, an advisor's limits), what something does
        # to the user, how the user is doing now, a reminder for today even when asked to remember it
        ("My neighbor's kid is vegan", []),
        ("My coworker Dana is the emoji fan, not me", []),
        ("My advisor can't read Chinese", []),
        ("I'm dyslexic, walls of text kill me", ["The user is dyslexic"]),
        ("nah I'm ok. just wanted to vent I guess", []),
        ("just remember I gotta grab the dry cleaning at 5 today", []),
        # an emoji before a capital ends a sentence, and is no part of a statement
        ("I'm originally from Lagos 🇳🇬 Need help structuring a memo", ["The user is originally from Lagos"]),
        ("我们家就我、我老公🐶 我老公对花生严重过敏", ["用户的丈夫对花生严重过敏"]),
        # 本人 is 我; a bare noun after "the user is" and a bare verb after it are the user's too
        ("本人律师，帮我看看这份离婚协议", ["用户是律师"]),
        (
            "I'm 72, a widower, live alone in Duluth with my cat Biscuit.",
            [
                "The user is 72",
                "The user is a widower",
                "The user lives alone in Duluth with their cat Biscuit",
            ],
        ),
        ("We're 8 guys on the crew", ["The user's team has 8 guys on the crew"]),
        # the place a user runs, named in passing; a reply style without "always"; a unit wanted
        ("帮我check一下这段caption，我开的那家川菜馆下周要上新menu", ["用户开了一家川菜馆"]),
        ("回答别用表格，我那个老人机看表格全是乱的", ["用户希望助手回答别用表格"]),
        (
            "Some background: metric units only, I'm in Canada",
            ["The user is in Canada", "The user wants metric units only"],
        ),
        ("以后帮我写README的时候直接用这个", []),
        ("my hands are shaking lol", []),
        # pretending and "someday" are hypotheticals; an adverb item without a name leans on the talk
        ("pretend I'm head of procurement at a hospital (I'm not, it's a roleplay). Draft a reply", []),
        (
            "Background: I'm a firefighter, I work 24-hour shifts, usually two a week. Maybe someday I'll go back to school.",
            ["The user is a firefighter", "The user works 24-hour shifts"],
        ),
        ("i'm procrastinating so hard rn, got a report due", []),
        # a school year taken back in the same sentence; "用户" as "users"; fragments and moments
        ("我女儿今年上三年级，不对，是四年级了", ["用户的女儿今年上四年级"]),
        ("从现在开始用这个背景：我在做一个微信小程序，用户大概两千人", ["用户在做一个微信小程序"]),
        ("just me and my girlfriend. she's vegan", ["The user's girlfriend is vegan"]),
        ("Help me plan a trip, going next weekend with my sister", []),
        (
            "I'm a freelance illustrator and I'm totally lost on quarterly tax installments",
            ["The user is a freelance illustrator"],
        ),
        ("’ 对了我是在一家做医疗器械的公司做采购的，语气正式点哈", ["用户在一家做医疗器械的公司做采购"]),
    ],
)
def test_it_reads_background_items_head_counts_and_clefts(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


def test_a_bare_city_answers_the_assistants_question_with_a_particle():
    found = extract_rules(
        [human("周末带娃去哪玩好啊"), {"role": "ai", "content": "你在哪个城市呀？"}, human("苏州，园区这边")]
    )
    assert [c.content for c in found] == ["用户住在苏州"]


def test_it_marks_a_background_request_explicit():
    found = extract_rules([human("Remember this about me: I'm a nurse on night shifts.")])
    assert [(c.content, c.explicit) for c in found] == [("The user is a nurse on night shifts", True)]
    assert [c.explicit for c in extract_rules([human("I'm a nurse on night shifts.")])] == [False]


@pytest.mark.parametrize(
    "text, contents",
    [
        # Self-descriptions without a marker word, in passing, in both languages and code-mixed.
        (
            "刚入职一家两百人左右的医疗器械公司，在苏州，需要熟悉一下 ISO 13485",
            ["用户刚入职一家两百人左右的医疗器械公司", "用户在苏州"],
        ),
        (
            "Just joined a 40-person agency in Bristol as their first data person, where do I start?",
            ["The user just joined a 40-person agency in Bristol as their first data person"],
        ),
        ("组里开会都用飞书，文档也全在飞书上", ["用户的团队开会都用飞书"]),
        (
            "我们 startup 在深圳，主要做 AI 客服 SaaS",
            ["用户的创业公司在深圳", "用户的创业公司主要做 AI 客服 SaaS"],
        ),
    ],
)
def test_it_finds_implicit_self_descriptions(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, content",
    [
        ("不对，我现在住在上海了", "用户现在住在上海"),
        ("我女儿是七岁，不是六岁", "用户的女儿是七岁"),  # the denied old value is left out
        ("去年春天从广州搬到了厦门", "用户住在厦门"),  # no marker; the old city is left out
        ("评审会改到下周四了", "评审会现在是下周四"),  # when it is now
        ("Actually, I live in Munich now.", "The user lives in Munich now"),
        ("Moved from Leeds to Bristol last spring.", "The user lives in Bristol"),
        ("The review moved to next Thursday.", "The review is now next Thursday"),
        ("I no longer drink coffee, only tea.", "The user no longer drinks coffee"),
    ],
)
def test_it_marks_corrections_with_and_without_a_marker(text, content):
    [candidate] = extract_rules([human(text)])
    assert candidate.content == content and candidate.correction is True


@pytest.mark.parametrize(
    "text, contents",
    [
        # A background list: a part with its role says what the role uses; named things are one statement.
        (
            "记住我的开发环境：Vite 前端，Flask 后端，数据库 MySQL 8",
            ["用户的前端使用 Vite", "用户的后端使用 Flask", "用户的数据库使用 MySQL 8"],
        ),
        (
            "Please remember my setup: Dell XPS 13, Ubuntu 24.04, and I write in Neovim.",
            ["The user writes in Neovim", "The user's setup: Dell XPS 13, Ubuntu 24.04"],
        ),
        # Two things had, joined by "and a …", are two statements; "X and I" keeps both people.
        (
            "I have a husky called Luna and a parrot called Kiwi.",
            ["The user has a husky called Luna", "The user has a parrot called Kiwi"],
        ),
        ("My wife and I both work from home.", ["The user and their wife both work from home"]),
        ("Anna and I run a cafe.", ["The user and Anna run a cafe"]),
        ("Our office moved to Camden.", ["The user's office moved to Camden"]),  # a place is not a tool
        # The commas of a list are not clause breaks; 不怎么 is not a question.
        (
            "I speak Spanish, English, French and a little Portuguese.",
            ["The user speaks Spanish, English, French and a little Portuguese"],
        ),
        ("I have two cats, Milo and Otis.", ["The user has two cats, Milo and Otis"]),
        ("我平时不怎么喝酒，偶尔喝点红酒", ["用户平时不怎么喝酒", "用户偶尔喝点红酒"]),
        # Subjectless self-descriptions.
        ("在杭州做跨境电商，有什么推荐的物流", ["用户在杭州做跨境电商"]),
        ("With three kids under five, how do I find time to cook?", ["The user has three kids under five"]),
        (
            "Living in a tiny studio in Tokyo, any storage tips?",
            ["The user is living in a tiny studio in Tokyo"],
        ),
        ("Since I'm diabetic, what snacks are safe?", ["The user is diabetic"]),
        # Code-mixed: the language of a sentence is the one most of it is written in; "US" is not "us".
        ("I'm based in 上海, working remote for a US company.", ["The user is based in 上海"]),
        ("我 daughter 今年上 kindergarten", ["用户的女儿今年上幼儿园"]),
        ("We deploy on Fridays.", ["The user's team deploys on Fridays"]),  # at work, "we" is the team
        # "and the lease …" after a clause about the user is about the user's lease.
        (
            "I rent a flat in Cork and the lease ends in May.",
            ["The user rents a flat in Cork", "The user's lease ends in May"],
        ),
        # A short contrast completes the statement before it; a topic goes back after its verb.
        (
            "我平时记笔记都用 Obsidian，Evernote 基本不碰",
            ["用户平时记笔记都使用 Obsidian，基本不碰 Evernote"],
        ),
        ("Vim 我用了十年", ["用户用了 Vim 十年"]),
        ("我们的服务器是 CentOS 6，升级不了", ["用户的服务器是 CentOS 6，无法升级"]),
        # Implicit facts: children the user looks after, the user's workplace, a subjectless self-description.
        ("下班还要接两个孩子放学，有什么提高效率的办法", ["用户有两个孩子"]),
        (
            "Everything at work runs on Teams, so format it for a Teams post.",
            ["Everything at the user's workplace runs on Teams"],
        ),
        ("Not a fan of emoji in replies.", ["The user is not a fan of emoji in replies"]),
        ("Allergic to cats, sadly.", ["The user is allergic to cats"]),
        # A diagnosis reported by a doctor is the user's; verbs keep their person after adverbs and n't.
        ("医生说我有轻度脂肪肝", ["用户有轻度脂肪肝"]),
        ("高血压患者能喝咖啡吗？我去年确诊的", ["用户去年确诊高血压的"]),  # the illness the question named
        ("我有两个孩子，都在上小学", ["用户有两个孩子，都在上小学"]),  # "都…" is about the two children
        ("我有两个孩子，大的八岁，小的三岁", ["用户有两个孩子，大的八岁，小的三岁"]),
        ("My doctor says I have high blood pressure.", ["The user has high blood pressure"]),
        (
            "I completely avoid sugar and I couldn't live without coffee.",
            ["The user completely avoids sugar", "The user couldn't live without coffee"],
        ),
        # A household's background speaks of 用户家; 我们经理 is the user's (a boss's ways are the boss's:
        # test_probe27_peers_and_so).
        ("请记住我家的情况：三口之家，住在五楼", ["用户家是三口之家", "用户家住在五楼"]),
        ("我们经理特别在意细节", ["用户的经理特别在意细节"]),
    ],
)
def test_it_writes_lists_pairs_contrasts_and_implicit_facts_as_statements(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # A switch says what is used now.
        ("我上个月改用 Obsidian 了", ["用户现在使用 Obsidian"]),
        ("I switched to Linear last month.", ["The user now uses Linear"]),
        ("We dropped Jenkins for GitHub Actions.", ["The user's team now uses GitHub Actions"]),
        ("We went with Postgres in the end.", ["The user's team chose Postgres"]),
        # The old value is left out: denied at the clause's end, denied as an identity, or "从X".
        ("Scratch that, the meeting is at 4pm not 3pm.", ["The meeting is at 4pm"]),
        ("I work at Acme, not Initech.", ["The user works at Acme"]),
        ("其实我不是程序员，我是产品经理", ["用户是产品经理"]),
        ("我们团队从八个人扩到十五个了", ["用户的团队扩到十五个"]),
        ("预算砍到三十万了", ["预算为三十万"]),
        # "之前说的X是Y" is the old value; the clause after it says X's new value.
        ("之前说的截止日期是月底，后来提前到了20号", ["截止日期为20号"]),
        ("我最近改喝美式了", ["用户最近改喝美式"]),  # without the spoken 了
        # The bare announcement of a change gives way to the new value that follows it.
        ("手机号换了，新号码尾号 1234", ["用户的新号码尾号 1234"]),
    ],
)
def test_it_states_the_new_value_of_a_change(text, contents):
    found = extract_rules([human(text)])
    assert [c.content for c in found] == contents
    assert all(c.correction for c in found)


def test_a_contrast_that_is_not_a_parallel_value_is_not_a_correction():
    [candidate] = extract_rules([human("I eat fish but not meat.")])
    assert (candidate.content, candidate.correction) == ("The user eats fish but not meat", False)
    [candidate] = extract_rules([human("我离职了")])  # alone, the announcement is the fact
    assert candidate.content == "用户离职"


@pytest.mark.parametrize(
    "messages",
    [
        [human("今天天气真不错，我们随便聊聊吧")],
        [human("这个函数总是报错，帮我看看怎么回事")],
        [human("你还记得我叫什么名字吗？")],
        [human("Can you fix this bug? It always crashes on start.")],
        [human("Thanks, that was really helpful!")],
        [human("I'm a bit tired today, let's keep it short")],
        [human("I'm presenting to the board on Friday, can you make this shorter?")],  # an errand
        [human("我周五要去面试，帮我准备一下")],
        [human("Honestly I think the second draft was better.")],  # an opinion about the conversation
        [human("I'm pretty sure the bug is in the parser.")],
        [human("I'd rather not use Excel for this.")],  # bound to the task at hand
        [human("Schedule it for my mornings, please.")],  # an imperative
        [human("It reminds me of something from my childhood.")],  # the user only as object or owner
        [human("Your support means a lot to me. I will!")],  # an answer is not a statement
        [human("Oh yeah, I remember you telling me about that film.")],  # not a request to remember
        [human("On a different note, thanks a lot, I'm really grateful.")],
        [human("I found a lovely café yesterday.")],  # one day's event
        [human("我昨天去了趟医院")],
        [human("不对，不是这样的")],  # a correction without a new value
        [human("我是说这个方案不太行")],
        [human("帮我把这段话翻译成英文：会议改期至周三下午三点")],  # the material of a task
        [human("Translate into French: the meeting has been moved to 3pm Wednesday.")],
        [human("Lovely weather today, isn't it?"), human("Yeah, shame I'm stuck inside.")],
        [human("记住我")],  # too short (weighted like the gate)
        [{"role": "ai", "content": "I'll remember that you prefer tables.", "message_id": ""}],
    ],
)
def test_it_finds_nothing_in_chit_chat_questions_tasks_and_assistant_text(messages):
    assert extract_rules(messages) == []


def test_it_reads_every_user_message_of_a_turn_and_drops_repeats():
    found = extract_rules(
        [
            human("我叫李雷，是一名数据分析师。以后请用表格给我结果。", "m1"),
            {"role": "ai", "content": "好的，李雷。", "message_id": "m2"},
            human("我叫李雷", "m3"),
        ]
    )
    assert [(c.content, c.memory_type, c.source_message_id) for c in found] == [
        ("用户叫李雷", "core", "m1"),
        ("用户是一名数据分析师", "fact", "m1"),
        ("用户希望助手以后用表格给用户结果", "preference", "m1"),
    ]


def test_validate_statement_holds_other_paths_to_the_same_form():
    assert validate_statement("我住在成都") == "用户住在成都"
    assert validate_statement("My son is nine") == "The user's son is nine"
    assert validate_statement("帮我写一封邮件") == ""
    assert validate_statement("Can you fix this?") == ""
    assert validate_statement("用户对花生过敏") == "用户对花生过敏"


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
            human("我叫王丹", "m5"),
            human("ok", "m4"),
        ],
    )
    assert (job.status, job.method, job.attempts, job.error) == ("done", "rules", 1, "")
    assert [a["content"] for a in job.result["added"]] == [
        "用户对花生过敏",
        "The user prefers answers in English from now on",
        "用户叫王丹",
    ]
    assert job.result["skipped"] == [
        {"message_id": "m4", "reason": "user message under the minimum length (MEMORY_MIN_LENGTH, weighted)"}
    ]
    items = MemoryItem.objects.filter(org=org_a, user_id="u1").order_by("id")
    assert [(i.memory_type, i.source, i.session_id, i.source_message_id) for i in items] == [
        ("fact", "auto", "s1", "m1"),
        ("preference", "auto", "s1", "m3"),
        ("core", "auto", "s1", "m5"),
    ]
    assert all(i.source_id == f"extraction-job:{job.pk}" and i.embedding is not None for i in items)
    assert items[0].metadata == {"explicit_request": True} and items[1].metadata == {}


def test_it_finishes_a_turn_with_nothing_to_keep_as_done_and_empty(org_a):
    job = _run(org_a, "s2", [human("今天天气真不错，我们随便聊聊吧"), human("Thanks, that was helpful!")])
    assert job.status == "done" and job.result["candidates"] == 0
    assert job.result["added"] == job.result["rejected"] == job.result["deferred"] == []
    assert not MemoryItem.objects.filter(org=org_a).exists()


def test_it_records_what_the_gate_refused_without_the_secret(org_a):
    job = _run(org_a, "s3", [human("记住我的密码是 hunter2-Secret9，下次登录用")])
    [rejected] = job.result["rejected"]
    assert rejected["code"] == "sensitive_content" and rejected["content"] is None
    assert "hunter2" not in str(job.result)
    assert not MemoryItem.objects.filter(org=org_a).exists()


@pytest.mark.parametrize(
    "prior, text, kept",
    [
        ("用户住在广州", "去年春天从广州搬到了厦门", "用户住在厦门"),
        (
            "The user lives in Leeds",
            "Moved from Leeds to Bristol last spring.",
            "The user lives in Bristol",
        ),
        ("用户的女儿六岁", "我女儿是七岁，不是六岁", "用户的女儿是七岁"),
    ],
)
def test_an_unmarked_correction_supersedes_the_old_value_through_the_write_path(org_a, prior, text, kept):
    old = memory_create(
        actor=system_actor(org_a), org=org_a, draft=MemoryDraft(content=prior, user_id="u1"), dedup="none"
    ).item
    job = _run(org_a, "fix", [human(text)])
    [superseded] = job.result["superseded"]
    assert (superseded["old_id"], superseded["content"]) == (old.pk, kept)
    old.refresh_from_db()
    assert old.status == "superseded" and old.superseded_by_id == superseded["id"]
    assert list(MemoryItem.objects.filter(org=org_a, status="active").values_list("content", flat=True)) == [
        kept
    ]


FOUR_FACTS = [
    human("我住在成都，平时骑电动车上班。"),
    human("I'm vegetarian and I have a border collie called Max."),
]


def test_the_session_cap_defers_candidates_instead_of_dropping_them(org_a):
    job = _run(org_a, "busy", FOUR_FACTS)
    assert len(job.result["added"]) == 3 and job.result["rejected"] == []
    [deferred] = job.result["deferred"]
    assert deferred["content"] == "The user has a border collie called Max"
    assert (deferred["code"], deferred["accepted"]) == ("rate_limited", None)
    assert MemoryItem.objects.filter(org=org_a, session_id="busy").count() == 3
    # Another session of the same user has its own allowance.
    other = _run(org_a, "calm", [human("I'm vegetarian and I have a border collie called Max.")])
    assert len(other.result["added"]) + len(other.result["merged"]) == 2 and other.result["deferred"] == []


def test_an_explicit_request_is_not_capped(org_a):
    job = _run(org_a, "asked", [*FOUR_FACTS, human("记住，我对青霉素过敏")])
    assert [d["content"] for d in job.result["deferred"]] == ["The user has a border collie called Max"]
    assert "用户对青霉素过敏" in [a["content"] for a in job.result["added"]]


def test_a_deferred_candidate_is_accepted_by_api_once(org_a, alice_client, bob_client, charlie_client):
    job = _run(org_a, "busy", FOUR_FACTS, user_id="alice")
    url = f"/api/v1/extraction-jobs/{job.pk}/deferred/accept"
    assert charlie_client.post(url, {"index": 0}, format="json").status_code == 404  # another org
    assert alice_client.post(url, {"index": 5}, format="json").status_code == 404
    assert alice_client.post(url, {"index": "x"}, format="json").status_code == 400
    response = alice_client.post(url, {"index": 0}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["accepted"]["kind"] == "added"
    item = MemoryItem.objects.get(pk=body["accepted"]["id"])
    assert (item.content, item.session_id, item.source) == (
        "The user has a border collie called Max",
        "busy",
        "auto",
    )
    assert body["job"]["result"]["deferred"][0]["accepted"]["id"] == item.pk
    assert alice_client.post(url, {"index": 0}, format="json").status_code == 409
    assert MemoryItem.objects.filter(org=org_a, session_id="busy").count() == 4


def test_the_queue_page_shows_deferred_candidates_and_accepts_one_in_one_click(org_a, alice, bob):
    job = _run(org_a, "busy", FOUR_FACTS, user_id="alice")
    bob_web = Client()
    bob_web.force_login(bob)  # another person's conversation text is not shown to them
    assert "border collie" not in bob_web.get("/queue/").content.decode()
    alice_client = Client()
    alice_client.force_login(alice)
    page = alice_client.get("/queue/")
    assert page.status_code == 200
    assert "The user has a border collie called Max" in page.content.decode()
    response = alice_client.post(f"/queue/{job.pk}/deferred/accept/", {"index": 0})
    assert response.status_code == 302
    assert MemoryItem.objects.filter(org=org_a, content="The user has a border collie called Max").exists()
    assert "The user has a border collie called Max" not in alice_client.get("/queue/").content.decode()


def test_an_item_not_worded_as_a_statement_is_held_for_a_person(org_a, alice):
    # "3 on 4 off" under a background header: not written on its own, kept on the job, accepted in one click
    job = _run(
        org_a,
        "bg",
        [human("Some background for future answers: I'm a nurse in Leeds, 3 on 4 off")],
        user_id="alice",
    )
    assert [a["content"] for a in job.result["added"]] == ["The user is a nurse in Leeds"]
    [held] = job.result["deferred"]
    assert (held["content"], held["code"], held["unsure"]) == (
        "The user's background: 3 on 4 off",
        "unsure",
        True,
    )
    assert not MemoryItem.objects.filter(org=org_a, content=held["content"]).exists()
    web = Client()
    web.force_login(alice)
    page = web.get("/queue/").content.decode()
    assert "background: 3 on 4 off" in page and "not worded as a clear statement" in page
    assert "not worded as a clear statement" in web.get(f"/queue/{job.pk}/").content.decode()
    assert web.post(f"/queue/{job.pk}/deferred/accept/", {"index": 0}).status_code == 302
    assert MemoryItem.objects.filter(org=org_a, content=held["content"], status="active").exists()
    assert "3 on 4 off" not in web.get("/queue/").content.decode()


def test_it_claims_a_job_once(org_a):
    job = _run(org_a, "s4", [human("记住我喜欢用 Python 写脚本")])
    assert extraction_job_run(job_id=job.pk) == "skipped"  # already done: a redelivered task does nothing
    assert extraction_job_run(job_id=10**9) == "skipped"  # the row is gone
    assert ExtractionJob.objects.get(pk=job.pk).attempts == 1
    assert MemoryItem.objects.filter(org=org_a).count() == 1


@pytest.mark.parametrize(
    "text, contents",
    [
        # A statement needs the user (or what is theirs) as its subject: the user only inside the predicate
        # means the clause is about something else; an object pointing back into the talk leans on it.
        ("帮我起个标题，文章写的是我去西藏的经历", []),
        ("The article is about my trip to Peru.", []),
        ("We adopted a puppy in May and we adore him.", ["The user adopted a puppy in May"]),
        # A wish for something handed over now is the request in other words.
        ("I need a template for a resignation letter.", []),
        ("I need some ideas for a birthday party.", []),
        ("我需要一份辞职信模板", []),
        # Passing states, things just done and verdicts are not durable facts.
        ("我这两天发烧了", []),
        ("I've got a cold.", []),
        ("I just ate a whole cake.", []),
        ("Our office coffee is terrible.", []),
        ("在外企上班，每天英文邮件写到吐", ["用户在外企上班"]),
        ("这道题怎么做？我儿子上五年级，我自己都看不懂", ["用户的儿子上五年级"]),
        # Subjectless imperatives are requests; a list does not swallow one.
        ("Don't suggest anything with peanuts.", []),
        ("Remember: I'm colorblind, so don't rely on red and green in charts.", ["The user is colorblind"]),
        ("我早上要送孩子，所以九点前别约会", ["用户早上要送孩子"]),
        # A second predicate after "and", a second state after a copula, "their" after the user as subject.
        (
            "My brother lives in Oslo and teaches maths at a college.",
            ["The user's brother lives in Oslo", "The user's brother teaches maths at a college"],
        ),
        (
            "My grandfather is 88 and almost deaf.",
            ["The user's grandfather is 88", "The user's grandfather is almost deaf"],
        ),
        ("I'm allergic to my own cat.", ["The user is allergic to their own cat"]),
        # A modal with a bare verb completes the statement before it.
        ("我们用的是 Oracle 11g，不能升级", ["用户使用 Oracle 11g，不能升级"]),
        ("Our backend runs on Node 18 and we can't upgrade yet.", ["The user's backend runs on Node 18"]),
        # A pointer before a colon heads a background list.
        ("以后都参考这个：我是会计，在成都工作", ["用户是会计", "用户在成都工作"]),
        # Kin words and code-mixed words in the written register of the statement's language.
        ("我姐在深圳做设计", ["用户的姐姐在深圳做设计"]),
        ("我们 team 的 backend 都是 Java", ["用户的团队的后端都是 Java"]),
        ("记住：我在 Grab 做 product manager，负责 payment", ["用户在 Grab 做产品经理", "用户负责支付"]),
        # The subject carries over a degree adverb and an attribute noun; head counts are had; ages say 岁.
        ("我女儿六岁，非常喜欢画画", ["用户的女儿六岁", "用户的女儿非常喜欢画画"]),
        ("我在读博，方向是材料科学", ["用户在读博", "用户的方向是材料科学"]),
        ("我们组十个人", ["用户的团队有十个人"]),
        ("Our studio is 7 people.", ["The user's studio has 7 people"]),
        ("我外婆九十多了", ["用户的外婆九十多岁"]),
        ("记住我的情况：已婚，两个孩子", ["用户已婚", "用户有两个孩子"]),
        # Self-descriptions without a subject.
        (
            "Being the only parent at home on weekdays is tiring.",
            ["The user is the only parent at home on weekdays"],
        ),
        ("Not really a morning person.", ["The user is not really a morning person"]),
        ("Raising three boys is loud.", ["The user is raising three boys"]),
        # The employer left gives way to the one joined after it.
        ("I left Deloitte last year and joined a startup.", ["The user joined a startup"]),
    ],
)
def test_it_keeps_only_statements_with_a_subject_and_a_durable_predicate(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # The value now, not when it changed (a relative time said today is wrong next year).
        ("去年夏天搬到了大理", ["用户住在大理"]),
        ("我上个月跳槽到京东了", ["用户现在在京东工作"]),
        ("监控已经从 Zabbix 换到 Prometheus 了", ["监控现在使用 Prometheus"]),
        ("会员费涨到两百了", ["会员费为两百"]),
        ("My rent went up to 900 a month.", ["The user's rent is now 900 a month"]),
        ("I got promoted to team lead.", ["The user is a team lead"]),
        ("I went vegetarian last year.", ["The user is vegetarian"]),
        # "X记错了" names what the next clause corrects; the old value denied by its verb is left out.
        ("我身高记错了，是一米七二", ["用户的身高是一米七二"]),
        ("我的猫叫花花，不叫咪咪，记错了", ["用户的猫叫花花"]),
        # Someone else's change without a marker is not one of the user's values.
        ("Tom moved to the London office.", []),
    ],
)
def test_a_change_states_the_value_now(text, contents):
    found = extract_rules([human(text)])
    assert [c.content for c in found] == contents
    assert all(c.correction for c in found)


@pytest.mark.parametrize(
    "text, contents",
    [
        # A denied second predicate after "and" is a statement of its own, in the third person.
        ("We live in Lyon and don't own a car.", ["The user lives in Lyon", "The user does not own a car"]),
        ("I work from home and never drive.", ["The user works from home", "The user never drives"]),
        (
            "Don't add headings, I read these on my watch.",
            ["The user wants the assistant not to add headings"],
        ),
        # An imperative after "just" is the request; talk about what was said before is no fact.
        ("Long day, just give me the bullet points.", []),
        ("The guest list is longer than I said, 40 people.", []),
        # A complaint about time and a busy spell are passing; a verdict on lately too.
        ("With a newborn at home, I hardly get time to read.", ["The user has a newborn at home"]),
        ("在苏州做外贸，最近在赶一批订单", ["用户在苏州做外贸"]),
        ("我开了家花店，最近生意不错", ["用户开了家花店"]),
        # A participle of place after a copula is a second state of the same subject.
        (
            "Our design team is small, split between Lisbon and Porto.",
            ["The user's design team is small", "The user's design team is split between Lisbon and Porto"],
        ),
        # "with my <noun>" alone, "coming from …", a named thing put first, 自己, counted things had.
        ("With my weak wrist, typing all day hurts.", ["The user has a weak wrist"]),
        ("Coming from a Ruby background, Elixir reads fine.", ["The user comes from a Ruby background"]),
        ("我是 data analyst，SQL 写了六年", ["用户是数据分析师", "用户写了 SQL 六年"]),
        ("我哥是律师，自己开了家事务所", ["用户的哥哥是律师", "用户的哥哥自己开了家事务所"]),
        ("家里三只兔子一只龟", ["用户家有三只兔子一只龟"]),
        ("一个人在深圳工作，周末才回家", ["用户独自在深圳工作"]),
        # An English-opening sentence with a Chinese word is English; "base" of Chinese speech is 常驻.
        ("I can't eat 香菜 at all.", ["The user can't eat 香菜 at all"]),
        ("我 base 在成都，经常去重庆出差", ["用户常驻在成都", "用户经常去重庆出差"]),
        # A dash after a request joins clauses; only a colon hands over material.
        ("Tidy up this query — we run MySQL 8 in production.", ["The user runs MySQL 8 in production"]),
    ],
)
def test_it_reads_second_predicates_passing_states_and_implicit_facts(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # Someone moving a date: what is moved, and when it is now (not since when).
        ("Our landlord moved the inspection to next Monday.", ["The inspection is now next Monday"]),
        ("Retro got moved to 4pm starting next sprint.", ["Retro is now 4pm"]),
        ("家长会改成周五晚上了", ["家长会现在是周五晚上"]),
        # A move back, a light verb of moving, a Chinese place name in English.
        ("We moved back to 成都 to be near family.", ["The user lives in 成都"]),
        ("We finally made the move to Porto in spring.", ["The user lives in Porto"]),
        # A transfer names the unit now; how one gets to work now.
        ("我上个月调到深圳总部了", ["用户现在在深圳总部工作"]),
        ("电动车丢了，现在坐公交上班", ["用户现在坐公交上班"]),
        # What was given up gives way to the new value said beside it.
        ("Sold the road bike, these days I swim before work.", ["These days the user swims before work"]),
        (
            "We moved off Trello, now we use Notion for everything.",
            ["Now the user uses Notion for everything"],
        ),
    ],
)
def test_a_change_with_its_value_now_keeps_only_the_value(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # A time phrase put first goes after the clause it belongs to.
        ("Since my hip operation I can't cycle.", ["The user can't cycle since their hip operation"]),
        # Where someone grew up is a self-description without a pronoun.
        ("Grew up in Cork, studied in Dublin.", ["The user grew up in Cork", "The user studied in Dublin"]),
        # A visit arranged and a plan for later are not durable.
        ("My cousins are visiting, so the flat is crowded.", []),
        ("收到，我回头再看", []),
        # A date bumped, with the contraction of "has been".
        ("Demo day's been bumped to the 21st.", ["Demo day is now the 21st"]),
        # A switch of schools or jobs gives way to the value now.
        (
            "My son changed schools, he's at Riverside Academy now.",
            ["The user's son is at Riverside Academy now"],
        ),
        # An event told again is not a state.
        ("我们店里又招了三个人", []),
        ("I started baking bread again, so I'm back on sourdough.", ["The user is back on sourdough"]),
        # Everyday words of code-mixed speech.
        ("我们 cluster 有二十个节点", ["用户的集群有二十个节点"]),
    ],
)
def test_it_reorders_time_phrases_and_leaves_out_visits_plans_and_switch_events(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # The language is read from the words that carry the grammar: Chinese terms in an English sentence are
        # names in the English clause rules and are written back as said.
        (
            "Our nanny is from 湖南 and only cooks 湘菜.",
            ["The user's nanny is from 湖南", "The user's nanny only cooks 湘菜"],
        ),
        ("I'm a 会计 living in Leeds.", ["The user is a 会计 living in Leeds"]),
        # a Chinese run without a function word is a term after an English opening, one with one is grammar
        ("I speak 粤语, 客家话 and 英语.", ["The user speaks 粤语, 客家话 and 英语"]),
        ("老李 and I both teach at 复旦.", ["The user and 老李 both teach at 复旦"]),
        ("My dad moved in with us in May.", ["The user's dad lives with the user"]),
        # names and acronyms in the middle of a Chinese sentence do not make it English
        ("CD 已经从 Travis 换到 Buildkite 了", ["CD 现在使用 Buildkite"]),
        # a bare verb after "so" stays the request
        ("The only editor my team allows is Emacs, so keep shortcuts in Emacs style.", None),
        # A Latin term takes a Chinese noun's slot: a thing of the subject named first, a counted thing, a role.
        ("我们公司做动画，渲染放在 AWS 上", ["用户的公司做动画", "用户的公司的渲染放在 AWS 上"]),
        (
            "我们组在做推荐系统，GPU 只有两张 H100",
            ["用户的团队在做推荐系统", "用户的团队的 GPU 只有两张 H100"],
        ),
        ("在一家外企做 QA，手下三个 tester", ["用户在一家外企做 QA", "用户手下有三个 tester"]),
        ("作为 SRE，我每周轮一次值班", ["用户是 SRE", "用户每周轮一次值班"]),
        ("开了两家花店，记账用的是 Xero", ["用户开了两家花店", "用户的记账使用 Xero"]),
        # a Chinese topic does not take "用": "开会都用英文" is how, not a thing of the subject
        ("我领导是 Australian，开会都用英文", ["用户的领导是澳大利亚人"]),
        # A date moved with 挪到 / 换成 a time, the old value left out.
        ("我们的 sync 会从周二挪到周三上午了", ["用户的 sync 会现在是周三上午"]),
        ("儿子的 swimming 课换成周日下午了", ["用户的儿子的游泳课现在是周日下午"]),
        # A switch to a named thing without 成/到; the old thing given up after it is not appended.
        ("上个月换 Zed 了，Sublime 基本不开", ["用户现在使用 Zed"]),
        ("我们现在不用 Redis 了，全换成 Valkey", ["用户现在使用 Valkey"]),
        # Two names side by side, the second denied.
        ("更正一下，我用的是 Fedora 不是 Ubuntu", ["用户使用 Fedora"]),
        # Nobody (没人) is no contrast of the subject; a task someone set is not a fact; this quarter is passing.
        ("我们部门周报全靠 Notion，纸质的没人看", ["用户的团队周报全靠 Notion"]),
        ("博士在读，老板让我用 JAX 重写模型", ["用户博士在读"]),
        ("我们这季度花了五万做 Facebook 广告", []),
    ],
)
def test_code_mixed_terms_take_the_slot_of_a_noun(text, contents):
    got = [c.content for c in extract_rules([human(text)])]
    if contents is None:
        assert not any("Emacs style" in c or "keeps" in c for c in got), got
    else:
        assert got == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # A time of the week and how it is usually spent is a habit, not an errand.
        ("我在超市上班，周末一般都要值班", ["用户在超市上班", "用户周末一般都要值班"]),
        ("周末要带孩子去打疫苗", []),
        # "always" and a past verb after "and" is no instruction to the assistant; "Always reply …" is.
        ("Always reply in French.", ["The user wants the assistant to always reply in French"]),
        (
            "I've rented in Leeds six years and always paid on time.",
            ["The user has rented in Leeds six years"],
        ),
    ],
)
def test_habits_of_a_time_of_the_week_and_past_tense_after_always(text, contents):
    got = [c.content for c in extract_rules([human(text)])]
    assert got == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # The old value told beside a value now is left out, even when the value now is not read; told alone
        # it is the change itself.
        ("我已经不在字节了，现在在一家创业公司", ["用户现在在一家创业公司"]),
        ("我已经不在字节了", ["用户已经不在字节"]),
        (
            "My brother doesn't live in Cardiff anymore, he's in Bath now.",
            ["The user's brother is in Bath now"],
        ),
        # A bounded stretch of now, and what follows it without a subject of its own.
        ("我这周在出差，住在酒店", []),
        ("我这周在出差，我住在杭州", ["用户住在杭州"]),
        ("I'm staying with my aunt for now.", []),
        ("我最近在准备雅思考试", []),
        # An event of a short while back; a state that began longer ago and an experience had stay.
        ("I bought a new bike last month.", []),
        ("我上个月跑了个半马", []),
        ("我去年做过阑尾手术", ["用户去年做过阑尾手术"]),
        # What was said in the talk, and an imperative.
        ("Our rent is higher than I said.", []),
        ("Just send me the short list, I'm a teacher in Leeds.", ["The user is a teacher in Leeds"]),
        # A request to remember keeps what it names.
        ("Remember that I no longer eat meat.", ["The user no longer eats meat"]),
    ],
)
def test_a_statement_lasts(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # An event of change beside a value now gives way to it, whatever its verb; so does a former state.
        (
            "We hired two more designers, the studio is eleven people now.",
            ["The user's studio is eleven people now"],
        ),
        ("我之前用 VS Code，现在改用 Cursor 了", ["用户现在使用 Cursor"]),
        ("I used to work at Google, now I'm at a startup.", ["Now the user is at a startup"]),
        ("我之前在阿里干了三年", ["用户之前在阿里干了三年"]),
        # A feeling said with a degree, and a trip; trips made often are a habit.
        ("我对花粉过敏，每年春天都很难受", ["用户对花粉过敏"]),
        ("I'm really excited about my new job at Spotify.", []),
        ("我下个月去东京出差，有什么推荐的酒店吗", []),
        ("I'm flying to Tokyo next month for a conference.", []),
        ("我 base 在深圳，经常去香港出差", ["用户常驻在深圳", "用户经常去香港出差"]),
        # A try of the moment, advice given, a want of something made for the talk.
        ("好的，我试一下", []),
        (
            "I'm allergic to penicillin, my doctor says I should carry a card.",
            ["The user is allergic to penicillin"],
        ),
        (
            "I'm a vegetarian, but my kids eat meat, so I need recipes that work for both.",
            ["The user is a vegetarian", "The user's kids eat meat"],
        ),
        ("我的 mentor 建议我多写 unit test", []),
        ("我得了糖尿病", ["用户得了糖尿病"]),
        # A label before a colon, a speech act that announces the statement.
        ("Quick fix: the launch is on the 20th, not the 12th.", ["The launch is on the 20th"]),
        ("oh and I should add that my wife is a nurse", ["The user's wife is a nurse"]),
        # An adjective's nominal as the subject leans on the talk; a verb's nominal is the user's own.
        ("我 manager 换人了，新的是个 American", ["用户经理换人"]),
        ("我学的是会计", ["用户学的是会计"]),
        # News of a moment ("just" and a past verb that changes no state, 刚…完), a bare predicate, an object
        # pointing back mid-sentence; a change after "just" stays, and an irregular past keeps its form.
        ("My company just laid off 20% of staff.", []),
        ("I just joined Stripe as a designer.", ["The user just joined Stripe as a designer"]),
        ("我们公司今年裁员了，我还在", ["用户的公司今年裁员"]),
        ("I can only work on this on weekends.", []),
        ("I'll check it later.", []),
        ("我 OK 的，你继续", []),
        # Someone else's view of the user is theirs; a second predicate is its subject's whatever its object holds;
        # the pet or child of the household carries on as the subject.
        ("My wife thinks I work too much.", []),
        ("我妈觉得我太瘦", []),
        (
            "My dad has dementia and lives in a care home near us.",
            ["The user's dad has dementia", "The user's dad lives in a care home near the user"],
        ),
        ("我家猫十二岁了，有慢性肾病", ["用户家猫十二岁", "用户家猫有慢性肾病"]),
        # "doesn't" opens a denied second predicate too; a bare negation and a verb with a length of time lean on
        # what was said before; a switch after a modal is a plan, not a change.
        (
            "My mom lives with us and doesn't drive.",
            ["The user's mom lives with the user", "The user's mom doesn't drive"],
        ),
        ("我 partner 是 vegetarian，我不是", ["用户的伴侣是素食者"]),
        ("我在 Amazon 做 SDE，做了三年", ["用户在 Amazon 做 SDE，做了三年"]),
        ("我当了五年产品经理", ["用户当了五年产品经理"]),
        # "说实话" only opens the statement; "我有个问题" is the request
        ("说实话我不太喜欢吃甜的", ["用户不太喜欢吃甜的"]),
        ("我有个问题想问，我儿子七岁，晚上总是不睡觉怎么办", ["用户的儿子七岁"]),
        ("我们 team 下个月要 migrate 到 AWS", ["用户的团队下个月要迁移到 AWS"]),
        ("I tore my ACL in February.", ["The user tore their ACL in February"]),
        # The A-not-A question of Chinese, work not finished yet, someone else as the subject, 日本人 is no 本人.
        ("我家狗狗最近不爱吃东西，是不是病了", ["用户家狗狗最近不爱吃东西"]),
        ("这个报告明天要交，我还没写完", []),
        ("我是乙方，对方要求三个月账期", ["用户是乙方"]),
        ("我女朋友是日本人，我们平时用英语交流", ["用户的女朋友是日本人", "用户平时用英语交流"]),
        ("我是左撇子，用剪刀很不方便", ["用户是左撇子"]),
        # A thousands separator is no clause break; a pronoun and a particle at the end lean on the talk; the
        # old value in the perfect ("have stopped") gives way to the value now too.
        ("We earn 120,000 a year.", ["The user earns 120,000 a year"]),
        ("Never mind, I figured it out.", []),
        ("We've stopped using Trello, everything is in Asana now.", []),
        ("I've stopped drinking coffee.", ["The user has stopped drinking coffee"]),
        # the value now is also the user said again as the subject, or a Chinese change completed with 了
        ("I don't work at Amazon anymore, I'm freelancing.", ["The user is freelancing"]),
        ("我现在不做前端了，转后端了", []),
        # a life event told bare gives way to the value now beside it, and stays alone
        ("我女儿转学了，现在在实验小学", ["用户的女儿现在在实验小学"]),
        ("我女儿转学了", ["用户的女儿转学"]),
        # "and" before a quantified subject with its own verb opens a clause
        ("I sell pottery online and most buyers are in Germany.", ["The user sells pottery online"]),
        # What "we" is, is the user's company or family; an age and a kind of person are two states.
        ("We are a two-person design studio.", ["The user's company is a two-person design studio"]),
        ("We're a family of four.", ["The user's family has four people"]),
        ("I'm 52 and a former accountant.", ["The user is 52", "The user is a former accountant"]),
    ],
)
def test_events_beside_a_value_now_feelings_trips_tries_and_advice(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    "text, contents",
    [
        # Everyday nouns of code-mixed speech and nationalities said of someone are written in Chinese.
        ("我在 lab 做 NLP，主要写 paper", ["用户在实验室做 NLP", "用户主要写论文"]),
        ("我对 gluten 过敏，不能吃面包", ["用户对麸质过敏", "用户不能吃面包"]),
        ("我 wife 是 Korean，我们在 Seoul 住", ["用户的妻子是韩国人", "用户在 Seoul 住"]),
        ("我是 Canadian 公司的员工", ["用户是 Canadian 公司的员工"]),  # an adjective before a noun stays
        # a noun after 我们 is theirs; a word that is a verb too is not
        ("我们 clinic 只用纸质病历", ["用户的诊所只用纸质病历"]),
        ("我们每周去 swimming 两次", ["用户每周去游泳两次"]),
        # A Chinese term owned by the user is the subject of its second predicate.
        (
            "My 妈妈 lives with us and only speaks Cantonese.",
            ["The user's 妈妈 lives with the user", "The user's 妈妈 only speaks Cantonese"],
        ),
    ],
)
def test_code_mixed_nouns_nationalities_and_owned_terms(text, contents):
    assert [c.content for c in extract_rules([human(text)])] == contents


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a remark about the talk's own context keeps nothing of itself, explicit or not
        ("我对芒果过敏。以后给我做菜谱都参考这个，记住了。", ["用户对芒果过敏"]),
        ("记住这些情况：我在成都做会计。以后回答都结合上面说的", ["用户在成都做会计"]),
        (
            "I'm a night-shift nurse. Please bear that in mind when you plan my week.",
            ["The user is a night-shift nurse"],
        ),
        ("One quick note about me, just so you know.", []),
        ("Before we begin, remember this for all future chats:", []),
        # the same words with something of the user's in them stay
        ("One thing I hate is cilantro", ["One thing the user hates is cilantro"]),
        ("I'm vegan, just so you know", ["The user is vegan"]),
        ("我每天都在考虑这个问题：要不要换工作", None),
    ],
)
def test_a_remark_about_the_talks_context_is_no_memory(text, expected):
    got = [c.content for c in extract_rules([human(text)])]
    if expected is None:
        assert not any(g.endswith(("考虑这个", "这个")) for g in got), got
    else:
        assert got == expected


def test_the_llm_path_refuses_a_remark_about_the_talks_context_too():
    assert validate_statement("用户希望助手以后讨论都基于这个") == ""
    assert validate_statement("The user's background: keep that in mind for any advice") == ""
    assert validate_statement("The user is a night-shift nurse") == "The user is a night-shift nurse"


def ai(text):
    return {"role": "ai", "content": text}


def talked(conversation: list[str]) -> list[str]:
    """What the rules write for a conversation given as its texts, the user's first, then taking turns."""
    return [
        c.content
        for c in extract_rules([human(m) if k % 2 == 0 else ai(m) for k, m in enumerate(conversation)])
    ]


def written(messages, reply):
    """What the rules write of the user's messages, each answered by the assistant with the same reply."""
    return [c.content for c in extract_rules([m for text in messages for m in (human(text), ai(reply))])]


@pytest.mark.parametrize(
    ("messages", "expected", "replaced"),
    [
        # a later message that takes back what was said keeps only the value the turn ends on
        (
            [
                human("我现在主力IDE是VS Code"),
                ai("好的，记下了。"),
                human("哦不对，上个月刚换成Cursor了，VS Code基本不开了"),
            ],
            ["用户现在使用 Cursor"],
            ("用户现在主力IDE是VS Code",),
        ),
        (
            [
                human("帮我安排一下下周的三餐，我不吃猪肉"),
                ai("好的。"),
                human("等等，我现在开始吃素了，肉都不吃了"),
            ],
            ["用户现在开始吃素，肉都不吃了"],
            ("用户不吃猪肉",),
        ),
        (
            [
                human("I live in Leeds and my name is Tom."),
                ai("Noted."),
                human("Wait, actually I live in York."),
            ],
            ["The user's name is Tom", "The user lives in York"],
            ("The user lives in Leeds",),
        ),
        # without a word that takes it back, both stand
        (
            [human("I live in Leeds."), ai("Noted."), human("I also have a dog called Rex.")],
            ["The user lives in Leeds", "The user also has a dog called Rex"],
            (),
        ),
    ],
)
def test_a_message_that_takes_back_the_one_before_leaves_only_the_value_the_turn_ends_on(
    messages, expected, replaced
):
    got = extract_rules(messages)
    assert [c.content for c in got] == expected
    # the statement that takes another's place is a correction and names the one it replaces
    assert got[-1].replaces == replaced
    assert got[-1].correction == bool(replaced)


def test_a_take_back_in_a_later_turn_supersedes_the_memory_written_before(org_a):
    _run(org_a, "ide", [human("我现在主力IDE是VS Code", "m1")])
    [old] = MemoryItem.objects.filter(org=org_a, status="active")
    job = _run(
        org_a,
        "ide",
        [
            {**human("我现在主力IDE是VS Code", "m1"), "context": True},
            {"role": "ai", "content": "好的，记下了。", "message_id": "m2", "context": True},
            human("哦不对，上个月刚换成Cursor了，VS Code基本不开了", "m3"),
        ],
    )
    [superseded] = job.result["superseded"]
    assert superseded["old_id"] == old.pk
    assert list(MemoryItem.objects.filter(org=org_a, status="active").values_list("content", flat=True)) == [
        "用户现在使用 Cursor"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a change announced without its value, the value in a later clause: one statement
        ("婚礼的日子改了，不是十月了，定在明年五月二十号。", ["婚礼的日子定在明年五月二十号"]),
        ("我们的周会又改了，挪到周四了", ["用户的周会现在是周四"]),
        ("组会时间变了，现在是每周五上午", ["组会时间现在是每周五上午"]),
        ("我的预算改了，定在八十万", ["用户的预算定在八十万"]),
        # the bare "changed jobs" gives way to the statements after it
        (
            "跟你说一声，我换工作了，从美团跳到了字节，还是做推荐算法。",
            ["用户从美团跳到了字节", "用户还是做推荐算法"],
        ),
        # a life event told bare stays beside another statement
        ("我是独生女，父母都退休了，住在青岛", None),
    ],
)
def test_a_change_stated_across_clauses_is_one_statement_with_the_new_value(text, expected):
    got = [c.content for c in extract_rules([human(text)])]
    if expected is None:
        assert "用户的父母都退休" in got, got
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a bare "it" of a change is the thing the user named before it, in an earlier message or clause
        (
            [
                human("Remember the product launch I mentioned for April?"),
                ai("Yes, the April launch."),
                human("We pushed it to May 14th, legal still hasn't signed off."),
            ],
            ["The product launch is now May 14th"],
        ),
        (
            [human("My dentist appointment was on Monday."), ai("OK."), human("They moved it to Friday.")],
            ["The user's dentist appointment is now Friday"],
        ),
        # with nothing named before, the change of "it" is no statement
        ([human("We pushed it to May 14th.")], []),
    ],
)
def test_a_bare_it_of_a_change_is_the_thing_named_before(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a verdict is no fact
        (
            "Since my kid goes to a school in Beijing and the tuition is insane, help me with a budget.",
            ["The user's kid goes to a school in Beijing"],
        ),
        # what is asked for now, by an indefinite pronoun, is the request
        (
            "Can you suggest a Saturday bike loop? I'm in Portland, near Laurelhurst Park, and I don't want "
            "anything over 30 miles.",
            ["The user is in Portland, near Laurelhurst Park"],
        ),
        # a place phrase without a verb completes the clause before it
        ("I live in Leeds, near the university.", ["The user lives in Leeds, near the university"]),
        # kin words of speech are written after 和/跟 too
        ("我和老公都上班", ["用户和丈夫都上班"]),
        ("我们一家跟爸妈住一起", ["用户一家跟父母住一起"]),
    ],
)
def test_verdicts_wants_of_the_moment_place_phrases_and_kin_words(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a bare answer to the assistant's question about the user is read as the sentence it stands for
        (
            [
                human("Draft a polite email asking my landlord to fix the dishwasher."),
                ai("Sure. What's your landlord's name, and how long has it been broken?"),
                human("Mrs. Okafor. About two weeks now."),
            ],
            ["The user's landlord's name is Mrs. Okafor"],
        ),
        (
            [human("Any tips?"), ai("Do you use Vim or Emacs?"), human("Emacs, mostly.")],
            ["The user uses Emacs"],
        ),
        (
            [human("帮我看看这个报错"), ai("你用的是conda还是venv？"), human("conda。")],
            ["用户使用 conda"],
        ),
        ([human("帮我起个名字"), ai("好的，你家狗叫什么？"), human("旺财")], ["用户的狗叫旺财"]),
        # not an answer of a phrase, not an answer to a question about the user
        ([human("Any tips?"), ai("What is your budget?"), human("Not sure yet.")], []),
        ([human("Any tips?"), ai("What's the weather like?"), human("Sunny.")], []),
        ([human("帮我起个名字"), ai("你家狗叫什么？"), human("你猜")], []),
        ([human("hi"), ai("What's your favorite color?"), human("eh, depends on the day honestly")], []),
        ([human("你好"), ai("你的专业是什么？"), human("随便啦")], []),
        ([human("你好"), ai("你的专业是什么？"), human("计算机")], ["用户的专业是计算机"]),
        (
            [human("在准备考研"), ai("报的是哪个方向？"), human("计算机")],
            ["用户在准备考研", "用户报的方向是计算机"],
        ),
        ([human("hi"), ai("How old is your son?"), human("Seven.")], ["The user's son is seven"]),
        ([human("hi"), ai("How old are your kids?"), human("Seven and nine.")], []),
        (
            [human("hi"), ai("Where are you based?"), human("Berlin, mostly.")],
            ["The user is based in Berlin"],
        ),
        ([human("hi"), ai("Where do you live?"), human("near the park")], []),
        ([human("你好"), ai("你住在哪个城市？"), human("成都")], ["用户住在成都"]),
        ([human("你好"), ai("你家孩子多大了？"), human("五岁")], ["用户的孩子五岁"]),
        ([human("你好"), ai("你家孩子多大了？"), human("还小")], []),
    ],
)
def test_a_bare_answer_takes_its_subject_and_verb_from_the_question(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a self-introduction before a colon heads what the user tells of themselves
        (
            "介绍下自己吧：我在Grab做数据工程师，老婆是马来西亚人",
            ["用户在Grab做数据工程师", "用户的妻子是马来西亚人"],
        ),
        # a request to introduce something else still hands over material
        ("帮我介绍一下这个产品：它是一款智能手表", []),
        # "就是" before the subject is a discourse word
        ("也没啥，就是我最近开始用Obsidian记笔记了", ["用户最近开始使用 Obsidian记笔记"]),
    ],
)
def test_a_self_introduction_heads_a_background_and_discourse_words_are_left_out(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a time of the week put before the subject goes after it
        ("周末我一般都在河边钓鱼", ["用户周末一般都在河边钓鱼"]),
        ("周末我们去哪玩？", []),
        # a pronoun object is the person or animal named before, or the clause is left out
        ("我妈妈住在养老院，每周日我都会去看她", ["用户的母亲住在养老院", "用户每周日都会去看用户的母亲"]),
        ("每周日我都会去看她", []),
        ("我家猫叫煤球，我每天给它喂药", ["用户家猫叫煤球", "用户每天给用户的猫喂药"]),
        # someone of the user's named inside a request
        ("给我家猫“煤球”推荐几款低敏猫粮，它一吃鸡肉就软便", ["用户的猫叫煤球", "用户的猫一吃鸡肉就软便"]),
        (
            "Write a short birthday poem for my daughter Mia, she loves horses.",
            ["The user's daughter is named Mia", "The user's daughter loves horses"],
        ),
        # "是用 X 写的" is the tool it is written with, not 使用
        ("我们的后端是用Go写的", ["用户的后端是用Go写的"]),
        # a past verb after a comma continues the subject, or is left out; never a statement without one
        (
            "I'm a nurse, came back from Melbourne after my master's and now I work in Sydney.",
            ["The user is a nurse", "Now the user works in Sydney"],
        ),
    ],
)
def test_fronted_times_pronoun_objects_and_names_in_requests(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a pet or a child named in passing in a message that says nothing else of them: the user has one
        ("每次带我家狗出去遛都要一个小时，有没有省事的办法", ["用户养了一只狗"]),
        ("Any tips for my puppy's barking?", ["The user has a puppy"]),
        ("帮我给我儿子写个生日祝福", ["用户有儿子"]),
        # said of them already: nothing more
        ("My son has a severe peanut allergy. Write a note.", ["The user's son has a severe peanut allergy"]),
        # cat food is no cat
        ("帮我推荐几款猫粮", []),
        # a part of what the user has, with its own verb after "and", is a statement of its own
        (
            "Plan a week of dinners, I'm cooking for four and one of my kids is allergic to eggs.",
            ["The user is cooking for four", "One of the user's kids is allergic to eggs"],
        ),
    ],
)
def test_a_pet_or_child_named_in_passing_and_a_part_of_what_the_user_has(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # moving everything over to a tool, or migrating to it, is a switch: what is used now
        (
            "Oh, we don't use Trello anymore, the team moved everything over to Linear last sprint.",
            ["The user's team now uses Linear"],
        ),
        ("We migrated to Postgres last year.", ["The user's team now uses Postgres"]),
        # moving to a place is where the user lives
        ("I moved to Bristol last spring.", ["The user lives in Bristol"]),
    ],
)
def test_moving_everything_over_to_a_tool_is_a_switch(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # something given up without a subject, then what is done now: the user's (or the one named first)
        ("法语不学了，改学西班牙语了", ["用户现在学西班牙语"]),
        ("咖啡戒了，现在只喝白水", ["用户现在只喝白水"]),
        ("羽毛球不打了，改成周末爬山", ["用户现在周末爬山"]),
        ("儿子小提琴不学了，改学钢琴", ["用户的儿子现在学钢琴"]),
        # someone else's plan changed is no value of the user's
        ("他不来了，改成周五", []),
        # an errand this weekend is still passing
        ("这周末我去爬山", []),
    ],
)
def test_something_given_up_then_taken_up_is_a_correction_of_the_user(text, expected):
    got = extract_rules([human(text)])
    assert [c.content for c in got] == expected
    assert all(c.correction for c in got)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "我们是一个…工作室": the user is in it, and what follows without a subject is the studio's
        (
            "记住这个背景：我们是一个五个人的独立游戏工作室，在广州，正在做一款像素风的农场游戏。",
            [
                "用户在一个五个人的独立游戏工作室",
                "用户的工作室在广州",
                "用户的工作室正在做一款像素风的农场游戏",
            ],
        ),
        (
            "记住这个context：我们是一个B2B SaaS startup，做HR系统，ARR大概两百万美元。",
            ["用户在一个B2B SaaS 创业公司", "用户的公司做HR系统", "用户的背景：ARR大概两百万美元"],
        ),
        ("记住：我们是一支乐队，四个人", ["用户在一支乐队", "用户的乐队有四个人"]),
        # "我们是一家…" is the user's company
        ("我们是一家小餐厅，在成都", ["用户的公司是一家小餐厅", "用户的公司在成都"]),
    ],
)
def test_we_are_a_company_puts_the_user_in_it(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


def test_after_so_a_clause_opens_never_a_lists_tail():
    assert [
        c.content for c in extract_rules([human("I teach fourth grade, so nine and ten year olds mostly.")])
    ] == ["The user teaches fourth grade"]
    assert [
        c.content for c in extract_rules([human("I speak Spanish, English and a little Portuguese.")])
    ] == ["The user speaks Spanish, English and a little Portuguese"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a plan continues the subject, and so does a goal and a thing put first with "only"
        ("我刚考下PMP，打算转项目经理，帮我改一下简历", ["用户刚考下PMP", "用户打算转项目经理"]),
        ("我在准备考研，目标是浙大", ["用户在准备考研", "用户的目标是浙大"]),
        ("我每天早上跑步，而且咖啡只喝黑咖啡", ["用户每天早上跑步", "用户咖啡只喝黑咖啡"]),
        # the assistant's preparation is no plan of the user's
        ("我在写论文，准备一下提纲吧", ["用户在写论文"]),
    ],
)
def test_plans_goals_and_things_put_first_continue_the_subject(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("messages", "expected", "replaced"),
    [
        # a later change of the same slot within the turn leaves only the new value, and names the old one
        (
            [human("我住在广州"), ai("好的"), human("去年搬到了厦门")],
            ["用户住在厦门"],
            ("用户住在广州",),
        ),
        (
            [human("I use VS Code."), ai("OK."), human("I switched to Neovim last week.")],
            ["The user now uses Neovim"],
            ("The user uses VS Code",),
        ),
        (
            [human("我的预算是五十万"), ai("好的"), human("预算涨到八十万了")],
            ["预算为八十万"],
            ("用户的预算是五十万",),
        ),
        # a copula names no slot: both stand
        (
            [human("I am a nurse."), ai("OK."), human("I went vegan last year.")],
            ["The user is a nurse", "The user is vegan"],
            (),
        ),
    ],
)
def test_a_later_change_of_the_same_slot_in_the_turn_replaces_the_earlier_value(messages, expected, replaced):
    got = extract_rules(messages)
    assert [c.content for c in got] == expected
    assert got[-1].replaces == replaced


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我是freelance translator，日译中为主", ["用户是自由职业翻译，以日译中为主"]),
        ("我是做embedded的，主要写C", ["用户是做嵌入式的", "用户主要写C"]),
        ("我最近开始用Obsidian记daily notes了", ["用户最近开始使用 Obsidian记每日笔记"]),
    ],
)
def test_more_everyday_words_of_work_are_read_in_chinese(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a date moved says when it is now; a move to a place told with a time is no date
        ("The launch got pushed to the 20th.", ["The launch is now the 20th"]),
        ("Our standup moved to 10am.", ["The user's standup is now 10am"]),
        ("Oh we moved to Bristol last month.", ["The user's team moved to Bristol last month"]),
    ],
)
def test_a_moved_date_is_a_time_and_a_place_is_not(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a group that is a team of people has them, and what they are doing is a statement of the group
        (
            "We're a team of six devs running everything off a single Postgres box.",
            ["The user's team has six devs", "The user's team runs everything off a single Postgres box"],
        ),
        ("We're a family of four.", ["The user's family has four people"]),
        # after anything else the participle speaks of the thing had
        ("I have two kids going to the same school.", ["The user has two kids going to the same school"]),
        # "just that" opens nothing
        (
            "not much, just that my daughter Mia starts college in Ohio this fall",
            ["The user's daughter Mia starts college in Ohio this fall"],
        ),
    ],
)
def test_a_group_of_people_and_what_they_do(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a long undertaking lasts, with a subject or without
        ("最近在准备考研，压力有点大", ["用户最近在准备考研"]),
        ("我最近在学日语", ["用户最近在学日语"]),
        # a busy spell does not
        ("我最近在赶一个项目", []),
        ("在学校门口等你", []),
    ],
)
def test_a_long_undertaking_is_no_stretch_of_now(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


def test_use_told_as_a_cleft_is_written_use():
    assert [c.content for c in extract_rules([human("我用的是小米14，帮我看看怎么关掉负一屏")])] == [
        "用户使用小米14"
    ]
    assert [c.content for c in extract_rules([human("我们公司用的是钉钉")])] == ["用户的公司使用钉钉"]
    # other clefts stay as said
    assert [c.content for c in extract_rules([human("我学的是会计")])] == ["用户学的是会计"]


def test_a_later_message_opening_on_a_mere_discourse_word_takes_nothing_back():
    got = extract_rules([human("我住在成都"), ai("好的"), human("其实我在成都出生")])
    assert [c.content for c in got][0] == "用户住在成都"
    assert not any(c.replaces for c in got)


@pytest.mark.parametrize(
    "text",
    ["我手机号换了", "I changed jobs last month.", "我换工作了", "我搬家了", "I moved house recently."],
)
def test_a_change_without_its_value_is_no_statement(text):
    assert extract_rules([human(text)]) == []


def test_a_life_event_told_bare_stays():
    assert [c.content for c in extract_rules([human("我退休了")])] == ["用户退休"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a move to a place named in Chinese is the household's, not the team's
        ("We moved from 北京 to 杭州 in March", ["The user lives in 杭州"]),
        ("We moved back to 广州 last year.", ["The user lives in 广州"]),
        ("We moved to Postgres last year.", ["The user's team moved to Postgres last year"]),
    ],
)
def test_a_move_to_a_place_named_in_chinese_is_the_households(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a subjectless self-description with a time of work, and how often, continue the subject
        (
            "Working nights at a warehouse, so I'm usually asleep until 2pm.",
            ["The user is working nights at a warehouse", "The user is usually asleep until 2pm"],
        ),
        ("老公在部队，一年回来一次", ["用户的丈夫在部队", "用户的丈夫一年回来一次"]),
    ],
)
def test_times_of_work_and_how_often(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("messages", "expected", "replaced"),
    [
        # "she" in a later message is the person of the user's named before, and a take-back replaces her age
        (
            [human("My daughter is 7."), ai("Nice"), human("Actually she's 8.")],
            ["The user's daughter is 8"],
            ("The user's daughter is 7",),
        ),
        (
            [human("我女儿今年七岁"), ai("好"), human("不对，她已经八岁了")],
            ["用户的女儿已经八岁"],
            ("用户的女儿今年七岁",),
        ),
        # what the take-back shares with an earlier statement is its subject only: that statement stays
        (
            [human("My daughter loves horses."), ai("Nice"), human("Actually she just turned 8.")],
            ["The user's daughter loves horses", "The user's daughter is 8"],
            (),
        ),
        # another child's age is another slot
        (
            [human("我女儿今年七岁"), ai("好"), human("我儿子今年五岁")],
            ["用户的女儿今年七岁", "用户的儿子今年五岁"],
            (),
        ),
    ],
)
def test_a_pronoun_in_a_later_message_is_the_person_named_before(messages, expected, replaced):
    got = extract_rules(messages)
    assert [c.content for c in got] == expected
    assert got[-1].replaces == replaced


def test_a_statement_opening_on_a_pronoun_with_nobody_named_is_no_statement():
    assert extract_rules([human("Actually she just turned 8.")]) == []


def test_a_slip_owned_up_to_is_no_statement():
    messages = [
        human("我的车是2019年的卡罗拉，多久保养一次比较合适？"),
        ai("卡罗拉一般建议每5000公里或者半年保养一次。"),
        human("哦不对，我记错了，是2019年的雷凌，不是卡罗拉。"),
    ]
    contents = [c.content for c in extract_rules(messages)]
    assert contents and not any("记错" in c for c in contents), contents


def test_a_bare_place_answer_says_where_once():
    messages = [
        human("帮我算一下，月薪一万二，扣完五险一金大概剩多少？"),
        ai("每个城市缴纳比例不太一样，你在哪个城市？"),
        human("在武汉。"),
    ]
    assert "用户住在武汉" in [c.content for c in extract_rules(messages)]


def test_an_adverb_before_the_verb_is_not_conjugated():
    contents = [c.content for c in extract_rules([human("I only ever use grams in my kitchen, never cups.")])]
    assert any(c.startswith("The user only ever uses grams") for c in contents), contents
    assert not any("evers" in c for c in contents)


@pytest.mark.parametrize(
    "text",
    [
        "I'm heading to the airport in an hour for a quick trip. Give me a packing checklist.",
        "Ugh. My presentation is in two hours and I need a pep talk.",
        "我今晚要去机场接人，帮我查一下航班。",
    ],
)
def test_what_happens_within_hours_is_not_kept(text):
    assert extract_rules([human(text)]) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "我在县城开五金店，开了十二年",
            ["用户在县城开五金店，开了十二年"],
        ),  # "开了十二年": how long the shop is run
        ("我在准备考研，明年12月考", ["用户在准备考研"]),
        ("我刚买了智能手机，正在学着用", ["用户刚买了智能手机"]),
        ("I'm vegan is fine, cook whatever", []),
        ("I live in Mostly commuting between two cities", []),
        ("My old mug does it daily", []),
        ("I actually switched him to another school", []),
        ("Before I run to my 7am section", []),
        ("Need a quick email to my landlord", []),
        ("My boss keeps saying it in meetings", []),
    ],
)
def test_a_statement_that_lost_its_object_or_main_clause_is_none(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    "statement",
    [
        "用户开了十二年",
        "用户开了快十年",
        "用户在武汉读的",
        "用户正在学着用",
        "用户明年12月考",
        "The user is vegan is fine",
        "The user's changes every week",
        "The user is based in Mostly commuting",
        "The user's mug does it daily",
        "The user switched him to an international school",
        "Before the user runs to the user's 7am section",
        "Need a quick email to the user's landlord",
        "The user does not live there yet",
        "The user is just toying with the idea of moving",
    ],
)
def test_lost_parts_are_recognised(statement):
    assert _LOST_PART.search(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "用户之前在阿里干了三年",  # worked there: the place says at what
        "用户数学不用考",
        "用户今年高考",
        "用户CPA 还在考",
        "The user is a nurse who is on nights",
        "The user wants the assistant to keep it short",
        "The user wants the assistant to cite papers when it can",
        "When the user travels the user prefers aisle seats",
        "The user's team has 8 people and half of them only speak Spanish",
        "The user is allergic to penicillin",
    ],
)
def test_whole_statements_are_not_lost_parts(statement):
    assert not _LOST_PART.search(statement)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a take-back that opens on 刚才: the earlier statement goes, the new one replaces it
        (
            [human("我是 PM，帮我写个 PRD 模板"), ai("好的。"), human("刚才说错了，我其实是做 UX design 的")],
            ["用户是做 UX 设计的"],
        ),
        # "等下，还是别记了": the remember request before is taken back, with no word pointing at it
        (
            [
                human("帮我记住，我住朝阳区望京那边。"),
                ai("好的。"),
                human("等下，还是别记了，我不太想留地址信息。"),
            ],
            [],
        ),
        # the value said, then the one it replaces
        (
            [
                human("I'm in Denver — what's a good hike close by?"),
                ai("Try Mount Falcon."),
                human("Boulder, not Denver."),
            ],
            ["The user is in Boulder"],
        ),
        # an age now
        (
            [
                human("my son Leo is 4, any puzzle ideas?"),
                ai("Try 24-piece floor puzzles."),
                human("oh he turned 5 last month"),
            ],
            ["The user's son Leo is 5"],
        ),
        # not settled after all: the place said before is taken back
        (
            [
                human("I live in Lisbon, which areas are good for kids?"),
                ai("Campo de Ourique and Parque das Nações."),
                human(
                    "well, I don't live there yet, we're just toying with the idea of moving. nothing decided"
                ),
            ],
            [],
        ),
    ],
)
def test_take_backs_of_other_shapes_leave_the_value_the_conversation_ends_on(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "got a test tmrw so pls be quick, what's a quadratic",
        "stuck at the airport with a 4 hour delay, recommend a podcast",
        "下班路上顺便去超市给家里的猫买猫粮，有什么牌子推荐",
    ],
)
def test_moments_of_other_shapes_are_not_kept(text):
    assert extract_rules([human(text)]) == []


@pytest.mark.parametrize(
    ("messages", "gone"),
    [
        # a value a later message says has ended leaves the statement that held it
        (
            [
                human("I'm doing keto, any breakfast ideas?"),
                ai("Try avocado and smoked salmon."),
                human("my doctor made me quit keto last month, mediterranean now"),
            ],
            "The user is doing keto",
        ),
        (
            [human("我们组用 Trello 管任务"), ai("好的。"), human("上周 Trello 已经停用了，全部搬到飞书了")],
            "Trello 管任务",
        ),
        # a take-back opening on 刚 and one on 哎
        (
            [human("我在苏州做会计"), ai("好的。"), human("哦刚说错了，苏州那是上家，现在在上海做审计")],
            "苏州",
        ),
        ([human("记一下，我下个月要搬去青岛了"), ai("好的。"), human("哎等等，先别记，还没定下来")], "青岛"),
    ],
)
def test_an_ended_or_taken_back_value_is_not_kept(messages, gone):
    assert not [c.content for c in extract_rules(messages) if gone in c.content]


def test_a_date_taken_back_is_replaced_whole():
    messages = [human("我女儿生日是5月12号"), ai("好的。"), human("哎打错了，是5月21号")]
    assert [c.content for c in extract_rules(messages)] == ["用户的女儿生日是5月21号"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ok I'm pretty new to coding, explain loops", ["The user is pretty new to coding"]),  # the "ok" goes
        ("我今年想给他订个蛋糕", []),  # he, with nobody named
        ("my flight's delayed 3 hours, what can I do at the airport", []),
        ("I've got a pounding headache, short answers please", []),
        ("my hands are literally frozen", []),
    ],
)
def test_discourse_words_unnamed_people_and_moments(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    "statement",
    [
        "现在现在是一周游三次泳",
        "杭州那是上家",
        "用户这是养老院",
        "用户再加中文解释",
        "The user's two cats",
        "Just saying hi",
    ],
)
def test_rewritten_twice_pointing_or_owned_with_nothing_said_are_lost_parts(statement):
    assert _LOST_PART.search(statement)


def test_a_request_about_answers_is_the_assistants():
    messages = [
        human("以后都按这个背景来回答我：我是会计，在成都上班。回答尽量给出具体准则条文，别说太多套话。")
    ]
    contents = [c.content for c in extract_rules(messages)]
    assert "用户希望助手回答尽量给出具体准则条文，别说太多套话" in contents
    assert not [c for c in contents if c.startswith("用户回答")]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a don't-keep at the message's start takes back the request before, with no word pointing at it
        (
            [
                human("帮我记一下，我下个月要去成都出差一周。"),
                ai("好的。"),
                human("算了算了，先别记，票还没买"),
            ],
            [],
        ),
        (
            [
                human("I work at the bakery on Main Street. How do I ask for a raise?"),
                ai("Start with what you've taken on."),
                human("Actually, forget I mentioned where I work. I'd rather you didn't keep that anywhere."),
            ],
            [],
        ),
        # the new value said bare after a take-back, up to the dash
        (
            [
                human("My dog Rex is 9, any tips for his joints?"),
                ai("That's common at that age."),
                human("Sorry, Rex is 11 — I was counting from when we got him."),
            ],
            ["The user's dog Rex is 11"],
        ),
        # a count now
        (
            [
                human("我们 team 有 10 个人，想搞个聚餐"),
                ai("好的。"),
                human("上个月走了三个，现在就 7 个人了"),
            ],
            ["用户的团队有 7 个人"],
        ),
        # where one works, said again after a move
        (
            [
                human("我在北京望京上班，每天通勤两个小时"),
                ai("好的。"),
                human("对了，公司上个月搬到天津了，我现在在天津滨海新区上班，通勤那个不用考虑了"),
            ],
            ["用户的公司上个月搬到天津", "用户现在在天津滨海新区上班"],
        ),
    ],
)
def test_take_backs_counts_and_places_said_again(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


def test_is_with_a_participle_is_a_lost_part():
    assert _LOST_PART.search("The user's cat is started drinking a lot more water")


@pytest.mark.parametrize(
    "statement",
    [
        "Help the user outline the torts chapter on negligence",
        "Pray for the user",
        "Though the user sits with people of every faith and none",
        "That's the one the user celebrates",
        "The user's background: Virginia",
        "The user's background: Whenever tools or instruments come up",
        "The user just LOVEs Mondays",
        "用户是全世界最会做饭的人",
        "Father O'Brien gave the user a look again last Sunday",
        "用户上次煮个泡面把锅烧穿",
        "The user's brain is mush",
    ],
)
def test_requests_jokes_and_one_days_stories_are_lost_parts(statement):
    assert _LOST_PART.search(statement) or _PASSING_STATE_EN.search(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "Just call the user Sean",
        "Assume the user knows design basics",
        "The user's background: celiac",
        "The user's background: ~300 orders a month",
        "The user lives in Boulder",  # re.I must not make a capital-letter rule match any word
        "The user moved to Boulder last Sunday",  # a change keeps its day
        "The user works at a hospital in Manchester",
    ],
)
def test_statements_of_those_shapes_that_stay(statement):
    assert not _LOST_PART.search(statement)


@pytest.mark.parametrize("text", ["我一晚上没睡，帮我写个请假条", "我现在在机场赶时间，长话短说"])
def test_a_night_without_sleep_and_an_airport_rush_are_moments(text):
    assert extract_rules([human(text)]) == []


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a number right after the take-back's marker
        (
            [
                human("Ideas for a rainy Sunday? My kids are 5 and 8."),
                ai("Try a blanket fort."),
                human("oops, 6 and 8 — my youngest just had a birthday"),
            ],
            ["The user's kids are 6 and 8"],
        ),
        # a name for the one the statement ends on
        (
            [
                human("Call me Rob, by the way."),
                ai("Will do."),
                human("hmm actually go with Bert. Rob is what my old team called me."),
            ],
            ["The user wants the assistant to call the user Bert"],
        ),
        # "small update — moved back to my hometown …": the place is the user's
        (
            [
                human("I live in Leeds and work remotely."),
                ai("Nice."),
                human("small update — moved back to my hometown York last month. same job tho."),
            ],
            ["The user works remotely", "The user lives in the user's hometown York"],
        ),
        # a place a later message says is of no use any more
        (
            [
                human("我在南京上班，周末想找个近郊徒步的地方"),
                ai("可以去牛首山。"),
                human("哦我上个月调到苏州去了，南京那边的用不上了"),
            ],
            ["用户现在在苏州工作"],
        ),
    ],
)
def test_numbers_names_and_places_taken_back(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "statement",
    [
        "Doctor wants more omega-3s",
        "— moved back to the user's hometown last month",
        "Love that for the user",
        "The user's context: 23 years in",
        "The user's background: the budget is always tight",
        "The user's background: Dear Ms. Okafor",
        "The user diagnosed at 12",
        "The user moved in with the user last year",
        "The user is her only son",
    ],
)
def test_statements_about_nobody_or_hanging_are_lost_parts(statement):
    assert _LOST_PART.search(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "Red and green look the same to the user",
        "The only framework the user's shop touches is Laravel",
        "Max is a labrador",
        "The launch is now May 17",
        "The user's sister is marrying her college sweetheart",
        "The user's pronouns are she/her",
        "The user's context: about 90 students total",
    ],
)
def test_statements_that_open_otherwise_but_stand(statement):
    assert not _LOST_PART.search(statement)


@pytest.mark.parametrize(
    "statement",
    [
        "The user's hands are covered in flour",
        "The user's palms are sweating",
        "The user got 10 min before roll call",
        "The user's mother-in-law is staying with the user for three weeks",
        "The Civic got totaled last week",
        "The user is basically a professional puddle-jumper at this point",
    ],
)
def test_the_body_this_minute_and_a_things_accident_are_passing(statement):
    assert _PASSING_STATE_EN.search(statement)


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a phone keyboard's spaces and run-ons in place of commas
        (
            [human("小助手你给我记着 我血糖高 医生不让吃甜的 以后我问你菜谱你别给我放糖啊")],
            ["用户血糖高，医生不让吃甜的", "用户希望助手以后用户问菜谱别给用户放糖"],
        ),
        (
            [human("嗯 中国音乐学院 研一 导师姓刘 人挺好的 下个月期中汇报，帮我挑首曲子呗")],
            ["用户的导师姓刘"],
        ),
        (
            [human("我跟你说一下啊我是开出租车的然后我血压有点高")],
            ["用户是开出租车的", "用户血压有点高"],
        ),
        # "我们 team 用 Jira": a space beside a Latin word is no break
        ([human("我们 team 用 Jira 管项目")], ["用户的团队使用 Jira 管项目"]),
    ],
)
def test_chinese_typed_without_commas(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a switch without a subject after a time word, with a measure word, or given by the company
        ([human("上周换了 Pixel 8，那台旧的给我妈了。")], ["用户现在使用 Pixel 8"]),
        ([human("哦上周刚换了台 M3 Pro 的，旧的给我弟了。")], ["用户现在使用 M3 Pro"]),
        ([human("公司刚给换了台MacBook Pro")], ["用户现在使用 MacBook Pro"]),
        # a liking with nothing liked is no statement
        ([human("给我女儿扎个双马尾吧"), ai("好的"), human("双马尾可以 她喜欢")], ["用户有女儿"]),
    ],
)
def test_switches_without_a_subject_and_likings_without_an_object(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a move told beside what ended keeps the move (the ended role names no value now)
        (
            [
                human(
                    "I moved to the loan department at our credit union last month, so I'm not on the teller "
                    "line anymore."
                )
            ],
            [
                "The user moved to the loan department at their credit union last month",
                "The user is not on the teller line anymore",
            ],
        ),
        # a thing's accident is no value of the user's now: what the user got stays
        (
            [human("Update: the Civic got totaled last week. Got a used 2019 RAV4 Hybrid now.")],
            ["The user got a used 2019 RAV4 Hybrid now"],
        ),
        # a state marked as former still gives way to what ended it
        (
            [
                human("我之前说我用Windows，现在不是了。"),
                ai("好的，那你现在用什么系统？"),
                human("公司刚给换了台MacBook Pro"),
            ],
            ["用户现在使用 MacBook Pro"],
        ),
    ],
)
def test_events_give_way_only_to_a_value_of_the_users_now(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # English typed in lower case or without apostrophes
        (
            [human("i'm a 2nd year nursing student in Manchester and i work weekends at a care home")],
            [
                "The user is a 2nd year nursing student in Manchester",
                "The user works weekends at a care home",
            ],
        ),
        ([human("im a nurse in Leeds")], ["The user is a nurse in Leeds"]),
        ([human("i dont drive, i.e. no car")], ["The user does not drive"]),
        # a loop variable is no "I"
        ([human("why does for i in range(len(items)) skip the last one")], []),
        # a degree after "so" is no second clause
        ([human("I'm procrastinating so hard rn")], []),
        # a household's move; a team's move to a tool is not one
        ([human("We moved from Denver to Raleigh in March.")], ["The user lives in Raleigh"]),
        # "X is my Y": the user's Y is the subject
        ([human("English isn't my first language")], ["The user's first language is not English"]),
        ([human("Linda is my supervisor")], ["The user's supervisor is Linda"]),
        # 俺 is 我
        ([human("俺们两口子在县城开了个小超市")], ["用户两口子在县城开了个小超市"]),
        # notes moved to a tool are a switch, a family moved to a city a move
        ([human("之前笔记都在Notion，现在全搬到Obsidian了")], ["用户现在使用 Obsidian"]),
        ([human("我们全家都搬到成都了")], ["用户住在成都"]),
    ],
)
def test_typed_english_households_and_things_moved(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a transfer to a city is where the user works now, and replaces where they worked
        (
            [
                human("我在南京上班，想找个爬山的地方"),
                ai("可以去紫金山"),
                human("啊上个月已经调到合肥了 忘了说"),
            ],
            ["用户现在在合肥工作"],
        ),
        ([human("我上个月调到夜班了")], ["用户上个月调到夜班"]),
        # a school year right after the slip is the new value
        (
            [human("我家孩子上小学二年级"), ai("好"), human("说错了 三年级，九月刚升上去的")],
            ["用户家孩子上小学三年级"],
        ),
        # a switch done this month is no plan of this month, and replaces the one thing in use said before
        (
            [
                human("我们组现在用Jira管需求"),
                ai("好"),
                human("哦这个月我们已经迁到飞书项目了，按飞书的来改一下"),
            ],
            ["用户现在使用飞书项目"],
        ),
        (
            [
                human("我用的是 iPhone 12，电池掉得好快"),
                ai("好的"),
                human("上周换了 Pixel 8，那台旧的给我妈了。"),
            ],
            ["用户现在使用 Pixel 8"],
        ),
        # the time of a thing not named is the task's
        ([human("帮我写个会议通知：周四下午三点"), ai("好"), human("时间改成周五上午十点 地点不变")], []),
        # moments: a posture in a place, on the way, a question, a coming with no place, an opener of laughter
        ([human("I'm sitting in the dentist waiting room, tell me a fun fact")], []),
        ([human("下班骑电驴回家半路下暴雨 淋成落汤鸡了")], []),
        ([human("兽医说必须减肥，我家猫的猫粮换啥好")], ["用户养了一只猫"]),
        (
            [human("我base北京"), ai("ok"), human("我已经transfer到成都office了，上周刚过来")],
            ["用户现在在成都办公室工作"],
        ),
        ([human("lmaooo my autocorrect just changed meeting to meowing")], []),
        # a colleague's taste is theirs
        ([human("我们团队有个同事特别爱吃螺蛳粉")], []),
    ],
)
def test_transfers_slips_switches_and_moments(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # how the user is called, with or without 以后
        ([human("谢啦。以后叫我老陈就行，回复都用简体")], ["用户希望被称为老陈", "用户希望助手回复都用简体"]),
        ([human("你可以叫我老陈")], ["用户希望被称为老陈"]),
        ([human("明天早上六点叫我起床")], []),
        # standing wishes without a time word: how long replies are, a bare 别 to the assistant
        (
            [human("设定个背景：我65岁，眼睛不太好，回复字少点")],
            ["用户65岁", "用户眼睛不太好", "用户希望助手回复字少点"],
        ),
        (
            [human("我开早餐店的，所以别给我安排早上的事")],
            ["用户开早餐店的", "用户要求助手别给用户安排早上的事"],
        ),
        # but a 别 before quoted text is about the text at hand
        ([human("我们 team 用 GitLab，所以别写成 PR 哈：'Fix race condition'")], ["用户的团队使用 GitLab"]),
        # an imperative about answers after "so" is the assistant's to do
        (
            [human("I'm dyslexic so keep answers short and in bullet points.")],
            [
                "The user is dyslexic",
                "The user wants the assistant to keep answers short and in bullet points",
            ],
        ),
        # a header with its colon a little further; the colon of "16:8" is no header
        (
            [
                human(
                    "context you should keep in mind going forward: I run a little bakery in Halifax with my sister"
                )
            ],
            ["The user runs a little bakery in Halifax with their sister"],
        ),
        (
            [human("quick context, I'm lactose intolerant and I do 16:8 fasting, eating window noon to 8.")],
            ["The user is lactose intolerant", "The user does 16:8 fasting"],
        ),
    ],
)
def test_names_standing_wishes_and_headers(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # pets by breed and pets counted, said in passing
        ([human("今天又给我家橘猫称了下，14斤了😂 兽医说必须减肥")], ["用户养了一只橘猫"]),
        ([human("给我家Golden挑个牙刷，它三岁了")], ["用户养了一只金毛"]),
        (
            [human("Need a packing list. I'm type 1 diabetic, and my two huskies are coming too")],
            ["The user is type 1 diabetic", "The user has two huskies"],
        ),
        # "been …ing" without a subject after a self-description
        (
            [
                human(
                    "I'm a dairy farmer in Wisconsin, been running the place with my dad since I was a teenager."
                )
            ],
            [
                "The user is a dairy farmer in Wisconsin",
                "The user has been running the place with their dad since the user was a teenager",
            ],
        ),
        # the body and how often, without a subject
        (
            [human("左膝半月板前年做过手术，现在一周游三次泳，想加点跑步行不行")],
            ["用户左膝半月板前年做过手术", "用户现在一周游三次泳"],
        ),
    ],
)
def test_pets_in_passing_and_subjectless_facts(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Widowed, two grown daughters.", ["The user is widowed", "The user has two grown daughters"]),
        ("What are good games for two kids at a party?", []),
    ],
)
def test_a_bare_status_and_a_bare_count_of_the_users_people(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # 给我家 is no 给我: the cat's claws are no instruction
        ("每次给我家布偶剪指甲都跟打仗一样，有啥技巧不", ["用户养了一只布偶"]),
        (
            "Whenever I take our two greyhounds out in the rain they refuse to move",
            ["The user has two greyhounds"],
        ),
        (
            "Keep this in mind from now on: I'm blind, so please no tables or ASCII art, and put the key answer first.",
            [
                "The user is blind",
                "The user wants no tables or ASCII art",
                "The user wants the assistant to put the key answer first",
            ],
        ),
    ],
)
def test_pets_of_the_household_and_wishes_about_answers(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # the old device given away: what the user uses now replaces the device named before
        (
            [
                human("我的电脑是 MacBook Air M1，想装个 Docker 跑 Postgres，有坑吗？"),
                ai("注意镜像架构"),
                human("啊那台给我妹了，我现在用 ThinkPad X1 Carbon，重新说下"),
            ],
            ["用户现在使用 ThinkPad X1 Carbon"],
        ),
        # what ended gives way to what began in the same message
        (
            [human("Update: I'm not at Shopify anymore — started at Stripe last month as a staff engineer.")],
            ["The user started at Stripe last month as a staff engineer"],
        ),
        # a role or a way of eating now replaces the one of the same kind
        (
            [
                human("I'm a store manager at a Starbucks in Denver. Can you make me a shift template?"),
                ai("sure"),
                human("Got promoted last week, district manager now — 6 stores."),
            ],
            ["The user is district manager now"],
        ),
        (
            [
                human("FYI I'm vegetarian, keep that in mind for recipes."),
                ai("ok"),
                human("update: started eating fish again, doctor wants more omega-3s. so pescatarian now."),
            ],
            ["The user is pescatarian now"],
        ),
    ],
)
def test_a_value_now_replaces_the_one_of_its_kind(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "text",
    [
        "Ugh, I have 20 minutes before the committee meeting",
        "ok now help me set up a carpool rotation with two other families",
        "哎说 AI 以后会不会也要 996",
    ],
)
def test_minutes_left_requests_after_now_and_questions_about_later_are_no_statements(text):
    assert [c.content for c in extract_rules([human(text)])] == []


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a place said with 住 alone is the same slot as 住在
        (
            [
                human("我住上海浦东 这周末附近有啥好看的展"),
                ai("好"),
                human("哦 我上个月搬去杭州滨江了 按杭州来吧"),
            ],
            ["用户住在杭州滨江"],
        ),
        # a switch right after a time with only an adverb between; not when the thing names its own subject
        ([human("上周刚迁到 GitLab CI 了 那台机器都下线了")], ["用户现在使用 GitLab CI"]),
        ([human("前两天换 iPhone 15 了 小米给我爸用了")], ["用户现在使用 iPhone 15"]),
        # a job moved to, its name in Latin letters with spaces, replaces the job where one worked
        (
            [
                human("我在 Shopee 做运营 想问下大促期间怎么排期"),
                ai("好"),
                human("哦我三月份跳槽去 TikTok Shop 了 还是做运营"),
            ],
            ["用户现在在TikTok Shop工作", "用户还是做运营"],
        ),
        # a stretch of life carries the subject on
        (
            [human("我今年67了 退休前在纺织厂干了三十年会计")],
            ["用户今年67岁", "用户退休前在纺织厂干了三十年会计"],
        ),
        # someone else's coming event and a coworker's tastes are theirs
        ([human("我朋友下个月在大理办婚礼 红包一般包多少合适")], []),
        ([human("my coworker is turning 40 and hes obsessed with golf and craft beer, gift ideas?")], []),
        # an age now replaces the age said before
        (
            [
                human("my daughter's 3, any tips for drop-off?"),
                ai("sure"),
                human("oh shes 4 now actually, bday was last week lol"),
            ],
            ["The user's daughter is 4 now"],
        ),
    ],
)
def test_changes_told_in_the_users_own_words(messages, expected):
    assert [c.content for c in extract_rules(messages)] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # a status said bare in a list about oneself
        (
            "我是纹身师 自己在长沙开了个小工作室 左撇子",
            ["用户是纹身师", "用户自己在长沙开了个小工作室", "用户是左撇子"],
        ),
        (
            "I'm a retired firefighter, 71. Type 2 diabetic.",
            ["The user is a retired firefighter", "The user is type 2 diabetic"],
        ),
        # pets kept at home; a first person after a Latin word opens a clause
        (
            "我老家东北的 但现在定居厦门了 家里养了俩布偶",
            ["用户的老家是东北", "用户现在定居厦门", "用户养了两只布偶"],
        ),
        ("帮我润色下这周的 weekly report 我是 PM 负责支付那条线", ["用户是 PM 负责支付那条线"]),
        # food at hand, a date of a one-off event, a coming event of one's shop
        ("what can i make for dinner, i only have eggs rice and frozen peas", []),
        ("I'm throwing a surprise party for Jess on the 14th", []),
        ("我们店下个月搞周年庆 帮我想几句文案", []),
    ],
)
def test_bare_statuses_pets_at_home_and_one_off_events(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # where someone was, and where they transferred: only the new place
        (
            [
                human("My daughter's struggling with her 数学 homework, can you explain 鸡兔同笼?"),
                ai("Sure"),
                human("She was at 实验小学 but transferred to 外国语学校 this semester"),
            ],
            ["The user's daughter is at 外国语学校"],
        ),
        # a transfer replaces where the user was
        (
            [
                human(
                    "I'm doing my 研究生 at Fudan, and my advisor wants weekly reports. Any template ideas?"
                ),
                ai("Sure"),
                human("Oh I should mention I transferred to 交大 this semester, new advisor."),
            ],
            ["The user transferred to 交大 this semester"],
        ),
        # what a family member keeps saying is their view; "out there" is now
        ([human("My wife keeps saying I should get my hearing checked. Which soundbars are best?")], []),
        ([human("so I'm out there in my pajamas chasing the heifers with a flashlight")], []),
    ],
)
def test_transfers_and_views_of_the_family(messages, expected):
    owner = (
        [human("My daughter's struggling with her 数学 homework")]
        if "She was at" in messages[0]["content"]
        else []
    )
    assert [c.content for c in extract_rules(owner + messages) if "struggling" not in c.content] == expected


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a finding a later message says was wrong goes, in either language; a denial of it stays
        (
            [
                human("我对青霉素过敏 医生开了阿莫西林 能吃吗"),
                ai("阿莫西林属于青霉素类，请和医生确认。"),
                human("又去问了 医生说我小时候那次可能是误判 今天做了皮试是阴性 可以吃"),
            ],
            [],
        ),
        (
            [
                human("I'm allergic to penicillin, can I take amoxicillin?"),
                ai("Check with your doctor."),
                human("update: the allergist ruled it out, I tested negative"),
            ],
            [],
        ),
        (
            [
                human("I'm allergic to penicillin, just so you know"),
                ai("Noted."),
                human("actually scratch that. I'm NOT allergic after all. it was misdiagnosed"),
            ],
            ["The user is NOT allergic after all"],
        ),
        # another person's finding is no take-back of the user's
        (
            [human("我对芒果过敏"), ai("好的"), human("我女儿也对芒果过敏")],
            ["用户对芒果过敏", "用户的女儿也对芒果过敏"],
        ),
        # a switch typed in lower case names what is used now and replaces the tool the message before named
        (
            [
                human("i do all our budgeting in excel, can you make me a template for tracking groceries"),
                ai("Sure — columns: Date, Store, Category, Amount."),
                human(
                    "hmm we moved everything to google sheets at home bc my wife wants to edit it on her phone"
                ),
            ],
            ["The user now uses google sheets"],
        ),
        (
            [human("I use Notion for notes"), ai("ok"), human("we switched to obsidian last month")],
            ["The user's team now uses obsidian"],
        ),
        # a switch to something that is no tool, or to a place, keeps its words
        (
            [human("my son switched to coding classes this term")],
            ["The user's son switched to coding classes this term"],
        ),
    ],
)
def test_findings_taken_back_and_switches_typed_in_lower_case(messages, expected):
    found = extract_rules(messages)
    assert [c.content for c in found] == expected
    if "google sheets" in messages[-1]["content"]:
        assert found[0].replaces == ("The user does all their budgeting in excel",)


@pytest.mark.parametrize(
    "messages, expected",
    [
        # a peer's taste, diet, plans or advice is not the user's
        ([human("我同事小王特别爱吃辣 每次点外卖都要特辣 他下周过生日")], []),
        ([human("my buddy Jake rides a Specialized and swears by it but whatever")], []),
        ([human("My coworker Priya is vegan and gluten free, what should I bring to the potluck?")], []),
        ([human("my old college roommate just moved to Lisbon")], []),
        ([human("Rust 入门书推荐 我们团队那个领导特别喜欢 Rust 天天安利")], []),
        # who the peer is stays
        ([human("My roommate is Sam, he handles the rent")], ["The user's roommate is Sam"]),
        # changes told bare: a way of eating now, a city that is home now, a tool used every day replaced
        (
            [
                human("i'm vegetarian btw, so skip meat options"),
                ai("ok"),
                human("well, pescatarian now i guess, my doctor wanted me eating more fish"),
            ],
            ["The user is pescatarian now"],
        ),
        (
            [
                human("I'm based in 深圳 btw, so recommend stuff around there"),
                ai("ok"),
                human("oh wait I should update you, the company relocated me, Hong Kong's home now"),
            ],
            ["The user lives in Hong Kong"],
        ),
        (
            [
                human("我每天用Duolingo学西班牙语 想问下怎么提高听力"),
                ai("好"),
                human("其实我上周把Duolingo删了 现在改用Babbel了"),
            ],
            ["用户现在使用 Babbel"],
        ),
        # 在…住 is where the user lives, and a move told after 忘了说 replaces it
        (
            [
                human("我在北京朝阳区住 帮我推荐附近周末能带娃去的地方"),
                ai("好"),
                human("哦忘了说我们上个月刚搬到顺义了 离朝阳挺远的 按顺义来吧"),
            ],
            ["用户住在顺义"],
        ),
    ],
)
def test_peers_facts_and_values_of_now_told_bare(messages, expected):
    found = extract_rules(messages)
    assert [c.content for c in found if "doctor" not in c.content] == expected
    if len(messages) > 1:
        assert found[-1].replaces


@pytest.mark.parametrize(
    "text, expected",
    [
        # voice typed, no stop anywhere: clauses begin at a first-person subject or a habit's time word
        (
            "so about me i'm 19 i'm studying computer science at waterloo i work part time at a bubble tea place",
            [
                "The user is 19",
                "The user is studying computer science at waterloo",
                "The user works part time at a bubble tea place",
            ],
        ),
        (
            "我在杭州一家游戏公司做测试周末一般去西湖边跑个十公里家里养了两只猫你帮我想想这周末怎么安排",
            ["用户在杭州一家游戏公司做测试", "用户周末一般去西湖边跑个十公里", "用户养了两只猫"],
        ),
        # an object is no new clause ("导师让我…"), and a message with its own stops keeps them
        ("我在读研二专业是环境工程导师让我下周交开题报告我现在慌得很", []),
        ("I think I'm coming down with something, I work nights", ["The user works nights"]),
    ],
)
def test_voice_typed_messages_without_a_stop(text, expected):
    assert [c.content for c in extract_rules([human(text)])] == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # beside another place, a move to a bare name is the household's (alone it may be the team's)
        (
            ["hey can you stop suggesting stuff in Manchester? we moved to Bristol last spring"],
            ["The user lives in Bristol"],
        ),
        # a count or the hours of the business the background named, said of that business
        (
            [
                "Use this as background from now on: I'm a GP running a solo rural practice in Cumbria, "
                "about 2,000 patients."
            ],
            [
                "The user is a GP running a solo rural practice in Cumbria",
                "The user's practice has about 2,000 patients",
            ],
        ),
        (
            ["background for future chats: I run a 奶茶店 in Melbourne CBD with my cousin, open 7 days"],
            ["The user runs a 奶茶店 in Melbourne CBD with their cousin", "The user's shop is open 7 days"],
        ),
        # how long "that" has been, with "that" said before: no statement
        (["pls remember im vegetarian. been that way like 10 yrs"], ["The user is vegetarian"]),
        # a moment, and "it" of the message before
        (["what can i make tonight w chickpeas, im starving"], []),
        (["mostly boxes onto pallets. been doing it 6 yrs"], []),
        # a shop's hours are not the user's
        (["need a sign for my bakery window, we're closed on mondays now"], []),
        # "just so you know" announces the statement; "so" there starts no clause
        (["just so you know i'm type 1 diabetic"], ["The user is type 1 diabetic"]),
    ],
)
def test_probe21_forms(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a background for this one email only is not kept
        (
            ["这封邮件的背景是：我们要给一个客户道歉，发货延迟了一周。就这一封，帮我写一下", "语气再软一点"],
            [],
        ),
        (["Background, just for this one email: our shipment was a week late. Write the apology."], []),
        # a value corrected in a message typed without stops: the value ends at the space before more Chinese
        (
            [
                "我儿子今年上初一 想给他报个英语补习班 有啥建议",
                "哦说错了 是初二 初一是去年的事了 老了记性不好",
            ],
            ["用户的儿子今年上初二"],
        ),
        # a number of the task corrected is not a statement; nor a correction whose subject is left out
        (["帮我算下房贷 贷一百万 三十年 利率3% 等额本息每月多少", "不对 利率是3.5 不是3"], []),
        # a switch told without its subject is the user's, and replaces the tool before it
        (
            [
                "我现在用 Notion 做 task management，怎么设置 recurring task",
                "其实上个月已经全部 migrate 到 Obsidian 了，Notion 只留了些旧文档。",
            ],
            ["用户现在使用 Obsidian"],
        ),
    ],
)
def test_probe21_one_off_and_corrections(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # an opener and a condition before the instruction are the instruction's
        (
            ["From now on, when you give me code, use Rust, not Go."],
            ["The user wants the assistant to use Rust when it gives the user code"],
        ),
        (
            ["from now on when you write SQL for me use lowercase keywords"],
            ["The user wants the assistant to use lowercase keywords when it writes SQL for the user"],
        ),
        # a question after a label asks; it is not a fact
        (["First one: what's a good tagline for our honey jars"], []),
        # a question run on after a fact, typed without stops, is cut off
        (
            ["my daughter ada just turned 6 what are good ways to get her reading on her own"],
            ["The user's daughter ada is 6"],
        ),
        # a head count said without its subject is the user's team
        (
            ["I work for a logistics firm in Hamburg. Team of 9, I'm the only data person."],
            [
                "The user works for a logistics firm in Hamburg",
                "The user's team has 9 people",
                "The user is the only data person",
            ],
        ),
        (["I'm on a team of 8 engineers"], ["The user's team has 8 engineers"]),
        # taken back because it was someone else's
        (["new fact: I'm allergic to kiwi", "wait no ignore that, I was thinking of someone else"], []),
        # a happening without its subject, a moment that will pass
        (["spilled tea on my keyboard, the usual friday mess", "thanks, I'll be fine"], []),
        # "their" of parents named before
        (["write a toast for my parents' 30th, I'm their only kid"], ["The user is an only child"]),
        # remember asked as a question, with an instruction after "so"
        (
            ["could you keep in mind that I'm in Canada, so use metric units?"],
            ["The user is in Canada", "The user wants the assistant to use metric units"],
        ),
        (
            ["please remember to use British spelling"],
            ["The user wants the assistant to use British spelling"],
        ),
        # "and use JAWS" is what the user does, not an instruction
        (["Keep this in mind: I'm blind and use JAWS"], ["The user is blind", "The user uses JAWS"]),
        # what the fact does to the question is not part of it
        (["I'm diabetic too which makes it harder"], ["The user is diabetic"]),
        # what the user asks to put in a text is still about them
        (
            ["draft a note to my landlord, mention I've lived in Leeds six years"],
            ["The user has lived in Leeds six years"],
        ),
    ],
)
def test_probe22_english(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a measure typed after a number without a comma opens a clause; a goal is not the value now
        (
            ["我28岁 身高172 现在体重80公斤 想减到70 平时很少运动"],
            ["用户28岁", "用户身高172", "用户现在体重80公斤", "用户平时很少运动"],
        ),
        # an age said bare after a self-description is the user's; after a pet it is not
        (["我是会计，四十岁"], ["用户是会计", "用户四十岁"]),
        # a name the message gives a child or a pet is theirs later in the message
        (
            ["家里两个娃 老大叫小雨上三年级 老二叫小米才一岁 小米对牛奶过敏"],
            ["用户家有两个娃，老大叫小雨上三年级，老二叫小米才一岁", "用户的孩子小米对牛奶过敏"],
        ),
        # the same speaker's habits said next without a subject
        (
            ["本人设计师，在杭州", "主要做UI 最近在学Blender"],
            ["用户是设计师", "用户在杭州", "用户主要做UI", "用户最近在学Blender"],
        ),
        # a name, then the next thing of the user's and what it is
        (["我在用ThinkPad X1 手机是华为P60 怎么互传文件"], ["用户在使用 ThinkPad X1", "用户的手机是华为P60"]),
        # fragments: an object lost, a when-clause alone, a place pointed at, a plan not begun
        (["这些缩写我看不懂", "我说「日报」的时候"], []),
        (["帮我给物业写个说明，我在这住了五年了"], []),
        (["假如每个月存三千，十年后有多少", "只是算算 我还没开始存"], []),
    ],
)
def test_probe22_chinese(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a working life told without its subject
        (
            [
                "help me write a cover letter for a UX job",
                "been a line cook for 6 years, did a google UX cert last spring, know Figma. trying to switch careers",
            ],
            [
                "The user has been a line cook for 6 years",
                "The user did a google UX cert last spring",
                "The user knows Figma",
                "The user is trying to switch careers",
            ],
        ),
        (["im 20, majoring in physics"], ["The user is 20", "The user is majoring in physics"]),
        # after a quoted text its sentence ends: what follows is about the user again
        (
            [
                "Translate into French for my landlord: 'The heater is broken again.' My French is basic, I've been taking evening classes for a year"
            ],
            ["The user's French is basic", "The user has been taking evening classes for a year"],
        ),
        # what someone else said is theirs
        (["聊聊旅行吧", "她还说住的酒店老板养了两只猫"], []),
        (["my friend went to Rome", "she also said the hotel owner keeps three dogs"], []),
        # a plan denied for now, an absence with its dates
        (["compare a Kia EV6 and a used Golf, purely hypothetical, I'm not buying a car anytime soon"], []),
        (["write an out-of-office: I'm away March 3 to March 10"], []),
    ],
)
def test_probe22_round_two_english(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a change with 现在 before it keeps one 现在
        (["我们组的例会现在改成每周四了"], ["用户的团队的例会现在是每周四"]),
        # a condition told before "你都按…" is an instruction; a 别 after an instruction is one too
        (["以后我问物理题你都按高一的难度来讲"], ["用户希望助手以后用户问物理题都按高一的难度来讲"]),
        (
            ["以后回答我请尽量口语化，别用太多术语"],
            ["用户希望助手回答用户尽量口语化，别用太多术语"],
        ),
        # "那条作废", "当我没说": taken back
        (["以后推荐餐厅都按清真来", "想了想算了 刚才那条作废"], []),
        (["我打算明年去考研", "当我没说 随口一提"], []),
    ],
)
def test_probe22_round_two_chinese(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a bare answer takes the place of the word that asked; two questions answered in one breath, one by one
        (
            ["我是个退休的厨师 干了四十年", "四十年，辛苦了！现在在哪儿安家？", "成都 没事就去爬山"],
            ["用户是个退休的厨师，干了四十年", "用户现在在成都安家", "用户没事就去爬山"],
        ),
        (
            [
                "我和老公都是医生 帮我想个带孩子出去玩的地方",
                "孩子多大了？你们在哪个城市？",
                "四岁 在南京 不想跑太远",
            ],
            ["用户和丈夫都是医生", "用户家孩子四岁", "用户在南京"],
        ),
        (["帮我看看简历", "你是什么专业的？", "本科 physics，在 UCL"], ["用户是本科 physics专业的"]),
        (
            ["I'm a dental hygienist", "What does your clinic use for scheduling?", "Dentrix. which is slow"],
            ["The user is a dental hygienist", "The user's clinic uses Dentrix for scheduling"],
        ),
        (
            ["we both work from home", "How big is your place?", "1-bed in Bristol"],
            ["The user works from home", "The user's place is 1-bed in Bristol"],
        ),
        # a guess, a question back, two things asked at once: no answer taken
        (["那部剧太好看了", "你最喜欢哪个角色？", "老三吧 太帅了"], []),
        (["想报个兴趣班", "你在哪个城市、孩子多大？", "长沙 五岁"], []),
    ],
)
def test_probe23_answers_and_new_values(messages, expected):
    turns = [{"role": "human" if k % 2 == 0 else "ai", "content": text} for k, text in enumerate(messages)]
    assert [c.content for c in extract_rules(turns)] == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a new value alone, then "now": the value of its kind said before changes
        (
            ["our retro is at 4:30, write me a reminder", "5:15 now. they moved it"],
            ["The user's retro is at 5:15"],
        ),
        (
            ["I've got two dogs, Rex and Bo, need a bigger crate", "well, three now, we took in a puppy"],
            ["The user has got three dogs", "The user took in a puppy"],
        ),
        (["我 rent 每月 2800，帮我算下占比", "3100 了 续约刚涨的"], ["用户房租每月 3100"]),
        # a move of where the thing is kept names the new place in the old statement
        (
            ["我们 team 的代码仓库在 Bitbucket 上，帮我写个 pipeline", "哦 上个月刚 migrate 到 GitLab 了"],
            ["用户的团队的代码仓库在 GitLab 上"],
        ),
        # a product named as what the team is, is what it uses
        (["帮我优化这个 SQL，我们是 MySQL 8，表有一亿行"], ["用户使用 MySQL 8"]),
        (["For context: we're all Google Workspace here"], ["The user's team uses Google Workspace"]),
    ],
)
def test_probe23_new_values(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a one-off scope governs the "remember" right after it
        (["For this email only, remember I'm a doctor, it needs to sound official"], []),
        # a background written for someone else this time
        (["背景：这次是帮我同事写的 她在医院做护士 想转岗", "用她的口吻写"], []),
        # it was asked for a friend
        (["我住厦门 帮我看看这周末天气", "啊不对 是帮我朋友问的 他住厦门 我不在那"], []),
        (
            [
                "I'm moving to Austin in June, make me a checklist",
                "ugh nevermind, it fell through",
                "just forget all that",
            ],
            [],
        ),
        # a list of common words is material
        (["keep in mind I'm diabetic, sort this list: apples, bread, rice, milk"], ["The user is diabetic"]),
        # a text to work on alone
        (
            ["translate 'where is the station' into Spanish, I'm deaf", 'and "I need water"'],
            ["The user is deaf"],
        ),
        # moments: someone is here, the user will come back, blanked, off to eat
        (
            [
                "I own a florist in Leeds",
                "cool, I'll come back later for the captions, the delivery guy is here",
            ],
            ["The user owns a florist in Leeds"],
        ),
        (["a client asked me today and I blanked"], []),
        (["今天热死了", "好吧 我去喝杯奶茶"], []),
        # fragments: a demand without what it demands, a way without a verb, a question word at the end
        (["最近被迫转 Kotlin 了 公司要求"], []),
        (["我每天坐地铁上班 从通州到国贸 早上要提前多久出门"], ["用户每天坐地铁上班"]),
        (["我家狗最近老掉毛咋办"], ["用户养了一只狗"]),  # the dog is had; the question is not
        # "always meant to" is a past wish, not an instruction; "my whole summer" is nobody
        (["my late husband was from Cork, always meant to visit"], ["The user's late husband was from Cork"]),
        (["my whole week is meetings", "gender neutral pls, theyre not finding out"], []),
    ],
)
def test_probe23_precision(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a migraine is a condition, not a passing headache; what the user asks to mention is theirs
        (["我有偏头痛，帮我看看这个药能不能吃"], ["用户有偏头痛"]),
        (["帮我给老板写个邮件请假，顺便提一下我有哮喘"], ["用户有哮喘"]),
        (["今天头痛 不想干活"], []),
    ],
)
def test_probe23_conditions(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # "How old is she?" of the daughter just named
        (
            ["I coach my son's hockey team on weekends", "Fun! How old is he?", "11. need passing drills"],
            ["The user coaches their son's hockey team on weekends", "The user's son is 11"],
        ),
        # a yes, then what the user is doing, said without a subject
        (
            [
                "I'm a nurse in Ohio",
                "Are you thinking about grad school?",
                "yeah, taking evening classes for the GRE",
            ],
            ["The user is a nurse in Ohio", "The user is taking evening classes for the GRE"],
        ),
    ],
)
def test_probe23_english_answers(messages, expected):
    turns = [{"role": "human" if k % 2 == 0 else "ai", "content": text} for k, text in enumerate(messages)]
    assert [c.content for c in extract_rules(turns)] == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # the hours said with "we" after the business are the business's; remember asked as a question tells
        (
            ["Can you keep in mind that I run a small florist in Leeds? We open at 8am, closed Sundays"],
            [
                "The user runs a small florist in Leeds",
                "The user's florist opens at 8am",
                "The user's florist is closed Sundays",
            ],
        ),
        # a take-back at the end of the message; "X的就算了" is no take-back
        (["帮我记下，我下个月开始戒糖", "算了算了 我坚持不了 当我没说"], []),
        (["我基本都在kindle上看书", "东野圭吾的就算了"], ["用户基本都在kindle上看书"]),
        # a fragment that opens with a preposition, a pronoun after the subject
        (["background: I run a yarn shop, out of our garage in Leeds"], ["The user runs a yarn shop"]),
        # a major is what the user studies
        (["给你点 background：我大三，CS 专业"], ["用户大三", "用户的专业是 CS"]),
    ],
)
def test_probe23_round_two(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # "here" is the place just answered; what the speaker does when free, said without a subject
        (
            ["我特别怕热", "你在北方哪里？", "沈阳 在这上大学"],
            ["用户特别怕热", "用户在北方沈阳", "用户在沈阳上大学"],
        ),
        (
            ["我是退休的老师", "现在在哪儿安家？", "青岛 有空就去海边散步"],
            ["用户是退休的老师", "用户现在在青岛安家", "用户有空就去海边散步"],
        ),
        # a question about what to do when free is no habit
        (["有空就去哪里玩比较好"], []),
    ],
)
def test_probe23_answers_go_on(messages, expected):
    turns = [{"role": "human" if k % 2 == 0 else "ai", "content": text} for k, text in enumerate(messages)]
    assert [c.content for c in extract_rules(turns)] == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a one-word reply, then the statement typed after a space; "对我来说" is "to me"
        (["对 我是护士"], ["用户是护士"]),
        (["对 然后我 freelance 做 UI，主要接 app 的单"], ["用户自由职业做 UI", "用户主要接 app 的单"]),
        # "lol" after a Chinese statement is no part of it
        (["我是 ENTJ lol"], ["用户是 ENTJ"]),
    ],
)
def test_probe23_replies_typed(messages, expected):
    assert written(messages, "好的。") == expected


def test_probe23_a_grandchild_named_in_passing_is_had():
    turns = [human("how do I send a video of my granddaughter's recital from my phone?"), ai("OK.")]
    assert [c.content for c in extract_rules(turns)] == ["The user has a granddaughter"]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # no act asked of the assistant: "so I don't have to say it again", "mind how you answer me"
        (["记一下 我在武汉开花店 以后问你就不用再说一遍了"], ["用户在武汉开花店"]),
        (["先说下背景 以后你回答我的时候注意点", "我是中学英语老师"], ["用户是中学英语老师"]),
        # an errand of the next days; a relative named alone; "we two"
        (["记住 我是高铁乘务员 后天还要跑广州"], ["用户是高铁乘务员"]),
        (["帮我想个生日礼物", "我表姐"], []),
        # it was never true: "I lied", "开玩笑的"
        (["my dog keeps barking at night", "ok i lied i dont have a dog, just testing you"], []),
        # a household's move, with the time zone as the home
        (
            [
                "set a reminder for 8am, I'm on Pacific time",
                "wait no, we moved to Denver in March, so Mountain time",
            ],
            ["The user lives in Denver"],
        ),
        # an auxiliary before "I" asks
        (["how do i study for finals when i cant sit still for more than like 10 min"], []),
        # a switch told without its subject, the old one put aside
        (["我在学法语 有啥好用的app", "现在学德语了 法语那个放了 德语有啥推荐"], ["用户现在学德语"]),
    ],
)
def test_probe24_round(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a one-word reply typed before the statement ("有 我痛风好几年了")
        (["有 我高血压好几年了 咸的都不敢吃"], ["用户高血压好几年，咸的都不敢吃"]),
        # a long run without stops in a message that has some elsewhere
        (
            ["好的。我在杭州一家医院当护士每天上夜班周末一般都在家补觉"],
            ["用户在杭州一家医院当护士", "用户每天上夜班", "用户周末一般都在家补觉"],
        ),
    ],
)
def test_probe24_typed(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # the user takes on a part: what follows is the part's, until the play ends
        (["你来当房东，我扮演租客，跟你谈续租", "您好，我在这住了三年，一直按时交租"], []),
        (
            [
                "Pretend I'm a nervous first-time buyer and you're the agent.",
                "Hi, I work at a bank and I have two kids.",
            ],
            [],
        ),
        (
            [
                "I'll play a customer, you're the barista.",
                "ok, out of character now. I'm a barista in Leeds.",
            ],
            ["The user is a barista in Leeds"],
        ),
        # not a part: an instrument, a past stage role
        (["我演过话剧，现在是中学老师"], ["用户演过话剧", "用户现在是中学老师"]),
        # someone else's details given for a task, under a header
        (
            [
                "Help me write a cover letter for my friend. Details: Tom Reed, welder for ten years, lives in Hull."
            ],
            [],
        ),
        (["帮我 summarize 这个 candidate 的 profile：Anna Li，31 岁，前端五年，会 React"], []),
        (["我朋友让我帮忙。以下是我的背景：我在上海做会计。"], ["用户在上海做会计"]),
        # a hypothetical denied, a feeling told by its effect, a device's trouble of the moment
        (["If I retired at 55, how much would I need?", "Just curious, not actually planning anything."], []),
        (["今天排班又被换了，我气得不行"], []),
        (["我们这边下大雪，车早上老打不着火，怎么办"], []),
        (["my knees are killing me after gardening all afternoon", "I'll look into the knee pads"], []),
        # a Chinese request over English material
        (["帮我 proofread 这段 email：Hi all, I am moving to Berlin next month."], []),
        (["这段abstract帮我polish一下：We propose a method for protein folding."], []),
        # a Chinese sentence after an English opener
        (["FYI 我是 pharmacist，在 Kaiser 上班"], ["用户是药剂师", "用户在 Kaiser 上班"]),
        # a name of the thing just named, and the group a later clause goes on about
        (["我在成都开了一家面馆，叫「老地方」"], ["用户在成都开了一家面馆，叫「老地方」"]),
        (["我们果园在烟台，有两百多棵树"], ["用户的果园在烟台", "用户的果园有两百多棵树"]),
        # a verb with nothing after it, a count of us, a past moment
        (["Can you keep it simple? Because I'm honestly not."], []),
        (["Five of us, mostly weddings around Cork."], []),
        (["I was the only woman on the team then."], []),
        # a cousin's, a friend's or a neighbour's life told in passing is theirs
        (["我表姐在成都开花店，我想送她个开业礼物"], []),
        (["My neighbour keeps goats and swears by raw milk."], []),
        # what the user's thing is, said the other way round; a person named alone before a space is the subject
        (["粤语是我的母语"], ["用户的母语是粤语"]),
        (["化学一直是我的弱项"], ["用户的弱项一直是化学"]),
        (["他是我的老板"], []),
        (["我堂哥 在广州开出租 他老婆是护士"], []),
        # what the work is mostly, said bare after the self-description
        (["我是货车司机 长途为主 跑了十年了"], ["用户是货车司机，以长途为主"]),
        # a reason typed without its comma, a discourse word before the subject
        (
            ["and since im on dialysis i cant travel much"],
            ["The user is on dialysis", "The user can't travel much"],
        ),
        (["ya i have celiac and im a sophomore"], ["The user has celiac", "The user is a sophomore"]),
        # an event of the coming days or weeks is a moment; the start of a stretch that lasts is kept
        (["我儿子下个月考驾照，帮我想想怎么鼓励他"], ["用户有儿子"]),
        (["My sister's wedding is next month, help me with a toast"], []),
        (["我下个月开始休产假，要休到明年三月"], ["用户下个月开始休产假", "用户要休到明年三月"]),
        # one act of the task the user will do is no fact; what the user will mostly do is
        (["Thanks! I'll bake a double batch then."], []),
        # a past habit in a background list is no instruction
        (
            ["Background: I've worked at the mill for 20 years, never missed a shift."],
            ["The user has worked at the mill for 20 years"],
        ),
    ],
)
def test_probe25_round(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a take-back with the new place, said of what the statement does
        (
            ["我在嘉兴开饭店，想问问外卖怎么做", "哦不对，我说错了，是在湖州，德清那边开饭店"],
            ["用户在湖州开饭店"],
        ),
        # the old value named in English, the statement in Chinese
        (
            ["我对 shellfish 过敏，推荐几个菜", "no wait 我搞错了，其实是 peanut，不是 shellfish"],
            ["用户对花生过敏"],
        ),
        (
            [
                "我 lactose intolerant，推荐几个早餐",
                "no wait，我 mix up 了，其实是 gluten intolerance，不是 lactose",
            ],
            ["用户麸质不耐受"],
        ),
        # an age corrected beside a filler ("I keep forgetting"): the other statement of the child stays
        (
            ["My daughter is 6 and she loves horses.", "Sorry, she just turned 7, I keep forgetting."],
            ["The user's daughter loves horses", "The user's daughter is 7"],
        ),
        # "she" is the granddaughter, not the old tablet
        (
            ["My grandson calls on Sundays but my old tablet keeps crashing.", "He's at college in Ohio."],
            ["The user's grandson calls on Sundays", "The user's grandson is at college in Ohio"],
        ),
    ],
)
def test_probe25_corrections(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        # a reply's clauses that open with a doing are the user's; a yes reads what was asked
        (
            "您平时忙吗？",
            "挺忙的，还兼着年级组长。",
            ["用户还兼着年级组长"],
        ),
        ("您是每天都要出车吗？", "对，一周就歇一天。", ["用户每天都要出车", "用户一周就歇一天"]),
        # a task offered is no question about the user
        ("有什么可以帮你的吗？", "还在学做面包。", []),
    ],
)
def test_probe25_reply_clauses(question, answer, expected):
    turns = [human("你好"), ai(question), human(answer)]
    assert [c.content for c in extract_rules(turns)] == expected


def test_probe25_kids_ages_and_she():
    turns = [
        human("quick dinners the kids will eat?"),
        ai("Sure! How old are the kids?"),
        human("3, 6 and 9. my wife's a nurse so she's on nights a lot"),
    ]
    got = [c.content for c in extract_rules(turns)]
    assert "The user's kids are aged 3, 6 and 9" in got
    assert not any("kids is" in t or "kids are on" in t for t in got), got


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a role play named by its word: what the user says in the part is the part's
        (["我们来玩个角色扮演吧，我是一个开茶馆的掌柜，你是来应聘的伙计", "（拱手）我这茶馆开了三代了"], []),
        (["我们来 role play 吧，我是一个 bakery 的 owner，你是 supplier", "我们每天要用 200 斤面粉"], []),
        # taken back whatever else the message says: "forget I said it", "just kidding", asked for someone else
        (
            [
                "Remember that I'm learning the cello.",
                "ugh actually scratch that, my teacher quit and I'm done with it. forget I said it",
            ],
            [],
        ),
        (["I own three horses", "haha no I don't, just kidding"], []),
        (["我对芒果过敏，这个甜品能吃吗", "啊不是我 我帮别人问的"], []),
        (["帮我记一下 我 next week 去 Osaka 出差", "等下 trip 取消了 那条删了吧"], []),
        # whose it was, said after it
        (
            [
                "给你点背景，后面写材料都用：申请人王桂芬，68岁，独居，有高血压",
                "这是我邻居的妈妈，托我帮她写申请",
            ],
            [],
        ),
        (
            [
                "what's a good dentist in Austin? I live in Round Rock",
                "sorry, I don't live there, my cousin does",
            ],
            [],
        ),
    ],
)
def test_probe26_taken_back_and_played(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a quoted text to work on is not the user's
        (
            [
                'Reply to this review for me: "I drove two hours and the shop was closed, I\'m a nurse on nights."'
            ],
            [],
        ),
        (
            ['Translate this for my crew: "Lunch is at noon, bring your gloves." I\'m a site foreman'],
            ["The user is a site foreman"],
        ),
        # a count corrected with its measure word, and a dose bumped up: the rest of the statement stays
        (
            ["我们家有两个鱼塘，养的草鱼", "不对 是三个 今年新挖了一个"],
            ["用户家养的草鱼", "用户家有三个鱼塘"],
        ),
        (
            ["I take metformin 500mg twice a day", "oh wait, my doctor bumped it up to 1000mg last month"],
            ["The user takes metformin 1000mg twice a day"],
        ),
        # the new weekday without the reason said after it
        (
            [
                "We do a family lunch every Sunday at my aunt's",
                "actually it moved to Saturday since my cousin works Sundays now",
            ],
            ["The user does a family lunch every Saturday at their aunt's"],
        ),
        # moments and asides
        (["just got off a double shift and I'm wiped out"], []),
        (["our wifi went out for like 2 hours last night"], []),
        (["I'm a welder if that matters"], ["The user is a welder"]),
        (["我是独生子只能我去"], ["用户是独生子"]),
        (["interview at 3, wish me luck"], []),
        # a road is no "I"
        (["I drive mostly I-95, Boston to Miami"], ["The user drives mostly I-95"]),
        # what the user did before and does at home now, said without a subject after 我
        (
            ["我今年70了，退休前是小学数学老师，现在在家带外孙女"],
            ["用户今年70岁", "用户退休前是小学数学老师", "用户现在在家带外孙女"],
        ),
    ],
)
def test_probe26_round(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a part of what is written, in a language or one way always
        (["代码注释用英文，解释用中文"], ["用户希望助手代码注释用英文", "用户希望助手解释用中文"]),
        (["还有日期都用 ISO 格式"], ["用户希望助手日期都用 ISO 格式"]),
        # a one-off of the task at hand is not: "代码用 Python" names no language of writing and no "always"
        (["帮我写个脚本，代码用 Python"], []),
        # how long replies are, with the reason as no statement
        (["说话别太长 我看着累"], ["用户希望助手说话别太长"]),
        # a wish about examples, and how it goes on
        (
            ["我教初一数学，学生基础一般，所以例子要简单，最好是生活里的"],
            ["用户教初一数学", "用户的学生基础一般", "用户希望助手例子要简单，最好是生活里的"],
        ),
        # what every answer of a kind carries; a unit or a form over another
        (
            ["I need calorie counts on every meal plan you give me."],
            ["The user wants calorie counts on every meal plan the assistant gives the user"],
        ),
        (
            ["I'm in Canada so celsius not fahrenheit please"],
            ["The user is in Canada", "The user prefers celsius over fahrenheit"],
        ),
        (
            ["I'm dyslexic so bullet points > walls of text"],
            ["The user is dyslexic", "The user prefers bullet points over walls of text"],
        ),
    ],
)
def test_probe26_instructions(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a lasting condition named bare beside a self-description
        (
            ["I live in Leeds. I don't drive, epilepsy"],
            ["The user lives in Leeds", "The user does not drive", "The user has epilepsy"],
        ),
        (["我有高血压，还有痛风"], ["用户有高血压", "用户有痛风"]),
        # a job said of its kind, a job at times in a shop named in Latin letters
        (["day job is a school librarian"], ["The user's day job is a school librarian"]),
        (["每个周末在一家 Starbucks 打工"], ["用户每个周末在一家 Starbucks 打工"]),
        # two weekdays of a habit, both replaced by a later change; the weekday of every week is no errand
        (
            ["我每周一和周三晚上去学游泳", "哦对了 从这个月开始游泳课改成周二周四了"],
            ["用户每周二周四晚上去学游泳"],
        ),
    ],
)
def test_probe26_recall(messages, expected):
    assert written(messages, "好的。OK.") == expected


def test_probe26_numbers_typed_and_called_by():
    # numbers of four digits typed before the next clause with a space; what the customers call the user
    assert written(["帮我算算 我每个月工资8200 房租3100 剩下的怎么存"], "好的。") == [
        "用户每个月工资8200",
        "用户房租3100",
    ]
    assert written(["我在早市卖豆腐", "街坊们都叫我豆腐张"], "好的。") == [
        "用户在早市卖豆腐",
        "街坊称呼用户为豆腐张",
    ]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # half of the counted ones, said after the count
        (["我们班40个学生，有一半是住校的"], ["用户班40个学生，有一半是住校的"]),
        # the pressure at home of late is a moment, and "I keep forgetting" no statement
        (["我女儿今年中考，最近家里压力大得很"], ["用户的女儿今年中考"]),
        (["我们用 Notion 记笔记", "我老是忘"], ["用户使用 Notion 记笔记"]),
    ],
)
def test_probe26_counted_and_moments(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a role play set up over two sentences, or kept "in character"
        (["我们玩个角色扮演吧。设定：我是宋朝的一个茶商，你是来买茶的客人，开始！", "客官里边请"], []),
        (
            [
                "Let's write a story. I'm a pirate captain who lost her ship. You're my parrot. Stay in character."
            ],
            [],
        ),
        # a note for the next hour is no memory
        (["帮我记住 我的储物柜是 318 号 待会儿游完泳问你"], []),
        (["remember this code for me: 4471, I'll ask in a bit"], []),
        # a numbered list of things to keep
        (
            ["你记住几件事：\n1.我是药剂师，在社区医院\n2.周末值班多\n3.回答给我分点，简短，别绕弯子"],
            [
                "用户是药剂师",
                "用户在社区医院",
                "用户周末值班多",
                "用户希望助手回答给用户分点，简短",
                "用户要求助手别绕弯子",
            ],
        ),
        # how a wish goes on; the reason after it is not part of it
        (["以后讲题一律按中考标准来，步骤写全"], ["用户希望助手以后讲题一律按中考标准来，步骤写全"]),
        (["你说话别文绉绉的，大白话就行"], ["用户希望助手说话别文绉绉的，大白话"]),
        # "remember going forward that I'm …" is a fact; "whenever you give me …, …" an instruction
        (
            [
                "can you remember going forward that I'm celiac? Whenever you give me a recipe, flag the gluten."
            ],
            [
                "The user is celiac",
                "The user wants the assistant to flag the gluten whenever it gives the user a recipe",
            ],
        ),
        # "mine" the noun, "my bad" a discourse word, moods and imperatives of the talk
        (["I work at a copper mine in Arizona"], ["The user works at a copper mine in Arizona"]),
        (["我现在超 emo 的 只想躺平"], []),
        (["settle this for me: cats or dogs"], []),
    ],
)
def test_probe27_round(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # after 她 opens the sentence, what follows without a subject is hers
        (["帮我给同事写张贺卡，她叫阿敏，属狗，平时特别喜欢爬山"], []),
        # what a message to someone says; a question, a budget and a flight of the moment
        (
            [
                "Please remember my dad only reads Chinese.",
                "ok tell him I'll visit on Sunday, he doesn't need to cook",
            ],
            ["The user's dad only reads Chinese"],
        ),
        (["I keep bees and want to know when to harvest"], ["The user keeps bees"]),
        (["need a new bike, budget is under 500"], []),
        (["I'm flying from Denver next week"], []),
        # a count corrected before the news that changed it; a way of eating now
        (
            ["我们家三口人 住苏州，帮我列个购物清单", "啊不对 是四口 我爸上个月搬来跟我们一起住了，他不吃辣"],
            ["用户家住苏州", "用户家有四口人", "用户的父亲不吃辣"],
        ),
        (["我吃全素的", "哦对 我现在算蛋奶素了"], ["用户现在算蛋奶素"]),
        (["metric for everything please"], ["The user wants metric for everything"]),
    ],
)
def test_probe27_theirs_and_corrections(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a "don't" about the form of the text asked for now; one about the user's setup stays
        (["帮我写个请假条，我在工厂上班", "主任姓王 写给他 别写太长"], ["用户在工厂上班"]),
        (
            ["写个脚本批量改文件名，我用的是 Mac，别给我 Windows 的命令"],
            ["用户使用 Mac", "用户要求助手别给用户 Windows 的命令"],
        ),
        # a leave of the moment, and "I'm out" said of the moment
        (["我要请两天假回老家"], []),
        (["我出来了 东西放哪了"], []),
    ],
)
def test_probe27_moments(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a thing of the conversation pointed at, which the statement does not name, is no statement
        (["以后推荐软件考虑下这个配置"], []),
        (["I've lived here 4 years and always paid on time"], []),
        # a place named with it stays
        (["我在家附近那个小学当保安"], ["用户在家附近那个小学当保安"]),
        (["I teach 5th grade here in Ohio"], ["The user teaches 5th grade here in Ohio"]),
    ],
)
def test_probe27_dangling_pointers(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a boss's ways and a roommate's origin are theirs
        (["我老板只认 PPT，帮我做个汇报大纲"], []),
        (["我室友是北京人，推荐个北京菜馆"], []),
        # after 所以 the speaker goes on, not the clients named before
        (
            ["我做翻译，客户基本都是欧洲的，所以经常半夜开会"],
            ["用户做翻译", "用户的客户基本都是欧洲的", "用户经常半夜开会"],
        ),
        (["I'm in Texas if that matters for the tax part"], ["The user is in Texas"]),
    ],
)
def test_probe27_peers_and_so(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # just retired is a lasting change; "problem is" opens the statement; things with their own verb after "and"
        (
            [
                "Just retired from the fire service after 25 years. Problem is I'm 61 with a bad knee and stairs are a nightmare."
            ],
            ["The user just retired from the fire service after 25 years", "The user is 61 with a bad knee"],
        ),
        # a stay for the weekend is a moment
        (["I'm at my brother's for the weekend"], []),
    ],
)
def test_probe27_retired_and_weekend(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # children counted bare, then a count corrected after 哎呀; an ache that keeps coming; the hometown gone back to
        (
            ["我是全职爸爸，两个孩子，帮我排个菜单", "哎呀说错了 是三个 老三刚满月"],
            ["用户是全职爸爸", "用户有三个孩子"],
        ),
        (["我在重庆开出租，腰老是酸"], ["用户在重庆开出租", "用户腰老是酸"]),
        (["帮我写个请假条，要请两天假回湖南老家"], ["用户老家在湖南"]),
        # the place of the user's work, said after it
        (
            ["I'm the vet at a small clinic in Cork. The clients are mostly farmers."],
            ["The user is the vet at a small clinic in Cork", "The user's clients are mostly farmers"],
        ),
    ],
)
def test_probe27_recall(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # "以后帮我…别…" is an instruction, and how it goes on is part of it
        (["所以以后帮我排课别排太满，要松一点"], ["用户希望助手以后帮用户排课别排太满，要松一点"]),
        # a colleague's diet is hers, whatever word names it
        (["我同事小周是素食者，帮我想个聚餐菜单"], []),
        # promoted: the role before gives way
        (
            ["我在超市做理货员，帮我写个自我评价", "哦等下 我上个月刚被提拔成主管了"],
            ["用户上个月刚被提拔成主管"],
        ),
    ],
)
def test_probe27_instructions_and_roles(messages, expected):
    assert written(messages, "好的。") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a head count of the business named before, then corrected: the business itself stays
        (
            ["I run a small cleaning company, 5 employees", "sorry 6, hired a woman last week"],
            ["The user runs a small cleaning company", "The user's company has 6 employees"],
        ),
        # the weaker part said after 但
        (["我英文 speaking 还行 但 writing 比较弱"], ["用户英文 speaking 还行，writing 比较弱"]),
    ],
)
def test_probe26_head_count_and_weaker_part(messages, expected):
    assert written(messages, "OK.") == expected


def test_probe26_a_medicine_with_its_name_and_dose():
    assert written(["我在吃降糖药，二甲双胍，每天早晚一片"], "好的。") == [
        "用户在吃降糖药二甲双胍，每天早晚一片"
    ]
    # a bare name after something else is not taken for the medicine's
    assert written(["我在吃降压药，平时也跑步"], "好的。") == ["用户在吃降压药", "用户平时也跑步"]


def test_probe26_how_long_in_a_place():
    assert written(["I'm a nurse from Manila, in Canada 6 years now"], "OK.") == [
        "The user is a nurse from Manila",
        "The user has been in Canada 6 years now",
    ]


def test_a_city_and_its_state_are_one_place():
    assert written(["I run a small bakery in Portland, Maine — 6 employees"], "OK.") == [
        "The user runs a small bakery in Portland, Maine",
        "The user's bakery has 6 employees",
    ]
    assert written(["I live in Austin, Texas and work as a nurse"], "OK.") == [
        "The user lives in Austin, Texas",
        "The user works as a nurse",
    ]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # where the household lives now replaces where the user was based
        (
            [
                "I'm based in Leeds — any good weekend trips?",
                "We moved to Bristol last month, so from there please",
            ],
            ["The user lives in Bristol"],
        ),
        (
            [
                "I live in Denver, any good hikes?",
                "Oh, we closed on the house in Golden last week, so that's home now.",
            ],
            ["The user lives in Golden"],
        ),
    ],
)
def test_probe_home_now(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a friend's business and what follows it in the sentence are the friend's
        (["我一个朋友在杭州开了家花店，最近生意越来越差，帮我分析下"], []),
        # a request for someone else's thing: its material is theirs, a sentence of the user's own stays
        (
            ["帮我表哥的饭店写个道歉回复。背景：顾客王先生昨天等了一个小时才上菜。我是店里的会计"],
            ["用户是店里的会计"],
        ),
        (["Write a short bio for my client's website - she's a potter in Taos with two dogs."], []),
        (["I'm helping my niece with her essay. Use this background: the hero is a 30-year-old pilot."], []),
        # not the user's after all, or asked for someone else
        (["我对芒果过敏，这个能吃吗", "不对不对 过敏的是我妹，不是我。我刚才在帮她问"], []),
        (
            [
                "I'm a nurse and need a shift planner",
                "oops, this is my wife typing on my laptop. she's the nurse. don't keep that",
            ],
            [],
        ),
        # a plan for next time is no fact
        (["我想在下次家长会上分享一下阅读方法"], []),
        # forms of the answers listed bare
        (
            ["please keep in mind that I'm dyslexic. Short sentences, bullet points."],
            ["The user is dyslexic", "The user wants short sentences", "The user wants bullet points"],
        ),
    ],
)
def test_probe28_round(messages, expected):
    assert written(messages, "好的。OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a voice-typed run: what the user mainly does and an ailment are clauses of their own, the question too
        (
            ["我是开大巴的主要跑成都到重庆这条线腰不好坐久了就疼有没有什么办法缓解一下"],
            ["用户是开大巴的", "用户主要跑成都到重庆这条线", "用户腰不好坐久了就疼"],
        ),
        # animals kept, said with where
        (["我家在郊区，院子里养了三只鸡"], ["用户家在郊区", "用户家院子里养了三只鸡"]),
        # a condition said after "just"
        (["not really, just asthma so nothing too intense"], ["The user has asthma"]),
    ],
)
def test_probe28_recall(messages, expected):
    assert written(messages, "OK.") == expected


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a switch replaces the one thing in use named earlier in the conversation, not only in the message before
        (
            ["我用的 MacBook Air M1，装软件老是卡", "8G", "哦 现在换 ThinkPad 了"],
            ["用户现在使用 ThinkPad"],
        ),
        # where the user is from, said in brackets
        (
            ["English is my second language (I'm from Chile)."],
            ["The user's second language is English", "The user is from Chile"],
        ),
        # a weekday now
        (
            ["we have choir practice on Mondays at church", "practice is on thursdays now btw"],
            ["The user has choir practice on Thursdays at church"],
        ),
    ],
)
def test_probe28_switches_and_weekdays(messages, expected):
    assert written(messages, "OK.") == expected


def test_probe21_a_moved_thing_named_with_other_news():
    # the thing named is moved, whatever else the message says ("so i have more time")
    got = written(
        [
            "my weekly review is at 9:30 every monday",
            "oh actually they moved review to 11:00, new manager. so i have more time",
        ],
        "OK.",
    )
    assert "The user's weekly review is at 11:00" in got[0] and not any("9:30" in t for t in got), got


def _turn(*messages, context=0):
    """Messages alternating user / assistant; the first `context` of them came with an earlier turn."""
    return [
        {"role": ("human", "ai")[i % 2], "content": text, **({"context": True} if i < context else {})}
        for i, text in enumerate(messages)
    ]


def test_a_turn_writes_what_the_conversation_adds_and_names_what_it_took_back():
    from memory.extraction.rules import read_turn

    first = ("我对芒果过敏，吃了嘴巴会肿。", "好的，记下了。")
    # the turn alone and the turn after an earlier one: nothing of the earlier turn is written again
    written, taken = read_turn(_turn(*first))
    assert [c.content for c in written] == ["用户对芒果过敏"]
    assert taken == []
    written, taken = read_turn(_turn(*first, "谢谢，那我晚上吃点别的水果。", context=2))
    assert written == []
    assert taken == []
    # a take-back in a later turn: nothing new, and the earlier statement is named
    written, taken = read_turn(_turn(*first, "啊不是我，我帮同事问的 😂", context=2))
    assert written == [] and taken == ["用户对芒果过敏"]
    # only earlier messages (nothing new): nothing either way
    written, taken = read_turn(_turn(*first, context=2))
    assert written == [] and taken == []


def test_a_correction_in_a_later_turn_is_written_as_in_one_post():
    from memory.extraction.rules import read_turn

    first = (
        "I coach my son's under-12 basketball team, we practice on Tuesdays after school.",
        "Nice! How can I help?",
    )
    correction = "oh wait, practice is on Thursdays now, they changed the gym schedule"
    one_post = {c.content for c in extract_rules(_turn(*first, correction))}
    earlier = {c.content for c in extract_rules(_turn(*first))}
    written, taken = read_turn(_turn(*first, correction, context=2))
    assert "The user practices on Thursdays after school" in {c.content for c in written}
    assert {c.content for c in written} == one_post - earlier
    assert taken == ["The user practices on Tuesdays after school"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("以后你要记得，我不喝咖啡，只喝茶。", ["用户不喝咖啡", "用户只喝茶"]),
        ("记得，我周三有课。", ["用户周三有课"]),
        (
            "Just so you know going forward, I am a night-shift nurse so I sleep during the day.",
            ["The user is a night-shift nurse", "The user sleeps during the day"],
        ),
        # "I remember" and a request about the task at hand are no request to remember
        ("我记得，你上次说过这个。", []),
        ("你记得帮我看一下这个报错", []),
    ],
)
def test_a_request_to_keep_what_follows_is_no_instruction_of_its_own(text, expected):
    written = extract_rules([{"role": "human", "content": text}])
    assert [c.content for c in written] == expected
    assert all(c.explicit for c in written)


def test_a_pet_just_adopted_is_kept_like_a_move():
    # "just <done>" is a moment ("just finished the report"); adopting, like moving or joining, lasts
    written = extract_rules(
        [{"role": "human", "content": "I just adopted a rescue greyhound called Pepper, any tips?"}]
    )
    assert [c.content for c in written] == ["The user just adopted a rescue greyhound called Pepper"]
    assert extract_rules([{"role": "human", "content": "I just finished the quarterly report, phew"}]) == []


@pytest.mark.parametrize(
    "text", ["我家猫上个月去世了，心情不好", "Our dog passed away last week and my kids are sad."]
)
def test_a_pet_that_died_is_not_one_the_user_has(text):
    written = [c.content for c in extract_rules([{"role": "human", "content": text}])]
    assert "用户养了一只猫" not in written and "The user has a dog" not in written


@pytest.mark.parametrize(
    "text, expected",
    [
        # a head count after "我们是一家…公司" is the company's, and so is the city after it
        (
            "我们是一家做母婴用品的小公司，十几个人，在杭州",
            ["用户的公司是一家做母婴用品的小公司", "用户的公司有十几个人", "用户的公司在杭州"],
        ),
        # what to take as given is the user's circumstance
        (
            "For all future answers, assume I'm on Windows 11 and use PowerShell.",
            ["The user is on Windows 11"],
        ),
        ("Going forward, assume I'm a beginner at Python.", ["The user is a beginner at Python"]),
        ("Assume I'm on Windows 11.", ["The user is on Windows 11"]),
    ],
)
def test_what_goes_on_about_a_group_and_what_to_assume(text, expected):
    assert [c.content for c in extract_rules([{"role": "human", "content": text}])] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "我们 startup 现在 8 个人，都 remote，timezone 跨三个，怎么安排 standup",
            ["用户的创业公司现在 8 个人", "用户的创业公司都远程"],
        ),
    ],
)
def test_what_follows_without_a_subject_stays_with_the_one_named(text, expected):
    assert [c.content for c in extract_rules([{"role": "human", "content": text}])] == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "Keep answers under 200 words please.",
            ["The user wants the assistant to keep answers under 200 words"],
        ),
        (
            "Remember that I hate small talk, just get to the point.",
            ["The user hates small talk", "The user wants the assistant to just get to the point"],
        ),
    ],
)
def test_a_length_and_a_way_to_answer(text, expected):
    assert [c.content for c in extract_rules([{"role": "human", "content": text}])] == expected


def test_replies_in_a_language_as_far_as_possible_are_a_standing_wish():
    written = extract_rules([{"role": "human", "content": "我英语不好，回答尽量用中文"}])
    assert [c.content for c in written] == ["用户英语不好", "用户希望助手回答尽量用中文"]


def test_a_name_and_an_age_said_together_are_two_statements():
    written = extract_rules([{"role": "human", "content": "I'm Tom, 45, a plumber from Leeds."}])
    assert [c.content for c in written] == [
        "The user's name is Tom",
        "The user is 45",
        "The user is a plumber from Leeds",
    ]


def test_how_the_user_is_doing_after_a_medicine_is_not_its_name():
    written = extract_rules([{"role": "human", "content": "我有轻度抑郁，在吃药，最近状态还行"}])
    assert [c.content for c in written] == ["用户有轻度抑郁", "用户在吃药"]


def test_a_deferred_candidate_taken_back_later_is_no_longer_offered(org_a, alice, alice_client):
    job = _run(org_a, "busy", FOUR_FACTS, user_id="alice")
    [deferred] = job.result["deferred"]
    later = _run(org_a, "busy", [human("oops that was my sister typing, forget I said it")], user_id="alice")
    withdrawn = later.result["withdrawn"]
    assert {w["content"] for w in withdrawn} == {
        "The user is vegetarian",
        "The user has a border collie called Max",
    }
    # the stored one is archived, the deferred one marked on its job and no longer offered
    assert [w.get("deferred_by_job") for w in withdrawn if not w.get("id")] == [job.pk]
    job.refresh_from_db()
    assert job.result["deferred"][0]["withdrawn"] == {"job": later.pk}
    url = f"/api/v1/extraction-jobs/{job.pk}/deferred/accept"
    response = alice_client.post(url, {"index": 0}, format="json")
    assert response.status_code == 409
    assert "taken back later" in response.json()["error"]["message"]
    assert not MemoryItem.objects.filter(org=org_a, content=deferred["content"]).exists()
    web = Client()
    web.force_login(alice)
    assert deferred["content"] not in web.get("/queue/").content.decode()
    page = web.get(f"/queue/{job.pk}/").content.decode()
    assert "taken back later in the conversation" in page


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # a wish about answers said over several clauses is one statement, with its moment
        (
            ["你记住：我是药剂师。以后我问药物相关的问题，直接用专业术语说就行，不用从头解释那些基础概念。"],
            ["用户是药剂师", "用户问药物相关的问题时，希望助手直接用专业术语说，不用从头解释那些基础概念"],
        ),
        (
            ["给你点背景，之后的对话都用得上。写的东西要符合民政口径，朴实一点，别用太花哨的词。"],
            ["用户希望助手写的东西要符合民政口径，朴实一点，别用太花哨的词"],
        ),
        (
            ["你记住哦，以后讲到钱的时候直接用 SGD 就好，不用再 convert 成人民币"],
            ["用户希望助手讲到钱的时候直接用 SGD，不用再 convert 成人民币"],
        ),
        # the reason after it is not part of the wish; a one-off task's wishes are not kept
        (
            ["以后你回答都照这个来。你回答的时候说简单点，别夹英文，我看不懂。"],
            ["用户希望助手回答的时候说简单点，别夹英文"],
        ),
        (["帮我写个请假条，要简短一点，别太正式"], []),
        # "叫我老周就行": the name, not a wish about answers
        (["以后叫我老周就行，别老先生先生的"], ["用户希望被称为老周"]),
        # English: the act with its moment
        (
            [
                "Please remember this: I'm red-green colorblind. Whenever you suggest colors for charts or slides, avoid red/green combos."
            ],
            [
                "The user is red-green colorblind",
                "The user wants the assistant to avoid red/green combos whenever the assistant suggests colors for charts or slides",
            ],
        ),
        (
            [
                "keep in mind for the future: i'm a nurse on permanent nights. so when i ask about sleep or meal timing assume i sleep during the day"
            ],
            [
                "The user is a nurse on permanent nights",
                "The user wants the assistant to assume the user sleeps during the day when the user asks about sleep or meal timing",
            ],
        ),
    ],
)
def test_probe29_round_wishes(messages, expected):
    assert [c.content for c in extract_rules([human(m) for m in messages])] == expected


@pytest.mark.parametrize(
    "conversation",
    [
        # a game in which the user plays a part
        [
            "我们来玩个文字冒险。背景设定：我是一个被困在荒岛上的船长，左腿受了伤。你来当我的大副。",
            "好的船长！",
            "先找水",
        ],
        [
            "For the rest of this chat you're my dungeon master. My character is Thistle, a halfling rogue.",
            "You enter a tavern.",
            "I run for the stairs",
        ],
        # "Say I'm …" asked about: a supposition
        [
            "Say I'm a blacksmith in 14th-century England. What does my daily routine look like?",
            "At dawn…",
            "nah just curious",
        ],
        # said in jest or in anger, and taken back; the denial after it is not kept either
        [
            "你好 我是秦始皇 现在被困在骊山 急需五百块路费",
            "这是骗局吧？",
            "哈哈哈哈 测试一下你 看你会不会上当",
        ],
        [
            "我决定了 下个月辞职去大理开民宿",
            "想清楚了吗？",
            "唉 你别当真 刚被领导骂了一顿说气话呢 我哪有那个钱",
        ],
        [
            "I've decided. I'm quitting my job to become a full-time streamer.",
            "Big move!",
            "lol no. forget I said that, just had a bad day. I'm not quitting anything",
        ],
        [
            "我 decide 了，要 switch career 去 data science",
            "好的",
            "哈哈 算了算了 我只是随便讲讲 今天太 sian 了乱讲的 当我没讲",
        ],
        [
            "Remember that I'm moving to Lisbon in March.",
            "Got it.",
            "The offer fell through, so I'm not moving anywhere. Please don't keep any of that.",
        ],
    ],
)
def test_probe29_round_nothing_of_the_user(conversation):
    assert talked(conversation) == []


def test_probe29_round_kept_beside_a_take_back():
    # a fact said after a take-back stays, and a plan not to be taken seriously takes back only itself
    messages = [
        human("I have a peanut allergy, can you check this granola"),
        ai("Sure."),
        human("sorry that was my son typing on my phone. ignore that. I don't have any allergies, he does."),
    ]
    assert "The user does not have any allergies" in [c.content for c in extract_rules(messages)]
    messages = [
        human(
            "背景：我在郑州开了家宠物美容店，带两个员工。以后要是开分店的话可能去洛阳，不过这个八字还没一撇，先别当真。"
        )
    ]
    assert "用户在郑州开了家宠物美容店" in [c.content for c in extract_rules(messages)]


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # "说错了" takes back the value of its kind said messages before, not only in the message just before
        (
            [
                "我现在研二，导师让我下学期开始找实习",
                "什么方向？",
                "我做锂电正极材料",
                "好的",
                "不对 我刚说错了 我是研三 今年六月就毕业了",
            ],
            ["用户做锂电正极材料", "用户是研三", "用户今年六月就毕业"],
        ),
        # one of the family typed in English, and a school year of another system
        (
            [
                "我 daughter 今年 Primary 3，数学 fraction 一直搞不懂",
                "可以用披萨切块来讲。",
                "sorry 我讲错了，她是 Primary 4 了",
            ],
            ["用户的女儿是 Primary 4"],
        ),
        # a switch said without a subject replaces the thing in use
        (
            [
                "我的 phone 是 Samsung S21，怎样 set up 两个 WhatsApp account？",
                "可以用双开。",
                "上个礼拜换了 iPhone 15 了 所以给我 iOS 的",
            ],
            ["用户现在使用 iPhone 15"],
        ),
        # "we moved" after where the user is: the household's move
        (
            [
                "Looking for a good climbing gym near me, I'm in Denver.",
                "Sure.",
                "we moved to Boulder a couple weeks ago so something there",
            ],
            ["The user lives in Boulder"],
        ),
    ],
)
def test_probe29_round_corrections(conversation, expected):
    assert talked(conversation) == expected


def test_a_peers_habit_typed_in_english_is_not_the_users():
    messages = [
        human("我roommate说Notion比Obsidian好用多了，真的假的"),
        ai("看需求。"),
        human("他主要拿来记课堂笔记，天天跟我安利"),
    ]
    assert [c.content for c in extract_rules(messages)] == []


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        (
            "Watercolor is great. What do you like to paint?",
            "mostly barns and old trucks",
            "The user likes to paint barns and old trucks",
        ),
        (
            "1. Hardcore History\nWhat kind of stuff do you usually enjoy?",
            "history and anything with cars",
            "The user usually enjoys history and anything with cars",
        ),
        (
            "A lefty bass is fine too. How long have you been playing righty?",
            "about 4 years",
            "The user has been playing righty for about 4 years",
        ),
    ],
)
def test_probe29_round_bare_answers(question, answer, expected):
    messages = [human("I need some advice."), ai(question), human(answer)]
    assert expected in [c.content for c in extract_rules(messages)]


def test_a_bare_answer_to_what_the_user_works_in_is_not_read():
    # "What language pair do you work in?" + "german to english": not "works in german to english"
    messages = [
        human("I'm a freelance translator."),
        ai("What language pair do you work in?"),
        human("german to english mostly"),
    ]
    assert [c.content for c in extract_rules(messages)] == ["The user is a freelance translator"]


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # what a take-back says it is, said without a subject; "说反了"
        (
            [
                "给我配一周的减脂午餐，我不吃牛肉",
                "好的：周三羊肉焖饭",
                "不对不对，牛肉我现在能吃了，是不吃羊肉，刚才说反了",
            ],
            ["用户不吃羊肉"],
        ),
        # a thing named and moved, though the message says nothing of the user
        (
            [
                "My standup is at 9:30 every morning, can you help me plan around it?",
                "Sure.",
                "oh they just moved standup to 10:15 starting this week, every day",
            ],
            ["The user's standup is at 10:15"],
        ),
        # a friend's move is hers
        (["我闺蜜刚搬去厦门，想送她个乔迁礼物，有啥推荐"], []),
        # the text to work on after its label, a story the user writes in the first person
        (
            [
                "Can you make this cover letter line sound less stiff? For context I'm a career changer. The line: I am writing to express my interest in the Junior UX Designer position."
            ],
            ["The user is a career changer"],
        ),
        (
            [
                "Continue my short story, it's written in first person. So far: I'm a lighthouse keeper off the coast of Shetland. I've lived alone for twenty years."
            ],
            [],
        ),
        # the numbers of a sum to do; a client's business; what the user could do today
        (["房贷八十万，三十年，利率3.1%，等额本息每月还多少"], []),
        (["我在杭州工作三年了，月薪两万，想问问个税怎么算"], ["用户在杭州工作三年"]),
        (
            [
                "Draft a reminder email to my client Dana. Her invoice is 15 days overdue. She runs a bakery in Portland."
            ],
            [],
        ),
        (["Happy Friday!! Finally the weekend, I could sleep 12 hours straight"], []),
        # a request first and a standing wish after it, then the text to translate after the colon
        (
            [
                "把这段翻成英文发给海外供应商，我们公司跟供应商的英文邮件一律不用缩写：这批货请务必在月底前发出，包装需要加固。"
            ],
            ["用户希望助手用户的公司跟供应商的英文邮件一律不用缩写"],
        ),
    ],
)
def test_probe31_round(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # the second predicate is the family member's, though "just started" could be said of oneself
        (
            "My daughter Emma is 7 and just started piano lessons.",
            ["The user's daughter Emma is 7", "The user's daughter just started piano lessons"],
        ),
        # "they" after "my eyes" is no one of the user's
        (
            "Keep it simple, my eyes aren't what they were. They live in Australia",
            ["The user's eyes aren't what they were"],
        ),
        # 娃 is the user's child
        ("帮我记着：我家娃叫豆豆，今年五岁", ["用户家娃叫豆豆", "用户家娃今年五岁"]),
        # a bare time, a word on what was suggested; how the user's parents are is kept
        ("游泳行，我一般只有早上六点到七点有空，上班前", ["用户一般只有早上六点到七点有空"]),
        ("猫爬架不错，不过她家挺小的", []),
        ("我父母身体还行", ["用户的父母身体还行"]),
    ],
)
def test_probe31_round_subjects_and_fragments(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # a person brought in is the subject of the bare clauses after
        (
            [
                "我们楼下住了个老太太，82岁了，有糖尿病，一个人住。她想让社区给楼道装个扶手，帮她写个申请给居委会。"
            ],
            [],
        ),
        # a game with a character card, the 打钱 joke, a daydream not planned, "like I'm 12"
        (
            [
                "我们在玩一个创业模拟的桌游，下面是我抽到的角色卡：我是一家奶茶店老板，店开在郑州大学城。先砍哪项成本？"
            ],
            [],
        ),
        (["我是秦始皇，打钱😂", "哈哈", "行，讲吧"], []),
        (
            [
                "Random daydream: if I quit everything and moved to New Zealand, how would visas work? Not planning to, just curious."
            ],
            [],
        ),
        (["explain the difference between a roth IRA and a traditional IRA like I'm 12"], []),
        # a move to a city said as 跑到…来了, and what ended (不干了)
        (
            [
                "我在成都跑外卖，电动车电池老是不够用",
                "可以换电。",
                "哦不对，我上个月已经跑到重庆来了，成都那边不干了。",
            ],
            ["用户住在重庆"],
        ),
        # relocate in a Chinese sentence replaces where the user was based
        (
            [
                "我 base 在上海，team 在 US",
                "ok",
                "btw 以后帮我算 meeting time 都用 SGT，我上个月 relocate 去新加坡了",
            ],
            ["用户的团队在 US", "用户住在新加坡"],
        ),
        # the script wished for goes back
        (["以后回答都用繁体字。", "好的。", "还是用简体吧，繁体看着太累了"], ["用户希望助手回答用简体"]),
        # moments, fragments, a task someone asked of the user; "we" at home
        (
            ["I'm a total wreck today. I'm sick with flu and I'm on my third box of tissues. entertain me?"],
            [],
        ),
        (["tell me a joke about penguins", "Why…", "😂😂😂 ok that one got me"], []),
        (["今天 super tired", "休息一下", "嗯 我去 sleep 了 bye"], []),
        (["My aunt asked me to proofread her farewell email, can you tighten it up?"], []),
        (
            ["Remember my dietary stuff pls: I'm coeliac.", "Got it.", "no oats at all, they wreck me"],
            ["The user is coeliac"],
        ),
        (
            ["Context for the future: I'm a single dad, two kids. I don't drive anymore, we use the bus"],
            [
                "The user is a single dad",
                "The user has two kids",
                "The user does not drive anymore",
                "The user's family uses the bus",
            ],
        ),
    ],
)
def test_probe30_round(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        (
            [
                "I have two cats, Pepper and Mochi. Which plants are safe?",
                "Spider plant.",
                "sadly Pepper passed away last month, so it's just Mochi now",
            ],
            ["The user has a cat, Mochi"],
        ),
        (
            ["I've got two ferrets, Pickle and Moose.", "OK.", "Pickle died on tuesday."],
            ["The user has got a ferret, Moose"],
        ),
        (
            ["我养了两只猫，一只叫球球一只叫豆豆", "好的", "球球上个月走了，现在就剩豆豆了"],
            ["用户养了一只猫，叫豆豆"],
        ),
    ],
)
def test_one_of_the_animals_named_died(conversation, expected):
    assert talked(conversation) == expected


def test_the_old_value_named_with_wei_in_a_word_is_no_topic():
    # 华为 ends in 为, which is no "之前…为…" of an old value: the clause after it is not made a statement of it
    assert talked(["之前一直用华为，上周换成iPhone 15了，微信聊天记录咋迁过来"]) == ["用户现在使用 iPhone 15"]


def test_a_change_after_a_clause_joined_to_the_statement_is_still_the_users():
    assert talked(["我膝盖伤了，医生不让跑了，现在改成一周游三次泳"]) == [
        "用户膝盖伤，医生不让跑了",
        "用户现在改成一周游三次泳",
    ]


def test_an_age_said_with_the_name_is_not_written_again():
    assert talked(
        ["Hi, I'm Tom, 45, and I run a bike shop.", "Nice to meet you.", "I'm 45 and just started running."]
    ) == [
        "The user's name is Tom",
        "The user is 45",
        "The user runs a bike shop",
        "The user just started running",
    ]


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # parts handed out in a game: neither the part nor what is said in it is the user's
        (
            [
                "Quick improv: you're a border guard in Dover, I'm a tourist with too much luggage. Start.",
                "Passport please.",
                "Of course, I'm Bartholomew Quill, a humble tea merchant from Lyon.",
            ],
            [],
        ),
        (
            [
                "练习一下面试：你是字节的面试官，我是应届生",
                "好，请自我介绍。",
                "我叫小林，做过两个 App，GitHub 上有 3K star",
            ],
            [],
        ),
        # what the user said taken back as not them
        (
            [
                "Imagine I'm a 60-year-old dairy farmer in Wisconsin with 200 cows. What about retirement?",
                "Leasing is common.",
                "ha, none of that is actually me, just curious",
            ],
            [],
        ),
        (["I'm a nurse in Leeds.", "Nice.", "that's not really me, my sister is the nurse"], []),
        # "not me" inside a statement takes nothing back, nor does praise before a self-description
        (
            ["I'm a nurse in Leeds. It's not me who decides the rota though."],
            ["The user is a nurse in Leeds"],
        ),
        (["I'm a teacher. It's not me, it's the board that sets the rules"], ["The user is a teacher"]),
        (["You are the best, I'm a teacher in Leeds"], ["The user is a teacher in Leeds"]),
        # a question in written Cantonese is no attribute question of the Mandarin patterns
        (["我喺醫院做護士", "做完夜更之後你通常幾點瞓？唔好太夜啊", "朝早十點"], ["用户在医院做护士"]),
        # a thing's trouble of the moment, a one-off charge, a mood
        (["My building's lift is broken again, any tips for carrying groceries up six floors?"], []),
        (["我家猫又在抓沙发了，怎么办"], ["用户养了一只猫"]),
        (["The gym double-charged me $60 this month, how do I dispute it?"], []),
        (["Grading 90 lab reports tonight and I'm dead inside"], []),
        # a thing said with "always" last is the thing to be used always
        (
            ["Can you remember this? Celsius, always. I live in Texas."],
            ["The user wants the assistant to always use celsius", "The user lives in Texas"],
        ),
    ],
)
def test_probe34_round(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("traditional", "simplified"),
    [
        ("我在高雄開了一家麵包店，每週三公休", "我在高雄开了一家面包店，每周三公休"),
        ("幫我記一下：我對花生過敏，之後推薦吃的都要注意", "帮我记一下：我对花生过敏，之后推荐吃的都要注意"),
        ("我老公在台積電上班，我們住在新竹", "我老公在台积电上班，我们住在新竹"),
    ],
)
def test_traditional_characters_are_read_as_simplified_ones(traditional, simplified):
    written = talked([traditional])
    assert written and written == talked([simplified])
    assert all(text == core_text.simplified(text) for text in written)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a greeting run into the first clause is not part of it
        ("你好我叫王丹，在杭州做会计", ["用户叫王丹", "用户在杭州做会计"]),
        ("Hi 我叫王丹", ["用户叫王丹"]),
        ("hey I'm Dan, I work in Hangzhou", ["The user is Dan", "The user works in Hangzhou"]),
        (
            "Hiking is my thing, I go every weekend",
            ["The user's thing is Hiking", "The user goes every weekend"],
        ),
        # a bare "…人" of oneself is where one is from; a count of people is not
        ("我叫马库斯，新加坡人，在虾皮做设计师", ["用户叫马库斯", "用户是新加坡人", "用户在虾皮做设计师"]),
        ("我们家三个人，住在成都", ["用户家有三个人", "用户家住在成都"]),
        # a set of pronouns is no object left out; "for future reference" leads what to keep
        ("for future reference, my pronouns are she/her", ["The user's pronouns are she/her"]),
        ("For the record, I'm vegan", ["The user is vegan"]),
        ("I gave my old laptop to her", []),
        # a condition said without a subject
        ("T1 diabetic so nothing too sweet please", ["The user is T1 diabetic"]),
        ("As someone with ADHD, can you keep answers short?", ["The user has ADHD"]),
        # what the user does now, said without a subject
        ("What's a good charger? Driving a Kia EV6 now", ["The user is driving a Kia EV6 now"]),
        # "记牢" after a lead-in asks to keep what follows; after the statement it asks to keep that
        ("先跟你说个事，你给我记牢了：我对芒果过敏，小时候吃过一次就进了医院", ["用户对芒果过敏"]),
        ("我对青霉素过敏，这个要记牢", ["用户对青霉素过敏"]),
        # how long replies are, said to "you"
        ("你回答尽量简短一点", ["用户希望助手回答尽量简短一点"]),
    ],
)
def test_probe34_round_openings(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    "switch",
    ["上个礼拜换了小米14了", "哦换了小米14了", "嗯，前几天换了华为 Mate 60"],
)
def test_a_switch_to_a_chinese_brand_replaces_the_thing_in_use(switch):
    written = talked(["我用的是 iPhone 12，拍照一般", "好的。", switch])
    assert len(written) == 1 and written[0].startswith("用户现在使用")


def test_an_apology_before_a_value_said_again_corrects_it():
    assert talked(
        ["my daughter is 6 and loves dinosaurs", "Nice!", "sorry she's 7 now, just had her birthday"]
    ) == ["The user's daughter is 7 now"]
    assert talked(["My son is in year 2", "OK.", "oops, my son is in year 3"]) == [
        "The user's son is in year 3"
    ]


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        (["I'm on Pacific time, usually start work at 8", "Noted.", "make that Singapore time"], None),
        (
            ["My monthly budget is 500 dollars", "OK.", "make that 600 dollars"],
            ["The user's monthly budget is 600 dollars"],
        ),
        (["My son is in year 2", "OK.", "oh make that year 3"], ["The user's son is in year 3"]),
        # a value of no kind said before changes nothing
        (["I'm a nurse", "OK.", "make that a large latte please"], ["The user is a nurse"]),
    ],
)
def test_make_that_says_the_value_now(conversation, expected):
    written = talked(conversation)
    if expected is None:
        assert "The user is on Singapore time" in written and not any("Pacific" in t for t in written)
    else:
        assert written == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a promotion is the role now, whenever it came through; a guess is no statement
        ("ok so my promotion to senior associate came through yesterday", ["The user is a senior associate"]),
        ("I got promoted to team lead yesterday", ["The user is a team lead"]),
        ("Maybe I'm just not a morning person", []),
    ],
)
def test_a_promotion_said_with_its_day_and_a_guess(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


def test_a_job_title_said_as_a_change_replaces_the_one_before():
    assert talked(
        [
            "I'm a junior analyst at a consulting firm.",
            "Nice.",
            "ok so my promotion to senior associate came through",
        ]
    ) == ["The user is a senior associate"]
    # a way of eating said as a change is no job title
    assert talked(["I'm a nurse at St Mary's", "OK.", "I went vegan last month"]) == [
        "The user is a nurse at St Mary's",
        "The user is vegan",
    ]


@pytest.mark.parametrize(
    ("cantonese", "expected"),
    [
        # written Cantonese is read as Mandarin: its words, particles and "not", "is", "have not"
        ("我喺深水埗做地盤，屋企養咗兩隻貓", ["用户在深水埗做地盘", "用户家养了两只猫"]),
        ("我係全職返工嘅，平日佢哋幫我湊仔", ["用户是全职上班的"]),
        ("我唔食得辣㗎", ["用户不能吃辣"]),
        # a place that points back into the conversation is no place
        ("旺角附近有冇好嘅茶餐廳？我住嗰頭", []),
    ],
)
def test_written_cantonese_is_read_as_mandarin(cantonese, expected):
    assert talked([cantonese]) == expected
    assert core_text.mandarin("我们的關係很好") == "我们的關係很好"  # no Cantonese word: as it is


def test_a_move_said_in_cantonese_is_a_move():
    # "搬咗去" is "搬到了": the move replaces where the user lived
    assert talked(["我住沙田", "好。", "上個月搬咗去荃灣"]) == ["用户住在荃湾"]


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # "he" is no wife, "she" no husband: the clause about someone else is left out
        (
            ["My husband is Irish and our daughter is 4, she's in preschool"],
            ["The user's husband is Irish", "The user's daughter is 4"],
        ),
        # a language or an idea of the user's is no "he"
        (
            ["I live in Bologna and my italian is still rough, he only speaks italian though"],
            ["The user lives in Bologna", "The user's italian is still rough"],
        ),
        (["my manager hates slides, how do I pitch my idea to him", "OK.", "he also hates long emails"], []),
        # what someone of the user's worries, and "the … ones" said before
        (["My son is 3. My mum worries he eats too little"], ["The user's son is 3"]),
        (["My husband likes the spicy ones best"], []),
    ],
)
def test_he_and_she_stand_for_whom_they_can(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    "conversation",
    [
        # a part handed to the assistant, a self the user supposes, a story game and its protagonist
        [
            "假设我是个刚入职的测试工程师，你当面试官问我几个问题",
            "好的。",
            "我负责过一个千万日活App的回归测试",
        ],
        ["来玩个游戏 你演算命先生 我是进城赶考的书生", "好。", "先生，我今年二十有三，家住江南"],
        ["say 我是一家 SaaS 公司的 CFO，你扮 investor 问我问题", "好。", "我们 ARR 今年翻了一倍"],
        ["new story game! remember for the whole game: I'm Vera, a retired smuggler who runs an inn"],
        ["my protagonist is Odile, a 60-year-old lighthouse keeper. She hates tourists. Write scene one"],
        # a jest taken back
        ["ok so im a 22 yr old chess grandmaster", "Really?", "lol no just messing with you. whats 17*23"],
    ],
)
def test_parts_supposed_and_jests_are_not_the_users(conversation):
    assert talked(conversation) == []


def test_not_to_be_kept_after_all():
    assert talked(["记一下 我的快递单号 SF10293 等会要查", "好的。", "查到了 不用记了 谢谢"]) == []


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # what a way of eating leaves out, eaten again, ends it
        (
            [
                "I'm vegetarian, any ideas for lunch?",
                "Sure.",
                "I've started eating fish again since my iron got low",
            ],
            ["The user has started eating fish again since their iron got low"],
        ),
        (["I'm pescatarian", "OK.", "I eat fish now"], ["The user is pescatarian", "The user eats fish now"]),
        # a change of careers ends the job said before
        (["我是做会计的", "好的。", "我前年就转行了 现在做保险"], ["用户前年就转行", "用户现在做保险"]),
        # a role given is the role now
        (
            [
                "I'm a cashier at a garden centre",
                "Nice.",
                "they offered me the supervisor role, started today",
            ],
            ["The user is a supervisor"],
        ),
    ],
)
def test_a_change_of_diet_or_career_ends_the_one_before(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # a request with the user as its object ("quiz me" → "Quiz the user") is no statement
        (["so bored. entertain me"], []),
        (["Everything I bake is vegan"], ["Everything the user bakes is vegan"]),
        # a matter that came up, what one would do first in a supposed case
        (["帮我写个请假条 请两天 家里有事"], []),
        (["要是我明天退休了 你猜我干嘛", "猜不到。", "我肯定先去西藏自驾一个月"], []),
        # a person said before inside the statement, other people's prices, someone's one-off act for the user
        (["I'm the one who walks him every morning"], []),
        (["I sell jam at a market, others at my market charge 6 a jar"], ["The user sells jam at a market"]),
        (["My niece fixed my router for me last week"], []),
        # one client's business
        (["我的客户是一家做跨境电商的公司，帮我写个提案"], []),
        # a care to take with what was said before is no wish of its own
        (["我对海鲜过敏 以后给我推荐菜的时候注意点"], ["用户对海鲜过敏"]),
    ],
)
def test_probe35_round(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a life told in one breath, with no stops
        (
            "我今年六十一了退休之前是纺织厂的会计现在每天在家带外孙女闲下来的时候想学学拍短视频你说从哪学起",
            ["用户今年六十一岁", "用户现在每天在家带外孙女"],
        ),
        # how often, run on after what is done
        ("我平时爱游泳一周四次 有什么护耳的推荐", ["用户平时爱游泳"]),
        # 平常 and 主修 go on about the subject before them
        (
            "我在多伦多念硕士，主修统计，平常在超市打工",
            ["用户在多伦多念硕士", "用户主修统计", "用户平常在超市打工"],
        ),
        # one of them: "本人…一枚"
        ("本人 UI 设计师一枚，坐标成都", ["用户是UI 设计师"]),
    ],
)
def test_probe35_round_openings(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # what is in the kitchen for the meal asked about
        (["i have chickpeas, rice and a can of tomatoes, what can i make"], []),
        (["家里有鸡蛋和西红柿 晚饭做啥"], []),
        # a return under way, a pain that keeps coming back
        (
            ["Trying to get back into piano after 20 years. Any tips?"],
            ["The user is getting back into piano after 20 years"],
        ),
        (
            ["my knees are killing me every morning, any stretches?"],
            ["The user has recurring knee pain"],
        ),
        # how to write, under a header that holds from now on
        (
            ["以后都按这个来：我是做 HR 的，写东西要简洁，不要套话"],
            ["用户是做 HR 的", "用户希望助手写东西要简洁", "用户要求助手不要套话"],
        ),
    ],
)
def test_probe35_round_misses(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # "keep this on file" asks to keep what follows
        (
            "Please keep this on file for every future chat: I'm hard of hearing. Voice notes are useless to me.",
            ["The user is hard of hearing"],
        ),
        # the hometown after what came before it, in a message typed without stops; a mood of the moment
        (
            "我在东莞这边开货车开了有十年了老家江西赣州的想问一下换B照要啥手续",
            ["用户在东莞这边开货车开了有十年", "用户的老家是江西赣州"],
        ),
        ("明天面试 我现在慌得很", []),
    ],
)
def test_probe34_round_left_over(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # a place answered to "你那边是…吗？", one place though typed with a space
        (
            ["冬天手机一出门就关机怎么办", "可以把手机放内兜。你那边是东北吗？", "吉林 延吉"],
            ["用户住在吉林延吉"],
        ),
        # one of two habits asked about
        (["周末带娃去哪玩", "看情况。你们一般开车还是坐公交？", "公交"], ["用户一般坐公交"]),
        (["周末带娃去哪玩", "你想去室内还是室外？", "室内"], []),
        # not when the choice ends on the verb of both: "手机" alone loses what it is for
        (["想学点构图", "你平时用手机还是相机拍？", "手机"], []),
    ],
)
def test_bare_answers_to_a_place_and_a_habit(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # what else and the wish after the facts, in a message typed without stops
        (
            "你帮我记住我家是在普洱种咖啡的自己有三十几亩地以后问你种植的事你就按这个来还有我耳朵不太好",
            ["用户家是在普洱种咖啡的", "用户家自己有三十几亩地", "用户耳朵不太好"],
        ),
        # 当…, 长期…, 主项… go on about the subject before them; "…一枚" at the start of a message
        (
            "我在威海跑货轮，当大副八年了，长期在海上",
            ["用户在威海跑货轮", "用户当大副八年", "用户长期在海上"],
        ),
        ("美甲师一枚 在西安开了个小店", ["用户是美甲师", "用户在西安开了个小店"]),
    ],
)
def test_probe30_round_left_over(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # asking for someone else; a trip's mishap and what it cost
        (["我是食堂管早餐的，这个菜谱的量我帮同事问"], ["用户是食堂管早餐的"]),
        (
            ["My suitcase didn't arrive in Rome and I had to pay 90 euros for clothes, I want reimbursement"],
            [],
        ),
        # a step of the task, a word alone
        (["帮我看看这个表 我把日期填上"], []),
    ],
)
def test_probe29_and_probe30_round_moments(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # a question run on after the statement; a condition whose act is in the clause after it
        (
            "i ride a 2009 vespa and i do all my own servicing what spark plug should i be using",
            ["The user rides a 2009 vespa", "The user does all their own servicing"],
        ),
        (
            "Can you keep in mind that I'm dyslexic? Whenever you write long answers, work around that.",
            ["The user is dyslexic"],
        ),
    ],
)
def test_a_run_on_question_and_a_condition_alone(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # what else the user is doing, after "and also"; where the user is heading now; a home bought
        (
            "im a line cook at a diner and also taking night classes for my nursing degree",
            [
                "The user is a line cook at a diner",
                "The user is also taking night classes for their nursing degree",
            ],
        ),
        (
            "I'm a career changer, 9 years as a teacher, now moving into data analysis.",
            ["The user is a career changer", "The user is now moving into data analysis"],
        ),
        ("we just closed on a house in Tacoma so money is tight", ["The user bought a house in Tacoma"]),
    ],
)
def test_what_else_the_user_does_and_a_home_bought(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


def test_should_have_said_is_no_statement():
    # (and eggs eaten, said with stress, end being vegan)
    assert talked(["I'm vegan, lunch ideas?", "Sure.", "oh wait I should've said, I do eat eggs"]) == [
        "The user does eat eggs",
    ]


@pytest.mark.parametrize(
    ("conversation", "expected"),
    [
        # the verb asked with, said again in the answer, is said once
        (["帮我做个菜单", "好的。你们主打什么菜？", "主打酸菜鱼和水煮肉片"], ["用户主打酸菜鱼和水煮肉片菜"]),
        # a shift pattern goes on about the subject before it; a slip of the tongue is a moment
        (["我是ICU护士，三班倒"], ["用户是ICU护士", "用户三班倒"]),
        (["我住南山", "好。", "哦说错了，上个月搬到福田了，还没改过来口"], ["用户住在福田"]),
    ],
)
def test_probe31_round_left_over(conversation, expected):
    assert talked(conversation) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # what a way of eating leaves out besides; what the child is, said bare after its age
        (
            "remember im pescatarian. no shellfish either",
            ["The user is pescatarian", "The user does not eat shellfish either"],
        ),
        ("孩子六岁 女孩 特别喜欢画画", ["用户的孩子六岁", "用户的孩子是女孩", "用户的孩子特别喜欢画画"]),
    ],
)
def test_what_a_diet_leaves_out_and_what_the_child_is(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # "一个人接单" is alone, not a head count
        ("我是做装修的，一个人接单", ["用户是做装修的", "用户独自接单"]),
        # what one does each day, after what one is, in a message typed without stops
        (
            "我在物流公司干调度的每天要排四十来辆车有没有更快的办法",
            ["用户在物流公司干调度的", "用户每天要排四十来辆车"],
        ),
    ],
)
def test_alone_and_each_day_after_what_one_is(message, expected):
    assert [c.content for c in extract_rules([human(message)])] == expected


def test_a_work_schedule_said_bare_is_the_users():
    assert [c.content for c in extract_rules([human("本人运营，大小周，二十八岁")])] == [
        "用户是运营",
        "用户上班大小周",
        "用户二十八岁",
    ]


def test_a_days_mishap_is_a_moment():
    assert (
        talked(
            [
                "ugh what a morning",
                "Oh no.",
                "spilled tea on my keyboard and missed the train, classic monday",
            ]
        )
        == []
    )


def test_a_thing_made_for_the_talk_and_a_consolation_are_moments():
    assert talked(["我在西安开了家凉皮店 最近想搞个会员卡 怎么设计"]) == ["用户在西安开了家凉皮店"]
    assert talked(["my flight is delayed again", "Sorry.", "whatever, at least i've got a good book"]) == []


@pytest.mark.parametrize(
    "message",
    [
        "我就是好奇 问问而已",
        "我先去眯一会",
        "im just gonna stay in bed all day",
        "I'm thinking maybe I'll move to Lisbon",
        "我胃不舒服能吃点啥",
    ],
)
def test_curiosity_a_nap_a_plan_of_the_moment_and_a_question_are_no_statements(message):
    assert [c.content for c in extract_rules([human(message)])] == []


def test_what_the_user_has_been_left_out_is_no_statement():
    assert talked(["I'm vegan, breakfast ideas?", "How long?", "I've been for like 5 years now"]) == [
        "The user is vegan"
    ]


# ---- the probe36 round ----------------------------------------------------------------------------------------


def test_a_pet_pointed_at_is_the_users():
    assert written(["我家那只柯基老是叫 怎么训练", "每天我都带它出去两次"], "好的。") == ["用户养了一只柯基"]


def test_a_kitchens_contents_after_a_word_of_thanks_are_a_moment():
    assert written(
        ["my son can't have dairy, what can replace butter in cookies", "great we have almond milk"], "Ok."
    ) == ["The user's son can't have dairy"]


@pytest.mark.parametrize(
    "message",
    [
        "今天 review 又被挑了一堆刺 我真的 speechless",
        "终于下班了 chill 一下",
        "eslint keeps screaming at me about semicolons",
    ],
)
def test_moods_and_annoyances_of_the_moment_are_no_statements(message):
    assert [c.content for c in extract_rules([human(message)])] == []


def test_things_counted_from_before_and_a_bare_generation_are_fragments():
    assert talked(
        [
            "I run a small orchard, about 200 trees",
            "Nice.",
            "we sell most of them to a cider mill. im 4th generation",
        ]
    ) == ["The user runs a small orchard"]


def test_a_yes_no_question_without_its_mark_is_no_statement():
    assert talked(["my son's 11 and wants to learn piano, is yamaha good"]) == [
        "The user's son is 11",
        "The user's son wants to learn piano",
    ]


def test_an_age_put_right_with_a_laugh_replaces_the_age_before():
    assert talked(["my son's 11", "Nice!", "sorry he turned 12 last month lol forgot. any clubs?"]) == [
        "The user's son is 12"
    ]


def test_a_move_from_where_the_home_was_replaces_it():
    assert talked(["我家住在成都高新区 周末去哪爬山", "可以去龙泉山。", "最近刚搬到温江了 有近一点的吗"]) == [
        "用户住在温江"
    ]


def test_a_typo_owned_up_to_after_an_apology_puts_the_grade_right():
    assert talked(["我儿子今年读小二 推荐点数学绘本", "好的。", "不好意思打错了，是小四"]) == [
        "用户的儿子今年读小四"
    ]


def test_who_provided_a_thing_and_a_rule_named_alone_are_fragments():
    assert talked(["我用的是 ThinkPad X1，想装 Linux", "可以。", "哦对 是公司配的"]) == [
        "用户使用 ThinkPad X1"
    ]
    assert talked(["记一下 我 prefer 简短的回答", "好的。", "还有 commit message 写英文 我们 team 规范"]) == [
        "用户更喜欢简短的回答"
    ]


def test_what_a_text_to_be_written_says_is_not_the_users():
    assert talked(["我是小学班主任 帮我写一条给家长的通知 说明孩子明天要穿校服带水杯"]) == [
        "用户是小学班主任"
    ]


def test_a_code_mixed_run_breaks_before_this_side_and_before_a_new_subject():
    assert talked(["我在 Lyon 读 PhD 这边 titre de séjour 一直办不下来 有什么办法"]) == ["用户在 Lyon 读 PhD"]
    assert talked(["我 Android dev 三年了 主力 Kotlin 我老婆是 designer"]) == [
        "用户 Android dev 三年",
        "用户的妻子是设计师",
    ]


def test_like_as_a_filler_and_for_like_n_years():
    assert talked(["im an early bird, like i do my best work 5am-9am"]) == [
        "The user is an early bird",
        "The user does their best work 5am-9am",
    ]
    assert talked(
        ["our team uses ruff", "Ok.", "cool, been doing python for like 9 years and never needed this"]
    ) == [
        "The user's team uses ruff",
        "The user has been doing python for about 9 years",
    ]


def test_what_others_make_of_it_and_a_fact_in_brackets():
    assert talked(
        ["i'm a florist", "Nice.", "also i'm allergic to lilies which ppl find hilarious given my job"]
    ) == [
        "The user is a florist",
        "The user is allergic to lilies",
    ]
    assert talked(
        [
            "write a bio for our running club page. i coach the beginners group",
            "Sure.",
            "add that i ran boston twice (i have type 1 diabetes) and drop the coach bit",
        ]
    ) == ["The user coaches the beginners group", "The user ran boston twice", "The user has type 1 diabetes"]


def test_a_long_run_breaks_before_the_partner_and_the_childs_age():
    assert talked(["我和我老公都上班 我是做会计的他是厨师我们住杭州滨江孩子三岁了周末去哪玩好"]) == [
        "用户和用户的丈夫都上班",
        "用户是做会计的",
        "用户的丈夫是厨师",
        "用户住杭州滨江",
        "用户的孩子三岁",
    ]


def test_an_age_after_a_spaced_self_introduction():
    assert talked(["自我介绍一下 我63了 退休前是会计"]) == ["用户63岁", "用户退休前是会计"]


def test_a_tool_used_mainly_and_one_used_now_and_then():
    assert talked(["我是做插画的", "不错。", "Procreate 为主 偶尔 Photoshop 做排版"]) == [
        "用户是做插画的",
        "用户主要使用 Procreate",
        "用户偶尔使用 Photoshop 做排版",
    ]


def test_how_long_the_user_has_done_the_work_and_a_view_of_others_is_no_answer():
    assert talked(
        ["我是做保险的", "你平时最常听到的偏见是什么？", "就是觉得我们骗人呗 我干了十年了 我在南宁"]
    ) == ["用户是做保险的", "用户干这一行已经十年", "用户在南宁"]


def test_what_the_user_has_for_the_work_named_before():
    assert talked(["im a dairy farmer in wisconsin, about 120 cows"]) == [
        "The user is a dairy farmer in wisconsin",
        "The user has about 120 cows",
    ]


def test_background_numbers_a_budget_and_someone_elses_wish_are_no_facts_and_a_number_first_is_the_age():
    assert talked(["some context so you know: 52, retired firefighter, live in Tulsa w my husband"]) == [
        "The user is retired firefighter",
        "The user lives in Tulsa w their husband",
        "The user is 52 years old",
    ]
    assert talked(["context: budget $300, Tom wants a cold brew with oat milk"]) == []


def test_one_clients_business_is_not_the_users_but_the_clientele_is():
    assert talked(["我的客户是成都的一家火锅店 帮我写个推广文案"]) == []
    assert talked(["我做外贸的 客户主要在中东"]) == ["用户做外贸的", "用户的客户主要在中东"]


@pytest.mark.parametrize(
    "message",
    ["我在医院排队挂号 手机快没电了", "开了一天会 脑子已经宕机", "外面太冷了 都不敢出门"],
)
def test_a_queue_a_battery_a_tired_head_and_a_recent_trouble_are_moments(message):
    assert [c.content for c in extract_rules([human(message)])] == []


def test_a_recent_trouble_leaves_what_follows_it():
    assert talked(["我家狗最近老是掉毛怎么办"]) == ["用户养了一只狗"]
    assert talked(["我家猫最近老掉毛 平时吃的是冻干加猫粮"]) == ["用户家猫平时吃的是冻干加猫粮"]


def test_the_value_before_said_after_the_new_one_leaves_the_statement():
    assert (
        talked(["i switched teams, im on payments now not search anymore"])[-1]
        == "The user is on payments now"
    )


@pytest.mark.parametrize(
    "message",
    [
        "我想在同学聚会上说几句 帮我写个开场白",
        "我想送我领导个礼物 预算五百",
        "i want to know when to prune my roses",
        "I want to prep some lunches before my night shift",
    ],
)
def test_a_wish_for_one_occasion_and_a_question_put_as_a_want_are_no_statements(message):
    assert [c.content for c in extract_rules([human(message)])] == []


def test_the_way_home_of_one_evening_and_what_the_boss_wants_are_not_the_users():
    assert talked(["我下班顺路去超市 买点什么做晚饭好"]) == []
    assert talked(["我是做量化的 我的老板只看夏普比率"]) == ["用户是做量化的"]


def test_what_follows_a_named_peer_in_a_list_is_theirs():
    assert (
        talked(
            [
                "context: my client is a retired pilot in Dundee, divorced twice, owns four flats. help me plan his estate"
            ]
        )
        == []
    )
    assert talked(["my flatmate is a chef, works late, and I'm a teacher in Cork"]) == [
        "The user is a teacher in Cork"
    ]
    assert talked(["I'm a nurse, work nights, have two kids"]) == [
        "The user is a nurse",
        "The user works nights",
        "The user has two kids",
    ]


@pytest.mark.parametrize(
    "message",
    [
        "陪我写个武侠小说 人物设定：我叫沈青 二十岁 是镖局的少镖头 住在洛阳",
        "write a scene with me. character bio: I'm Mara, 35, a ship's engineer on Titan, twice divorced",
    ],
)
def test_a_character_set_up_for_a_story_is_not_the_user(message):
    assert talked([message, "好的", "我拔剑冲进去"]) == []


def test_the_paragraphs_after_a_request_to_work_on_them_are_the_text():
    assert (
        talked(["帮我表弟润色下这段自我介绍 他要投实习\n\n我从小就热爱编程，现在在读大二，熟悉 Java。"]) == []
    )
    assert talked(
        ["I teach year 9 science. proofread this for a parent email please\n\nI am a single dad of three."]
    ) == ["The user teaches year 9 science"]


def test_a_journeys_date_moved_is_no_statement_a_reviews_is():
    assert talked(["回程改成周六了 帮我重新排下行程"]) == []
    assert talked(["the flight got moved to the 9th, can you redo day one"]) == []
    assert talked(["the design review moved to next Thursday"]) == ["The design review is now next Thursday"]


def test_a_move_typed_without_its_dao_is_a_change():
    assert talked(["我每周一晚上上钢琴课", "好的", "钢琴课改周三晚上了 以后都是"]) == [
        "用户每周三晚上上钢琴课"
    ]
    assert talked(["帮我改一下这个周报的标题"]) == []


def test_a_take_back_with_the_value_fronted_corrects_the_statement_before_it():
    assert talked(["我不喝牛奶 帮我配个早餐", "好的", "哎说错了，是豆浆不喝，牛奶没问题"]) == ["用户不喝豆浆"]


def test_ones_own_people_named_without_my_are_the_users():
    assert talked(["any ideas for a rainy sunday? kids are 4 and 9, hubby works weekends"]) == [
        "The user's kids are 4 and 9",
        "The user's hubby works weekends",
    ]
    assert talked(["Daughter has a sesame allergy, which crackers are safe"]) == [
        "The user's daughter has a sesame allergy"
    ]


def test_a_one_character_word_between_spaces_is_a_clause_of_its_own():
    assert talked(["我不吃香菜 臭 芹菜还行"]) == ["用户不吃香菜"]


def test_a_bare_verb_after_the_users_own_clause_goes_on_about_the_user():
    assert talked(["I live in Hull, use a mobility scooter and don't cook. any easy meal kits?"]) == [
        "The user lives in Hull",
        "The user uses a mobility scooter",
        "The user does not cook",
    ]
    # an order after a clause that is not the user's own stays an order
    assert talked(["don't use bullet points, use numbered lists"]) == [
        "The user wants the assistant not to use bullet points"
    ]


def test_bare_items_of_a_background_list_are_worded_as_statements():
    assert talked(
        [
            "keep this in mind from now on whenever i ask about money or food: 61, female, on metformin, "
            "saving for a new roof, first language is Polish, colorblind"
        ]
    ) == [
        "The user is colorblind",
        "The user is 61 years old",
        "The user is female",
        "The user is on metformin",
        "The user is saving for a new roof",
        "The user's first language is Polish",
    ]


def test_married_said_after_the_users_own_clause_and_the_kind_of_company_the_user_works_for():
    assert talked(["我是幼儿园老师，结婚了，想问问怎么跟家长沟通"]) == ["用户是幼儿园老师", "用户已婚"]
    assert talked(["我们是国企，报销流程特别慢"])[:1] == ["用户的公司是国企"]


def test_a_pet_counted_without_its_yi_is_one_pet_and_its_name_is_not_the_users():
    assert talked(["我养了只布偶，叫雪球"]) == ["用户养了一只布偶，叫雪球"]


def test_a_take_back_that_writes_nothing_of_its_own_still_takes_back_what_it_names():
    assert talked(["My dog Pepper is 6", "Cute!", "wait no, Pepper is my neighbour's dog"]) == []
    assert talked(["我家猫叫可乐", "好可爱", "不对，可乐是我姐家的"]) == []


def test_a_take_back_said_after_the_words_it_corrects_is_one_all_the_same():
    assert talked(
        ["我家猫叫可乐，两岁", "好可爱", "哦可乐是我姐家的，我记混了。我自己养的是只柯基，叫雪碧"]
    ) == ["用户养的是一只柯基，叫雪碧"]


def test_a_move_elsewhere_replaces_what_the_user_did_in_the_place_left():
    assert talked(["我在苏州做装修的", "好的", "我去年就搬到无锡了"]) == ["用户住在无锡"]
    assert talked(["I teach in Cardiff", "ok", "I moved to Swansea last spring"]) == [
        "The user lives in Swansea"
    ]
    # a move within the same place leaves it
    assert talked(["我在杭州上班", "好的", "我搬到杭州滨江了"]) == ["用户在杭州上班", "用户住在杭州滨江"]


def test_quitting_ends_where_the_user_worked_and_a_new_school_year_replaces_the_old():
    assert "用户在物业公司上班" not in talked(["我在物业公司上班，想转行", "好的", "其实我上周已经辞职了"])
    assert talked(["I work at Tesco as a shift lead", "ok", "actually I quit in May"]) == [
        "The user quit in May"
    ]
    # someone else quitting leaves it
    assert talked(["我在物业公司上班", "好的", "我同事辞职了"])[:1] == ["用户在物业公司上班"]
    assert talked(["我初二", "好的", "哦不对 我现在初三了"]) == ["用户现在初三"]


def test_what_the_user_avoided_is_fine_after_all():
    assert talked(["我对青霉素过敏", "好的", "问过医生了 其实青霉素我是可以用的 过敏的是头孢"]) == []
    assert talked(["I'm allergic to soy", "noted", "turns out I can eat soy, it was the peanuts"]) == [
        "The user can eat soy"
    ]
    # a question about it leaves it
    assert talked(["我不吃香菜", "好的", "香菜没问题吗"]) == ["用户不吃香菜"]


def test_not_this_but_that_puts_the_value_right_in_the_statement_that_had_it():
    assert talked(["我在医院做护工", "好的", "不是护工 是护士 去年考的证"]) == ["用户在医院做护士"]


def test_a_new_device_of_the_same_kind_is_the_one_in_use():
    assert talked(
        ["I'm on a Galaxy S21", "ok", "just got an iPhone 16 Pro last week, how do I move my photos"]
    ) == ["The user now uses iPhone 16 Pro"]
    assert talked(["我用的是华为P40", "好的", "上个月换了个小米14 怎么导通讯录"]) == ["用户现在使用小米14"]
    # someone else's new phone, or a band of the same brand, leaves it
    assert talked(["I'm on a Galaxy S21", "ok", "my son got an iPhone 16"])[:1] == [
        "The user is on a Galaxy S21"
    ]
    assert talked(["我用的是小米14", "好的", "我买了个小米手环"])[:1] == ["用户使用小米14"]


def test_fish_eaten_said_with_stress_ends_being_vegetarian():
    assert talked(["I'm vegetarian, any dinner ideas?", "sure", "oh wait, I do eat fish actually"]) == [
        "The user does eat fish"
    ]


def test_a_later_name_to_be_called_by_replaces_the_earlier():
    assert talked(["叫我阿明就行", "好的阿明", "其实朋友都叫我明仔，你也叫明仔吧"]) == ["用户希望被称为明仔"]
    assert talked(["你叫什么名字"]) == []


def test_an_activity_stopped_ends_the_habit_of_it():
    assert "用户每周骑三次车通勤" not in talked(["我每周骑三次车通勤", "好的", "膝盖伤了 医生说半年别骑车了"])
    assert "The user swims every morning before work" not in talked(
        ["I swim every morning before work", "nice", "my doctor says I can't swim for a month"]
    )
    # a word that only looks like it leaves the habit
    assert talked(["我每天跑步", "好的", "你别跑题了"]) == ["用户每天跑步"]


def test_spicy_food_to_be_given_up_and_fish_eaten_too_end_what_was_said():
    assert "用户的女儿今年读小一" not in talked(
        ["我女兒今年讀小一", "好", "唔好意思打錯 係小三 佢識睇橋樑書"]
    )
    assert talked(["我无辣不欢 推荐几家湘菜", "好的", "哦对 医生说我胃不好 辣的要戒"]) == ["用户胃不好"]
    assert talked(["I'm vegetarian, plan my week", "ok", "oh i eat fish too"]) == ["The user eats fish"]


def test_a_job_started_lately_is_where_the_user_works_now():
    assert talked(["not at the bank anymore, started at a credit union in Leeds last month"]) == [
        "The user started at a credit union in Leeds"
    ]
    assert talked(["I joined the meeting late last week, can you summarise it"]) == []


def test_the_kids_of_one_who_teaches_them_are_not_the_users():
    assert talked(["I coach a swim club on saturdays, kids are 7 to 12, warm-up ideas?"]) == [
        "The user coaches a swim club on saturdays"
    ]


def test_a_thing_at_its_new_time_replaces_the_statement_of_its_old_time():
    assert talked(["我每周二晚上上网球课", "好的", "网球课改到周四晚上了"]) == ["用户每周四晚上上网球课"]
    assert talked(["我每周三上午跟 mentor 有 1:1", "好的", "mentor 的 1:1 改周五早上了"]) == [
        "用户的导师的 1:1 现在是周五早上"
    ]


def test_what_follows_from_a_statement_and_what_a_loan_costs_each_month_are_the_statements():
    assert talked(["我不吃芒果 一吃就过敏 推荐点水果"]) == ["用户不吃芒果，一吃就过敏"]
    assert talked(["记一下我的情况：有车贷 每个月还三千"]) == ["用户有车贷，每个月还三千"]
    assert talked(["我是初中数学老师 带初二三个班 出几道题"]) == ["用户是初中数学老师", "用户带初二三个班"]


def test_a_standing_wish_without_its_verb_reads_use():
    assert talked(["always celsius pls"]) == ["The user wants the assistant to always use celsius"]


def test_the_s_of_is_after_my_thing_is_read_as_is():
    assert talked(["my husband's a paramedic, works nights"]) == [
        "The user's husband is a paramedic",
        "The user's husband works nights",
    ]
    assert talked(["my wife's car is red"]) == ["The user's wife's car is red"]


def test_a_role_with_where_and_the_users_thesis_in_a_background_list():
    assert talked(
        ["standing context for later: nurse at a care home in Derby, thesis is on dementia care"]
    ) == [
        "The user is a nurse at a care home in Derby",
        "The user's thesis is on dementia care",
    ]
    assert talked(["First of all, please keep this on file for every future chat: I'm hard of hearing."]) == [
        "The user is hard of hearing"
    ]


def test_a_thing_said_with_always_last_is_a_standing_wish():
    assert talked(["Celsius, always. I'm in Lyon"]) == [
        "The user wants the assistant to always use celsius",
        "The user is in Lyon",
    ]


def test_a_thing_the_user_has_none_of_in_a_background_list():
    assert talked(["about me: cooking for two, no microwave, no car"]) == [
        "The user is cooking for two",
        "The user has no microwave",
        "The user has no car",
    ]


def test_more_states_and_roles_of_a_background_list():
    assert talked(["for future reference: freelance tutor, dyslexic, GST registered"]) == [
        "The user is a freelance tutor",
        "The user is dyslexic",
        "The user is GST registered",
    ]


def test_a_value_said_anew_replaces_the_one_of_its_kind():
    # a place, a name in use, a number of one kind, a day and a time, a shift, a team: said with a word of change
    # near them, they take the old value's place in the statement that held it
    assert talked(["I live in Derby, any running clubs?", "Sure.", "Nottingham now. moved in May"]) == [
        "The user lives in Nottingham"
    ]
    assert talked(["我住苏州，周末去哪玩", "可以去园林。", "现在是无锡了 刚搬的"]) == ["用户住无锡"]
    assert talked(["我daily用Trello管任务", "好的。", "最近迁到Asana了 Trello太乱"]) == ["用户现在使用 Asana"]
    assert talked(["我们团队用 Jira 排期", "好的。", "we're on Linear these days"]) == [
        "The user's team uses Linear these days"
    ]
    assert talked(["I manage a team of 4 designers", "OK.", "I said 4 but I meant 7, two joined"]) == [
        "The user manages a team of 7 designers"
    ]
    assert sorted(talked(["I'm 41 and want to start rowing", "Great.", "42 as of yesterday actually"])) == [
        "The user is 42",
        "The user wants to start rowing",
    ]
    assert talked(["我上晚班的，吃饭不规律", "可以备餐。", "下个月开始改早班了"]) == [
        "用户上早班的，吃饭不规律"
    ]
    assert talked(["我在测试组", "好的。", "我现在调到运维组了"]) == ["用户现在调到运维组"]
    assert talked(["I have physio every Monday at 4pm", "Noted.", "it's Friday not Monday, wrong week"]) == [
        "The user has physio every Friday at 4pm"
    ]


def test_a_value_not_said_as_new_or_of_another_kind_stays():
    # a number of another unit, a question, a name far from any word of change: the old value stays
    assert talked(["I'm about 70 kg, what tyre pressure?", "Around 80 psi.", "I ride 32mm tyres now"])[0] == (
        "The user is about 70 kg"
    )
    assert talked(["我们还在用 Vue 2，升级排不上", "可以。", "Vue 2 是不是还得用 Vuex"]) == [
        "用户还在使用 Vue 2，升级排不上"
    ]
    assert "The user is a vet in Leeds" in talked(
        ["I'm a vet in Leeds", "OK.", "Right, so what about the rota for next week"]
    )


def test_a_change_the_write_path_reads_as_one_slot_replaces_the_old_statement():
    # memory.classify's reading of a slot with a new value, in a message that says a change
    assert talked(["I have 1 cat", "Nice.", "oops typo, I have 2 cats"]) == ["The user has 2 cats"]


def test_an_old_value_named_as_over_leaves_the_statement_that_held_it():
    assert all(
        "思域" not in t for t in talked(["我开的是思域，保养多少钱", "几百块。", "以前是思域 现在开Model Y"])
    )
    assert "用户在学小提琴" not in talked(
        ["我在学小提琴，手指疼", "正常。", "小提琴早就不学了 现在学尤克里里"]
    )
    assert "用户希望助手以后回答用户都用列表" not in talked(
        ["以后回答我都用列表", "好的。", "不用列表了 手机上看着乱"]
    )
    assert talked(["我是素食者，怎么补铁", "多吃豆类。", "哦那是以前了 现在什么都吃"]) == []
    assert "The user drives a Ford Focus" not in talked(
        ["I drive a Ford Focus, is it cheap to insure?", "Usually.", "sold it last week, I cycle now"]
    )
    # a past said of something else stays ("以前住的" names no value of the statement)
    assert "用户是做美甲的" in talked(
        ["我是做美甲的，我住广州天河", "好的。", "哦不对，我搬到佛山了，天河那是以前住的"]
    )


def test_a_name_to_be_called_by_said_anew_replaces_the_old_one():
    assert talked(["以后叫我小周就行", "好的小周。", "还是叫我阿伟吧"]) == ["用户希望被称为阿伟"]
    assert talked(["叫我Tony就好", "好的Tony。", "call me 小东 instead 英文名太装"]) == ["用户希望被称为小东"]


def test_a_diet_taken_up_a_habit_given_up_and_a_promotion_in_chinese():
    assert talked(["I'm vegetarian, lunch ideas?", "Lentil soup.", "oh I went fully vegan last year"]) == [
        "The user is vegan"
    ]
    assert talked(["I vape most evenings, bad for my lungs?", "Yes.", "quit two months ago btw"]) == [
        "The user has quit vaping"
    ]
    assert talked(["我是班长，管八个人", "好的。", "上个月升了主管 现在管两个班"])[-1] == "用户是主管"
    assert "用户是班长" not in talked(["我是班长，管八个人", "好的。", "上个月升了主管 现在管两个班"])


def test_where_someone_of_the_users_moved_is_where_they_live():
    assert "用户的哥哥住在厦门" in talked(["我哥哥上个月搬去厦门了，我想去看他", "可以坐高铁。"])
    assert "The user's brother lives in Cork" in talked(
        ["My brother just moved to Cork, what should I bring him?"]
    )
    # not a company or a team
    assert "用户的公司住在苏州" not in talked(["我们公司刚搬到苏州，通勤好远"])


def test_a_text_to_edit_and_a_step_only_thought_about_are_not_the_users():
    assert (
        talked(["帮我看看这段文案：‘成都首店开业’", "挺好。", "把文案里的成都改成重庆 开业那天改成周六"])
        == []
    )
    assert talked(
        ["I'm a nurse in Leeds. Been thinking about quitting to become a teacher but honestly not sure yet"]
    ) == ["The user is a nurse in Leeds"]


def test_a_thing_once_avoided_said_fine_in_latin_letters_is_fine_after_all():
    assert talked(["我女儿allergic to milk，早餐吃什么", "豆浆。", "复查过了 现在milk没问题了"]) == []


def test_leftovers_of_a_change_or_a_slip_are_not_statements():
    assert talked(["我开的是朗逸，保养贵吗", "不贵。", "以前是朗逸 现在开小鹏 去年换的"]) == [
        "用户现在开小鹏"
    ]
    assert talked(["我房贷每月6200", "不低。", "等下 是2600 我把数字顺序弄反了"]) == ["用户房贷每月2600"]
    assert "Cancelled the user's membership" not in talked(
        ["I swim 3x a week", "Nice.", "no longer swimming, cancelled my membership, I row now"]
    )


def test_what_a_later_message_says_the_user_got_or_took_ends_what_was_said_before():
    assert "The user does not have a blender" not in talked(
        [
            "Smoothie recipes please, I don't have a blender",
            "Sure.",
            "got a new blender for my birthday so go ahead",
        ]
    )
    assert "The user is a freelance translator" not in talked(
        [
            "I'm a freelance translator, how do I price jobs?",
            "Per word.",
            "不用了 joined一家agency full-time了",
        ]
    )
    assert talked(["Call me Kate from now on", "Sure, Kate.", "Katherine please, Kate is for friends"]) == [
        "The user wants to be called Katherine"
    ]


def test_a_question_typed_on_after_a_statement_is_no_part_of_it():
    assert talked(["im in denver co whats a good hike"]) == ["The user is in denver co"]


def test_an_allergy_put_right_names_the_new_one():
    assert talked(["我对虾过敏，推荐几个菜", "好的。", "说错了 是螃蟹 虾我吃没事的"]) == ["用户对螃蟹过敏"]
    assert talked(["我乳糖不耐受，喝什么好", "豆浆。", "刚才说的乳糖不耐受不太对 查过了 是鸡蛋过敏"]) == [
        "用户对鸡蛋过敏"
    ]


def test_a_way_of_eating_said_with_now_is_written_in_the_language_of_the_old_one():
    assert talked(["我是vegan，推荐几个早餐", "燕麦。", "最近开始吃蛋了 so vegetarian now"]) == [
        "用户是vegetarian"
    ]


def test_what_is_so_now_said_without_a_subject_after_an_old_value_is_the_users():
    said = talked(["我在学吉他，每周练三次", "不错。", "吉他早就不学了 现在练架子鼓"])
    assert "用户现在练架子鼓" in said
    assert "用户在学吉他" not in said


def test_a_statement_written_anew_comes_from_the_message_that_says_it():
    messages = [
        {"role": "human", "content": "我对虾过敏，推荐几个菜", "message_id": "m1"},
        {"role": "ai", "content": "好的。"},
        {"role": "human", "content": "说错了 是螃蟹 虾我吃没事的", "message_id": "m2"},
        {"role": "ai", "content": "明白。"},
        {"role": "human", "content": "以后叫我小周就行", "message_id": "m3"},
        {"role": "ai", "content": "好的。"},
        {"role": "human", "content": "还是叫我阿伟吧", "message_id": "m4"},
    ]
    assert [(c.content, c.source_message_id) for c in extract_rules(messages)] == [
        ("用户对螃蟹过敏", "m2"),
        ("用户希望被称为阿伟", "m4"),
    ]


def test_characters_set_up_for_a_story_are_not_the_user():
    said = talked(
        [
            "接下来帮我写个悬疑故事，角色设定你先记住，后面都按这个写：男主周野，41岁，杭州人，退役消防员，养了条黑背。",
            "好的。",
        ]
    )
    assert said == []


def test_examples_in_brackets_are_left_out_not_split_into_fragments():
    said = talked(
        [
            "以后按这个背景回答：我在宁波做外贸，主要卖厨房小家电（电饭煲、榨汁机、空气炸锅这些），团队8个人。",
            "好。",
        ]
    )
    assert "用户主要卖厨房小家电" in said
    assert not [s for s in said if "榨汁机" in s or "（" in s or "）" in s]


def test_a_quick_intro_is_background_about_the_user():
    said = talked(["Hi，先quick intro一下：我是做iOS开发的，五年经验，base在新加坡", "好的。"])
    assert {"用户是做iOS开发的", "用户有五年经验", "用户常驻在新加坡"} <= set(said)
    said = talked(
        ["Quick intro: I'm a nurse in Leeds, two kids, allergic to penicillin.", "Nice to meet you!"]
    )
    assert {
        "The user is a nurse in Leeds",
        "The user has two kids",
        "The user is allergic to penicillin",
    } <= set(said)
    # an introduction to something else is no background of the user's
    assert not [s for s in talked(["Intro to my problem: the build fails on CI", "Ok."]) if "background" in s]


def test_the_user_s_lab_and_a_thing_broken_this_week():
    # a lab, a studio, a department said without its owner after the user's own clauses is the user's
    said = talked(["我在北大读PhD，做NLP方向，实验室有四张A100", "好的。"])
    assert "用户的实验室有四张A100" in said
    assert "用户的科室有六个医生" in talked(["我是牙医，科室有六个医生", "好。"])
    # something broken this week is the task's occasion, not a fact to keep
    assert talked(["公司的咖啡机坏了，帮我写个报修邮件", "好的。"]) == []
    assert talked(["店里的空调坏了，帮我写个报修邮件", "好的。"]) == []


def test_details_in_brackets_stay_with_their_statement_whole():
    # names, ages and kinds in brackets are what the statement is about: not split into fragments, not dropped
    assert "用户有两个孩子（女儿7岁、儿子4岁）" in talked(
        ["我有两个孩子（女儿7岁、儿子4岁），周末安排要适合小孩。", "好的。"]
    )
    assert "用户的妻子（林美玲，护士）在陈笃生医院上班" in talked(
        ["我老婆（林美玲，护士）在陈笃生医院上班", "好。"]
    )
    # typed with half-width brackets
    assert "用户的妻子(林美玲，护士)在陈笃生医院上班" in talked(
        ["我老婆(林美玲，护士)在陈笃生医院上班", "好。"]
    )
    assert "用户家养了两只猫(橘猫、狸花)" in talked(["我们家养了两只猫(橘猫、狸花)，帮我推荐猫粮", "好的。"])
    assert "The user has 2 kids (Maya, 7 and Eli, 4)" in talked(
        ["I have 2 kids (Maya, 7 and Eli, 4), so weekend plans need to be kid-friendly.", "Sure."]
    )
    assert "The user has two teenage boys (15 and 17)" in talked(
        ["I'm a widower, two teenage boys (15 and 17), and I drive long-haul.", "Got it."]
    )
    # a remark in brackets, or a clause of its own, is still left out
    said = talked(["I have two cats (they're sitting on my keyboard rn)", "Cute!"])
    assert "The user has two cats" in said and not [s for s in said if "(" in s]
    said = talked(["I play bass in a cover band on weekends (day job's HVAC tech)", "Nice."])
    assert not [s for s in said if "(" in s]


def test_where_the_user_sits_how_they_feel_and_how_long_they_wait_this_minute_are_not_kept():
    assert talked(["我现在蹲在地铁站出口，刚下班，好饿", "吃点东西吧。"]) == []
    assert talked(["我现在 super 累 明天再说吧", "好的。"]) == []
    assert talked(["at the passport office, been waiting 3 hours, entertain me", "Sure."]) == []


def test_a_statement_cut_before_what_it_says_is_not_kept():
    assert "The user can't" not in talked(
        ["my landlord wants me to sign for two more years but i can't — my visa ends in May", "Ok."]
    )
    assert "用户每天都得在" not in talked(["我自己每天都得在 不用排我", "好。"])


def test_a_number_put_right_in_words_or_with_digits_said_the_wrong_way_round_replaces_the_old_one():
    said = talked(
        ["my dog Pepper has arthritis, she's eleven", "Poor Pepper.", "sorry, she's thirteen not eleven"]
    )
    assert "The user's dog is thirteen" in said
    assert not [s for s in said if "eleven" in s]
    said = talked(["我今年36岁，想买份重疾险", "可以。", "哎呀打反了 是63岁"])
    assert "用户今年63岁" in said
    assert "用户今年36岁" not in said


def test_punctuation_said_aloud_ends_a_sentence():
    said = talked(
        ["i work nights at a bakery and my old alarm clock is not loud enough anymore question mark", "Ok."]
    )
    assert said == ["The user works nights at a bakery"]
