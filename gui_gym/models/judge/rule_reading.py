"""What the model-free ProRe components know how to read: instructions and screens.

The rule-based components (:mod:`~gui_gym.models.judge.rule_probing`,
:mod:`~gui_gym.models.judge.rule_claims`, :mod:`~gui_gym.models.judge.rule_judges`) are
heuristics over text, not a model of any app, and they all start here:

* :func:`analyse_task` reads an instruction (or a probing goal) into an intent (``create``,
  ``delete``, ``move``, ``toggle``, ``answer``, ``draft``), the strings the outcome must
  show (quoted text, names, file names, phone numbers, amounts, ``key: value`` fields),
  switch states, and keywords;
* the screen readers say what a :class:`~gui_gym.core.ui.UITree` shows. What "displayed"
  means matters: a value sitting in an editable field is a draft, not a stored record,
  unless the agent itself opened that screen from a list item (Markor's editor shows a
  saved note's text in an editable field). The "typed but never saved" failure that a
  trajectory-only judge misses is exactly a draft a probe cannot find stored.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gui_gym.core.actions import ActionType
from gui_gym.core.ui import UIElement, UITree
from gui_gym.models.judge.types import (
    Trace,
)

__all__ = [
    "DELETING_WORDS",
    "DESTRUCTIVE_WORDS",
    "MAX_ANALYSED_LENGTH",
    "MONTHS",
    "QUOTED",
    "SEARCH_WORDS",
    "TaskAnalysis",
    "analyse_task",
    "compact_text",
    "content_stems",
    "count_section",
    "date_phrase",
    "evidence_start",
    "first_words",
    "format_values",
    "in_field",
    "is_displayed",
    "is_found",
    "is_launcher_icon",
    "is_stored",
    "last_clause",
    "launcher_click",
    "launcher_labels",
    "normalize",
    "quoted_strings",
    "read_toggle",
    "text_contains",
    "unique_elements",
    "word_stems",
]

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
# Words on a control that changes data: the scripted evaluator never taps one (it reports
# the state the policy left), and a policy claim about tapping one says it committed.
DESTRUCTIVE_WORDS = _word_set(
    """delete remove save send ok confirm discard clear reset erase create new add start
    stop pause resume record capture shutter take done apply share bookmark yes no rename
    move copy paste cut submit buy install uninstall update edit mark archive reply call
    dial lap play"""
)
SEARCH_WORDS = ("search",)  # a field or button named so is a search box
DELETING_WORDS = frozenset(
    {"delete", "remove", "trash", "erase", "discard"}
)  # committing these deletes


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


def compact_text(text: str) -> str:
    """:func:`normalize` with the spaces removed (``"Wi-Fi"`` and ``"wifi"`` compare equal)."""
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


def word_stems(text: str) -> set[str]:
    """The stems of ``text``'s words, stopwords left out."""
    return {_stem(w) for w in normalize(text).split() if w not in _STOPWORDS}


def content_stems(text: str) -> list[str]:
    """The stems of ``text``'s content words (no stopwords, no words generic to any goal such
    as "find" or "screen"), in order, each once."""
    out: list[str] = []
    for w in normalize(text).split():
        if w in _STOPWORDS or w in _GENERIC_WORDS or len(w) < 2:
            continue
        s = _stem(w)
        if s not in out:
            out.append(s)
    return out


# ------------------------------------------------------------------ reading instructions

QUOTED = re.compile(
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
MONTHS = _word_list(
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
    return f"{MONTHS[int(m.group(2)) - 1]} {int(m.group(3))}"


def _add(out: list[str], value: str) -> None:
    value = value.strip().strip(".,;:").strip()
    if len(normalize(value)) < 2:
        return
    key = normalize(value)
    for existing in out:
        if normalize(existing) == key:
            return
    out.append(value)


def _add_matches(out: list[str], pattern: re.Pattern[str], text: str, group: int) -> None:
    """:func:`_add` each match of ``pattern`` in ``text`` (its group ``group``), in order."""
    for m in pattern.finditer(text):
        _add(out, m.group(group))


def quoted_strings(text: str) -> list[str]:
    """The strings ``text`` puts in double, curly or single quotes, in order."""
    return [next(g for g in m.groups() if g) for m in QUOTED.finditer(text)]


def last_clause(text: str) -> str:
    """The last sentence of ``text`` (with the one before when the last has two words or fewer):
    where an instruction states what it asks for."""
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
well under a second."""


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
    quoted = quoted_strings(text)
    for q in quoted:
        _add(targets, q)
    _add_matches(targets, _FILE, text, 0)
    _add_matches(targets, _NAMED, text, 1)
    _add_matches(targets, _CATEGORY, text, 1)
    for m in _FOLLOWING.finditer(text):
        for item in re.split(r",\s*|\s+and\s+", m.group(1)):
            item = re.sub(r"[\"“”]", "", item).strip()
            field_value = re.match(r"^[A-Za-z][\w ]{0,30}:\s*(.+)$", item)
            _add(targets, field_value.group(1) if field_value else item)
    outside = QUOTED.sub(" ", text)
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
    _add_matches(targets, _EDIT_PAYLOAD, text, 1)
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
        _add_matches(targets, _KEY_VALUE, text, 2)
    _add_matches(targets, _PHONE, text, 0)
    _add_matches(targets, _MONEY, text, 0)

    lowered = QUOTED.sub(" ", text).lower()  # "How to Remove Grease Stains" asks no deletion
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
        m = re.search(r"\bfrom\b.*?\bto\s+(?:the\s+)?([A-Za-z][\w-]*)", QUOTED.sub(" ", text))
        destination = m.group(1) if m else ""
        src = re.search(r"\bfrom\s+(?:the\s+)?([A-Z][\w-]*)", text)
        if src:
            places.append(src.group(1))
    elif re.search(r"(?:^|[.,;:]\s*|\bthen,?\s+|\band\s+)(?:delete|remove|erase)\b", lowered):
        intent = "delete"
    else:
        intent = "create"
    focus = question or last_clause(text)
    keywords = tuple(
        k
        for k in content_stems(QUOTED.sub(" ", focus))
        if not any(k in word_stems(t) for t in targets)
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


def is_launcher_icon(e: UIElement) -> bool:
    """Whether ``e`` is an app icon on the launcher (a labelled, long-clickable button)."""
    return e.role == "button" and e.long_clickable and e.clickable and bool(e.label)


def is_displayed(screen: UITree, target: str, editable_counts: bool = False) -> bool:
    """Whether ``screen`` shows ``target`` in an element's label or description; text in input
    fields counts only with ``editable_counts`` (a draft is not a stored record)."""
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


def in_field(screen: UITree, target: str) -> bool:
    """Whether an input field on ``screen`` holds ``target``."""
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


def is_stored(trace: Trace, screen_index: int, target: str) -> bool:
    """Whether screen ``screen_index`` of ``trace`` shows ``target`` as stored content: displayed
    outside input fields, or in a field of a screen the agent opened from a list item (an
    editor showing a saved note)."""
    screen = trace.screens[screen_index]
    if is_displayed(screen, target):
        return True
    return _opened_from_list(trace, screen_index) and in_field(screen, target)


def launcher_click(trace: Trace) -> int | None:
    """Screen number right after the agent opened an app from the launcher, if it did."""
    for i, step in enumerate(trace.steps):
        action = step.parsed
        if not step.valid or action is None or action.type is not ActionType.CLICK:
            continue
        elements = trace.screens[i].elements
        index = action.index
        if index is not None and index < len(elements) and is_launcher_icon(elements[index]):
            return i + 1
    return None


def evidence_start(trace: Trace) -> int:
    """First screen of a probe that counts as evidence of stored state: after the probe
    reopened the app from the launcher and climbed to its top screen, the screens before
    (the policy's leftovers: a draft, another folder) no longer count; without a launcher,
    all of them do."""
    opened = launcher_click(trace)
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
        label = compact_text(e.label)
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


def unique_elements(screens: Iterable[UITree]) -> list[UIElement]:
    """The labelled elements of ``screens`` in order, each ``(role, label)`` once (a scrolled
    list read as one page)."""
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
    elements = unique_elements(screens)
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


def first_words(text: str, words: int = 8) -> str:
    """The first ``words`` words of ``text``."""
    parts = text.split()
    return " ".join(parts[:words])


def launcher_labels(policy: Trace) -> list[str]:
    """The labels of the launcher icons on the policy's screens, in the order first seen."""
    labels: list[str] = []
    for screen in policy.screens:
        for e in screen.elements:
            if is_launcher_icon(e) and e.label not in labels:
                labels.append(e.label)
    return labels


def is_found(screen: UITree, target: str, question: bool) -> bool:
    """Whether ``screen`` shows ``target`` as found: displayed outside input fields; for a
    question, as content (a heading or text), not merely a link to it."""
    if not question:
        return is_displayed(screen, target)
    return any(
        not e.editable and not e.clickable and e.label and text_contains(e.label, target)
        for e in screen.elements
    )


def format_values(values: Iterable[str]) -> str:
    """``values`` quoted and shortened for a note (``"a", "b"``)."""
    return ", ".join(f'"{first_words(v, 8)}"' for v in values)
