"""Strict parsers of the LLM components' replies (ProRe App. E output formats).

Each raises ``ValueError`` saying what is wrong, which
:func:`~gui_gym.models.llm.ask_until_parsed` turns into a retry with that note. JSON is read
with ``json.loads`` (through :func:`~gui_gym.core.untrusted_text.load_json`), never
evaluated.
"""

from __future__ import annotations

from typing import Any

from gui_gym.core.untrusted_text import load_json
from gui_gym.models.judge.types import (
    MAX_CLAIMS,
    MAX_GOAL_WORDS,
    MAX_SUB_GOALS,
    Claim,
    FilterDecision,
    ProbePlan,
)

__all__ = [
    "parse_claims",
    "parse_decisions",
    "parse_goal",
    "parse_plan",
    "parse_status",
    "parse_yes_no",
    "reply_analysis",
]


# Replies are parsed line by line with string methods, not multi-line regexes: on a reply
# that degenerates into thousands of spaces, multi-line patterns take cubic time.


def _labelled_lines(text: str, label: str) -> list[tuple[int, str]]:
    """``(line number, value)`` of every line ``Label: value`` (any case, optional ``**``)."""
    found = []
    for number, line in enumerate(text.splitlines()):
        head = line.strip().lstrip("*")
        if head[: len(label)].lower() != label:
            continue
        rest = head[len(label) :].lstrip("*").lstrip()
        if rest.startswith(":"):
            found.append((number, rest[1:].strip()))
    return found


def _status_word(value: str) -> str | None:
    """The single word of a ``Status:`` value (``**success**.`` -> ``success``), else None."""
    word = value.strip()
    if word.endswith("."):
        word = word[:-1]
    word = word.strip("* \t")
    return word if word.isascii() and word.isalpha() else None


def parse_goal(text: str) -> str:
    """The probing goal of a reasoner reply (the last ``Goal:`` line).

    Raises:
        ValueError: when there is no ``Goal:`` line, it is empty, or longer than 20 words.
    """
    found = _labelled_lines(text, "goal")
    if not found:
        raise ValueError("no line starting with 'Goal:'")
    goal = found[-1][1].strip().strip('"').strip("'").strip()
    if not goal:
        raise ValueError("the 'Goal:' line is empty")
    words = len(goal.split())
    if words > MAX_GOAL_WORDS:
        raise ValueError(f"the goal has {words} words; at most {MAX_GOAL_WORDS} are allowed")
    return goal


def _goal_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, value)`` of every ``Goal:`` or ``Goal <n>:`` line (any case, ``**``)."""
    found = []
    for number, line in enumerate(text.splitlines()):
        head = line.strip().lstrip("*")
        if head[:4].lower() != "goal":
            continue
        rest = head[4:].lstrip("*").lstrip()
        rest = rest.lstrip("0123456789").lstrip("*").lstrip()
        if rest.startswith(":"):
            found.append((number, rest[1:].lstrip("*").strip()))
    return found


def parse_plan(text: str) -> ProbePlan:
    """A reasoner reply as a :class:`~gui_gym.models.judge.ProbePlan` (ProRe Eq. 1, App. E.1):
    the ``Analysis:`` before the first goal is the expectation; every ``Goal:`` (or ``Goal
    1:``, ``Goal 2:``) line is a sequential sub-goal, in order.

    Raises:
        ValueError: when there is no goal line, a goal is empty or longer than 20 words, or
            there are more than :data:`~gui_gym.models.judge.MAX_SUB_GOALS` goals.
    """
    found = _goal_lines(text)
    if not found:
        raise ValueError("no line starting with 'Goal:'")
    if len(found) > MAX_SUB_GOALS:
        raise ValueError(
            f"{len(found)} goals; at most {MAX_SUB_GOALS} sequential goals are allowed"
        )
    goals = []
    for _, value in found:
        goal = value.strip().strip('"').strip("'").strip()
        if not goal:
            raise ValueError("a 'Goal:' line is empty")
        words = len(goal.split())
        if words > MAX_GOAL_WORDS:
            raise ValueError(f"a goal has {words} words; at most {MAX_GOAL_WORDS} are allowed")
        goals.append(goal)
    before = "\n".join(text.splitlines()[: found[0][0]])
    return ProbePlan(tuple(goals), _strip_label(before.strip(), "analysis"))


def _strip_label(text: str, label: str) -> str:
    """``text`` without a leading ``Label:`` (any case, optional ``**``)."""
    head = text.lstrip("*")
    if head[: len(label)].lower() == label:
        rest = head[len(label) :].lstrip("*").lstrip()
        if rest.startswith(":"):
            return rest[1:].strip()
    return text.strip()


def parse_yes_no(text: str) -> str:
    """``success`` or ``failure`` from a reply whose last non-empty line is ``Answer: YES``
    or ``Answer: NO`` (the WebRL-style outcome judge; any case, optional ``**``).

    Raises:
        ValueError: when there is no such line, or conflicting ones.
    """
    values = set()
    for _, value in _labelled_lines(text, "answer"):
        word = _status_word(value)
        if word and word.lower() in ("yes", "no"):
            values.add(word.lower())
    if not values:
        raise ValueError("no line 'Answer: YES' or 'Answer: NO'")
    if len(values) > 1:
        raise ValueError("conflicting Answer lines")
    return "success" if values.pop() == "yes" else "failure"


def parse_status(text: str) -> str:
    """``success`` or ``failure`` from a judge reply's single ``Status:`` line.

    Raises:
        ValueError: when there is no such line, more than one, or another word.
    """
    found = [w for _, v in _labelled_lines(text, "status") if (w := _status_word(v))]
    if not found:
        raise ValueError("no line 'Status: success' or 'Status: failure'")
    values = {f.lower() for f in found}
    if len(values) > 1:
        raise ValueError(f"conflicting Status lines: {sorted(values)}")
    value = values.pop()
    if value not in ("success", "failure"):
        raise ValueError(f"Status must be 'success' or 'failure', got {value!r}")
    return value


def reply_analysis(text: str) -> str:
    """The reply before its first ``Status:`` line, without an ``Analysis:`` label."""
    lines = text.splitlines()
    status = _labelled_lines(text, "status")
    analysis = "\n".join(lines[: status[0][0]] if status else lines).strip()
    return _strip_label(analysis, "analysis")


def _fenced_blocks(text: str) -> list[str]:
    """The contents of every closed ``` fence (a leading ``json`` tag dropped)."""
    parts = text.split("```")
    blocks = parts[1:-1:2]  # odd parts lie between an opening and a closing fence
    return [b[4:].strip() if b[:4].lower() == "json" else b.strip() for b in blocks]


def _json_object(text: str) -> Any:
    candidates = [*_fenced_blocks(text), text]
    last_error = "no JSON object found"
    for candidate in candidates:
        start = candidate.find("{")
        end = candidate.rfind("}")
        if start < 0 or end <= start:
            continue
        try:
            return load_json(candidate[start : end + 1])
        except ValueError as err:
            last_error = f"invalid JSON: {err}"
    raise ValueError(last_error)


def parse_claims(text: str, key: str, n_screens: int, source: str) -> list[Claim]:
    """Claims from an extractor reply: ``{key: [{"steps": [...], "reasoning": ..., "claim":
    ...}, ...]}`` with 1 to 4 entries and screen numbers in ``0..n_screens-1``.

    Raises:
        ValueError: saying what is wrong with the reply.
    """
    data = _json_object(text)
    if not isinstance(data, dict) or key not in data:
        raise ValueError(f'expected a JSON object with the key "{key}"')
    items = data[key]
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_CLAIMS:
        raise ValueError(f'"{key}" must be a list of 1 to {MAX_CLAIMS} claims')
    claims = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ValueError(f"claim {i} is not an object")
        claim = item.get("claim")
        reasoning = item.get("reasoning", "")
        steps = item.get("steps")
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f'claim {i} needs a non-empty "claim" string')
        if not isinstance(reasoning, str):
            raise ValueError(f'claim {i}: "reasoning" must be a string')
        if not isinstance(steps, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) for s in steps
        ):
            raise ValueError(f'claim {i}: "steps" must be a list of screen numbers')
        bad = [s for s in steps if not 0 <= s < n_screens]
        if bad:
            raise ValueError(f"claim {i} cites screens {bad}; valid: 0..{n_screens - 1}")
        claims.append(Claim(source, claim.strip(), tuple(steps), reasoning.strip()))
    return claims


def parse_decisions(text: str, n_claims: int) -> list[FilterDecision]:
    """Filter decisions from a reply: ``{"decisions": [{"claim": i, "keep": bool, "reason":
    ...}, ...]}`` naming every claim ``0..n_claims-1`` exactly once.

    Raises:
        ValueError: saying what is wrong with the reply.
    """
    data = _json_object(text)
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        raise ValueError('expected a JSON object with a "decisions" list')
    out: dict[int, FilterDecision] = {}
    for i, item in enumerate(data["decisions"]):
        if not isinstance(item, dict):
            raise ValueError(f"decision {i} is not an object")
        index, keep, reason = item.get("claim"), item.get("keep"), item.get("reason", "")
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n_claims:
            raise ValueError(f'decision {i}: "claim" must be a claim number 0..{n_claims - 1}')
        if not isinstance(keep, bool):
            raise ValueError(f'decision {i}: "keep" must be true or false')
        if not isinstance(reason, str):
            raise ValueError(f'decision {i}: "reason" must be a string')
        if index in out:
            raise ValueError(f"claim {index} is decided twice")
        out[index] = FilterDecision(index, keep, reason.strip())
    missing = [i for i in range(n_claims) if i not in out]
    if missing:
        raise ValueError(f"no decision for claims {missing}")
    return [out[i] for i in range(n_claims)]
