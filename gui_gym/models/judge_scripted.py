"""Model-free ProRe components: a rule-based reasoner, a scripted evaluator that reads app
screens by navigating them, rule-based claims, claim filter and chain-of-claims judge.

They need no model, run in microseconds, and are deterministic, so tests and the benchmark
(``benchmarks/judge_accuracy.py``) can measure what probing adds over judging the
trajectory alone. They are heuristics over text, not a model of any app:

* everything starts from :func:`analyse_task`, which reads an instruction (or a probing
  goal) into an intent (``create``, ``delete``, ``move``, ``toggle``, ``answer``,
  ``draft``), the strings the outcome must show (quoted text, names, file names, phone
  numbers, amounts, ``key: value`` fields), switch states, and keywords;
* the :class:`ScriptedEvaluator` sees only :class:`~gui_gym.core.ui.UITree` screens through a
  :class:`~gui_gym.models.judge.ProbeSession`. It opens the app the goal names from the
  launcher, climbs to the app's top screen, then follows the elements whose labels match
  the goal's strings and keywords, types into a search field when one is offered, and
  scrolls; it never presses controls that change data (delete, save, send, toggles, ...);
* claims carry a machine-readable ``kind`` and ``values`` beside their words, which the
  rule-based filter and judge read.

What "displayed" means matters: a value sitting in an editable field is a draft, not a
stored record, unless the evaluator itself opened that screen from a list item (Markor's
editor shows a saved note's text in an editable field). The "typed but never saved" failure
that a trajectory-only judge misses is exactly a draft the probe cannot find stored.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import UIElement, UITree
from gui_gym.models.judge import (
    MAX_CLAIMS,
    MAX_SUB_GOALS,
    Claim,
    ClaimRelation,
    FilterDecision,
    JudgeReport,
    ProbePlan,
    ProbeSession,
    Trace,
    Verdict,
)

__all__ = [
    "RULE_PROMPT_GOAL",
    "RuleClaimExtractor",
    "RuleClaimFilter",
    "RuleJudge",
    "RulePromptReasoner",
    "RuleRawJudge",
    "RuleTrajectoryJudge",
    "ScriptedEvaluator",
    "ScriptedReasoner",
    "TaskAnalysis",
    "analyse_task",
    "normalize",
    "rule_expectation",
    "scripted_components",
    "text_contains",
]

MAX_GOAL_WORDS = 20
"""ProRe App. E.1: a probing goal is at most 20 words."""

# ------------------------------------------------------------------------------ text


def _word_list(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _word_set(text: str) -> frozenset[str]:
    return frozenset(_word_list(text))


_STOPWORDS = _word_set(
    """a an the and or of to in on at for from with by into onto about as is are was were be
    been it its this that these those my your me i you we our their them they he she his her
    there here then than so if not no do does did done any all each every some one two
    which what who whom when where why how many much more most also just only very can
    could should would will shall may might must have has had using use via app apps"""
)
_GENERIC_WORDS = _word_set(
    """find check open show verify confirm look see go get make sure whether still exists
    exist screen page list lists item items value values status state current currently
    following details detail search article access learn please task new create add"""
)
_DESTRUCTIVE = _word_set(
    """delete remove save send ok confirm discard clear reset erase create new add start
    stop pause resume record capture shutter take done apply share bookmark yes no rename
    move copy paste cut submit buy install uninstall update edit mark archive reply call
    dial lap play"""
)
_SEARCH_WORDS = ("search",)
_DELETING = frozenset({"delete", "remove", "trash", "erase", "discard"})


def normalize(text: str) -> str:
    """Lower-case, digits' thousands separators dropped, every other non-alphanumeric run a
    single space: ``"$1,231.24 · Food"`` becomes ``"1231 24 food"``."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text.lower())
    # "320.10" and "$320.1" are the same amount; "5.00" is "5"
    text = re.sub(
        r"\b(\d+)\.(\d*?)0+\b",
        lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""),
        text,
    )
    return " ".join(re.findall(r"[0-9a-z]+", text))


def _compact(text: str) -> str:
    return normalize(text).replace(" ", "")


def text_contains(haystack: str, needle: str) -> bool:
    """Whether ``needle`` occurs in ``haystack`` as whole words, after :func:`normalize`."""
    n = normalize(needle)
    if not n:
        return False
    return f" {n} " in f" {normalize(haystack)} "


def _stem(word: str) -> str:
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    for suffix in ("s", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in normalize(text).split() if w not in _STOPWORDS}


def _content_stems(text: str) -> list[str]:
    out: list[str] = []
    for w in normalize(text).split():
        if w in _STOPWORDS or w in _GENERIC_WORDS or len(w) < 2:
            continue
        s = _stem(w)
        if s not in out:
            out.append(s)
    return out


# ------------------------------------------------------------------ reading instructions

_QUOTED = re.compile(
    r"\"([^\"]{2,}?)\"|“([^”]{2,}?)”|(?:(?<=\s)|(?<=^)|(?<=[(:]))'([^']{2,}?)'(?=[\s.,;:!?)]|$)"
)
_FILE = re.compile(
    r"\b[\w-]+\.(?:md|txt|jpg|jpeg|png|gif|mp3|mp4|m4a|wav|pdf|csv|docx?|html?|json)\b", re.I
)
_PHONE = re.compile(r"\+\d{7,15}\b|\b\d{3}-\d{3}-\d{4}\b")
_MONEY = re.compile(r"\$\d[\d,]*(?:\.\d+)?")
_NAMED = re.compile(r"\b(?:named|titled|called)\s+([^\s,;\"']+?)(?=[.,;]?(?:\s|$))")
_CATEGORY = re.compile(r"\bcategory\s+([A-Z][\w&']*(?:\s+(?:and\s+)?[A-Z][\w&']*)*)")
_PAYLOAD = re.compile(
    r"\b(?:message|text|content)\s*:\s*(.+?)(?:\.\s|\.?\s+in\s+[A-Z][\w ]+$|\.?$)", re.I | re.M
)
_FOLLOWING = re.compile(r"\bfollowing\s+[\w ]+?:[ \t]*(\S.*?)(?:\.\s|\.?[ \t]*$)", re.I | re.M)
_APP_WORDS = frozenset({"in", "using", "with", "into", "from", "on"})
_EDIT_PAYLOAD = re.compile(
    r"\bto the (?:top|bottom|end|beginning) of (?:the )?(?:note|file)\s+(.+?)\s*$", re.I | re.M
)
_FOLDER = re.compile(
    r"\b(?:in|from|to|into|the)\s+(?:the\s+)?([A-Z][\w-]*)\s+folder\b|\bfolder\s+([A-Z][\w-]*)"
)
_ISO_DATE = re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)\b")
_MONTHS = _word_list(
    "January February March April May June July August September October November December"
)
_KEY_VALUE = re.compile(r"^\s*([A-Za-z_][\w ]{0,30}):\s*(.+?)\s*$", re.M)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+")
_APP_CUE = re.compile(r"\b(?:in|using|with|into|from|on)\s+(?:the\s+)?$", re.I)
_QUESTION_START = re.compile(
    r"^(?:what|which|who|whom|when|where|how|do|does|did|is|are|was|were|have|has)\b", re.I
)
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+|\n")
_TOGGLE_NAMES = {
    "wifi": "wifi",
    "wi fi": "wifi",
    "bluetooth": "bluetooth",
    "airplane": "airplane mode",
    "airplane mode": "airplane mode",
    "do not disturb": "do not disturb",
    "brightness": "brightness",
}
_TOGGLE = re.compile(
    r"\b(?:turn|switch)\s+(on|off)\s+(?:the\s+)?([\w-]+(?:\s+mode)?)"
    r"|\b(?:turn|switch)\s+(?:the\s+)?([\w-]+(?:\s+mode)?)\s+(on|off)\b"
    r"|\b(enable|disable)\s+(?:the\s+)?([\w-]+(?:\s+mode)?)"
    r"|\b(brightness)\s+to\s+the\s+(max|min)"
    r"|\b([\w-]+(?:\s+mode)?)\s+is\s+(on|off|max|min)\b",
    re.I,
)


@dataclass(frozen=True)
class TaskAnalysis:
    """What an instruction or probing goal asks for, as far as rules can tell.

    Attributes:
        intent: ``answer`` (a question), ``delete``, ``move``, ``toggle``, ``draft`` (fill a
            form but do not save), or ``create`` (everything else: create, edit, open, go to).
        targets: Strings the outcome must show (or, for ``delete``, must no longer show).
        toggles: ``(setting, state)`` pairs, state ``on``/``off``/``max``/``min``.
        keywords: Content-word stems of the last clause (what the task finally asks).
        question: The question, for ``answer``.
        count_of: Stem of what a "how many ..." question counts.
        destination: Folder a ``move`` ends in.
    """

    intent: str
    targets: tuple[str, ...] = ()
    toggles: tuple[tuple[str, str], ...] = ()
    keywords: tuple[str, ...] = ()
    question: str = ""
    count_of: str = ""
    destination: str = ""
    places: tuple[str, ...] = ()


def date_phrase(iso: str) -> str:
    """``"2023-10-20"`` as ``"October 20"`` (how calendar screens name days)."""
    m = _ISO_DATE.search(iso)
    if not m or not 1 <= int(m.group(2)) <= 12:
        return ""
    return f"{_MONTHS[int(m.group(2)) - 1]} {int(m.group(3))}"


def _add(out: list[str], value: str) -> None:
    value = value.strip().strip(".,;:").strip()
    if len(normalize(value)) < 2:
        return
    key = normalize(value)
    for existing in out:
        if normalize(existing) == key:
            return
    out.append(value)


def _quoted(text: str) -> list[str]:
    return [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]


def _last_clause(text: str) -> str:
    sentences = [s for s in re.split(r"(?<=[.?!])\s+|\n", text.strip()) if s.strip()]
    if not sentences:
        return text
    last = sentences[-1]
    if len(normalize(last).split()) <= 2 and len(sentences) > 1:
        last = sentences[-2] + " " + last
    return last


def _toggles(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for m in _TOGGLE.finditer(text):
        g = m.groups()
        if g[0]:
            name, state = g[1], g[0]
        elif g[2]:
            name, state = g[2], g[3]
        elif g[4]:
            name, state = g[5], "on" if g[4].lower() == "enable" else "off"
        elif g[6]:
            name, state = g[6], g[7]
        else:
            name, state = g[8], g[9]
        canonical = _TOGGLE_NAMES.get(normalize(name))
        if canonical is not None and (canonical, state.lower()) not in out:
            out.append((canonical, state.lower()))
    return out


MAX_ANALYSED_LENGTH = 4096
"""Characters of an instruction or goal :func:`analyse_task` reads (the envs' instruction
limit). Some of its patterns are quadratic on adversarial text; the cap bounds one call to
well under a second (issue 16)."""


def analyse_task(text: str) -> TaskAnalysis:
    """Read an instruction or probing goal into a :class:`TaskAnalysis` (rules only).

    Args:
        text: The instruction or goal (its first :data:`MAX_ANALYSED_LENGTH` characters).

    Returns:
        The analysis; ``targets`` in order of importance (quoted strings and names first).
    """
    return _analyse_task(text[:MAX_ANALYSED_LENGTH])


@functools.lru_cache(maxsize=4096)
def _analyse_task(text: str) -> TaskAnalysis:
    targets: list[str] = []
    quoted = _quoted(text)
    for q in quoted:
        _add(targets, q)
    for m in _FILE.finditer(text):
        _add(targets, m.group(0))
    for m in _NAMED.finditer(text):
        _add(targets, m.group(1))
    for m in _CATEGORY.finditer(text):
        _add(targets, m.group(1))
    for m in _FOLLOWING.finditer(text):
        for item in re.split(r",\s*|\s+and\s+", m.group(1)):
            item = re.sub(r"[\"“”]", "", item).strip()
            field_value = re.match(r"^[A-Za-z][\w ]{0,30}:\s*(.+)$", item)
            _add(targets, field_value.group(1) if field_value else item)
    outside = _QUOTED.sub(" ", text)
    for sentence in re.split(r"(?<=[.?!])\s+|\n", outside):
        for m in _CAPITALISED.finditer(sentence):
            words = m.group(0).split()
            cue = False
            if m.start() == len(sentence) - len(sentence.lstrip()):
                cue = words[0].lower() in _APP_WORDS
                words = words[1:]  # a sentence's first word is capitalised anyway
            if len(words) < 2 or cue:
                continue
            before = sentence[: m.start()]
            after = sentence[m.end() :]
            if _APP_CUE.search(before) or re.match(r"\s+app\b", after, re.I):
                continue  # "in Simple Calendar Pro", "the Broccoli app": the app, not a target
            _add(targets, " ".join(words))
    for m in _EDIT_PAYLOAD.finditer(text):
        _add(targets, m.group(1))
    for m in _PAYLOAD.finditer(text):
        if "|" not in m.group(1) and m.group(1)[:1] not in "\"'“":
            _add(targets, m.group(1))
    if "\n" in text:
        for line in text.splitlines():
            if "|" in line:
                cells = [c.strip() for c in line.split("|")]
                if all(re.fullmatch(r"[a-z_]+", c) for c in cells if c):
                    continue  # a header row of column names
                for c in cells:
                    _add(targets, c)
        for m in _KEY_VALUE.finditer(text):
            _add(targets, m.group(2))
    for m in _PHONE.finditer(text):
        _add(targets, m.group(0))
    for m in _MONEY.finditer(text):
        _add(targets, m.group(0))

    lowered = _QUOTED.sub(" ", text).lower()  # "How to Remove Grease Stains" asks no deletion
    toggles = _toggles(text)
    places: list[str] = []
    question = ""
    count_of = ""
    destination = ""
    sentences = [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    questions = [s for s in sentences if s.endswith("?") and _QUESTION_START.match(s)]
    if questions:
        intent = "answer"
        question = questions[-1]
        m = re.search(r"\bhow many\s+(?:times\b)?\s*([a-z]+)?", question, re.I)
        if m:
            count_of = (
                "view" if "times" in m.group(0).lower() else _stem((m.group(1) or "").lower())
            )
    elif toggles:
        intent = "toggle"
    elif re.search(r"\bdo not (?:hit |press )?save\b", lowered):
        intent = "draft"
    elif re.search(r"\bmove\b", lowered) and re.search(r"\bfrom\b.+\bto\b", lowered):
        intent = "move"
        m = re.search(r"\bfrom\b.*?\bto\s+(?:the\s+)?([A-Za-z][\w-]*)", _QUOTED.sub(" ", text))
        destination = m.group(1) if m else ""
        src = re.search(r"\bfrom\s+(?:the\s+)?([A-Z][\w-]*)", text)
        if src:
            places.append(src.group(1))
    elif re.search(r"(?:^|[.,;:]\s*|\bthen,?\s+|\band\s+)(?:delete|remove|erase)\b", lowered):
        intent = "delete"
    else:
        intent = "create"
    focus = question or _last_clause(text)
    keywords = tuple(
        k
        for k in _content_stems(_QUOTED.sub(" ", focus))
        if not any(k in _stems(t) for t in targets)
    )
    for m in _FOLDER.finditer(text):
        _add(places, m.group(1) or m.group(2))
    if destination:
        places = [p for p in places if normalize(p) != normalize(destination)]
        places.insert(0, destination)
    for m in _ISO_DATE.finditer(text):
        _add(places, date_phrase(m.group(0)))
    # "Cheese Panini" adds nothing beside "Turkey and Cheese Panini" (and "Rice" beside
    # 'Cauliflower Fried "Rice"' would match any other rice dish)
    padded = [f" {normalize(t)} " for t in targets]
    targets = [
        t
        for i, t in enumerate(targets)
        if not any(
            j != i and padded[i] in padded[j] and padded[i] != padded[j]
            for j in range(len(targets))
        )
    ]
    return TaskAnalysis(
        intent=intent,
        targets=tuple(targets[:8]),
        toggles=tuple(toggles),
        keywords=keywords[:8],
        question=question,
        count_of=count_of,
        destination=destination,
        places=tuple(places),
    )


# --------------------------------------------------------------------- reading screens


def _is_launcher_icon(e: UIElement) -> bool:
    return e.role == "button" and e.long_clickable and e.clickable and bool(e.label)


def _displayed(screen: UITree, target: str, editable_counts: bool = False) -> bool:
    for e in screen.elements:
        if (editable_counts or not e.editable) and e.label and text_contains(e.label, target):
            return True
        if (
            e.description
            and e.text
            and (editable_counts or not e.editable)
            and text_contains(e.description, target)
        ):
            return True
    return False


def _in_field(screen: UITree, target: str) -> bool:
    return any(e.editable and e.text and text_contains(e.text, target) for e in screen.elements)


def _opened_from_list(trace: Trace, screen_index: int) -> bool:
    """Whether the agent reached this screen by tapping a list item or link itself: what it
    then sees in editable fields is stored content, not someone's draft."""
    step = trace.step_for_screen(screen_index)
    if step is None or not step.valid:
        return False
    action = step.parsed
    if action is None or action.type is not ActionType.CLICK or action.index is None:
        return False
    before = trace.screens[screen_index - 1]
    if action.index >= len(before.elements):
        return False
    return before.elements[action.index].role in ("listitem", "link")


def _stored(trace: Trace, screen_index: int, target: str) -> bool:
    screen = trace.screens[screen_index]
    if _displayed(screen, target):
        return True
    return _opened_from_list(trace, screen_index) and _in_field(screen, target)


def _launcher_click(trace: Trace) -> int | None:
    """Screen number right after the agent opened an app from the launcher, if it did."""
    for i, step in enumerate(trace.steps):
        action = step.parsed
        if not step.valid or action is None or action.type is not ActionType.CLICK:
            continue
        elements = trace.screens[i].elements
        index = action.index
        if index is not None and index < len(elements) and _is_launcher_icon(elements[index]):
            return i + 1
    return None


def evidence_start(trace: Trace) -> int:
    """First screen of a probe that counts as evidence of stored state: after the probe
    reopened the app from the launcher and climbed to its top screen, the screens before
    (the policy's leftovers: a draft, another folder) no longer count; without a launcher,
    all of them do."""
    opened = _launcher_click(trace)
    if opened is None:
        return 0
    start = opened  # the app resumes where the policy left it; climbing up leaves that behind
    while start < len(trace.steps) and trace.steps[start].target == "Navigate up":
        start += 1
    return start


def read_toggle(screen: UITree, name: str) -> str | None:
    """The state of setting ``name`` (``wifi``, ``bluetooth``, ``brightness``, ...) shown on
    ``screen``: a switch's checked flag, a slider's percentage (``max``/``min``/``mid``), or a
    text such as "Bluetooth is off" / "Wi-Fi on". None when the screen does not show it."""
    key = name.replace(" ", "")
    for e in screen.elements:
        label = _compact(e.label)
        if key not in label and not (key == "wifi" and label == "internet"):
            continue
        if e.role == "switch" or (e.checkable and e.role in ("checkbox", "switch")):
            return "on" if e.checked else "off"
        if e.role == "slider":
            m = re.search(r"(\d+)\s*%", e.text)
            if m:
                value = int(m.group(1))
                return "max" if value >= 100 else "min" if value <= 0 else "mid"
    pattern = re.compile(
        rf"\b{re.escape(name).replace(' ', r'[- ]?')}\s+(?:is\s+)?(on|off)\b", re.I
    )
    for e in screen.elements:
        for text in (e.text, e.description):
            m = pattern.search(text.replace("Wi-Fi", "wifi").replace("WiFi", "wifi"))
            if m:
                return m.group(1).lower()
    return None


def _unique_elements(screens: Iterable[UITree]) -> list[UIElement]:
    seen: set[tuple[str, str]] = set()
    out: list[UIElement] = []
    for screen in screens:
        for e in screen.elements:
            key = (e.role, e.label)
            if e.label and key not in seen:
                seen.add(key)
                out.append(e)
    return out


def count_section(screens: Sequence[UITree], what: str) -> int | None:
    """How many items a page lists under the section ``what`` names (a stem such as ``tip``),
    reading the screens' elements in order with repeats removed: the headings themselves
    when they name it (``Method 1: ...``, ``Method 2: ...``), else the items between the
    heading and the next one. None when no such section was seen."""
    elements = _unique_elements(screens)
    headings = [
        e for e in elements if e.role == "heading" and normalize(e.label).split()[:1] == [what]
    ]
    if len(headings) > 1 or (headings and re.match(rf"{what}\s+\d", normalize(headings[0].label))):
        return len(headings)
    for i, e in enumerate(elements):
        if e.role == "heading" and what in {_stem(w) for w in normalize(e.label).split()}:
            n = 0
            for f in elements[i + 1 :]:
                if f.role == "heading":
                    break
                if f.role in ("text", "link", "listitem"):
                    n += 1
            return n
    return None


# --------------------------------------------------------------------------- reasoner


def _short(text: str, words: int = 8) -> str:
    parts = text.split()
    return " ".join(parts[:words])


def _limit(goal: str) -> str:
    words = goal.split()
    if len(words) <= MAX_GOAL_WORDS:
        return goal
    cut = " ".join(words[:MAX_GOAL_WORDS])
    if cut.count('"') % 2:
        cut += '"'
    return cut.rstrip(",;:") + ("" if cut.endswith((".", "?")) else ".")


def _launcher_labels(policy: Trace) -> list[str]:
    labels: list[str] = []
    for screen in policy.screens:
        for e in screen.elements:
            if _is_launcher_icon(e) and e.label not in labels:
                labels.append(e.label)
    return labels


def _app_of(text: str, labels: Sequence[str]) -> str:
    key = normalize(text)
    for label in labels:
        if normalize(label) == key or _stems(label) == _stems(text):
            return label
    return text


def policy_apps(instruction: str, policy: Trace) -> tuple[list[str], dict[str, list[str]]]:
    """The apps a task is about and what the policy typed in each.

    Apps are launcher icons on the policy's screens that the instruction names, in the
    order it names them; when it names none, the apps the policy opened. Typed text is
    attributed to the app in the foreground when it was typed (the last app opened by
    ``OPEN_APP`` or a launcher tap).
    """
    labels = _launcher_labels(policy)
    stems = _stems(instruction)
    norm = f" {normalize(instruction)} "
    named = [label for label in labels if _stems(label) and _stems(label) <= stems]
    # "Simple SMS Messenger" names one app, not also a "Messenger"
    named = [a for a in named if not any(a != b and _stems(a) < _stems(b) for b in named)]

    def position(label: str) -> int:
        words = [w for w in normalize(label).split()]
        hits = [norm.find(f" {w}") for w in words if norm.find(f" {w}") >= 0]
        return min(hits) if hits else len(norm)

    named.sort(key=position)
    typed: dict[str, list[str]] = {}
    opened: list[str] = []
    current = ""
    for i, step in enumerate(policy.steps):
        action = step.parsed
        if not step.valid or action is None:
            continue
        if action.type is ActionType.OPEN_APP and action.text:
            current = _app_of(action.text, labels)
        elif action.type is ActionType.CLICK and action.index is not None:
            before = policy.screens[i]
            if action.index < len(before.elements) and _is_launcher_icon(
                before.elements[action.index]
            ):
                current = before.elements[action.index].label
        elif action.type is ActionType.INPUT and action.text and current:
            typed.setdefault(current, []).append(action.text)
        if current and current not in opened:
            opened.append(current)
    return (named or opened[-1:]), typed


def _targets_for(app: str, targets: Sequence[str], typed: dict[str, list[str]]) -> list[str]:
    """The targets worth looking for in ``app``: all but those the policy typed only in
    other apps (a note's file name is not in the messenger that sent its text)."""
    out = []
    for t in targets:
        here = any(text_contains(x, t) or text_contains(t, x) for x in typed.get(app, []))
        elsewhere = any(
            text_contains(x, t) or text_contains(t, x)
            for other, xs in typed.items()
            if other != app
            for x in xs
        )
        if here or not elsewhere:
            out.append(t)
    return out


def _policy_date(a: TaskAnalysis, policy: Trace) -> str:
    """A day to look at: the instruction's date, else the last date the policy typed."""
    for place in a.places:
        if any(place.startswith(m) for m in _MONTHS):
            return place
    for step in reversed(policy.steps):
        action = step.parsed
        if step.valid and action is not None and action.type is ActionType.INPUT:
            phrase = date_phrase(action.text or "")
            if phrase:
                return phrase
    return ""


def _quote(t: str) -> str:
    return f'"{_short(t)}"'


def rule_expectation(instruction: str, policy: Trace) -> str:
    """What success looks like, read from the instruction by rules (ProRe Eq. 1's ``Exp``)."""
    a = analyse_task(instruction)
    apps, _ = policy_apps(instruction, policy)
    place = f" in {' and '.join(apps)}" if apps else ""
    targets = ", ".join(_quote(t) for t in a.targets[:4])
    if a.intent == "answer":
        return f"The policy answers {_quote(a.question or instruction)} exactly as asked."
    if a.intent == "toggle":
        return "Settings show " + " and ".join(f"{n} {s}" for n, s in a.toggles) + "."
    if not targets:
        return f"The device shows the state the task asks for: {_last_clause(instruction)}"
    if a.intent == "delete":
        return f"Gone{place}: {targets}."
    if a.intent == "move" and a.destination:
        return f"In the {a.destination} folder, and no longer where they were: {targets}."
    if a.intent == "draft":
        return f"Filled in, but nothing saved or sent: {targets}."
    day = _policy_date(a, policy)
    return f"Stored{place}" + (f" on {day}" if day else "") + f": {targets}."


class ScriptedReasoner:
    """Rule-based probing-goal scheduler (ProRe Eq. 1 and Eq. 5) in the style of Table 7.

    Goals are phrased from the instruction's analysis and from what the policy did (which
    apps it worked in, what it typed where, which day it scheduled for): creation tasks ask
    to find the created item in the app, at the day or in the folder the task names;
    deletion tasks whether the item still exists there; moves whether the item is in the
    destination; settings tasks for the switch; questions are asked again. Each plan
    carries :func:`rule_expectation` (Eq. 1's ``Exp``). A task spanning several apps gets one
    sub-goal per app, carried out one after another on one fork (Sec. 3.3; with
    ``sub_goals=False``, ours before: one app per probe, the apps alternating across
    probes). Parallel probes get different phrasings (so scripted probes differ);
    iterative rounds put the targets the previous probe did not confirm first.

    Args:
        sub_goals: Split a several-app verification into sequential sub-goals (the paper's).
    """

    def __init__(self, sub_goals: bool = True):  # ProRe Sec. 3.3, App. E.1 item 3
        self.sub_goals = bool(sub_goals)

    def _plans(self, instruction: str, policy: Trace) -> list[ProbePlan]:
        exp = rule_expectation(instruction, policy)
        groups = self._variant_groups(instruction, policy)
        if self.sub_goals and len(groups) > 1:
            groups = groups[:MAX_SUB_GOALS]
            width = min(len(g) for g in groups)
            return [ProbePlan(tuple(_limit(g[k]) for g in groups), exp) for k in range(width)]
        flat = _interleave([g for group in groups for g in group], len(groups))
        return [ProbePlan((_limit(g),), exp) for g in flat]

    def _variant_groups(self, instruction: str, policy: Trace) -> list[list[str]]:
        """Goal phrasings, one list per app the verification visits."""
        a = analyse_task(instruction)
        apps, typed = policy_apps(instruction, policy)
        if a.intent == "answer":
            question = a.question or instruction
            app = apps[0] if apps else ""
            where = f"In {app}, " if app and not text_contains(question, app) else ""
            return [[question, f"{where}find the screen that answers: {question}"]]
        if a.intent == "toggle":
            out = []
            for name, state in a.toggles:
                out.append(f"Open Settings and check whether {name} is {state}.")
            out.append(f"In Settings, find the {a.toggles[0][0]} switch and read its state.")
            return [out]
        day = _policy_date(a, policy)
        groups: list[list[str]] = []
        for app in apps or [""]:
            t = _targets_for(app, a.targets, typed) if app else list(a.targets)
            groups.append(self._app_variants(a, instruction, app, t, day))
        return groups

    @staticmethod
    def _app_variants(
        a: TaskAnalysis, instruction: str, app: str, t: list[str], day: str
    ) -> list[str]:
        where = f"In {app}, " if app else ""
        place = f" in {app}" if app else ""
        folder = next((p for p in a.places if p != day), "")
        at = f" on {day}" if day else f" in the {folder} folder" if folder else ""
        if not t:
            clause = _last_clause(instruction)
            return [
                f"{where}verify{at}: {clause}",
                f"Check{place}{at}: {clause}",
                f"{where}show{at} {clause}",
            ]
        head = _quote(t[0])
        rest = ", ".join(_quote(x) for x in t[1:3])
        also = f" and check {rest}" if rest else ""
        if a.intent == "delete":
            return [
                f"{where}check whether {head} still exists{at}.",
                f"Look{at}{place} for {head}.",
                f"{where}find {head}{at}{also}.",
            ]
        if a.intent == "move" and a.destination:
            return [
                f"{where}check if {head} is in the {a.destination} folder.",
                f"{where}open the {a.destination} folder and find {head}.",
                f"Find {head} in the {a.destination} folder{place}.",
            ]
        if a.intent == "draft":
            return [
                f"{where}check whether {head} was saved.",
                f"Look for {head}{place}.",
                f"{where}find {head}{also}.",
            ]
        if not app:
            clause = re.sub(
                r"^(?:then|and|finally),?\s+", "", _last_clause(instruction), flags=re.I
            )
            clause = clause.rstrip(". ")
            clause = clause[:1].lower() + clause[1:]
            return [
                f"Find {head} and check: {clause}.",
                f"Find {head}{also}.",
                f"Check: {clause}; look for {head}.",
            ]
        return [
            f"{where}find {head}{at}{also}.",
            f"{where}open {head}{at} and show its details.",
            f"Look{at} for {head}{place}.",
        ]

    def schedule(self, instruction: str, policy: Trace, n_goals: int) -> list[ProbePlan]:
        """``n_goals`` plans (cycling through the phrasings when more are asked)."""
        plans = self._plans(instruction, policy)
        return [plans[i % len(plans)] for i in range(n_goals)]

    def revise(
        self,
        instruction: str,
        policy: Trace,
        previous_goal: str,
        previous_claims: Sequence[Claim],
        expectation: str = "",
    ) -> ProbePlan:
        """The next round's plan (Eq. 5): a different phrasing, or the same place asked
        about the targets the previous probe did not confirm. The expectation is the
        rules' own (:func:`rule_expectation`), so the one passed in is only carried along."""
        a = analyse_task(instruction)
        confirmed = {
            normalize(v) for c in previous_claims if c.kind in ("shown", "seen") for v in c.values
        }
        plans = self._plans(instruction, policy)
        exp = expectation or plans[0].expectation
        goals = [p.goal for p in plans]
        goal_targets = analyse_task(previous_goal).targets
        missing = [
            t
            for t in a.targets
            if normalize(t) not in confirmed
            and any(text_contains(t, g) or text_contains(g, t) for g in goal_targets)
        ]
        if missing and a.intent in ("create", "move") and len(missing) < len(goal_targets):
            apps, _ = policy_apps(instruction, policy)
            where = f"In {apps[0]}, " if apps else ""
            return ProbePlan((_limit(f"{where}find {_quote(missing[0])}."),), exp)
        if previous_goal in goals:
            return plans[(goals.index(previous_goal) + 1) % len(plans)]
        return plans[0]


RULE_PROMPT_GOAL = "What are the key states to verify whether the task {task} is completed?"
"""ProRe Sec. 4.3: the probing goal that replaces the reasoner's scheduling in the Table 4
ablation ("a simple rule-based strategy by prompting")."""


class RulePromptReasoner:
    """ProRe's ablation without probing-task scheduling (Table 4, Sec. 4.3): every probe's
    goal is :data:`RULE_PROMPT_GOAL` filled with the task, with no analysis (no
    expectation) and no revision beyond repeating it."""

    def schedule(self, instruction: str, policy: Trace, n_goals: int) -> list[str]:
        """``n_goals`` copies of the rule prompt's goal."""
        return [RULE_PROMPT_GOAL.format(task=instruction)] * n_goals

    def revise(
        self,
        instruction: str,
        policy: Trace,
        previous_goal: str,
        previous_claims: Sequence[Claim],
        expectation: str = "",
    ) -> str:
        """The same goal again: the rule has nothing to revise with."""
        return RULE_PROMPT_GOAL.format(task=instruction)


def _interleave(goals: list[str], groups: int) -> list[str]:
    """Goals grouped per app, reordered so consecutive goals visit different apps."""
    if groups <= 1:
        return goals
    size = len(goals) // groups
    chunks = [goals[i * size : (i + 1) * size] for i in range(groups)]
    return [g for row in zip(*chunks) for g in row]


# -------------------------------------------------------------------------- evaluator


def _destructive(e: UIElement) -> bool:
    """A control whose label says it changes data. List items and links are content (an
    event titled "Call with Alice" opens the event), so only controls count."""
    if e.role in ("listitem", "link", "text", "heading"):
        return False
    words = set(normalize(e.label).split())
    return bool(words & _DESTRUCTIVE)


_GOAL_APP = re.compile(r"^\s*(?:In|Open)\s+([^,]+?)(?:,|\s+and\b)|\bin\s+([A-Z][\w ]*?)\.?\s*$")


def goal_app(goal: str) -> str:
    """The app a goal sends the evaluator to (``"In Contacts, ..."``, ``"Open Settings and
    ..."``, ``"... in Markor."``), or "" when it names none (explore where the policy left off)."""
    m = _GOAL_APP.search(goal)
    if not m:
        return ""
    return (m.group(1) or m.group(2) or "").strip()


def _found(screen: UITree, target: str, question: bool) -> bool:
    """Whether ``screen`` shows ``target`` as found: displayed outside input fields; for a
    question, as content (a heading or text), not merely a link to it."""
    if not question:
        return _displayed(screen, target)
    return any(
        not e.editable and not e.clickable and e.label and text_contains(e.label, target)
        for e in screen.elements
    )


@dataclass
class _ProbeState:
    targets: list[str]
    keywords: set[str]
    toggles: list[tuple[str, str]]
    question: bool
    visited: set[tuple[str, str, str]] = field(default_factory=set)
    searched: set[str] = field(default_factory=set)
    scrolls: dict[str, int] = field(default_factory=dict)
    backs: int = 0
    place_reached: bool = False


class ScriptedEvaluator:
    """A model-free evaluator agent that probes by navigating screens (ProRe Eq. 2).

    It sees only the screens of its :class:`~gui_gym.models.judge.ProbeSession`. Guided by
    the goal's words it (1) when the goal names an app ("In Contacts, ..."), goes to the
    launcher, opens it and climbs to its top screen with "Navigate up" (the screen the
    policy left may be a draft; the point is to look at the stored state afresh); otherwise
    it starts where the policy left off; (2) follows the element that best matches the
    strings and keywords it still looks for, types a missing string into a search field
    when one is offered, scrolls where content continues, and goes back when a screen has
    nothing more; (3) stops once everything is found or read, or after looking through the
    place the goal names. It never taps controls that change data (delete, save, send,
    add, bookmark, switches, ...), so what it reports is the state the policy left.

    Args:
        max_scrolls: Scrolls per screen before giving up on it.
        max_backs: GOBACKs before giving up.
    """

    def __init__(self, max_scrolls: int = 6, max_backs: int = 3):
        self.max_scrolls = max_scrolls
        self.max_backs = max_backs

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    def _pending(st: _ProbeState, session: ProbeSession) -> list[str]:
        screens = session.trace.screens[evidence_start(session.trace) :]
        return [t for t in st.targets if not any(_found(s, t, st.question) for s in screens)]

    @staticmethod
    def _toggles_read(st: _ProbeState, screen: UITree) -> bool:
        return all(read_toggle(screen, name) is not None for name, _ in st.toggles)

    @staticmethod
    def _score(e: UIElement, st: _ProbeState, pending: list[str]) -> int:
        if not (e.clickable and e.enabled) or e.editable or e.checkable or not e.label:
            return 0
        if _destructive(e) or e.label == "Navigate up" or e.selected:
            return 0
        score = 0
        for t in pending:
            if text_contains(e.label, t):
                score += 10
        if pending:
            for t in st.targets:
                if t not in pending and text_contains(e.label, t):
                    score += 6  # a found item whose details may hold what is still missing
        keyword_hits = len(_stems(e.label) & st.keywords)
        if e.role == "link" and score == 0 and keyword_hits < 2:
            return 0  # a link sharing one word with the goal leads to other content, not a place
        score += 2 * keyword_hits
        compact = _compact(e.label)
        for name, _ in st.toggles:
            if name.replace(" ", "") in compact:
                score += 3
        return score

    @staticmethod
    def _key(screen: UITree) -> str:
        heading = next((e.label for e in screen.elements if e.role == "heading"), "")
        return f"{screen.name}|{heading}"

    def _scroll(self, st: _ProbeState, session: ProbeSession, direction: str = "down") -> bool:
        screen = session.screen
        can = screen.can_scroll_down if direction == "down" else screen.can_scroll_up
        key = f"{self._key(screen)}|{direction}"
        if not can or st.scrolls.get(key, 0) >= self.max_scrolls:
            return False
        st.scrolls[key] = st.scrolls.get(key, 0) + 1
        session.step(Action(ActionType.SCROLL, direction=direction))
        return True

    # -- the probe ----------------------------------------------------------------------

    def probe(self, goal: str, session: ProbeSession) -> None:
        """Carry ``goal`` out on ``session`` (see the class docstring)."""
        a = analyse_task(goal)
        st = _ProbeState(
            targets=list(a.targets),
            keywords=set(a.keywords) | set(_content_stems(_QUOTED.sub(" ", goal))),
            toggles=list(a.toggles),
            question=a.intent == "answer",
        )
        st.keywords -= {s for t in st.targets for s in _stems(t)}
        app = goal_app(goal)
        if app:
            self._open_app(goal, st, session)
        elif st.question:
            while self._scroll(st, session, "up"):  # read the page from its top
                pass
        while session.steps_left > 0:
            screen = session.screen
            if st.toggles and self._toggles_read(st, screen):
                return
            pending = self._pending(st, session)
            if not pending and not st.question and not st.toggles:
                return
            best = self._best(screen, st, pending)
            at_page = st.question and (
                (bool(st.targets) and not pending) or (not st.targets and best is None)
            )
            if at_page:
                if not self._scroll(st, session):  # read the answer's page to its end
                    return
                continue
            if best is not None:
                st.visited.add((screen.name, best.role, best.label))
                if self._score(best, st, []) > 0 and not any(
                    text_contains(best.label, t) for t in st.targets
                ):
                    st.place_reached = True  # went where the goal's words point
                session.step(Action(ActionType.CLICK, index=best.index))
                continue
            if not st.place_reached and self._search(st, pending, screen, session):
                continue
            if self._scroll(st, session):
                continue
            if st.place_reached:
                return  # looked where the goal said; what is missing is not there
            if st.backs < self.max_backs and session.trace.steps:
                st.backs += 1
                session.step(Action(ActionType.GOBACK))
                continue
            return

    def _best(self, screen: UITree, st: _ProbeState, pending: list[str]) -> UIElement | None:
        best: UIElement | None = None
        best_score = 0
        for e in screen.elements:
            if (screen.name, e.role, e.label) in st.visited:
                continue
            score = self._score(e, st, pending)
            if score > best_score:
                best, best_score = e, score
        return best

    def _open_app(self, goal: str, st: _ProbeState, session: ProbeSession) -> None:
        """HOME, then the launcher icon whose name the goal mentions; then climb to the
        app's top screen."""
        if session.steps_left <= 2 or not session.step(Action(ActionType.HOME)).valid:
            return
        goal_stems = _stems(goal)
        icons = [e for e in session.screen.elements if _is_launcher_icon(e)]
        named = [e for e in icons if _stems(e.label) and _stems(e.label) <= goal_stems]
        if not named:
            return
        icon = max(named, key=lambda e: len(e.label))
        st.visited.add((session.screen.name, icon.role, icon.label))
        st.keywords -= _stems(icon.label)
        if not session.step(Action(ActionType.CLICK, index=icon.index)).valid:
            return
        st.place_reached = True
        for _ in range(4):
            screen = session.screen
            if session.steps_left <= 2:
                return
            up = next(
                (e for e in screen.elements if e.label == "Navigate up" and e.clickable), None
            )
            if up is None:
                return
            session.step(Action(ActionType.CLICK, index=up.index))

    @staticmethod
    def _search(st: _ProbeState, pending: list[str], screen: UITree, session: ProbeSession) -> bool:
        todo = [t for t in pending if t not in st.searched]
        if not todo:
            return False
        for e in screen.elements:
            if e.editable and e.enabled and any(w in e.label.lower() for w in _SEARCH_WORDS):
                st.searched.add(todo[0])
                session.step(Action(ActionType.INPUT, index=e.index, text=todo[0]))
                return True
        for e in screen.elements:
            key = (screen.name, e.role, e.label)
            if (
                e.clickable
                and not e.editable
                and key not in st.visited
                and normalize(e.label) in _SEARCH_WORDS
            ):
                st.visited.add(key)
                session.step(Action(ActionType.CLICK, index=e.index))
                return True
        return False


# ----------------------------------------------------------------------------- claims


def _is_choice(action: Action, screen: UITree) -> bool:
    """A tap that picks a value: an option, radio button or checkable list entry."""
    if action.type is not ActionType.CLICK or action.index is None:
        return False
    if action.index >= len(screen.elements):
        return False
    e = screen.elements[action.index]
    return bool(e.label) and (
        e.role in ("radio", "option") or (e.checkable and e.role == "listitem")
    )


def _fmt(values: Iterable[str]) -> str:
    return ", ".join(f'"{_short(v, 8)}"' for v in values)


class RuleClaimExtractor:
    """Rule-based claims (ProRe Eq. 3): at most four per trace, each with its kind, values
    and supporting screen numbers.

    Policy trace (the actor's report): how it ended (``declared_done`` / ``answered`` /
    ``unfinished``), what the last screens show (``final_shown``, ``final_draft``,
    ``final_absent``, ``toggle``), what it typed (``entered``), which committing controls it
    tapped (``committed``). Probe trace (the detective's report on the state the policy
    left): strings it found stored (``shown``), strings it looked for where the goal said and
    did not find (``absent``), strings it saw only in an input field (``draft``), setting
    states (``toggle``), counts for "how many" questions (``count``), and what it read for
    other questions (``read``).
    """

    def extract(self, instruction: str, trace: Trace) -> list[Claim]:
        """Claims about ``trace`` (see the class docstring); never more than four."""
        if trace.role == "policy":
            claims = self._policy(instruction, trace)
        else:
            claims = self._probe(instruction, trace)
        return claims[:MAX_CLAIMS]

    def _policy(self, instruction: str, trace: Trace) -> list[Claim]:
        a = analyse_task(instruction)
        src = "policy"
        n = len(trace.steps)
        claims: list[Claim] = []
        if trace.answer is not None:
            claims.append(
                Claim(
                    src,
                    f'The policy answered "{trace.answer}".',
                    (n,),
                    "its last action was ANSWER",
                    "answered",
                    (trace.answer,),
                )
            )
        elif trace.declared_done:
            claims.append(
                Claim(
                    src,
                    "The policy declared the task complete.",
                    (n,),
                    "it ended with DONE",
                    "declared_done",
                )
            )
        else:
            claims.append(
                Claim(
                    src,
                    "The policy stopped without declaring the task complete.",
                    (n,),
                    "its last action was not DONE or ANSWER",
                    "unfinished",
                )
            )
        last = len(trace.screens) - 1
        tail = [i for i in (last - 1, last) if i >= 1] or [last]
        if a.toggles:
            states = []
            for name, _ in a.toggles:
                state = read_toggle(trace.screens[last], name)
                if state is not None:
                    states.append(f"{name}={state}")
            if states:
                claims.append(
                    Claim(
                        src,
                        "The last screen shows "
                        + ", ".join(s.replace("=", " ") for s in states)
                        + ".",
                        (last,),
                        "read from a switch, slider or status text",
                        "toggle",
                        tuple(states),
                    )
                )
        shown = [t for t in a.targets if any(_displayed(trace.screens[i], t) for i in tail)]
        drafts = [
            t
            for t in a.targets
            if t not in shown and any(_in_field(trace.screens[i], t) for i in tail)
        ]
        if shown:
            claims.append(
                Claim(
                    src,
                    f"The last screens show {_fmt(shown)}.",
                    tuple(tail),
                    "displayed, not in an input field",
                    "final_shown",
                    tuple(shown),
                )
            )
        if drafts:
            claims.append(
                Claim(
                    src,
                    f"{_fmt(drafts)} appear only in input fields on the last screens.",
                    tuple(tail),
                    "typed text that no saved view shows",
                    "final_draft",
                    tuple(drafts),
                )
            )
        if a.intent == "delete":
            gone = [t for t in a.targets if t not in shown and t not in drafts]
            if gone:
                claims.append(
                    Claim(
                        src,
                        f"The last screen no longer shows {_fmt(gone)}.",
                        (last,),
                        "absent from the final screen",
                        "final_absent",
                        tuple(gone),
                    )
                )
        typed: list[str] = []
        typed_steps: list[int] = []
        committed: list[str] = []
        committed_steps: list[int] = []
        for i, step in enumerate(trace.steps, start=1):
            action = step.parsed
            if not step.valid or action is None:
                continue
            if action.type is ActionType.INPUT and action.text:
                typed.append(action.text)
                typed_steps.append(i)
            elif _is_choice(action, trace.screens[i - 1]):
                typed.append(step.target)  # picking "Food" from a category list enters it
                typed_steps.append(i)
            elif (
                action.type in (ActionType.CLICK, ActionType.LONG_CLICK)
                and step.target
                and (
                    set(normalize(step.target).split()) & _DESTRUCTIVE
                    or _stems(step.target) & set(a.keywords)
                )
            ):
                committed.append(step.target)
                committed_steps.append(i)
        if typed:
            claims.append(
                Claim(
                    src,
                    f"The policy entered {_fmt(typed)}.",
                    tuple(typed_steps),
                    "its INPUT actions and the options it picked",
                    "entered",
                    tuple(typed),
                )
            )
        if committed:
            claims.append(
                Claim(
                    src,
                    f"The policy tapped {_fmt(committed[-3:])}.",
                    tuple(committed_steps[-3:]),
                    "its last committing taps",
                    "committed",
                    tuple(committed[-3:]),
                )
            )
        return claims

    def _probe(self, instruction: str, trace: Trace) -> list[Claim]:
        goal = analyse_task(trace.goal)
        task = analyse_task(instruction)
        src = "probe"
        targets = list(goal.targets)
        for t in task.targets:
            if len(targets) < 8 and not any(normalize(t) == normalize(x) for x in targets):
                targets.append(t)
        every = list(range(evidence_start(trace), len(trace.screens)))
        own = [i for i in every if i > 0] or every
        claims: list[Claim] = []
        shown: list[str] = []
        shown_steps: set[int] = set()
        for t in targets:
            hits = [i for i in every if _stored(trace, i, t)]
            if hits:
                shown.append(t)
                shown_steps.update(hits[:2])
        if shown:
            # After reopening the app from the launcher the probe sees stored state
            # ("shown"); without one it sees pages that exist whatever the policy did
            # ("seen": it found them, which proves less).
            verified = evidence_start(trace) > 0
            claims.append(
                Claim(
                    src,
                    f"{_fmt(shown)} are stored: the probe found them displayed."
                    if verified
                    else f"The probe found {_fmt(shown)} displayed.",
                    tuple(sorted(shown_steps)),
                    "seen outside input fields after reopening the app"
                    if verified
                    else "seen outside input fields",
                    "shown" if verified else "seen",
                    tuple(shown),
                )
            )
        if goal.toggles or task.toggles:
            states: list[str] = []
            steps: list[int] = []
            for name, _ in goal.toggles or task.toggles:
                for i in reversed(every):
                    state = read_toggle(trace.screens[i], name)
                    if state is not None:
                        states.append(f"{name}={state}")
                        steps.append(i)
                        break
            if states:
                claims.append(
                    Claim(
                        src,
                        "The probe found " + ", ".join(v.replace("=", " ") for v in states) + ".",
                        tuple(steps),
                        "read from a switch, slider or status text",
                        "toggle",
                        tuple(states),
                    )
                )
        if (goal.intent == "answer" or task.intent == "answer") and trace.steps:
            what = goal.count_of or task.count_of
            if what and what != "view":
                count = count_section(trace.screens, what)
                if count is not None:
                    claims.append(
                        Claim(
                            src,
                            f"The page lists {count} {what} item(s).",
                            tuple(own[-2:]),
                            f"items under the {what} section",
                            "count",
                            (str(count),),
                        )
                    )
            read, steps = self._read(trace, goal if goal.intent == "answer" else task)
            if read:
                claims.append(
                    Claim(
                        src,
                        f"The probe read: {_fmt(read[:4])}{' ...' if len(read) > 4 else ''}.",
                        steps,
                        "content the question is about, on the probe's last page",
                        "read",
                        tuple(read),
                    )
                )
        drafts = [
            t
            for t in goal.targets
            if t not in shown and any(_in_field(s, t) for s in trace.screens[1:])
        ]
        explored = any(s.valid for s in trace.steps)
        absent = [t for t in goal.targets if t not in shown]
        if absent and explored and goal.intent != "answer":
            claims.append(
                Claim(
                    src,
                    f"{_fmt(absent)} did not appear on any screen the probe looked at.",
                    tuple(own),
                    "looked where the goal says and did not find them",
                    "absent",
                    tuple(absent),
                )
            )
        if drafts:
            claims.append(
                Claim(
                    src,
                    f"{_fmt(drafts)} appear only in an unsaved input field.",
                    tuple(i for i in own if any(_in_field(trace.screens[i], t) for t in drafts))[
                        :3
                    ],
                    "typed text that no saved view shows",
                    "draft",
                    tuple(drafts),
                )
            )
        return claims

    @staticmethod
    def _read(trace: Trace, question: TaskAnalysis) -> tuple[list[str], tuple[int, ...]]:
        """Content labels (not controls) on the probe's last page, those sharing a word with
        the question first; the page starts where the question's subject was last found."""
        start = 0
        for i, screen in enumerate(trace.screens):
            if question.targets and any(_found(screen, t, True) for t in question.targets):
                start = i
                break
        else:
            start = max(0, len(trace.screens) - 3)
        steps = tuple(range(start, len(trace.screens)))
        content = [
            e.label
            for e in _unique_elements(trace.screens[i] for i in steps)
            if e.role in ("text", "heading", "listitem", "link") and not e.editable
        ]
        focus = set(question.keywords) - {"answer", "first", "title"}
        focused = [c for c in content if _stems(c) & focus]
        return focused + [c for c in content if c not in focused], steps


# ------------------------------------------------------------------------------ filter


class RuleClaimFilter:
    """Drops claims their trace does not support (ProRe Sec. 3.4, claim filter).

    A claim is kept when the screens it cites exist and show what it says: ``shown``/
    ``final_shown``/``draft`` values appear on the cited screens, ``entered``/``committed``
    values in the cited actions, ``absent`` values on none of the probe's screens after a
    probe that actually explored (a list or link was on screen), ``toggle`` states read
    back. Claims without a kind (an LLM's) are kept when every quoted string in them appears
    on a cited screen or action. Evaluator claims citing screens after the probe changed
    data itself (typed outside a search field) are dropped, as ProRe's Stage 1 discards
    evaluator-caused outcomes.

    Args:
        criterion: ``paper`` (default, App. E.3 Stage 1): drop what the evaluator caused
            and what is misleading as evidence (an absence the probe never looked for, a
            claim citing no screen of the trace); ``grounded`` (ours): also check that the
            cited screens or actions show each claimed value.

    Raises:
        ValueError: for an unknown criterion.
    """

    def __init__(self, criterion: str = "paper"):  # ProRe App. E.3 Stage 1
        if criterion not in ("paper", "grounded"):
            raise ValueError(f"criterion must be 'paper' or 'grounded', got {criterion!r}")
        self.criterion = criterion

    def filter(
        self, instruction: str, trace: Trace, claims: Sequence[Claim]
    ) -> list[FilterDecision]:
        """One decision per claim, in order."""
        first_change = self._first_own_change(trace) if trace.role == "evaluator" else None
        return [self._decide(i, c, trace, first_change) for i, c in enumerate(claims)]

    @staticmethod
    def _first_own_change(trace: Trace) -> int | None:
        for i, step in enumerate(trace.steps, start=1):
            action = step.parsed
            if not step.valid or action is None:
                continue
            if action.type is ActionType.INPUT and "search" not in step.target.lower():
                return i
        return None

    def _decide(
        self, index: int, claim: Claim, trace: Trace, first_change: int | None
    ) -> FilterDecision:
        n = len(trace.screens)
        bad = [s for s in claim.steps if not 0 <= s < n]
        if bad or not claim.steps:
            return FilterDecision(index, False, f"cites screens {bad or '[]'} outside 0..{n - 1}")
        if first_change is not None and max(claim.steps) >= first_change and claim.kind != "absent":
            return FilterDecision(
                index,
                False,
                f"rests on screens after the probe changed data itself (step {first_change})",
            )
        screens = [trace.screens[s] for s in claim.steps]
        kind = claim.kind
        if self.criterion == "paper" and kind != "absent":
            return FilterDecision(index, True, "evidence about the outcome the policy left")
        if kind in ("shown", "seen", "final_shown"):
            if trace.role == "evaluator":
                missing = [
                    v for v in claim.values if not any(_stored(trace, s, v) for s in claim.steps)
                ]
            else:
                missing = [v for v in claim.values if not any(_displayed(s, v) for s in screens)]
            return self._values(index, missing, "not displayed on the cited screens")
        if kind in ("draft", "final_draft"):
            missing = [v for v in claim.values if not any(_in_field(s, v) for s in screens)]
            return self._values(index, missing, "in no input field on the cited screens")
        if kind in ("entered", "committed"):
            acted = " ".join(
                f"{st.action} {st.target}"
                for s in claim.steps
                if (st := trace.step_for_screen(s)) is not None
            )
            missing = [v for v in claim.values if not text_contains(acted, v)]
            return self._values(index, missing, "in none of the cited actions")
        if kind == "absent":
            if not any(
                e.role in ("listitem", "link") for s in trace.screens[1:] for e in s.elements
            ):
                return FilterDecision(
                    index, False, "the probe never reached a list, so absence proves nothing"
                )
            goal = analyse_task(trace.goal)
            headings = " | ".join(
                e.label for s in trace.screens[1:] for e in s.elements if e.role == "heading"
            )
            unvisited = [p for p in goal.places if not text_contains(headings, p)]
            if unvisited:
                return FilterDecision(
                    index,
                    False,
                    f"the probe never reached {_fmt(unvisited)}, where the goal says to look",
                )
            opened_app = _launcher_click(trace) is not None
            if not opened_app and not (_stems(headings) & set(goal.keywords)):
                return FilterDecision(
                    index, False, "the probe never reached the app or page the goal names"
                )
            seen = [v for v in claim.values if any(_stored(trace, i, v) for i in range(1, n))]
            return self._values(index, seen, "appears on a probe screen after all")
        if kind == "toggle":
            wrong = []
            for value in claim.values:
                name, _, state = value.partition("=")
                if not any(read_toggle(s, name) == state for s in screens):
                    wrong.append(value)
            return self._values(index, wrong, "not what the cited screens show")
        if kind == "final_absent":
            seen = [v for v in claim.values if any(_displayed(s, v) for s in screens)]
            return self._values(index, seen, "still displayed on the cited screen")
        if kind in ("declared_done", "answered", "unfinished", "count", "read"):
            return FilterDecision(index, True, "follows from the trace")
        quotes = _quoted(claim.text)
        evidence = (
            " ".join(s.all_text for s in screens)
            + " "
            + " ".join(
                f"{st.action}" for s in claim.steps if (st := trace.step_for_screen(s)) is not None
            )
        )
        unsupported = [q for q in quotes if not text_contains(evidence, q)]
        return self._values(index, unsupported, "quoted but not on the cited screens or actions")

    @staticmethod
    def _values(index: int, problems: list[str], why: str) -> FilterDecision:
        if problems:
            return FilterDecision(index, False, f"{_fmt(problems)} {why}")
        return FilterDecision(index, True, "supported by the cited screens")


# ------------------------------------------------------------------------------- judge


def _values_of(claims: Sequence[Claim], kind: str) -> list[tuple[int, str]]:
    return [(i, v) for i, c in enumerate(claims) if c.kind == kind for v in c.values]


def _has(pairs: list[tuple[int, str]], target: str) -> int | None:
    for i, v in pairs:
        if text_contains(v, target) or text_contains(target, v):
            return i
    return None


def _covered(pairs: list[tuple[int, str]], target: str) -> int | None:
    """The claim whose value covers ``target``: contains it, or is contained in it while
    carrying at least half its words (typing "block" does not cover "How to Block a Phone
    Number"; typing "320.10" covers "$320.1")."""
    words = len(normalize(target).split())
    for i, v in pairs:
        if text_contains(v, target):
            return i
        if text_contains(target, v) and 2 * len(normalize(v).split()) >= words:
            return i
    return None


def _answer_items(answer: str) -> list[str]:
    return [p.strip() for p in re.split(r",|\band\b", answer) if normalize(p.strip())]


class RuleJudge:
    """Chain-of-claims judgment by rules (ProRe Eq. 4, App. E.3 Stage 2).

    Each string the instruction requires is looked up in the evaluator's claims first
    (``shown`` confirms, ``absent`` or ``draft`` contradicts) and, when no evaluator claim
    addresses it, in the policy's (typed, or displayed on the last screens). Then:

    * a benchmark that scores unfinished episodes as failures fails a policy that did not
      declare completion;
    * questions need an answer; a probe's count or reading must agree with it;
    * deletions need the strings gone, moves need them in the destination, settings the
      requested state, drafts the strings typed but not stored;
    * everything else needs every required string confirmed or, unaddressed by the probe,
      covered by the policy; a contradiction fails it.

    Without evaluator claims this is the trajectory-only judge.
    """

    def judge(
        self,
        instruction: str,
        policy_claims: Sequence[Claim],
        evaluator_claims: Sequence[Claim],
        policy: Trace,
        expectation: str = "",
    ) -> Verdict:
        """The verdict. ``expectation`` is accepted for the protocol (Eq. 4) and not read:
        the rules derive the same expectations from the instruction (:func:`analyse_task`,
        :func:`rule_expectation`)."""
        a = analyse_task(instruction)
        relations: list[ClaimRelation] = []
        notes: list[str] = []
        kinds = {c.kind for c in policy_claims}
        ended = next(
            (
                i
                for i, c in enumerate(policy_claims)
                if c.kind in ("declared_done", "answered", "unfinished")
            ),
            None,
        )
        if policy.completion_required and ("unfinished" in kinds or ended is None):
            return self._verdict(
                False,
                [
                    "the policy did not declare completion, and this benchmark scores that as a failure"
                ],
                relations,
            )

        shown = _values_of(evaluator_claims, "shown")
        seen = _values_of(evaluator_claims, "seen")
        absent = _values_of(evaluator_claims, "absent")
        drafts = _values_of(evaluator_claims, "draft")
        final_shown = _values_of(policy_claims, "final_shown")
        final_draft = _values_of(policy_claims, "final_draft")
        final_absent = _values_of(policy_claims, "final_absent")
        entered = _values_of(policy_claims, "entered")
        committed = _values_of(policy_claims, "committed")

        def link(
            policy_index: int | None, evaluator_index: int | None, relation: str, note: str
        ) -> None:
            if policy_index is not None:
                relations.append(ClaimRelation(policy_index, evaluator_index, relation, note))

        if a.intent == "answer":
            answered = next((c for c in policy_claims if c.kind == "answered"), None)
            if answered is None:
                return self._verdict(
                    False, ["the task asks a question and the policy gave no answer"], relations
                )
            p_index = policy_claims.index(answered)
            answer = answered.values[0] if answered.values else ""
            counts = [(i, c) for i, c in enumerate(evaluator_claims) if c.kind == "count"]
            if counts and a.count_of:
                i, c = counts[0]
                number = re.findall(r"\d+", normalize(answer))
                ok = bool(number) and number[0] == c.values[0]
                link(
                    p_index,
                    i,
                    "confirmed" if ok else "contradicted",
                    f"probe counted {c.values[0]}",
                )
                return self._verdict(
                    ok,
                    [f"the probe counted {c.values[0]}, the policy answered {answer!r}"],
                    relations,
                )
            reads = [(i, c) for i, c in enumerate(evaluator_claims) if c.kind == "read"]
            items = _answer_items(answer)
            if reads and items:
                i, c = reads[-1]
                text = " | ".join(c.values)
                if all(text_contains(text, item) for item in items):
                    link(p_index, i, "confirmed", "the probe read the answer")
                    return self._verdict(
                        True, ["every part of the answer is on the probe's screens"], relations
                    )
                # Not finding the answer's words is weak evidence (answers are reformatted:
                # "October 21 2023 02:45" for "Sat, Oct 21 2023 · 02:45"), so it does not
                # contradict; the policy's own screens decide.
                link(p_index, i, "unsupported", "the probe's reading does not show it verbatim")
            seen = " | ".join(s.all_text for s in policy.screens)
            ok = bool(items) and all(text_contains(seen, item) for item in items)
            if not reads:
                link(p_index, None, "unsupported", "no probe reading")
            return self._verdict(
                ok,
                [
                    "the answer appears on the policy's screens"
                    if ok
                    else "the answer does not appear on the policy's screens"
                ],
                relations,
            )

        if a.intent == "toggle":
            ok_all = True
            for name, state in a.toggles:
                probe_state = next(
                    (
                        v.partition("=")[2]
                        for c in evaluator_claims
                        if c.kind == "toggle"
                        for v in c.values
                        if v.startswith(name + "=")
                    ),
                    None,
                )
                policy_state = next(
                    (
                        v.partition("=")[2]
                        for c in policy_claims
                        if c.kind == "toggle"
                        for v in c.values
                        if v.startswith(name + "=")
                    ),
                    None,
                )
                got = probe_state if probe_state is not None else policy_state
                if got is None:
                    notes.append(f"nothing shows the {name} state")
                    ok_all = False
                elif got != state:
                    notes.append(f"{name} is {got}, the task wants {state}")
                    ok_all = False
                else:
                    notes.append(
                        f"{name} is {state}" + (" (probed)" if probe_state is not None else "")
                    )
            return self._verdict(ok_all, notes, relations)

        deleting = [(i, v) for i, v in committed if set(normalize(v).split()) & _DELETING]
        if a.intent == "delete":
            if not a.targets:
                ok = bool(deleting)
                return self._verdict(
                    ok,
                    [
                        "no named item to check; "
                        + (
                            "the policy tapped a deleting control"
                            if ok
                            else "the policy never tapped a deleting control"
                        )
                    ],
                    relations,
                )
            ok_all = True
            for t in a.targets:
                e_shown, e_absent = _has(shown + seen, t), _has(absent, t)
                if e_shown is not None:
                    notes.append(f"{t!r} still exists (probe)")
                    link(ended, e_shown, "contradicted", f"{t!r} still exists")
                    ok_all = False
                elif e_absent is not None:
                    notes.append(f"{t!r} is gone (probe)")
                    link(ended, e_absent, "confirmed", f"{t!r} is gone")
                elif _has(final_absent, t) is not None and deleting:
                    notes.append(f"{t!r} is gone from the last screen after a deleting tap")
                else:
                    notes.append(f"nothing shows {t!r} was deleted")
                    ok_all = False
            return self._verdict(ok_all, notes, relations)

        if a.intent == "draft":
            ok_all = True
            for t in a.targets[:2]:
                if _has(shown, t) is not None:
                    notes.append(f"{t!r} was saved (probe)")
                    ok_all = False
                elif _has(final_draft, t) is None:
                    notes.append(f"{t!r} is not in the form on the last screen")
                    ok_all = False
            return self._verdict(
                ok_all, notes or ["the form holds the values and nothing was saved"], relations
            )

        if a.intent == "move" and a.targets:
            # The probe looked in the destination (the goal names it): finding the item there
            # settles it, not finding it refutes it; otherwise the policy's last screen and a
            # moving tap decide.
            t = a.targets[0]
            e_shown, e_absent = _has(shown, t), _has(absent, t)
            if e_shown is not None:
                link(ended, e_shown, "confirmed", f"{t!r} is in {a.destination}")
                return self._verdict(True, [f"{t!r} found in {a.destination} (probe)"], relations)
            if e_absent is not None:
                link(ended, e_absent, "contradicted", f"{t!r} is not in {a.destination}")
                return self._verdict(False, [f"{t!r} not in {a.destination} (probe)"], relations)
            moved = any("move" in normalize(v).split() for _, v in committed)
            ok = moved and _has(final_shown, t) is not None
            return self._verdict(
                ok, [f"moving tap: {moved}; {t!r} on the last screen: {ok}"], relations
            )

        ok_all = True
        by_policy = 0
        for t in a.targets:
            e_shown, e_absent, e_draft = _has(shown, t), _has(absent, t), _has(drafts, t)
            p_cover = _covered(entered, t)
            p_cover = p_cover if p_cover is not None else _has(final_shown, t)
            p_index = _policy_claim_index(policy_claims, t)
            by_policy += p_cover is not None
            e_seen = _has(seen, t)
            if e_shown is None and e_seen is not None and p_cover is not None:
                e_shown = e_seen  # found while browsing: it confirms what the policy claims
            if (
                e_absent is not None
                and e_shown is not None
                and evaluator_claims[e_absent].source != evaluator_claims[e_shown].source
            ):
                # A joint judgment over several probes: one found it stored, another looked
                # elsewhere. Different views of the same state are complementary, not a
                # contradiction (App. E.3 Stage 2); what was found stored decides.
                e_absent = None
            if e_absent is not None or (e_draft is not None and e_shown is None):
                why = "only in an unsaved field" if e_absent is None else "not found"
                notes.append(f"{t!r} {why} (probe)")
                link(p_index, e_absent if e_absent is not None else e_draft, "contradicted", t)
                ok_all = False
            elif e_shown is not None:
                notes.append(f"{t!r} confirmed by the probe")
                # found but never claimed by the policy: it may have been there all along
                relation = "confirmed" if p_cover is not None else "complementary"
                link(p_index, e_shown, relation, t)
            elif p_cover is not None:
                notes.append(f"{t!r} covered by the policy's claims only")
                link(p_index, None, "unsupported", t)
            elif _has(final_draft, t) is not None:
                notes.append(f"{t!r} only typed into a field")
                ok_all = False
            else:
                notes.append(f"nothing shows {t!r}")
                ok_all = False
        if a.targets and ok_all and by_policy == 0:
            # Everything required exists, but the policy's claims touch none of it: the probe
            # may just have found what was there before the policy started.
            notes.append("nothing the policy did produced any of the required strings")
            ok_all = False
        if not a.targets:
            ok_all = self._keywords_met(a, policy, evaluator_claims, notes)
        elif (
            ok_all
            and not _launcher_labels(policy)
            and not any(
                s.valid and (p := s.parsed) is not None and p.type is ActionType.OPEN_APP
                for s in policy.steps
            )
        ):
            # A single-app navigation task (no launcher): the strings exist regardless of
            # what the policy did, so the task's last step must show in its last moves too.
            ok_all = self._keywords_met(a, policy, evaluator_claims, notes)
        return self._verdict(ok_all, notes, relations)

    @staticmethod
    def _keywords_met(
        a: TaskAnalysis, policy: Trace, evaluator_claims: Sequence[Claim], notes: list[str]
    ) -> bool:
        """Without strings to check, the last clause's words must show on the last screen or
        in the policy's last actions."""
        if not a.keywords:
            notes.append("nothing specific to check; the policy's report is taken")
            return True
        evidence = (
            policy.screens[-1].all_text
            + " "
            + " ".join(s.target + " " + s.description for s in policy.steps[-2:])
        )
        named = _quoted(_last_clause(policy.goal))
        if named and all(_displayed(policy.screens[-1], q) for q in named):
            notes.append(f"the last screen shows {_fmt(named)}, which the task's last step names")
            return True
        found = [k for k in a.keywords if k in _stems(evidence)]
        ok = 2 * len(found) >= len(a.keywords)
        notes.append(
            f"last-clause words on the last screen or actions: {found} of {list(a.keywords)}"
        )
        return ok

    @staticmethod
    def _verdict(ok: bool, notes: list[str], relations: list[ClaimRelation]) -> Verdict:
        return Verdict("success" if ok else "failure", "; ".join(notes), tuple(relations))


def _policy_claim_index(claims: Sequence[Claim], target: str) -> int | None:
    for i, c in enumerate(claims):
        if any(text_contains(v, target) or text_contains(target, v) for v in c.values):
            return i
    return None


# ------------------------------------------------ raw-observation and trajectory judges


def _outcome_from_screens(
    instruction: str,
    screens: Sequence[UITree],
    answer: str | None,
    typed: str = "",
) -> tuple[bool, str]:
    """Success by reading screens as they are, without claims: the task's strings shown
    (gone, for deletions), the switches in the asked state, a question's answer on some
    screen. ``typed``: text the agent typed, counted as covering a string (WebRL's judge
    reads the action history). Later screens override earlier ones for switches."""
    a = analyse_task(instruction)
    text = " | ".join(e.label for s in screens for e in s.elements if e.label and not e.editable)
    if a.intent == "answer":
        if answer is None:
            return False, "no answer was given"
        items = _answer_items(answer)
        ok = bool(items) and all(text_contains(text, item) for item in items)
        return ok, f"the answer {'is' if ok else 'is not'} on the screens"
    if a.intent == "toggle":
        notes, ok = [], True
        for name, state in a.toggles:
            read = next((r for s in reversed(screens) if (r := read_toggle(s, name))), None)
            ok = ok and read == state
            notes.append(f"{name}: {read or 'not shown'}")
        return ok, "; ".join(notes)
    if not a.targets:
        keywords = set(a.keywords)
        found = keywords & _stems(screens[-1].all_text if screens else "")
        ok = not keywords or 2 * len(found) >= len(keywords)
        return ok, f"last-clause words on the last screen: {sorted(found)} of {sorted(keywords)}"
    if a.intent == "delete":
        still = [t for t in a.targets if text_contains(text, t)]
        return not still, f"still shown: {_fmt(still)}" if still else "none of them shown"
    missing = [t for t in a.targets if not (text_contains(text, t) or text_contains(typed, t))]
    return not missing, f"not shown: {_fmt(missing)}" if missing else "every string shown"


class RuleRawJudge:
    """ProRe's ablation without chain-of-claims (Table 4), by rules: the verdict from the
    raw screens of the policy's last state and of every probe, with none of the claims'
    care (which screens count as stored state, what the evaluator changed itself). A
    :class:`~gui_gym.models.judge.RawObservationJudge` for ``ProReJudge(raw_judge=...)``.
    """

    def judge_raw(
        self,
        instruction: str,
        policy: Trace,
        probes: Sequence[Trace],
        expectation: str = "",
    ) -> Verdict:
        """The verdict; ``expectation`` is not read (see :class:`RuleJudge`)."""
        if policy.completion_required and not policy.declared_done:
            return Verdict("failure", "the policy did not declare completion")
        screens = [s for s in policy.screens[-1:]] + [s for t in probes for s in t.screens[1:]]
        ok, why = _outcome_from_screens(instruction, screens, policy.answer)
        return Verdict("success" if ok else "failure", why)


class RuleTrajectoryJudge:
    """Trajectory-only judges after ProRe Table 2's baselines, by rules (their LLM forms
    are :class:`~gui_gym.models.judge_llm.LLMTrajectoryJudge`): ``digirl`` reads the last
    ``last_states`` screens only; ``webrl`` also reads the action history (what was typed,
    whether the agent declared completion). An :class:`~gui_gym.models.judge.EpisodeJudge`.

    Args:
        style: ``digirl`` or ``webrl``.
        last_states: Screens read from the end: 1 ("Last N States = 1") or None ("Full").

    Raises:
        ValueError: for an unknown style or ``last_states`` below 1.
    """

    def __init__(self, style: str = "digirl", last_states: int | None = 1):
        if style not in ("digirl", "webrl"):
            raise ValueError(f"style must be 'digirl' or 'webrl', got {style!r}")
        if last_states is not None and (isinstance(last_states, bool) or last_states < 1):
            raise ValueError(f"last_states must be >= 1 or None (full), got {last_states!r}")
        self.style = style
        self.last_states = last_states

    def judge_episode(self, env: object, policy: Trace) -> JudgeReport:
        """The verdict on ``policy`` (``env`` is not looked at: no probing)."""
        screens = (
            policy.screens if self.last_states is None else policy.screens[-self.last_states :]
        )
        typed = ""
        if self.style == "webrl":
            if policy.completion_required and not policy.declared_done:
                final = Verdict("failure", "the action history shows no declared completion")
                return JudgeReport(verdict=final.verdict, mode="trajectory", final=final)
            typed = " | ".join(
                p.text or ""
                for s in policy.steps
                if s.valid and (p := s.parsed) is not None and p.type is ActionType.INPUT
            )
        ok, why = _outcome_from_screens(policy.goal, screens, policy.answer, typed)
        final = Verdict("success" if ok else "failure", why)
        return JudgeReport(verdict=final.verdict, mode="trajectory", final=final)


def scripted_components() -> dict[str, object]:
    """The model-free components as keyword arguments of
    :class:`~gui_gym.models.judge.ProReJudge` (``ProReJudge(**scripted_components())``)."""
    return {
        "reasoner": ScriptedReasoner(),
        "evaluator": ScriptedEvaluator(),
        "claim_extractor": RuleClaimExtractor(),
        "claim_filter": RuleClaimFilter(),
        "judge": RuleJudge(),
    }
