"""Declarative predicates for task milestones and success checks.

A predicate is JSON data, compiled once into a small object with ``evaluate(ctx) -> bool``.
Nothing a task file says is ever evaluated as code: there is no ``eval``/``exec``, state
paths only read public attributes, dict keys and list items, and regexes are compiled at
load time so a bad one fails with the file, field and reason.

Forms (exactly one key per object)::

    {"screen_contains": "References"}                         # any label on screen, case-insensitive
    {"screen_contains": {"text": "How to", "regex": false, "case_sensitive": false}}
    {"element": {"role": "button", "text": "Bookmark", "selected": true}}  # exists on screen
    {"element": {"text_regex": "^How to Bake", "visible": true}}
    {"state": {"path": "page.kind", "op": "eq", "value": "article"}}
    {"action": {"type": "CLICK", "text_regex": "..."}}         # the last action
    {"answer": {"value": "3", "mode": "numeric", "tolerance": 0.5}}
    {"milestone": "answer_in_view"}                            # reached earlier this episode
    {"all": [...]}, {"any": [...]}, {"not": {...}}, {"const": true}
"""

from __future__ import annotations

import difflib
import functools
import math
import operator
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gui_gym.core.actions import Action, ActionType
from gui_gym.core.ui import FLAG_ORDER

if TYPE_CHECKING:
    from gui_gym.core.ui import UITree

__all__ = [
    "ANSWER_MODES",
    "STATE_OPERATORS",
    "Predicate",
    "PredicateContext",
    "PredicateError",
    "answers_match",
    "compile_predicate",
    "normalize_answer",
    "parse_number_answer",
    "resolve_path",
]


class PredicateError(ValueError):
    """A predicate spec that cannot be compiled; ``path`` locates the bad field."""

    def __init__(self, path: str, reason: str):
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)


@dataclass(slots=True)
class PredicateContext:
    """What a predicate may look at after a step.

    Attributes:
        state: The app state (plain data). Real backends pass what they can observe.
        screen: The current screen.
        action: The last action taken (None right after reset).
        answer: The agent's last ANSWER text, if any.
        step: Steps taken so far in the episode.
        extra: Backend-specific facts (e.g. the browser's raw reward).
        milestones: Names of the task's milestones reached so far this episode (what the
            ``milestone`` predicate reads).
    """

    state: Any
    screen: UITree
    action: Action | None = None
    answer: str | None = None
    step: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    milestones: tuple[str, ...] = ()


class Predicate:
    """A compiled predicate; ``spec`` keeps the JSON it came from."""

    __slots__ = ("spec",)

    def __init__(self, spec: Mapping[str, Any]):
        self.spec = spec

    def evaluate(self, ctx: PredicateContext) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, ctx: PredicateContext) -> bool:
        return self.evaluate(ctx)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.spec)!r})"


# ---------------------------------------------------------------------------------------------
# State paths

_MISSING = object()


def resolve_path(obj: Any, path: str | tuple[str, ...]) -> Any:
    """Follow a dotted ``path`` through dicts (keys), sequences (integer indices) and objects
    (public, non-callable attributes). Returns a private sentinel when the path is absent.

    Never calls anything found on the way: methods and underscore names are not reachable.
    """
    current = obj
    for part in path.split(".") if isinstance(path, str) else path:
        kind = _container_kind(type(current))
        if kind == _MAPPING:
            current = current.get(part, _MISSING)
        elif kind == _SEQUENCE:
            current = _index(current, part)
        elif part.startswith("_"):
            return _MISSING
        else:
            value = getattr(current, part, _MISSING)
            if callable(value) and not isinstance(value, type):
                return _MISSING
            current = value
        if current is _MISSING:
            return _MISSING
    return current


_MAPPING, _SEQUENCE, _OBJECT = 0, 1, 2


@functools.cache
def _container_kind(kind: type) -> int:
    # ABC isinstance checks are slow; predicates run every step, so decide once per type.
    if issubclass(kind, Mapping):
        return _MAPPING
    if issubclass(kind, Sequence) and not issubclass(kind, str | bytes):
        return _SEQUENCE
    return _OBJECT


def _index(sequence: Sequence[Any], part: str) -> Any:
    if not part.lstrip("-").isdigit():
        return _MISSING
    i = int(part)
    return sequence[i] if -len(sequence) <= i < len(sequence) else _MISSING


def _is_missing(value: Any) -> bool:
    return value is _MISSING


def _size(value: Any) -> int | None:
    try:
        return len(value)
    except TypeError:
        return None


def _compare(a: Any, b: Any, op: str) -> bool:
    try:
        if op == "lt":
            return a < b
        if op == "le":
            return a <= b
        if op == "gt":
            return a > b
        return a >= b
    except TypeError:
        return False


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return isinstance(item, str) and item.lower() in container.lower()
    try:
        return item in container
    except TypeError:
        return False


STATE_OPERATORS: dict[str, str] = {
    "eq": "equal to value",
    "ne": "not equal to value",
    "lt": "less than value",
    "le": "at most value",
    "gt": "greater than value",
    "ge": "at least value",
    "in": "one of value (a list)",
    "contains": "contains value (substring, case-insensitive, or member)",
    "not_contains": "does not contain value",
    "regex": "string matching the regex value (re.search)",
    "len_eq": "length equal to value",
    "len_ge": "length at least value",
    "len_le": "length at most value",
    "exists": "path exists (value ignored)",
    "missing": "path does not exist (value ignored)",
    "truthy": "path exists and is truthy",
    "falsy": "path is missing or falsy",
}


class _StatePredicate(Predicate):
    __slots__ = ("check", "op", "parts", "path", "pattern", "value")

    def __init__(self, spec: Mapping[str, Any], where: str):
        super().__init__(spec)
        _only_keys(spec, {"path", "op", "value"}, where)
        path = spec.get("path")
        if not isinstance(path, str) or not path:
            raise PredicateError(f"{where}.path", "must be a non-empty dotted path string")
        op = spec.get("op", "eq")
        if op not in STATE_OPERATORS:
            raise PredicateError(
                f"{where}.op", f"unknown operator {op!r}; allowed: {', '.join(STATE_OPERATORS)}"
            )
        value = spec.get("value")
        needs_value = op not in ("exists", "missing", "truthy", "falsy")
        if needs_value and "value" not in spec:
            raise PredicateError(f"{where}.value", f"operator {op!r} needs a value")
        if op == "in" and not isinstance(value, list):
            raise PredicateError(f"{where}.value", "operator 'in' needs a list")
        if op.startswith("len_") and not isinstance(value, int):
            raise PredicateError(f"{where}.value", f"operator {op!r} needs an integer")
        self.path = path
        self.parts = tuple(path.split("."))
        self.op = op
        self.value = value
        self.pattern = _compile_regex(value, f"{where}.value") if op == "regex" else None
        # eq/ne are by far the most common; bind them to C-level comparisons.
        if op == "eq":
            self.check = functools.partial(operator.eq, value)
        elif op == "ne":
            self.check = functools.partial(operator.ne, value)
        else:
            self.check = self._check

    def evaluate(self, ctx: PredicateContext) -> bool:
        actual = resolve_path(ctx.state, self.parts)
        if actual is _MISSING:
            return self.op in ("missing", "falsy")
        return self.check(actual)

    def _check(self, actual: Any) -> bool:
        op = self.op
        if op == "exists":
            return True
        if op == "missing":
            return False
        if op == "truthy":
            return bool(actual)
        if op == "falsy":
            return not actual
        if op in ("lt", "le", "gt", "ge"):
            return _compare(actual, self.value, op)
        if op == "in":
            return actual in self.value
        if op == "contains":
            return _contains(actual, self.value)
        if op == "not_contains":
            return not _contains(actual, self.value)
        if op == "regex":
            assert self.pattern is not None
            return isinstance(actual, str) and self.pattern.search(actual) is not None
        size = _size(actual)
        if size is None:
            return False
        if op == "len_eq":
            return size == self.value
        if op == "len_ge":
            return size >= self.value
        return size <= self.value


class _ScreenContains(Predicate):
    __slots__ = ("case_sensitive", "pattern", "text")

    def __init__(self, spec: Any, where: str):
        if isinstance(spec, str):
            spec = {"text": spec}
        if not isinstance(spec, Mapping):
            raise PredicateError(where, "must be a string or an object with 'text'")
        super().__init__(spec)
        _only_keys(spec, {"text", "regex", "case_sensitive"}, where)
        text = spec.get("text")
        if not isinstance(text, str) or not text:
            raise PredicateError(f"{where}.text", "must be a non-empty string")
        self.case_sensitive = bool(spec.get("case_sensitive", False))
        self.text = text if self.case_sensitive else text.lower()
        self.pattern = None
        if spec.get("regex", False):
            flags = re.MULTILINE | (0 if self.case_sensitive else re.IGNORECASE)
            self.pattern = _compile_regex(text, f"{where}.text", flags)

    def evaluate(self, ctx: PredicateContext) -> bool:
        haystack = ctx.screen.all_text
        if self.pattern is not None:
            return self.pattern.search(haystack) is not None
        if not self.case_sensitive:
            haystack = haystack.lower()
        return self.text in haystack


_ELEMENT_FLAGS = (*FLAG_ORDER, "enabled")


class _ElementPredicate(Predicate):
    __slots__ = ("criteria", "flags", "pattern")

    def __init__(self, spec: Mapping[str, Any], where: str):
        super().__init__(spec)
        _only_keys(
            spec,
            {
                "role",
                "text",
                "text_regex",
                "resource_id",
                "handler",
                "handler_arg",
                *_ELEMENT_FLAGS,
            },
            where,
        )
        if not spec:
            raise PredicateError(where, "needs at least one criterion")
        self.criteria = tuple(
            (k, spec[k])
            for k in ("role", "text", "resource_id", "handler", "handler_arg")
            if k in spec
        )
        for key, value in self.criteria:
            if not isinstance(value, str):
                raise PredicateError(f"{where}.{key}", "must be a string")
        self.flags = tuple((k, spec[k]) for k in _ELEMENT_FLAGS if k in spec)
        for key, value in self.flags:
            if not isinstance(value, bool):
                raise PredicateError(f"{where}.{key}", "must be true or false")
        self.pattern = (
            _compile_regex(spec["text_regex"], f"{where}.text_regex")
            if "text_regex" in spec
            else None
        )

    def evaluate(self, ctx: PredicateContext) -> bool:
        for element in ctx.screen.elements:
            if any(
                (element.label if key == "text" else getattr(element, key)) != value
                for key, value in self.criteria
            ):
                continue
            if any(getattr(element, key) != value for key, value in self.flags):
                continue
            if self.pattern is not None and not self.pattern.search(element.label):
                continue
            return True
        return False


class _ActionPredicate(Predicate):
    __slots__ = ("pattern", "types")

    def __init__(self, spec: Mapping[str, Any], where: str):
        super().__init__(spec)
        _only_keys(spec, {"type", "text_regex"}, where)
        kinds = spec.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if kinds is None:
            self.types = None
        else:
            try:
                self.types = frozenset(ActionType(str(k).upper()) for k in kinds)
            except ValueError:
                raise PredicateError(
                    f"{where}.type",
                    f"unknown action type in {kinds!r}; allowed: {', '.join(t.value for t in ActionType)}",
                ) from None
        self.pattern = (
            _compile_regex(spec["text_regex"], f"{where}.text_regex", re.IGNORECASE)
            if "text_regex" in spec
            else None
        )

    def evaluate(self, ctx: PredicateContext) -> bool:
        action = ctx.action
        if action is None:
            return False
        if self.types is not None and action.type not in self.types:
            return False
        if self.pattern is not None:
            return self.pattern.search(action.text or action.label or "") is not None
        return True


ANSWER_MODES = ("normalized", "fuzzy", "numeric", "contains", "regex")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation})
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
# A numeric answer is the number itself (taking the first digit run anywhere would let
# "qzxv garbage 7f3a" pass): digits with optional, correctly grouped thousands commas and an
# optional decimal part, or a number word, optionally followed by one word (a unit such as
# "views"). Linear: the alternatives cannot match the same text two ways.
_NUMBER_ANSWER = re.compile(
    r"([-+]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?|[a-z]+)(?: ([a-z]+))?", re.ASCII
)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles, collapse whitespace (SQuAD-style)."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def parse_number_answer(text: str) -> float | None:
    """The number an answer states, or None when the answer is not a number.

    Accepted (case-insensitive, surrounding white space and one final ``.`` ignored): an
    integer or decimal with an optional sign (``12``, ``-3.5``), thousands grouped by commas
    (``1,234,567``, not ``1,23``), or a number word from ``zero`` to ``twenty``; each may be
    followed by one word, a unit (``1,234 views``, ``three methods``). Anything else, such as
    a sentence with a number inside or ``7f3a``, is not a number answer.
    """
    text = " ".join(text.split()).lower()
    if text.endswith("."):
        text = text[:-1].rstrip()
    if len(text) > 64:
        return None
    match = _NUMBER_ANSWER.fullmatch(text)
    if match is None:
        return None
    number = match.group(1)
    if number.isalpha():
        return float(_NUMBER_WORDS[number]) if number in _NUMBER_WORDS else None
    return float(number.replace(",", ""))


def answers_match(
    answer: str,
    expected: str | Sequence[str],
    mode: str = "normalized",
    tolerance: float = 0.0,
    threshold: float = 0.9,
) -> bool:
    """Whether an agent's ``answer`` matches any of the ``expected`` answers.

    Modes: ``normalized`` (equal after :func:`normalize_answer`), ``fuzzy`` (difflib ratio of the
    lower-cased strings >= ``threshold``, AndroidWorld's string match), ``numeric`` (the
    answer is a number, as :func:`parse_number_answer` reads it, within the absolute
    ``tolerance`` of the expected one), ``contains`` (normalised expected appears in the
    normalised answer), ``regex`` (``re.search``, case-insensitive).
    """
    options = [expected] if isinstance(expected, str) else list(expected)
    for option in options:
        if mode == "normalized":
            if normalize_answer(answer) == normalize_answer(option):
                return True
        elif mode == "fuzzy":
            ratio = difflib.SequenceMatcher(
                None, answer.strip().lower(), option.strip().lower()
            ).ratio()
            if ratio >= threshold:
                return True
        elif mode == "numeric":
            got, want = parse_number_answer(answer), parse_number_answer(option)
            if (
                got is not None
                and want is not None
                and math.isclose(got, want, rel_tol=0.0, abs_tol=tolerance)
            ):
                return True
        elif mode == "contains":
            needle = normalize_answer(option)
            if needle and needle in normalize_answer(answer):
                return True
        elif mode == "regex":
            if re.search(option, answer, re.IGNORECASE):
                return True
        else:
            raise ValueError(f"unknown answer mode {mode!r}; allowed: {', '.join(ANSWER_MODES)}")
    return False


class _AnswerPredicate(Predicate):
    __slots__ = ("mode", "threshold", "tolerance", "values")

    def __init__(self, spec: Mapping[str, Any], where: str):
        super().__init__(spec)
        _only_keys(spec, {"value", "values", "mode", "tolerance", "threshold"}, where)
        values = spec.get("values", [spec["value"]] if "value" in spec else None)
        if not values or not all(isinstance(v, str) for v in values):
            raise PredicateError(where, "needs 'value' (a string) or 'values' (strings)")
        mode = spec.get("mode", "normalized")
        if mode not in ANSWER_MODES:
            raise PredicateError(
                f"{where}.mode", f"unknown mode {mode!r}; allowed: {', '.join(ANSWER_MODES)}"
            )
        if mode == "regex":
            for i, v in enumerate(values):
                _compile_regex(v, f"{where}.values[{i}]")
        self.values = tuple(values)
        self.mode = mode
        self.tolerance = float(spec.get("tolerance", 0.0))
        self.threshold = float(spec.get("threshold", 0.9))

    def evaluate(self, ctx: PredicateContext) -> bool:
        if ctx.answer is None:
            return False
        return answers_match(ctx.answer, self.values, self.mode, self.tolerance, self.threshold)


class _All(Predicate):
    __slots__ = ("parts",)

    def __init__(self, spec: Any, parts: tuple[Predicate, ...]):
        super().__init__({"all": spec})
        self.parts = parts

    def evaluate(self, ctx: PredicateContext) -> bool:
        # An explicit loop: all() over a generator costs ~30% more on this per-step path.
        for part in self.parts:  # noqa: SIM110
            if not part.evaluate(ctx):
                return False
        return True


class _Any(Predicate):
    __slots__ = ("parts",)

    def __init__(self, spec: Any, parts: tuple[Predicate, ...]):
        super().__init__({"any": spec})
        self.parts = parts

    def evaluate(self, ctx: PredicateContext) -> bool:
        for part in self.parts:  # noqa: SIM110 - see _All.evaluate
            if part.evaluate(ctx):
                return True
        return False


class _Not(Predicate):
    __slots__ = ("part",)

    def __init__(self, spec: Any, part: Predicate):
        super().__init__({"not": spec})
        self.part = part

    def evaluate(self, ctx: PredicateContext) -> bool:
        return not self.part.evaluate(ctx)


class _Const(Predicate):
    __slots__ = ("value",)

    def __init__(self, value: bool):
        super().__init__({"const": value})
        self.value = value

    def evaluate(self, ctx: PredicateContext) -> bool:
        return self.value


class _MilestoneReached(Predicate):
    __slots__ = ("name",)

    def __init__(self, name: Any, where: str):
        if not isinstance(name, str) or not name:
            raise PredicateError(where, "must be a milestone name (a non-empty string)")
        super().__init__({"milestone": name})
        self.name = name

    def evaluate(self, ctx: PredicateContext) -> bool:
        return self.name in ctx.milestones


_FORMS = (
    "screen_contains",
    "element",
    "state",
    "action",
    "answer",
    "milestone",
    "all",
    "any",
    "not",
    "const",
)


def _only_keys(spec: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = set(spec) - allowed
    if extra:
        raise PredicateError(
            where, f"unknown key(s) {sorted(extra)}; allowed: {', '.join(sorted(allowed))}"
        )


def _compile_regex(value: Any, where: str, flags: int = 0) -> re.Pattern[str]:
    if not isinstance(value, str):
        raise PredicateError(where, "a regex must be a string")
    try:
        return re.compile(value, flags)
    except re.error as err:
        raise PredicateError(where, f"invalid regex {value!r}: {err}") from None


def compile_predicate(spec: Any, where: str = "predicate") -> Predicate:
    """Compile a JSON predicate into a :class:`Predicate`.

    Args:
        spec: The predicate data (see the module docstring for the forms).
        where: Field path used in error messages, e.g. ``tasks[3].milestones[1].predicate``.

    Raises:
        PredicateError: naming the bad field and what is allowed there.
    """
    if isinstance(spec, Predicate):
        return spec
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise PredicateError(
            where, f"must be an object with exactly one of: {', '.join(_FORMS)}; got {spec!r}"[:300]
        )
    ((kind, body),) = spec.items()
    at = f"{where}.{kind}"
    if kind == "screen_contains":
        contains = _ScreenContains(body, at)
        contains.spec = {kind: body}
        return contains
    if kind in ("element", "state", "action", "answer"):
        if not isinstance(body, Mapping):
            raise PredicateError(at, "must be an object")
        cls = {
            "element": _ElementPredicate,
            "state": _StatePredicate,
            "action": _ActionPredicate,
            "answer": _AnswerPredicate,
        }[kind]
        leaf = cls(body, at)
        leaf.spec = {kind: body}
        return leaf
    if kind in ("all", "any"):
        if not isinstance(body, list) or not body:
            raise PredicateError(at, "must be a non-empty list of predicates")
        parts = tuple(compile_predicate(p, f"{at}[{i}]") for i, p in enumerate(body))
        return _All(body, parts) if kind == "all" else _Any(body, parts)
    if kind == "not":
        return _Not(body, compile_predicate(body, at))
    if kind == "milestone":
        return _MilestoneReached(body, at)
    if kind == "const":
        if not isinstance(body, bool):
            raise PredicateError(at, "must be true or false")
        return _Const(body)
    raise PredicateError(where, f"unknown predicate {kind!r}; allowed: {', '.join(_FORMS)}")
