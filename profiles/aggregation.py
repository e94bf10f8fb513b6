"""Layer 2 -> layer 3 of seed 000: rebuild profiles from active memory items, by rules (Chinese + English).

The rules read each item's type and text:
- preference -> communication_style, response_format, language_preference (the newest clear signal wins)
- skill      -> programming_languages (known names) and expertise_areas (what is named after
                "familiar with" / "熟悉" ..., or the short item itself)
- habit      -> frequently_used_tools (known tool names, or what follows "uses" / "常用" ...)
- fact, core -> profession ("I am a backend engineer", "用户是前端工程师") and username ("名字叫张三", "用户叫王丹")
- project scope: constraint -> constraints; decision -> key_decisions {decision, reason, date};
  context -> current_phase (the newest naming a phase, never a ticket or a bug) and project_goal
  ("goal" / "目标"); preference / habit -> team_conventions; every known technology named in the
  project's items -> tech_stack, except an option a decision turned down ("over X", "而不是 X").
Values are whole memories or whole parts (never a cut word); each field records the ids of the
memories it came from (profile.sources).

When an LLM is configured (memory.llm, optional) it may refine the rule result; any failure keeps
the rule result. Fields a person edited are never overwritten (see services._apply).
"""

from __future__ import annotations

import json
import logging
import re

from django.db.models import Q
from django.utils import timezone

from core.text import CJK
from memory.models import MemoryItem, Scope, Status
from projects.models import Project

from .models import ProjectProfile, UserProfile
from .selectors import PROJECT_FIELDS, USER_FIELDS
from .services import project_profile_aggregate_save, user_profile_aggregate_save

log = logging.getLogger(__name__)

# ---- vocabularies ---------------------------------------------------------------------------------

_A = r"(?<![A-Za-z0-9_+#.])"  # ASCII word boundaries: \b would treat CJK letters as word characters
_Z = r"(?![A-Za-z0-9_+#])"

PROGRAMMING_LANGUAGES = {
    "Python": rf"{_A}python{_Z}",
    "JavaScript": rf"{_A}(?:javascript|js){_Z}",
    "TypeScript": rf"{_A}(?:typescript|ts){_Z}",
    "Go": rf"{_A}(?:golang|Go(?=语言|\s|$|[,，、。.]))",
    "Rust": rf"{_A}rust{_Z}",
    "Java": rf"{_A}java{_Z}",
    "Kotlin": rf"{_A}kotlin{_Z}",
    "Swift": rf"{_A}swift{_Z}",
    "C++": rf"{_A}(?:c\+\+|cpp){_Z}",
    "C#": rf"{_A}c#",
    "C": rf"{_A}C(?:语言|{_Z}(?!\+|#))",
    "Ruby": rf"{_A}ruby{_Z}",
    "PHP": rf"{_A}php{_Z}",
    "Scala": rf"{_A}scala{_Z}",
    "SQL": rf"{_A}(?:sql|plpgsql){_Z}",
    "R": rf"{_A}R(?:语言|{_Z})(?=\s|$|[,，、。])",
    "Haskell": rf"{_A}haskell{_Z}",
    "Elixir": rf"{_A}elixir{_Z}",
    "Dart": rf"{_A}dart{_Z}",
    "Lua": rf"{_A}lua{_Z}",
    "Shell": rf"{_A}(?:bash|shell|zsh scripting){_Z}",
    "Julia": rf"{_A}julia{_Z}",
    "Clojure": rf"{_A}clojure{_Z}",
    "OCaml": rf"{_A}ocaml{_Z}",
    "Zig": rf"{_A}zig{_Z}",
    "Perl": rf"{_A}perl{_Z}",
    "MATLAB": rf"{_A}matlab{_Z}",
}
_CASE_SENSITIVE = {"Go", "C", "R"}
_LANG_RES = {
    name: re.compile(pattern, 0 if name in _CASE_SENSITIVE else re.I)
    for name, pattern in PROGRAMMING_LANGUAGES.items()
}

TOOLS = [
    "VS Code",
    "Vim",
    "Neovim",
    "Emacs",
    "IntelliJ IDEA",
    "PyCharm",
    "WebStorm",
    "Xcode",
    "Android Studio",
    "Sublime Text",
    "Cursor",
    "Git Flow",
    "Git",
    "GitHub",
    "GitLab",
    "Docker",
    "Kubernetes",
    "kubectl",
    "Helm",
    "Terraform",
    "Ansible",
    "tmux",
    "zsh",
    "iTerm2",
    "Homebrew",
    "Jupyter",
    "Postman",
    "Figma",
    "Notion",
    "Slack",
    "Jira",
    "Confluence",
    "Linear",
    "npm",
    "pnpm",
    "yarn",
    "Poetry",
    "uv",
    "pytest",
    "Webpack",
    "Vite",
    "Excel",
    "Copilot",
    "ChatGPT",
    "Claude",
    "Grafana",
    "Sentry",
]
_TOOL_ALIASES = {"vscode": "VS Code", "visual studio code": "VS Code", "nvim": "Neovim", "k8s": "Kubernetes"}

TECHNOLOGIES = [
    "Django",
    "Flask",
    "FastAPI",
    "Celery",
    "React",
    "Vue",
    "Angular",
    "Svelte",
    "Next.js",
    "Nuxt",
    "Remix",
    "Node.js",
    "Express",
    "Spring",
    "Rails",
    "Laravel",
    "PostgreSQL",
    "MySQL",
    "SQLite",
    "MongoDB",
    "Redis",
    "Elasticsearch",
    "Kafka",
    "RabbitMQ",
    "pgvector",
    "GraphQL",
    "gRPC",
    "Docker",
    "Kubernetes",
    "Terraform",
    "AWS",
    "GCP",
    "Azure",
    "Tailwind",
    "HTMX",
    "TensorFlow",
    "PyTorch",
    "LangChain",
    "LangGraph",
]
_TECH_ALIASES = {"postgres": "PostgreSQL", "nextjs": "Next.js", "node": "Node.js", "k8s": "Kubernetes"}


def _term_re(term: str) -> re.Pattern:
    return re.compile(_A + re.escape(term) + _Z, re.I)


_TOOL_RES = [(name, _term_re(name)) for name in TOOLS] + [(v, _term_re(k)) for k, v in _TOOL_ALIASES.items()]
_TECH_RES = [(name, _term_re(name)) for name in TECHNOLOGIES] + [
    (v, _term_re(k)) for k, v in _TECH_ALIASES.items()
]

STYLE_RULES = [
    # Order matters: the first matching rule of an item decides.
    ("technical", re.compile(r"technical|jargon|技术性|技术细节|专业术语|底层原理", re.I)),
    (
        "detailed",
        re.compile(
            r"detailed|in[- ]depth|thorough|step[- ]by[- ]step|explain (?:everything|fully)|详细|深入|全面|展开|一步一步",
            re.I,
        ),
    ),
    (
        "concise",
        re.compile(
            r"concise|brief|short answers?|terse|to the point|succinct|简洁|简短|简明|精简|直接给结论|别啰嗦",
            re.I,
        ),
    ),
]
FORMAT_RULES = [
    (
        "plain",
        re.compile(
            r"plain text|no markdown|without markdown|不要\s*markdown|不用\s*markdown|纯文本|不要格式", re.I
        ),
    ),
    (
        "code",
        re.compile(
            r"code only|just (?:the )?code|only (?:the )?code|code blocks? only|nothing but code|只要代码|只给代码|"
            r"直接给代码|只需要代码|不要解释.{0,4}代码",
            re.I,
        ),
    ),
    ("markdown", re.compile(r"markdown|bullet points?|tables?|列表|表格|标题分段", re.I)),
]
LANGUAGE_RULES = [
    ("zh-CN", re.compile(r"chinese|mandarin|中文|汉语|普通话|简体", re.I)),
    ("ja", re.compile(r"japanese|日语|日文|日本語", re.I)),
    ("ko", re.compile(r"korean|韩语|韩文|한국어", re.I)),
    ("fr", re.compile(r"french|法语|français", re.I)),
    ("de", re.compile(r"german|德语|deutsch", re.I)),
    ("es", re.compile(r"spanish|西班牙语|español", re.I)),
    ("en", re.compile(r"english|英文|英语", re.I)),
]
# A language signal only counts when the item talks about answering / writing in it.
_LANGUAGE_CUE = re.compile(
    r"answer|reply|respond|response|write|speak|talk|language|in \w+$|用|回答|回复|交流|沟通|输出|语言|写",
    re.I,
)

_SKILL_CUES = re.compile(
    r"(?:familiar with|proficient (?:in|with)|expert (?:in|at|with)|experienced (?:in|with)|good at|skilled in|"
    r"knows|knowledge of|works? with|熟悉|精通|擅长|熟练掌握|掌握|了解|会用|会)\s*(.+)",
    re.I,
)
_SPLIT = re.compile(r"\s*(?:,|，|、|/|;|；|\band\b|\bor\b|和|及|以及|与)\s*", re.I)
_HABIT_CUES = re.compile(
    r"(?:usually uses?|often uses?|uses?|prefers? using|works? in|常用|经常用|习惯用|习惯使用|一般用|使用|用)\s*(.+)",
    re.I,
)
_PROFESSION = [
    re.compile(
        r"(?:^|\b)(?:i am|i'm|user is|he is|she is|they are|works as|working as|profession(?: is)?:?|job(?: is)?:?)"
        r"\s+(?:an?\s+)?(.+)",
        re.I,
    ),
    re.compile(r"(?:用户|我|他|她)?(?:是|是一名|是一位|是个|职业是|担任|从事)\s*(?:一名|一位|一个|个)?(.+)"),
]
_ROLE_WORDS = re.compile(
    r"engineer|developer|programmer|designer|manager|scientist|analyst|researcher|architect|teacher|student|"
    r"doctor|lawyer|consultant|founder|writer|devops|sre|administrator|工程师|开发|程序员|设计师|经理|产品|"
    r"科学家|分析师|研究员|架构师|老师|教师|学生|医生|律师|运维|顾问|创始人|作家|编辑",
    re.I,
)
_USERNAME = [
    re.compile(
        r"(?:my name is|user'?s name is|name is|is called|goes by)\s+([A-Z][\w.-]*(?:\s+[A-Z][\w.-]*)?)", re.I
    ),
    re.compile(f"(?:名字叫|名字是|叫做|我叫|用户叫|姓名是|姓名)\\s*([{CJK}A-Za-z·]{{1,20}})"),
]
_GOAL = re.compile(r"(?:goal|aim|objective|mission|目标|宗旨|目的)\s*(?:is|:|：|是|为)?\s*(.+)", re.I)
_REASON = re.compile(
    r"\s*(?:,|，|;|；)?\s*(?:\b(?:because|due to|reason:)(?![A-Za-z])|理由是|原因是|因为|由于)\s*(.+)$", re.I
)
# The option a decision turned down: "X over Y", "X instead of Y", "选择了 X 而不是 Y", "放弃了 Y".
_REJECTED = re.compile(
    r"(?:\b(?:over|instead of|rather than|not|versus|vs\.?|dropped|rejected|replac(?:ed|ing))\b|而不是|而非|不用|不选|"
    r"没选|弃用|放弃了?|替换掉|换掉|取代了?)\s*([^，,;；。.（(]+)",
    re.I,
)
# A ticket or a bug is not a phase ("修复 #123 登录报错", "BUG-42: crash on save").
_TICKET = re.compile(
    r"(?<![A-Za-z])[A-Z][A-Z0-9]+-\d+|#\d+|\b(?:bug|issue|ticket|hotfix|crash(?:es)?|fix(?:ed|ing)?|error)\b|"
    r"报错|缺陷|工单|故障|修复|崩溃",
    re.I,
)
_PHASE = re.compile(
    r"\b(?:phase|stage|milestone|sprint|alpha|beta|mvp|pilot|launch(?:ed)?|release|prototype|maintenance|"
    r"production|development|testing)\b|阶段|里程碑|迭代|内测|公测|上线|开发中|测试中|原型|维护期|试点|在开发|冲刺",
    re.I,
)
_TRIM = " \t.。!！,，;；:：\"'“”「」"


def _clean(text: str) -> str:
    return text.strip(_TRIM)


def _shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a sentence, clause or word boundary (a word is never cut)."""
    text = _clean(text)
    if len(text) <= limit:
        return text
    head = text[:limit]
    for pattern in (r"[。！？.!?](?=\s|$|[^\x00-\x7f])", r"[，,；;：:、]", r"\s"):
        cuts = [m.end() for m in re.finditer(pattern, head)]
        if cuts and cuts[-1] > limit // 3:
            return _clean(head[: cuts[-1]]) + "…"
    # CJK text without a boundary: characters are words of their own; Latin runs are not cut.
    m = re.search(r"[A-Za-z0-9_]+$", head)
    if m and m.start() > 0 and len(text) > limit and re.match(r"[A-Za-z0-9_]", text[limit]):
        head = head[: m.start()]
    return _clean(head) + "…"


def _rejected_terms(text: str) -> str:
    """The parts of a text that name a turned-down option (their technologies are not the stack)."""
    return " ".join(m.group(1) for m in _REJECTED.finditer(text))


class _Sources:
    """field -> the ids of the memories it came from (shown on the profile pages)."""

    def __init__(self):
        self.ids: dict[str, list[int]] = {}

    def add(self, field: str, item) -> None:
        pk = getattr(item, "pk", None)
        if pk is not None and pk not in self.ids.setdefault(field, []) and len(self.ids[field]) < 20:
            self.ids[field].append(pk)


def _add(out: list, value: str, limit: int = 20) -> None:
    value = _clean(value)
    if value and len(out) < limit and value.lower() not in {v.lower() for v in out}:
        out.append(value)


# ---- user profile ---------------------------------------------------------------------------------


def _first_rule(rules, text: str) -> str | None:
    for value, pattern in rules:
        if pattern.search(text):
            return value
    return None


def user_values(items: list[MemoryItem]) -> dict:
    """The user-profile fields the rules derive from items (newest first); undecided fields are absent."""
    return user_values_with_sources(items)[0]


def user_values_with_sources(items: list[MemoryItem]) -> tuple[dict, dict]:
    """(fields, field -> ids of the memories each came from)."""
    out: dict = {}
    src = _Sources()
    expertise: list[str] = []
    languages: list[str] = []
    tools: list[str] = []
    for item in items:
        text = item.content
        kind = item.memory_type
        if kind in ("preference", "core"):
            if "communication_style" not in out and (style := _first_rule(STYLE_RULES, text)):
                out["communication_style"] = style
                src.add("communication_style", item)
            # "代码示例用 Python" names a language for code, not a response format.
            names_language = any(p.search(text) for p in _LANG_RES.values())
            fmt = _first_rule(FORMAT_RULES, text)
            if "response_format" not in out and fmt and not (fmt == "code" and names_language):
                out["response_format"] = fmt
                src.add("response_format", item)
            if "language_preference" not in out and _LANGUAGE_CUE.search(text):
                if lang := _first_rule(LANGUAGE_RULES, text):
                    out["language_preference"] = lang
                    src.add("language_preference", item)
        if kind == "skill":
            for name, pattern in _LANG_RES.items():
                if pattern.search(text):
                    _add(languages, name)
                    src.add("programming_languages", item)
            match = _SKILL_CUES.search(text)
            phrase = match.group(1) if match else (text if len(text) <= 40 else "")
            for part in _SPLIT.split(_clean(phrase)):
                if (
                    part
                    and len(part) <= 40
                    and not any(p.fullmatch(_clean(part)) for p in _LANG_RES.values())
                ):
                    _add(expertise, part)
                    src.add("expertise_areas", item)
        if kind in ("habit", "preference"):
            turned_down = _rejected_terms(text)
            found = [
                name
                for name, pattern in _TOOL_RES
                if pattern.search(text) and not pattern.search(turned_down)
            ]
            found = [n for n in found if not any(n != m and n in m for m in found)]  # "Git" inside "Git Flow"
            for name in found:
                _add(tools, name)
                src.add("frequently_used_tools", item)
            if kind == "habit" and not found and (match := _HABIT_CUES.search(text)):
                tool = _SPLIT.split(_clean(match.group(1)))[0]
                if 0 < len(tool) <= 30:
                    _add(tools, tool)
                    src.add("frequently_used_tools", item)
        if kind in ("fact", "core"):
            if "profession" not in out:
                for pattern in _PROFESSION:
                    match = pattern.search(text)
                    role = _clean(re.split(r"[，,;；。]", match.group(1))[0]) if match else ""
                    if role and _ROLE_WORDS.search(role) and len(role) <= 60:
                        out["profession"] = role
                        src.add("profession", item)
                        break
            if "username" not in out:
                for pattern in _USERNAME:
                    if match := pattern.search(text):
                        out["username"] = _clean(match.group(1))
                        src.add("username", item)
                        break
    if expertise:
        out["expertise_areas"] = expertise
    if languages:
        out["programming_languages"] = languages
    if tools:
        out["frequently_used_tools"] = tools
    return out, {k: v for k, v in src.ids.items() if k in out}


# ---- project profile ------------------------------------------------------------------------------


def _date_of(item: MemoryItem) -> str:
    when = item.occurred_at or item.valid_from or item.created_at or timezone.now()
    return timezone.localtime(when).date().isoformat()


def project_values(items: list[MemoryItem]) -> dict:
    """The project-profile fields the rules derive from the project's items (newest first)."""
    return project_values_with_sources(items)[0]


def project_values_with_sources(items: list[MemoryItem]) -> tuple[dict, dict]:
    """(fields, field -> ids of the memories each came from). Every value is a whole memory or a whole
    part of one (split at a clause or reason marker, never inside a word); a decision's turned-down
    option is not the stack; a ticket or bug is not the phase."""
    out: dict = {}
    src = _Sources()
    constraints: list[str] = []
    decisions: list[dict] = []
    conventions: list[str] = []
    stack: list[str] = []
    phase_fallback = None
    for item in items:
        text = item.content
        kind = item.memory_type
        turned_down = _rejected_terms(text)
        for name, pattern in _TECH_RES + [(n, p) for n, p in _LANG_RES.items()]:
            if pattern.search(text) and not pattern.search(turned_down):
                _add(stack, name, limit=30)
                src.add("tech_stack", item)
        if kind == "constraint":
            _add(constraints, text, limit=50)
            src.add("constraints", item)
        elif kind == "decision":
            match = _REASON.search(text)
            decision = _clean(text[: match.start()]) if match else _clean(text)
            decisions.append(
                {
                    "decision": decision,
                    "reason": _clean(match.group(1)) if match else "",
                    "date": _date_of(item),
                }
            )
            src.add("key_decisions", item)
        elif kind in ("preference", "habit"):
            _add(conventions, text, limit=30)
            src.add("team_conventions", item)
        if (
            kind in ("context", "fact", "core")
            and "project_goal" not in out
            and (match := _GOAL.search(text))
        ):
            out["project_goal"] = _shorten(match.group(1), 500)
            src.add("project_goal", item)
        elif kind == "context" and "current_phase" not in out and not _TICKET.search(text):
            if _PHASE.search(text):
                out["current_phase"] = _shorten(text, 200)
                src.add("current_phase", item)
            elif phase_fallback is None:
                phase_fallback = item
    if "current_phase" not in out and phase_fallback is not None:
        out["current_phase"] = _shorten(phase_fallback.content, 200)
        src.add("current_phase", phase_fallback)
    if constraints:
        out["constraints"] = constraints
    if decisions:
        out["key_decisions"] = sorted(decisions[:50], key=lambda d: d["date"])
    if conventions:
        out["team_conventions"] = conventions
    if stack:
        out["tech_stack"] = stack
    return out, {k: v for k, v in src.ids.items() if k in out}


# ---- rebuilding -----------------------------------------------------------------------------------


def _active(qs):
    now = timezone.now()
    return (
        qs.filter(status=Status.ACTIVE)
        .filter(Q(expires_at=None) | Q(expires_at__gt=now))
        .order_by("-updated_at", "-id")
    )


def _complete(values: dict, names: list[str]) -> dict:
    """Fields the rules no longer find are emptied (their memories are gone), so the profile follows its items."""
    empty = {name: [] if name in _LIST_NAMES else "" for name in names}
    return {**empty, **values}


_LIST_NAMES = {
    "expertise_areas",
    "programming_languages",
    "frequently_used_tools",
    "constraints",
    "key_decisions",
    "team_conventions",
    "tech_stack",
}
# Fields the rules never derive: left as they are (people or the LLM fill them).
_USER_RULE_FIELDS = [
    "username",
    "profession",
    "communication_style",
    "response_format",
    "language_preference",
    "expertise_areas",
    "programming_languages",
    "frequently_used_tools",
]


_REFINE_PROMPT = (
    "You maintain a {kind} profile built from memory items. Rules produced the draft below. "
    "Correct or complete it using only what the memories say. Reply with one JSON object holding only "
    "the fields you would change, from: {fields}. Allowed values: communication_style concise|detailed|"
    "technical, response_format markdown|plain|code, language_preference a language tag (zh-CN, en, ja); "
    "list fields are lists of short strings; key_decisions is a list of {{decision, reason, date}}."
)


def _refine(kind: str, values: dict, items: list[MemoryItem], org) -> dict:
    """Let the org's chat model (memory.llm) refine the rule result; anything wrong keeps the rules."""
    if not items:
        return values
    try:
        from memory.llm import llm_for
    except ImportError:  # the LLM client is optional
        return values
    client = llm_for(org)
    if client is None:
        return values
    from .api.serializers import ProjectProfileInputSerializer, UserProfileInputSerializer

    names = USER_FIELDS if kind == "user" else PROJECT_FIELDS
    memories = "\n".join(f"- [{i.memory_type}] {i.content}" for i in items[:200])
    messages = [
        {"role": "system", "content": _REFINE_PROMPT.format(kind=kind, fields=", ".join(names))},
        {
            "role": "user",
            "content": f"Draft: {json.dumps(values, ensure_ascii=False)}\nMemories:\n{memories}",
        },
    ]
    try:
        reply = json.loads(client.chat(messages, json_mode=True))
    except Exception as exc:  # noqa: BLE001 - LLMError, bad JSON: the rule result stands
        log.warning("profile refinement failed, keeping the rule result: %s", type(exc).__name__)
        return values
    if not isinstance(reply, dict):
        return values
    serializer_class = UserProfileInputSerializer if kind == "user" else ProjectProfileInputSerializer
    checked = serializer_class(data={k: v for k, v in reply.items() if k in names})
    if not checked.is_valid():
        log.warning("profile refinement returned invalid fields, keeping the rule result")
        return values
    return {**values, **checked.validated_data}


def user_profile_rebuild(*, org, user_id: str):
    """Rebuild a subject's profile from their active user-scope items (skill memories excluded)."""
    items = list(_active(MemoryItem.objects.filter(org=org, scope=Scope.USER, user_id=user_id, skill="")))
    if not items and not UserProfile.objects.filter(org=org, user_id=user_id).exists():
        return None, {}  # nothing to say, and no row to create (e.g. the subject was just forgotten)
    ruled, sources = user_values_with_sources(items)
    values = _refine("user", ruled, items, org)
    values = {
        k: v for k, v in _complete(values, _USER_RULE_FIELDS).items() if k in _USER_RULE_FIELDS or k in values
    }
    return user_profile_aggregate_save(
        org=org, user_id=user_id, values=values, sources=_kept_sources(ruled, values, sources)
    )


def _kept_sources(ruled: dict, values: dict, sources: dict) -> dict:
    """The rules' sources of the fields whose value the rules decided (a field the model changed has none)."""
    return {k: ids for k, ids in sources.items() if values.get(k) == ruled.get(k) and values.get(k)}


def project_profile_rebuild(*, project: Project):
    """Rebuild a project's profile from its active project-scope items."""
    items = list(
        _active(MemoryItem.objects.filter(org_id=project.org_id, scope=Scope.PROJECT, project=project))
    )
    if not items and not ProjectProfile.objects.filter(project=project).exists():
        return None, {}
    ruled, sources = project_values_with_sources(items)
    values = _refine("project", ruled, items, project.org)
    return project_profile_aggregate_save(
        project=project,
        values=_complete(values, PROJECT_FIELDS),
        sources=_kept_sources(ruled, values, sources),
    )
