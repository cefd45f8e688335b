"""Reading trajectory files into what the report pages show.

A *run* is one JSON Lines file of :class:`~gui_gym.core.trajectory.Trajectory` records
(``RecordTrajectories``, ``gui-gym record``, the rollout engine). Records are read as raw dicts
with ``.get``, so files from older and newer versions load: fields a version lacks are shown
as absent, fields it adds (token ids, log-probabilities, ``infra_error``, group ids) are used
when present. Everything the page needs is computed here, in Python, so it is testable
without a browser: each episode's outcome, return and new milestones per step, the box of the
element each action acted on, and one numeric series per reward component.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.trajectory import json_safe, read_jsonl

__all__ = [
    "DETAIL_KEYS",
    "IMAGE_TYPES",
    "OUTCOMES",
    "ImageSource",
    "Run",
    "ViewError",
    "category_success",
    "inline_image",
    "load_run",
    "reward_series",
    "screenshot_path",
]

OUTCOMES: tuple[str, ...] = ("success", "failure", "infra_error")
"""Episode outcomes: an ``infra_error`` episode (an env or server failure, not the agent's)
counts in neither the successes nor the failures."""

IMAGE_TYPES: dict[str, str] = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
"""Screenshot file types the report shows, by suffix."""

MAX_INLINE_IMAGE_BYTES = 8 * 1024 * 1024
"""Larger screenshots are left out of a static report (with a note) rather than inlined."""

DETAIL_KEYS: tuple[str, ...] = ("instruction", "final_screen", "metadata", "steps", "series")
"""Episode fields the page loads only when the episode is opened."""

MAX_SERIES = 48
"""At most this many reward series per episode (in component order); the rest are counted."""

# Step fields of the trajectory format (core.trajectory.Step) and the token fields of
# trainers' rollouts: none of these is a reward series.
_STEP_FIELDS = frozenset(
    {
        "index",
        "screen",
        "action",
        "action_valid",
        "action_description",
        "reward",
        "task_reward",
        "terminated",
        "truncated",
        "milestones",
        "thought",
        "tree",
        "screenshot",
        "info",
        "target",
    }
)
_TOKEN_FIELDS = frozenset(
    {
        "prompt",
        "completion",
        "completion_text",
        "generated_text",
        "response",
        "prompt_ids",
        "prompt_token_ids",
        "completion_ids",
        "completion_token_ids",
        "token_ids",
        "logprobs",
        "completion_logprobs",
    }
)
_COMPLETION_KEYS = ("completion", "completion_text", "generated_text", "response")
_COMPLETION_ID_KEYS = ("completion_ids", "completion_token_ids", "token_ids")
_LOGPROB_KEYS = ("logprobs", "completion_logprobs")
# Counters and versions inside the wrappers' info: numbers, but not rewards.
_BOOKKEEPING = frozenset(
    {"version", "K", "k", "pointer", "expert_step", "step", "index", "episode", "seed", "hits"}
)
# Component order on the page: the outcome first, then the papers' shaped terms.
_COMPONENT_ORDER = (
    "env",
    "progress",
    "prm",
    "milestone",
    "judge",
    "semi_online",
    "policy",
    "trainer",
)
# The terms each paper pays (drawn first); other numeric info leaves are shown folded away.
_PRIMARY = frozenset(
    {
        "env.reward",
        "env.task_reward",
        "progress.value",
        "progress.delta",  # ProgRM Eq. 2
        "prm.score",
        "prm.reward",  # GUI-Shepherd
        "milestone.r_mil",
        "milestone.similarity",
        "milestone.episode_rewards",  # ADMIRE Eqs. 10-11
        "milestone.episode_total_rewards",
        "judge.reward",  # ProRe
        "semi_online.step_reward",
        "semi_online.returns",  # UI-S1
        "policy.logprob_sum",
    }
)
# Trajectory-level per-step lists a trainer may attach (GRPO/PPO advantages, returns).
_TRAINER_KEYS = ("advantages", "returns", "values")


class ViewError(ValueError):
    """A file that cannot be shown; the message names it, the record and what was wrong."""


ImageSource = Callable[[Path], str | None]
"""Turns a screenshot file (already confined to the run's folder) into an ``<img>`` source:
a ``data:`` URI in a static report, a ``/file/...`` URL under ``gui-gym serve``; None to leave
it out."""


def inline_image(path: Path) -> str | None:
    """A screenshot as a ``data:`` URI (static reports are one self-contained file).

    Returns None for a type the report does not show or a file over
    :data:`MAX_INLINE_IMAGE_BYTES`.
    """
    mime = IMAGE_TYPES.get(path.suffix.lower())
    if mime is None or path.stat().st_size > MAX_INLINE_IMAGE_BYTES:
        return None
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


@dataclass
class Run:
    """One trajectory file, ready for the page.

    Attributes:
        name: Display name (the file name; callers make names unique).
        path: The file.
        header: The ``{"header": ...}`` record of a run log, when the file starts with one.
        episodes: One page-ready dict per episode (see :func:`load_run`).
    """

    name: str
    path: Path
    header: dict[str, Any] | None = None
    episodes: list[dict[str, Any]] = field(default_factory=list)

    def to_page(self) -> dict[str, Any]:
        """The run as the page's list JSON: name, header, per-category success, and each
        episode's summary (its fields but :data:`DETAIL_KEYS`)."""
        return {
            "name": self.name,
            "header": self.header,
            "categories": category_success(self.episodes),
            "episodes": [
                {k: v for k, v in e.items() if k not in DETAIL_KEYS} for e in self.episodes
            ],
        }

    def details(self) -> list[dict[str, Any]]:
        """Each episode's :data:`DETAIL_KEYS`, what only its own page needs."""
        return [{k: e[k] for k in DETAIL_KEYS} for e in self.episodes]


def load_run(
    path: str | Path,
    *,
    name: str | None = None,
    image_source: ImageSource | None = inline_image,
    prompts: bool = False,
) -> Run:
    """Read one trajectory file.

    Each episode becomes a dict with ``task``, ``env``, ``category``, ``agent``, ``seed``,
    ``instruction``, ``outcome`` (one of :data:`OUTCOMES`), ``infra_error``, ``group``, ``n``
    (steps), ``ret`` (sum of step rewards), ``task_reward``, ``anchor_step`` (the first step
    of a fork group's own continuation), ``final_screen``, ``metadata``,
    ``steps`` (see :func:`_page_step`) and ``series`` (:func:`reward_series`).

    Args:
        path: A JSON Lines file of trajectory records (a torn last line is skipped).
        name: Display name; the file name by default.
        image_source: How a screenshot becomes an ``<img>`` source; None leaves them out.
        prompts: Also keep what the policy was shown (``Step.prompt``, as text; chat
            images as ``[image]``); off by default, as prompts repeat the screen each step.

    Raises:
        ViewError: when the file is missing or a record is not a trajectory, naming the
            file and the line.
    """
    path = Path(path)
    if not path.is_file():
        raise ViewError(f"{path}: no such file (expected a .jsonl trajectory file)")
    run = Run(name=name or path.name, path=path)
    try:
        for line, record in enumerate(read_jsonl(path), start=1):
            if isinstance(record, dict) and set(record) == {"header"}:
                run.header = json_safe(record["header"])
                continue
            run.episodes.append(_page_episode(path, line, record, image_source, prompts))
    except ViewError:
        raise
    except (ValueError, OSError) as err:
        raise ViewError(str(err)) from None
    return run


def _page_episode(
    path: Path, line: int, record: Any, image_source: ImageSource | None, prompts: bool
) -> dict[str, Any]:
    where = f"{path}:{line}"
    if not isinstance(record, dict):
        raise ViewError(f"{where}: expected a trajectory object, got {type(record).__name__}")
    metadata = record.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    raw_steps = record.get("steps", [])
    if isinstance(raw_steps, int) and not isinstance(raw_steps, bool):
        raw_steps, length = [], raw_steps  # an evaluation row: a step count, no steps
    elif isinstance(raw_steps, list):
        length = len(raw_steps)
    else:
        raise ViewError(f"{where}: 'steps' must be a list of steps, got {type(raw_steps).__name__}")
    for k, step in enumerate(raw_steps):
        if not isinstance(step, dict):
            raise ViewError(f"{where}: steps[{k}] must be an object, got {type(step).__name__}")
    infra_error = record.get("infra_error")
    success = bool(record.get("success", False))
    outcome = "infra_error" if infra_error else ("success" if success else "failure")
    steps = []
    reached: list[str] = []
    for k, step in enumerate(raw_steps):
        page_step = _page_step(path, k, step, reached, image_source)
        if prompts:
            page_step["prompt"] = _prompt_text(step.get("prompt"))
        reached = _strings(step.get("milestones"))
        steps.append(page_step)
    group = record.get("group_id", record.get("group"))
    anchor = record.get("anchor_step")
    return {
        "task": _text(record.get("task_id")),
        "env": _text(record.get("env_id")),
        "category": _text(record.get("category", metadata.get("category", ""))),
        "split": _text(metadata.get("split", "")),
        "agent": _text(record.get("agent")),
        "seed": _number(record.get("seed")),
        "instruction": _text(record.get("instruction")),
        "outcome": outcome,
        "infra_error": _text(infra_error) if infra_error else None,
        "group": None if group is None else _text(group),
        "anchor_step": anchor if isinstance(anchor, int) and not isinstance(anchor, bool) else None,
        "n": length,
        "ret": _round(sum(_number(s.get("reward")) or 0.0 for s in raw_steps)),
        "task_reward": _number(record.get("task_reward")),
        "final_screen": _text(record.get("final_screen")),
        "metadata": json_safe(metadata),
        "steps": steps,
        "series": reward_series(raw_steps, record),
    }


def _page_step(
    path: Path,
    k: int,
    step: dict[str, Any],
    reached_before: list[str],
    image_source: ImageSource | None,
) -> dict[str, Any]:
    """One step of the timeline: what was seen, done, said, reached and paid."""
    info = step.get("info")
    info = info if isinstance(info, dict) else {}
    screen = _text(step.get("screen"))
    action = _text(step.get("action"))
    tree = step.get("tree") if isinstance(step.get("tree"), dict) else None
    parsed = _parse(action)
    box, point = _target_box(tree, step.get("target"), parsed)
    image, image_note = _screenshot(path, step.get("screenshot"), image_source)
    milestones = _strings(step.get("milestones"))
    end = "terminated" if step.get("terminated") else "truncated" if step.get("truncated") else None
    out: dict[str, Any] = {
        "k": _number(step.get("index")) if step.get("index") is not None else k,
        "action": action,
        "valid": bool(step.get("action_valid", True)),
        "description": _text(step.get("action_description")),
        "error": _text(info.get("action_error")) or None,
        "reward": _number(step.get("reward")),
        "thought": _text(step.get("thought")) or None,
        "generated": _completion_text(step),
        "tokens": _token_count(step),
        "new_milestones": [m for m in milestones if m not in reached_before],
        "end": end,
        "screen": screen,
        "highlight_line": _highlight_line(screen, step.get("target"), parsed),
        "image": image,
        "image_note": image_note,
        "size": _screen_size(tree),
        "box": box,
        "point": point,
        "wireframe": _wireframe(tree) if tree is not None and image is None else None,
    }
    return out


# -------------------------------------------------------------------------------- screens


def screenshot_path(run_file: Path, relative: str) -> Path:
    """The screenshot ``relative`` names, confined to the folder of ``run_file``.

    Screenshots are stored relative to their trajectory file (``Step.screenshot``); a path
    that is absolute or climbs out (``..``, a link pointing outside) is refused, so a
    crafted file cannot pull other files into a report.

    Raises:
        ViewError: naming the path and why it was refused.
    """
    pure = PurePosixPath(relative.replace("\\", "/"))
    if not relative or pure.is_absolute() or ".." in pure.parts or "\x00" in relative:
        raise ViewError(f"screenshot path {relative!r} is not relative to the trajectory file")
    folder = run_file.parent.resolve()
    resolved = (folder / pure).resolve()
    if not resolved.is_relative_to(folder):
        raise ViewError(f"screenshot {relative!r} points outside the trajectory's folder")
    return resolved


def _screenshot(
    run_file: Path, relative: Any, image_source: ImageSource | None
) -> tuple[str | None, str | None]:
    """``(img source, note)``: the note says why a recorded screenshot is not shown."""
    if not relative or not isinstance(relative, str) or image_source is None:
        return None, None
    try:
        file = screenshot_path(run_file, relative)
    except ViewError as err:
        return None, str(err)
    if not file.is_file():
        return None, f"screenshot {relative!r} not found"
    if file.suffix.lower() not in IMAGE_TYPES:
        return None, f"screenshot {relative!r} is not an image type the report shows"
    source = image_source(file)
    if source is None:
        return None, f"screenshot {relative!r} left out (over the size limit)"
    return source, None


def _parse(action: str) -> Any:
    try:
        return parse_action(action) if action else None
    except ActionParseError:
        return None


def _elements(tree: dict[str, Any] | None) -> list[dict[str, Any]]:
    elements = tree.get("elements") if tree else None
    return [e for e in elements if isinstance(e, dict)] if isinstance(elements, list) else []


def _bounds(element: dict[str, Any]) -> list[float] | None:
    bounds = element.get("bounds")
    if not isinstance(bounds, list) or len(bounds) != 4:
        return None
    if all(type(b) is int for b in bounds):  # the usual case, without per-number checks
        return bounds
    numbers = [_number(b) for b in bounds]
    return None if any(b is None for b in numbers) else numbers  # type: ignore[return-value]


def _label(element: dict[str, Any]) -> str:
    return _text(element.get("text")) or _text(element.get("description"))


def _target_box(
    tree: dict[str, Any] | None, target: Any, parsed: Any
) -> tuple[list[float] | None, list[float] | None]:
    """The acted-on element's bounds, and the point of a coordinate action.

    The element is the one the action's index names on the screen it was chosen on, else
    the first whose identity ``(role, label, resource_id)`` is the recorded target.
    """
    point = None
    if parsed is not None and getattr(parsed, "has_point", False):
        point = [_number(parsed.x), _number(parsed.y)]
    elements = _elements(tree)
    index = getattr(parsed, "index", None)
    if index is not None:
        for element in elements:
            if element.get("index") == index:
                return _bounds(element), point
    if isinstance(target, list) and len(target) == 3:
        role, label, resource_id = (_text(t) for t in target)
        for element in elements:
            if (
                _text(element.get("role")) == role
                and _label(element) == label
                and _text(element.get("resource_id")) == resource_id
            ):
                return _bounds(element), point
    return None, point


def _highlight_line(screen: str, target: Any, parsed: Any) -> int | None:
    """The line of the text screen (``render_text``) holding the acted-on element."""
    lines = screen.split("\n")
    index = getattr(parsed, "index", None)
    if index is not None:
        marker = f" id={index}"
        for n, line in enumerate(lines):
            head = line.split(">", 1)[0]
            if line.startswith("<") and (head.endswith(marker) or f"{marker} " in head):
                return n
    if isinstance(target, list) and len(target) == 3:
        role, label = _text(target[0]), _text(target[1])
        escaped = label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        for n, line in enumerate(lines):
            if role and line.startswith(f"<{role} ") and f">{escaped}</" in line:
                return n
    return None


def _screen_size(tree: dict[str, Any] | None) -> list[float] | None:
    if tree is None:
        return None
    width, height = _number(tree.get("width")), _number(tree.get("height"))
    return [width, height] if width and height else None


WIREFRAME_LABEL_CHARS = 60
_INTERACTIVE_FLAGS = ("clickable", "long_clickable", "editable", "scrollable", "checkable")


def _wireframe(tree: dict[str, Any]) -> list[list[Any]] | None:
    """``[role, label, x0, y0, x1, y1]`` per element with a label or an action (labels cut
    to :data:`WIREFRAME_LABEL_CHARS`): the screen drawn from its tree when no screenshot was
    recorded."""
    boxes = []
    for element in _elements(tree):
        bounds = _bounds(element)
        if bounds is None or bounds[2] <= bounds[0] or bounds[3] <= bounds[1]:
            continue
        label = _label(element)
        if not label and not any(element.get(flag) for flag in _INTERACTIVE_FLAGS):
            continue  # a bare container: render_text leaves it out too
        boxes.append([_text(element.get("role")), label[:WIREFRAME_LABEL_CHARS], *bounds])
    return boxes or None


# --------------------------------------------------------------------------- model output


def _completion_text(step: dict[str, Any]) -> str | None:
    for key in _COMPLETION_KEYS:
        value = step.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _prompt_text(prompt: Any) -> str | None:
    """A prompt as text: a string as is; chat messages as ``role: content`` blocks, with
    text parts kept and images written ``[image]``."""
    if isinstance(prompt, str):
        return prompt or None
    if not isinstance(prompt, list):
        return None
    blocks = []
    for message in prompt:
        if not isinstance(message, dict):
            blocks.append(_text(message))
            continue
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                if isinstance(part, dict) and part.get("type") == "text":
                    parts.append(_text(part.get("text")))
                elif isinstance(part, dict) and part.get("type") in ("image", "image_url"):
                    parts.append("[image]")
                else:
                    parts.append(_text(part))
            content = "\n".join(parts)
        blocks.append(f"{_text(message.get('role'))}: {_text(content)}")
    return "\n\n".join(blocks) or None


def _token_count(step: dict[str, Any]) -> int | None:
    for key in _COMPLETION_ID_KEYS:
        value = step.get(key)
        if isinstance(value, list):
            return len(value)
    return None


# --------------------------------------------------------------------------- reward series


def reward_series(steps: list[dict[str, Any]], record: dict[str, Any]) -> list[dict[str, Any]]:
    """One per-step series for every numeric reward component the episode carries.

    Found in each step's ``reward`` and ``task_reward`` (component ``env``), every numeric leaf
    of its ``info`` (``progress.delta``, ``prm.score``, ``milestone.r_mil``, ``judge.score``,
    ``semi_online.step_reward``, ...; booleans as 0/1, counters such as ``version`` or
    ``pointer`` left out), per-step lists in the final step's ``info`` as long as the episode
    (``milestone.episode_rewards``, ``semi_online.returns``), numeric step fields outside the
    trajectory format (a trainer's ``advantage``), the summed log-probability of a generated
    step (``policy.logprob_sum``), and per-step lists on the trajectory or its metadata
    (``trainer.advantages``, ``trainer.returns``).

    Returns:
        ``{"component", "name", "primary", "values"}`` dicts, ``values`` one number or None
        per step, ``primary`` True for the terms the papers pay (and a trainer's numbers),
        ordered by component (env, progress, prm, milestone, judge, semi_online, policy,
        trainer, then the rest by name); at most :data:`MAX_SERIES`.
    """
    n = len(steps)
    columns: dict[str, list[float | None]] = {}

    def put(name: str, k: int, value: float | None) -> None:
        if value is None:
            return
        columns.setdefault(name, [None] * n)[k] = value

    for k, step in enumerate(steps):
        put("env.reward", k, _number(step.get("reward")))
        put("env.task_reward", k, _number(step.get("task_reward")))
        for key, value in step.items():
            if key in _STEP_FIELDS or key in _TOKEN_FIELDS:
                continue
            put(f"trainer.{key}", k, _scalar(value))
        logprobs = next((step[key] for key in _LOGPROB_KEYS if isinstance(step.get(key), list)), [])
        numbers = [_number(v) for v in logprobs]
        if numbers and all(v is not None for v in numbers):
            put("policy.logprob_sum", k, _round(sum(numbers)))  # type: ignore[arg-type]
        info = step.get("info")
        if isinstance(info, dict):
            for name, value in _leaves(info, ""):
                if isinstance(value, list):
                    whole = [_number(v) for v in value]
                    if len(whole) == n and n and all(v is not None for v in whole):
                        columns[name] = whole  # an episode-level list: one value per step
                else:
                    put(name, k, value)
    metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
    for source in (metadata, record):
        for key in _TRAINER_KEYS:
            value = source.get(key)
            if isinstance(value, list) and len(value) == n and n:
                whole = [_number(v) for v in value]
                if all(v is not None for v in whole):
                    columns[f"trainer.{key}"] = whole
    series = [
        {
            "component": name.split(".", 1)[0],
            "name": name,
            "primary": name in _PRIMARY or name.startswith("trainer."),
            "values": values,
        }
        for name, values in columns.items()
    ]
    series.sort(key=lambda s: (_component_rank(s["component"]), s["component"]))
    return series[:MAX_SERIES]


def _component_rank(component: str) -> int:
    try:
        return _COMPONENT_ORDER.index(component)
    except ValueError:
        return len(_COMPONENT_ORDER)


def _leaves(value: dict[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
    """``(dotted path, number or list)`` for the numeric leaves of an info dict."""
    for key, item in value.items():
        if key in _BOOKKEEPING:
            continue
        name = f"{prefix}{key}"
        if isinstance(item, dict):
            yield from _leaves(item, name + ".")
        elif isinstance(item, list):
            yield name, item
        else:
            number = _scalar(item)
            if number is not None:
                yield name, number


def category_success(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Success per category (``""`` for none) and overall (``category`` None, last).

    ``rate`` is successes over episodes that ended in success or failure: ``infra_error``
    episodes are counted apart, never as failures.
    """
    rows: dict[str | None, dict[str, Any]] = {}
    for episode in episodes:
        for key in (episode["category"], None):
            row = rows.setdefault(
                key, {"category": key, "episodes": 0, "success": 0, "infra_error": 0}
            )
            row["episodes"] += 1
            row["success"] += episode["outcome"] == "success"
            row["infra_error"] += episode["outcome"] == "infra_error"
    out = []
    for key in [*sorted(k for k in rows if k is not None), None]:
        row = rows.get(key)
        if row is None:
            continue
        scored = row["episodes"] - row["infra_error"]
        row["rate"] = _round(row["success"] / scored) if scored else None
        out.append(row)
    return out


# ------------------------------------------------------------------------------- coercion


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _strings(value: Any) -> list[str]:
    return [_text(v) for v in value] if isinstance(value, list) else []


def _number(value: Any) -> float | None:
    """A finite number, else None (files may hold NaN: Python's JSON reader accepts it)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int):
        return value
    return _round(value) if math.isfinite(value) else None


def _scalar(value: Any) -> float | None:
    """A number or a boolean (as 0/1) from an info leaf."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    return _number(value)


def _round(value: float) -> float:
    # 6 significant digits are plenty for a chart and keep a 1,000-episode page small
    return float(f"{value:.6g}")
