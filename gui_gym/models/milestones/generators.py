"""ADMIRE's milestone generators (Adaptive Milestone Reward for GUI Agents).

Generators (one protocol, :class:`MilestoneGenerator`) turn a successful trajectory into
milestones (Eq. 6) or refine existing milestones with a new success (Eq. 7):

* :class:`LLMMilestoneGenerator`: the paper's way. Initialisation and refinement prompts in
  the spirit of the appendix (Figures 14 and 15) go to any :class:`~gui_gym.models.llm.LLM`;
  the answer must be a JSON array of short strings, else :class:`MilestoneGenerationError`
  says why and nothing is stored.
* :class:`TrajectoryMilestoneGenerator`: no LLM. The milestones are the action descriptions
  of the key steps of a success; a later success refines them by a soft longest common
  subsequence (steps every success needed stay; a clearly shorter route replaces the list).

The matchers that score actions against the milestones are in
:mod:`~gui_gym.models.milestones.matchers`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from gui_gym.core.actions import ActionType
from gui_gym.core.trajectory import Trajectory
from gui_gym.core.untrusted_text import load_json, strip_code_fence
from gui_gym.models.embeddings.embedders import Embedder, cosine_matrix, default_embedder
from gui_gym.models.llm.base import LLM, ask_until_parsed
from gui_gym.models.llm.chat_messages import Prompt
from gui_gym.models.llm.vision_prompts import (
    ScreenshotReader,
    evenly_spaced,
    screenshot_prompt,
    use_screenshots,
)
from gui_gym.rewards.milestones import (
    DEFAULT_SKIP_TYPES,
    alignment_text,
    generalize_typed_text,
    key_step_descriptions,
    merge_milestones,
)

__all__ = [
    "LLMMilestoneGenerator",
    "MilestoneGenerationError",
    "MilestoneGenerator",
    "TrajectoryMilestoneGenerator",
    "parse_milestone_list",
    "trajectory_screenshots",
]


class MilestoneGenerationError(ValueError):
    """A generator produced nothing usable (unparseable LLM output, a trajectory with no
    key step); the message says why. The store is left unchanged."""


@runtime_checkable
class MilestoneGenerator(Protocol):
    """Produces a task's milestones from successful trajectories (ADMIRE Sec. 3.1)."""

    name: str

    def initialize(self, trajectory: Trajectory) -> list[str]:
        """First milestones from one successful trajectory (Eq. 6).

        Raises:
            MilestoneGenerationError: when no milestones can be produced.
        """
        ...

    def refine(self, trajectory: Trajectory, milestones: Sequence[str]) -> list[str]:
        """Milestones refined with a new successful trajectory (Eq. 7); returning the input
        unchanged keeps the current version.

        Raises:
            MilestoneGenerationError: when no milestones can be produced.
        """
        ...


# ------------------------------------------------------------------------------- parsing


def parse_milestone_list(text: str, max_milestones: int = 20, max_length: int = 200) -> list[str]:
    """Parse an LLM's milestone answer strictly.

    Accepted: a JSON array of distinct non-empty strings, optionally inside one Markdown code
    fence, nothing else around it. Strings are stripped; placeholders such as ``<Name>`` are
    kept verbatim. Parsed with ``json.loads`` only; nothing is evaluated.

    Args:
        text: The model's completion.
        max_milestones: Most milestones accepted.
        max_length: Longest milestone accepted, in characters.

    Returns:
        The milestones.

    Raises:
        MilestoneGenerationError: naming what is wrong with ``text``.
    """
    body = strip_code_fence(text.strip())
    if not body.startswith("["):
        raise MilestoneGenerationError(f"expected a JSON array, got {_preview(text)}")
    try:
        value = load_json(body)
    except ValueError as err:
        message = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
        raise MilestoneGenerationError(f"not valid JSON ({message}): {_preview(text)}") from None
    if not isinstance(value, list):
        raise MilestoneGenerationError(f"expected a JSON array, got {type(value).__name__}")
    if not value:
        raise MilestoneGenerationError("the array is empty")
    if len(value) > max_milestones:
        raise MilestoneGenerationError(f"{len(value)} milestones; at most {max_milestones}")
    out: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise MilestoneGenerationError(f"item {i} is a {type(item).__name__}, not a string")
        item = " ".join(item.split())
        if not item:
            raise MilestoneGenerationError(f"item {i} is empty")
        if len(item) > max_length:
            raise MilestoneGenerationError(f"item {i} has {len(item)} characters (> {max_length})")
        if item in out:
            raise MilestoneGenerationError(f"item {i} repeats {item!r}")
        out.append(item)
    return out


def _preview(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _action_list(trajectory: Trajectory) -> str:
    lines = [
        f"{i + 1}. {step.action_description}"
        for i, step in enumerate(trajectory.steps)
        if step.action_valid and step.action_description
    ]
    return "\n".join(lines) if lines else "(no valid actions)"


def trajectory_screenshots(
    trajectory: Trajectory, image_root: str | Path | None = None
) -> list[tuple[int, Any]]:
    """``(step index, HxWx3 uint8 screenshot)`` of each step of ``trajectory`` that has one,
    in order: a recorded step's ``screenshot`` path (``gui-gym record --screenshots``;
    relative paths are read from ``image_root``, the dataset folder) or an in-memory array.

    Raises:
        ValueError: for a relative path without ``image_root``, or a file that is not a
            readable image.
    """
    from PIL import Image, UnidentifiedImageError

    out: list[tuple[int, Any]] = []
    for step in trajectory.steps:
        shot: Any = step.screenshot
        if shot is None:
            continue
        if isinstance(shot, str | Path):
            path = Path(shot)
            if not path.is_absolute():
                if image_root is None:
                    raise ValueError(
                        f"step {step.index} of {trajectory.task_id!r} has the relative "
                        f"screenshot path {str(shot)!r}: give image_root (the dataset folder)"
                    )
                path = Path(image_root) / path
            try:
                with Image.open(path) as image:
                    shot = np.asarray(image.convert("RGB"), dtype=np.uint8)
            except (OSError, UnidentifiedImageError, ValueError) as err:
                raise ValueError(f"screenshot {path} is not a readable image: {err}") from None
        out.append((step.index, np.asarray(shot, dtype=np.uint8)))
    return out


# ------------------------------------------------------------------------- LLM generator

INIT_PROMPT = """You are an expert at operating mobile and web apps. Below is a task that an \
agent has completed successfully, with the actions it took, in order. Some of the actions may \
be redundant or unnecessary.

Distil the actions into milestones: the few essential sub-goals without which the task cannot \
be done. Milestones must
- be logically distinct stages of progress, in the order they happen;
- be short, clear, and not overlap or repeat each other;
- include only necessary steps, leaving out redundant or exploratory ones;
- keep the important action words (open, click, type, search, save, ...) unchanged.
Replace task-specific details (names, dates, events, entries, files, paths, typed text) with \
generic placeholders such as <Name>, <Date>, <Event>, <Entry>, <File>, <Path> or <Text>, for \
example "Type <Name> as the note name" or "Open the <Entry> on the page".

Answer with a strict JSON array of milestone strings and nothing else: no numbering, no \
explanation, no other text.

Task: {task}
Instruction: {instruction}
Actions of the successful trajectory (ordered; may be redundant):
{actions}

JSON array of milestones:"""

REFINE_PROMPT = """You are an expert at refining the milestones of mobile and web app tasks. \
Below are a task, its current milestones, and the actions of a new successful trajectory, in \
order. Some of the actions may be redundant or unnecessary.

Assume the current milestones are good enough. Change them only if the new trajectory clearly \
shows a shorter, more precise or more effective way to reach the goal; otherwise return them \
exactly as they are. If you change them, each milestone must be
- a short executable step that starts with an action verb;
- clear and not redundant with the others;
- general: task-specific details (names, dates, events, entries, paths, typed text) replaced \
by placeholders such as <Name>, <Date>, <Event>, <Entry>, <Path> or <Text>.

Answer with a strict JSON array of milestone strings and nothing else: no numbering, no \
explanation, no other text.

Task: {task}
Instruction: {instruction}
Current milestones (JSON): {milestones}
Actions of the new successful trajectory (ordered; may be redundant):
{actions}

JSON array of the final milestones:"""


class LLMMilestoneGenerator(ScreenshotReader):
    """Milestones written by an LLM from a successful trajectory (ADMIRE Eq. 6 and 7).

    The prompts follow the appendix's initialisation and refinement prompts (Figures 14 and
    15): the trajectory is given as its action descriptions and, when its steps have
    screenshots (:func:`trajectory_screenshots`) and the backend reads images, with the
    screenshots the actions were taken on, each labelled with its action's number, before the
    prompt. The answer is parsed by :func:`parse_milestone_list`.

    Args:
        llm: Any :class:`~gui_gym.models.llm.LLM`.
        max_new_tokens: Generation budget.
        temperature: Sampling temperature (0 is greedy).
        max_milestones: Most milestones accepted from one answer.
        max_length: Longest milestone accepted, in characters.
        init_prompt, refine_prompt: Templates with ``{task}``, ``{instruction}``,
            ``{actions}`` (and ``{milestones}`` for refinement) to override the defaults.
        screenshots: None (automatic: show the trajectory's screenshots when it has them; a
            text-only backend then is an error, never a silent drop), True (always; a
            trajectory without screenshots is an error) or False (action descriptions only).
            See :mod:`gui_gym.models.llm.vision_prompts`.
        max_images: Most screenshots one prompt shows: evenly spread over the steps, the
            first and last always among them.
        image_root: Folder that relative screenshot paths are read from (a recorded
            dataset's folder).

    Raises:
        TypeError: when ``llm`` has no ``generate`` method.
        ValueError: for bad limits, or ``screenshots=True`` with a text-only backend.
    """

    name = "llm"

    def __init__(
        self,
        llm: LLM,
        *,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        max_milestones: int = 20,
        max_length: int = 200,
        init_prompt: str = INIT_PROMPT,
        refine_prompt: str = REFINE_PROMPT,
        screenshots: bool | None = None,
        max_images: int = 8,
        image_root: str | Path | None = None,
    ):
        if not callable(getattr(llm, "generate", None)):
            raise TypeError(f"llm must have generate(prompts, ...), got {type(llm).__name__}")
        if max_milestones < 1 or max_length < 1:
            raise ValueError(
                f"max_milestones and max_length must be >= 1, got {max_milestones}, {max_length}"
            )
        self._init_screenshots(llm, screenshots, max_images)
        self.image_root = image_root
        self.llm = llm
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.max_milestones = max_milestones
        self.max_length = max_length
        self.init_prompt = init_prompt
        self.refine_prompt = refine_prompt

    def _with_screenshots(self, prompt: str, trajectory: Trajectory) -> Prompt:
        """``prompt`` after the trajectory's screenshots, when it shows them."""
        if self.screenshots is False:
            return prompt
        shots = trajectory_screenshots(trajectory, self.image_root)
        owner = type(self).__name__
        if not use_screenshots(self.llm, self.screenshots, bool(shots), owner, "trajectory"):
            return prompt
        picked = [shots[i] for i in evenly_spaced(len(shots), self.max_images)]
        return screenshot_prompt(
            prompt, [(f"Screen before action {index + 1}:", image) for index, image in picked]
        )

    def _ask(self, prompt: Prompt) -> list[str]:
        """The milestones of the one reply to ``prompt`` (no retry: ADMIRE asks once).

        Raises:
            MilestoneGenerationError: when the reply is not a usable milestone list.
            LLMError: when the backend fails.
        """
        [answer] = ask_until_parsed(
            self.llm,
            [prompt],
            lambda text: parse_milestone_list(text, self.max_milestones, self.max_length),
            retries=0,
            max_new_tokens=self.max_new_tokens,
            temperature=self.temperature,
        )
        return answer.result()

    def initialize(self, trajectory: Trajectory) -> list[str]:
        """Milestones from ``trajectory`` (Eq. 6, initialisation prompt)."""
        prompt = self.init_prompt.format(
            task=trajectory.task_id,
            instruction=trajectory.instruction,
            actions=_action_list(trajectory),
        )
        return self._ask(self._with_screenshots(prompt, trajectory))

    def refine(self, trajectory: Trajectory, milestones: Sequence[str]) -> list[str]:
        """``milestones`` refined with ``trajectory`` (Eq. 7, refinement prompt)."""
        prompt = self.refine_prompt.format(
            task=trajectory.task_id,
            instruction=trajectory.instruction,
            milestones=json.dumps(list(milestones), ensure_ascii=False),
            actions=_action_list(trajectory),
        )
        return self._ask(self._with_screenshots(prompt, trajectory))


# ------------------------------------------------------------------ trajectory generator


class TrajectoryMilestoneGenerator:
    """Milestones from the key steps of successful trajectories, without an LLM.

    Initialisation keeps the action descriptions of the key steps of one success
    (:func:`~gui_gym.rewards.milestones.key_step_descriptions`: valid actions that are not
    scrolls, waits or ``DONE``, with loops through a repeated screen and detours undone by
    ``GOBACK`` removed). Refinement aligns the current milestones with a new success's key
    steps by a soft longest common subsequence over embedding cosine, typed text left out of
    the comparison (:func:`~gui_gym.rewards.milestones.merge_milestones`): what both needed
    stays, in the current wording, except that text typed differently into the same field
    becomes the placeholder ``<Text>``; a clearly different and shorter route replaces the
    list.

    Args:
        embedder: Embeds descriptions for the soft match; None uses the shared MiniLM.
        match_threshold: Cosine at which two descriptions count as the same step.
        min_overlap: Least soft-LCS overlap for two successes to count as one strategy.
        skip_types: Action types that are never milestones.
        drop_detours: Remove ``action, GOBACK`` pairs.
        erase_loops: Cut loops through a screen seen before (needs recorded screens).
    """

    name = "trajectory"

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        match_threshold: float = 0.8,
        min_overlap: float = 0.5,
        skip_types: Collection[ActionType] = DEFAULT_SKIP_TYPES,
        drop_detours: bool = True,
        erase_loops: bool = True,
    ):
        if not 0.0 <= match_threshold <= 1.0 or not 0.0 <= min_overlap <= 1.0:
            raise ValueError(
                f"match_threshold and min_overlap must be in [0, 1], "
                f"got {match_threshold}, {min_overlap}"
            )
        self.embedder = embedder if embedder is not None else default_embedder("minilm")
        self.match_threshold = match_threshold
        self.min_overlap = min_overlap
        self.skip_types = frozenset(skip_types)
        self.drop_detours = drop_detours
        self.erase_loops = erase_loops

    def key_steps(self, trajectory: Trajectory) -> list[str]:
        """The key-step descriptions of ``trajectory``."""
        return key_step_descriptions(
            trajectory.steps, self.skip_types, self.drop_detours, self.erase_loops
        )

    def initialize(self, trajectory: Trajectory) -> list[str]:
        """The key steps of ``trajectory`` as milestones."""
        steps = self.key_steps(trajectory)
        if not steps:
            raise MilestoneGenerationError(
                f"trajectory of {trajectory.task_id!r} has no key step "
                f"({len(trajectory.steps)} steps, all skipped)"
            )
        return steps

    def refine(self, trajectory: Trajectory, milestones: Sequence[str]) -> list[str]:
        """``milestones`` merged with the key steps of ``trajectory`` by Soft-LCS."""
        steps = self.key_steps(trajectory)
        if not milestones:
            return self.initialize(trajectory)
        if not steps:
            return list(milestones)
        sims = cosine_matrix(
            self.embedder.encode([alignment_text(m) for m in milestones]),
            self.embedder.encode([alignment_text(d) for d in steps]),
        )
        return merge_milestones(
            milestones,
            steps,
            sims,
            self.match_threshold,
            self.min_overlap,
            combine=generalize_typed_text,
        )
