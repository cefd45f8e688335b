"""``GuiGym/SemiOnlineReplay-v0``: UI-S1's semi-online rollout over recorded expert data."""

from __future__ import annotations

import copy
import logging
import math
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gui_gym.core.actions import (
    MAX_ACTION_LENGTH,
    Action,
    ActionType,
    describe,
    target_element,
    try_parse_action,
)
from gui_gym.core.actions import candidate_actions as screen_candidates
from gui_gym.core.spaces import UnicodeText
from gui_gym.core.ui import UITree
from gui_gym.core.untrusted_text import tagged_blocks, without_lone_surrogates
from gui_gym.envs.replay.dataset import ExpertDataset, ExpertTrajectory, load_image
from gui_gym.rewards.action_match import Matcher, MatchResult, get_matcher
from gui_gym.rewards.semi_online import (
    DEFAULT_GAMMA,
    discounted_returns,
    step_reward,
    step_reward_code,
)

__all__ = ["PATCH_MODES", "HistoryEntry", "SemiOnlineReplayEnv", "ThoughtGenerator"]

logger = logging.getLogger(__name__)

PatchMode = Literal["thought_free", "off_policy_thought", "on_policy_thought", "none"]
PATCH_MODES: tuple[str, ...] = ("thought_free", "off_policy_thought", "on_policy_thought", "none")
"""The patch functions of UI-S1 Table 5, plus ``none`` (never patch)."""


class ThoughtGenerator(Protocol):
    """Writes the reasoning for a patched step: ``M_0(I, a*, S_t)`` (off-policy) or
    ``M(I, a*, H_t, S_t)`` (on-policy) of UI-S1 Table 5.

    Called with the instruction, the expert action (grammar string), the current screen and
    the history so far as ``(action, thought)`` pairs; returns the thought text.
    """

    def __call__(
        self,
        instruction: str,
        expert_action: str,
        screen: str,
        history: list[tuple[str, str | None]],
    ) -> str: ...


@dataclass
class HistoryEntry:
    """One step of the history ``H_t`` the policy conditions on.

    Attributes:
        action: The action kept in the history (the policy's own, or the expert's if patched).
        thought: The reasoning kept with it (None for a thought-free patch).
        patched: Whether the Patch Module replaced the policy's action here.
    """

    action: str
    thought: str | None
    patched: bool


def render_history(entries: list[HistoryEntry], limit: int) -> str:
    """``H_t`` as text: ``Step k: ACTION`` and ``Thought: ...`` lines, the most recent that
    fit in ``limit`` characters."""
    lines: list[str] = []
    for k, entry in enumerate(entries, start=1):
        lines.append(f"Step {k}: {entry.action}")
        if entry.thought:
            lines.append(f"Thought: {' '.join(entry.thought.split())}")
    text = "\n".join(lines)
    if len(text) > limit:  # keep the most recent steps
        text = text[len(text) - limit :]
        text = text[text.find("\n") + 1 :] if "\n" in text else text
    return text


def thought_prompt(instruction: str, history: str, screen: str, expert_action: str) -> str:
    """A prompt asking a model to write the reasoning behind a patched expert action.

    Our own wording of the idea of UI-S1 Appendix I: anchor on the goal, carry the history
    forward, end at the given action, and never reveal that the action was given.
    """
    return (
        "You are writing the inner reasoning of a GUI agent for one step.\n"
        f"Goal: {instruction}\n"
        f"Steps so far:\n{history or '(none)'}\n"
        f"Current screen:\n{screen}\n"
        f"The next action is: {expert_action}\n"
        "Reason from the goal and what has been done to why this action comes next, as if you "
        "decided it yourself. Do not say the action was given to you and do not mention "
        "coordinates. Answer as <think>...</think>."
    )


class SemiOnlineReplayEnv(gym.Env[dict[str, Any], str]):
    """Semi-online rollouts over expert trajectories (UI-S1, Sec. 3.2-3.3, Algorithm 1).

    ## Description

    Each episode replays one recorded expert trajectory ``tau^* = ((S_1^*, a_1^*), ...,
    (S_T^*, a_T^*))`` while the policy keeps its *own* history, as it would online. At step
    ``t`` the observation is the expert state ``S_t^*``. If the policy's action matches
    ``a_t^*`` (Eq. 7, decided by ``matcher``), the episode moves to ``S_{t+1}^*`` and the
    policy's action and thought enter the history. If not, and fewer than ``epsilon`` patches
    have been used, the Patch Module injects the expert action instead (Table 5): the
    history gets ``a_t^*`` with no thought (``thought_free``), with an auxiliary model's or
    the dataset's expert thought (``off_policy_thought``), or with a thought the policy must
    regenerate (``on_policy_thought``: ``thought_fn`` writes it during the step, e.g. the policy
    itself with :class:`gui_gym.train.semi_online.PolicyThoughtPatch`, as the semi-online
    trainer does; without one, ``info`` carries a prompt and :meth:`set_patch_thought` stores
    the answer). Otherwise the rollout ends there. ``info["history_description"]`` is the
    step as the history keeps it (the *executed* action: the expert's on a patched step; with
    ``history_thoughts=True`` also the kept thought): agents build their prompt history from
    it, so the policy conditions on ``H_t`` as UI-S1 does, not on its own rejected action.

    ## Action Space

    ``UnicodeText``: any gui-gym action string, including full model output; the last
    ``<action>...</action>`` block is the action and a ``<think>...</think>`` block is kept as
    the step's thought. ``Action`` objects and AndroidWorld JSON dicts are accepted too.

    ## Observation Space

    ``Dict(instruction, screen[, history][, screenshot])``: the instruction, the expert
    state's rendered screen, the history ``H_t`` as text (``Step k: ACTION`` and
    ``Thought: ...`` lines; with ``history=True``) and the screenshot (recorded file, or the
    tree drawn with Pillow; with ``screenshot=True``).

    ## Rewards

    The UI-S1 step reward (Eq. 8): ``0.1 format + 0.4 format*type + 0.5 format*type*exact``
    (``reward_scheme="paper"``), or the public code's ``0.1 format + 0.9 score``
    (``reward_scheme="code"``). ``info["semi_online"]`` has the three scores; at the episode
    end it also has the rollout (``rewards``, ``matched``, ``patched``) and its discounted
    returns (Eq. 9), ready for :func:`gui_gym.rewards.semi_online.dual_level_advantages`.
    ``info["task_reward"]`` is 1.0 at the end of an episode where every step matched.

    ## Starting State

    The first state of a trajectory drawn (seeded) from the dataset, or the one given by
    ``options={"trajectory": index_or_id}`` (``{"task": task_id}`` also works).

    ## Episode End

    Terminated when the last expert step is passed (matched or patched) or at a mismatch
    that may not be patched; truncated after ``max_steps`` steps when it is set.

    ## Arguments

    * ``dataset``: a dataset folder (``gui-gym record``/``gui-gym convert``) or an
      :class:`~gui_gym.envs.replay.dataset.ExpertDataset`;
      :data:`gui_gym.envs.replay.SAMPLE_DATASET` is a small bundled WikiHow one.
    * ``matcher``: ``"strict"`` (UI-S1 training thresholds), ``"loose"`` (AITW-style), or
      any :class:`~gui_gym.rewards.action_match.Matcher`.
    * ``patch``: ``thought_free`` (default, the paper's final choice), ``off_policy_thought``,
      ``on_policy_thought`` or ``none``.
    * ``epsilon``: patch budget per episode (1, the paper's choice; ``math.inf`` for no limit;
      0 ends at the first mismatch).
    * ``max_steps``: truncate after this many steps (default: never; an episode has at most
      ``T`` steps anyway).
    * ``thought_fn``: a :class:`ThoughtGenerator` for the thought patches.
    * ``instruction_level``: ``"high"`` (default: the goal only) or ``"low"`` (the goal and the
      current expert step's low-level instruction, AndroidControl's "low" split: a converted
      dataset's ``step_instructions``, a recording's step thoughts).
    * ``require_think``: the format score needs a ``<think>...</think>`` block (default True:
      UI-S1's output format is ``<think> ... </think> <action> ... </action>``, App. H).
      Only the reward reads it; whether the action matches the expert's (and so whether the
      rollout continues, is patched, and counts for SOP) depends on the action alone.
    * ``gamma``: discount of the returns reported at the end (0.5).
    * ``reward_scheme``: ``"paper"`` or ``"code"``.
    * ``screenshot``, ``history``, ``render_mode``, ``screen_size``: observation options.
    * ``history_thoughts``: ``info["history_description"]`` (what agents' prompt history
      shows) carries each kept step's thought too, as UI-S1's ``H_t`` does (its own for a
      matched step, the patch's for a patched one). Default False: action descriptions only,
      as online envs and SFT examples show history, so a policy trained on the replay is
      evaluated online on the same prompt form; the thought patches then live in
      ``observation["history"]`` and ``info["semi_online"]["thought"]``.
    * ``trajectory``: always replay this trajectory (index or id).
    * ``task``: always replay the first trajectory of this task id (the common argument of
      every id; ``trajectory`` wins when both are given).
    * ``category``: sample only trajectories of this category (None: all).
    * ``split``: ``"all"`` (a dataset has no splits: record each split to its own folder).
    * ``skip_bad``, ``include_failed``: passed to :meth:`ExpertDataset.load`.

    ## Version History

    * v0: initial version.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    max_instruction_length: ClassVar[int] = 4096
    max_screen_length: ClassVar[int] = 65536
    max_history_length: ClassVar[int] = 65536
    screenshot_cache_size: ClassVar[int] = 64
    """Screenshots kept in memory (most recently used), so datasets of any size fit."""

    def __init__(
        self,
        dataset: str | Path | ExpertDataset,
        *,
        matcher: str | Matcher = "strict",
        patch: PatchMode = "thought_free",
        epsilon: float = 1,
        max_steps: int | None = None,
        thought_fn: ThoughtGenerator | None = None,
        require_think: bool = True,  # UI-S1 App. H: <think> ... </think> <action> ... </action>
        instruction_level: Literal["high", "low"] = "high",
        gamma: float = DEFAULT_GAMMA,
        reward_scheme: Literal["paper", "code"] = "paper",
        screenshot: bool = False,
        history: bool = True,
        history_thoughts: bool = False,
        render_mode: str | None = None,
        screen_size: tuple[int, int] | None = None,
        trajectory: int | str | None = None,
        skip_bad: bool = False,
        include_failed: bool = False,
        task: str | None = None,
        split: str = "all",
        category: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}"
            )
        if patch not in PATCH_MODES:
            raise ValueError(f"patch must be one of {', '.join(PATCH_MODES)}, got {patch!r}")
        if isinstance(epsilon, bool) or not isinstance(epsilon, int | float):
            raise ValueError(f"epsilon must be a non-negative int or math.inf, got {epsilon!r}")
        if not (epsilon == math.inf or (epsilon >= 0 and float(epsilon).is_integer())):
            raise ValueError(f"epsilon must be a non-negative int or math.inf, got {epsilon!r}")
        if max_steps is not None and (
            not isinstance(max_steps, int) or isinstance(max_steps, bool) or max_steps < 1
        ):
            raise ValueError(f"max_steps must be a positive int or None, got {max_steps!r}")
        if instruction_level not in ("high", "low"):
            raise ValueError(
                f"instruction_level must be 'high' or 'low', got {instruction_level!r}"
            )
        self.instruction_level = instruction_level
        if reward_scheme not in ("paper", "code"):
            raise ValueError(f"reward_scheme must be 'paper' or 'code', got {reward_scheme!r}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
        if thought_fn is not None and not callable(thought_fn):
            raise TypeError("thought_fn must be callable")
        for name, flag in (
            ("screenshot", screenshot),
            ("history", history),
            ("history_thoughts", history_thoughts),
            ("require_think", require_think),
            ("skip_bad", skip_bad),
            ("include_failed", include_failed),
        ):
            if not isinstance(flag, bool | np.bool_):
                raise TypeError(f"{name} must be True or False, got {flag!r}")
        if isinstance(dataset, ExpertDataset):
            self.dataset = dataset
        elif isinstance(dataset, str | Path):
            self.dataset = ExpertDataset.load(
                dataset, skip_bad=skip_bad, include_failed=include_failed
            )
        else:
            raise TypeError(
                "dataset must be a dataset folder or an ExpertDataset, got "
                f"{type(dataset).__name__}; record one with `gui-gym record` or use "
                "gui_gym.envs.replay.SAMPLE_DATASET"
            )
        self.matcher: Matcher = get_matcher(matcher)
        self.patch: str = patch
        self.epsilon: float = float(epsilon) if epsilon == math.inf else int(epsilon)
        self.max_steps = max_steps
        self.thought_fn = thought_fn
        self.require_think = bool(require_think)
        self.gamma = float(gamma)
        self.reward_scheme = reward_scheme
        self.screenshot = bool(screenshot)
        self.history = bool(history)
        self.history_thoughts = bool(history_thoughts)
        self.render_mode = render_mode
        self.screen_size: tuple[int, int] = tuple(screen_size or self.dataset.screen_size)  # type: ignore[assignment]
        if len(self.screen_size) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in self.screen_size
        ):
            raise ValueError(f"screen_size must be (width, height) in pixels, got {screen_size!r}")
        if split != "all":
            raise ValueError(
                f"split must be 'all' for a replay dataset (it has no splits; record each "
                f"split to its own folder), got {split!r}"
            )
        fixed = trajectory if trajectory is not None else task
        self._fixed: int | None = self.dataset.index_of(fixed) if fixed is not None else None
        self._pool = list(range(len(self.dataset)))
        if category is not None:
            self._pool = [i for i, t in enumerate(self.dataset) if t.category == category]
            if not self._pool:
                known = sorted({t.category for t in self.dataset if t.category})
                raise ValueError(
                    f"unknown category {category!r}; this dataset has: {', '.join(known)}"
                )
        self._shots: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()

        obs_spaces: dict[str, spaces.Space[Any]] = {
            "instruction": UnicodeText(self.max_instruction_length),
            "screen": UnicodeText(self.max_screen_length),
        }
        if self.history:
            obs_spaces["history"] = UnicodeText(self.max_history_length)
        if self.screenshot:
            width, height = self.screen_size
            obs_spaces["screenshot"] = spaces.Box(0, 255, (height, width, 3), np.uint8)
        self.observation_space = spaces.Dict(obs_spaces)
        self.action_space = UnicodeText(MAX_ACTION_LENGTH)

        self.trajectory: ExpertTrajectory | None = None
        self.trajectory_index = -1
        self._t = 0
        self._steps = 0
        self._patches = 0
        self._history: list[HistoryEntry] = []
        self._rewards: list[float] = []
        self._matched: list[bool] = []
        self._type_matched: list[bool] = []
        self._patched: list[bool] = []
        self._first_mismatch: int | None = None
        self._done = False
        self._completed = False
        self._warned_done = False

    # ---------------------------------------------------------------------------- gym contract

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start replaying a trajectory.

        Args:
            seed: Seeds the choice of trajectory.
            options: ``{"trajectory": index or trajectory_id}`` or ``{"task": task_id}``.

        Raises:
            ValueError: for unknown options.
            KeyError: for a trajectory that is not in the dataset.
        """
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - {"trajectory", "task"}
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {sorted(unknown)}; allowed: 'trajectory', 'task'"
            )
        key = options.get("trajectory", options.get("task"))
        if key is not None:
            index = self.dataset.index_of(key)
        elif self._fixed is not None:
            index = self._fixed
        else:
            index = self._pool[int(self.np_random.integers(len(self._pool)))]
        self.trajectory_index = index
        self.trajectory = self.dataset[index]
        self._t = 0
        self._steps = 0
        self._patches = 0
        self._history = []
        self._rewards, self._matched, self._patched = [], [], []
        self._type_matched = []
        self._first_mismatch = None
        self._done = False
        self._completed = False
        self._warned_done = False
        info = self._base_info("", True, None, "", False)
        info["action_target"] = None
        info["semi_online"] = self._progress_info()
        return self._observation(), info

    def step(
        self, action: str | Action | dict[str, Any]
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Judge ``action`` against the expert's, then advance, patch or end (Algorithm 1)."""
        trajectory = self.trajectory
        if trajectory is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self._done:
            if not self._warned_done:
                logger.warning("step() called after the episode ended; call reset()")
                self._warned_done = True
            info = self._base_info("", False, "episode already ended; call reset()", "", False)
            info["semi_online"] = self._progress_info()
            return self._observation(), 0.0, True, False, info

        expert = trajectory.steps[self._t]
        own_thought = _extract_thought(action)
        predicted, error = try_parse_action(action)
        format_ok = predicted is not None and (not self.require_think or own_thought is not None)
        if predicted is None:
            result = MatchResult(False, False, f"unparseable action: {error}")
        else:
            result = self.matcher(predicted, expert.action, expert.tree)
        # The reward is gated on the format (UI-S1 Eq. 8); continuing, patching and SOP
        # depend on whether the action itself matches the expert's.
        matched = predicted is not None and result.exact
        type_ok = format_ok and result.type_ok
        exact_ok = format_ok and result.exact
        reward = (step_reward if self.reward_scheme == "paper" else step_reward_code)(
            format_ok, type_ok, exact_ok
        )
        self._steps += 1
        judged = self._t
        expert_text = str(expert.action)
        regenerate = False
        prompt = None
        executed: str | None
        kept_thought: str | None
        patched = False
        if matched:
            assert predicted is not None
            executed, kept_thought = str(predicted), own_thought
        elif self.patch != "none" and self._patches < self.epsilon:
            patched = True
            self._patches += 1
            executed = expert_text
            kept_thought, regenerate = self._patch_thought(expert_text, expert.thought)
            if regenerate:
                prompt = thought_prompt(
                    trajectory.instruction,
                    render_history(self._history, self.max_history_length),
                    expert.screen,
                    expert_text,
                )
        else:
            executed, kept_thought = None, None
        if not matched and self._first_mismatch is None:
            self._first_mismatch = judged
        self._rewards.append(reward)
        self._matched.append(matched)
        self._type_matched.append(predicted is not None and result.type_ok)
        self._patched.append(patched)

        terminated = False
        if executed is None:
            terminated = True  # Algorithm 1: the patch budget is spent, the rollout ends
        else:
            self._history.append(HistoryEntry(executed, kept_thought, patched))
            self._t += 1
            if self._t >= len(trajectory.steps):
                self._completed = True
                terminated = True
        truncated = not terminated and self.max_steps is not None and self._steps >= self.max_steps
        self._done = terminated or truncated
        success = self._done and self._completed and self._first_mismatch is None
        description = (
            describe(predicted, expert.tree) if predicted is not None else "invalid action"
        )
        action_text = (
            str(predicted)
            if predicted is not None
            else (without_lone_surrogates(action) if isinstance(action, str) else repr(action))
        )
        info = self._base_info(action_text, predicted is not None, error, description, success)
        if executed is not None:
            # H_{t+1} = H_t + (S_t, a_t^patch, T_t^patch) (UI-S1 Algorithm 1): the history shows
            # the action the replay moved on with, and its kept thought
            shown = describe(expert.action, expert.tree) if patched else description
            if self.history_thoughts and kept_thought:
                shown = f"{shown} (thought: {' '.join(kept_thought.split())})"
            info["history_description"] = shown
        target = target_element(predicted, expert.tree) if predicted is not None else None
        info["action_target"] = None if target is None else target.identity
        details = self._progress_info()
        details.update(
            {
                "expert_step": judged,
                "expert_action": expert_text,
                "format_ok": format_ok,
                "type_ok": type_ok,
                "exact_ok": exact_ok,
                "match_reason": result.reason,
                "matched": matched,
                "patched": patched,
                "executed_action": executed,
                "thought": kept_thought,
                "expert_thought": expert.thought,
                "regenerate_thought": regenerate,
                "thought_prompt": prompt,
                "step_reward": reward,
            }
        )
        if self._done:
            details["rollout"] = {
                "rewards": list(self._rewards),
                "matched": list(self._matched),
                "type_matched": list(self._type_matched),
                "patched": list(self._patched),
            }
            details["returns"] = discounted_returns(self._rewards, self._matched, gamma=self.gamma)
        info["semi_online"] = details
        return self._observation(), float(reward), terminated, truncated, info

    def render(self) -> str | np.ndarray | None:
        """``ansi``: instruction, replay position and screen; ``rgb_array``: the screenshot."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode to gym.make")
            return None
        if self.trajectory is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        if self.render_mode == "rgb_array":
            return self._screenshot()
        t = self.trajectory
        header = (
            f"[{t.trajectory_id}] {t.instruction}\n"
            f"expert step {min(self._t + 1, len(t))}/{len(t)}, patches used "
            f"{self._patches}/{self.epsilon:g}"
        )
        return f"{header}\n{self._screen_text()}\n"

    # ----------------------------------------------------------------------------- public extras

    @property
    def ui_tree(self) -> UITree:
        """The UI tree of the current expert state."""
        if self.trajectory is None:
            raise gym.error.ResetNeeded("call reset() first")
        if self._t >= len(self.trajectory.steps):
            return self.trajectory.final_tree
        return self.trajectory.steps[self._t].tree

    @property
    def steps_taken(self) -> int:
        return self._steps

    @property
    def expert_step(self) -> int:
        """Index of the expert step the next action is judged against."""
        return self._t

    @property
    def history_entries(self) -> list[HistoryEntry]:
        """The history ``H_t`` as kept so far (copies)."""
        return [HistoryEntry(e.action, e.thought, e.patched) for e in self._history]

    def oracle_action(self) -> Action:
        """The expert's action at the current step (``DONE()`` once the trajectory is over)."""
        if self.trajectory is None:
            raise gym.error.ResetNeeded("call reset() first")
        if self._t >= len(self.trajectory.steps):
            return Action(ActionType.DONE)
        return self.trajectory.steps[self._t].action

    def candidate_actions(self) -> list[Action]:
        """Sensible actions on the current expert state, as ``GuiEnv.candidate_actions``
        builds them (random agents sample from it); a state without a UI tree offers taps on
        a grid, scrolls and back."""
        tree = self.ui_tree
        assert self.trajectory is not None
        texts = self.trajectory.vocabulary or tuple(self.trajectory.instruction.split()[:3])
        if tree.elements:
            return screen_candidates(tree, texts)
        out = [
            Action(ActionType.CLICK, x=int(gx * tree.width), y=int(gy * tree.height))
            for gx in (0.25, 0.5, 0.75)
            for gy in (0.15, 0.35, 0.55, 0.75, 0.9)
        ]
        out.extend(Action(ActionType.SCROLL, direction=d) for d in ("up", "down"))
        out.append(Action(ActionType.GOBACK))
        return out

    def set_patch_thought(self, thought: str) -> None:
        """Store a regenerated thought for the last (patched) step of the history.

        Call it after a step whose ``info["semi_online"]["regenerate_thought"]`` is True, with
        the policy's answer to ``info["semi_online"]["thought_prompt"]``.

        Raises:
            ValueError: when the last step was not patched.
        """
        if not self._patched or not self._patched[-1]:
            raise ValueError("the last step was not patched; there is no thought to set")
        self._history[-1].thought = _extract_thought(thought) or thought.strip()

    def fork(self) -> SemiOnlineReplayEnv:
        """An independent copy in the same state (the dataset is shared, read-only)."""
        clone = copy.copy(self)
        clone._history = self.history_entries
        clone._rewards = list(self._rewards)
        clone._matched = list(self._matched)
        clone._type_matched = list(self._type_matched)
        clone._patched = list(self._patched)
        clone._np_random = copy.deepcopy(self._np_random)
        clone._shots = OrderedDict(self._shots)
        return clone

    # ---------------------------------------------------------------------------------- helpers

    def _patch_thought(
        self, expert_action: str, expert_thought: str | None
    ) -> tuple[str | None, bool]:
        """``(thought kept in the history, whether the policy must regenerate it)``."""
        if self.patch == "thought_free":
            return None, False
        if self.thought_fn is not None:
            assert self.trajectory is not None
            pairs = [(e.action, e.thought) for e in self._history]
            screen = self.trajectory.steps[self._t].screen
            text = str(self.thought_fn(self.trajectory.instruction, expert_action, screen, pairs))
            # a model's answer keeps its <think> block's content, as set_patch_thought does
            return _extract_thought(text) or text.strip(), False
        if self.patch == "off_policy_thought" and expert_thought:
            return expert_thought, False
        return None, True

    def _screen_text(self) -> str:
        assert self.trajectory is not None
        t = self.trajectory
        text = t.steps[self._t].screen if self._t < len(t.steps) else t.final_screen
        return text[: self.max_screen_length]

    def _screenshot(self) -> np.ndarray:
        assert self.trajectory is not None
        t = self.trajectory
        key = (self.trajectory_index, self._t)
        cached = self._shots.get(key)
        if cached is not None:
            self._shots.move_to_end(key)
            return cached.copy()
        if self._t < len(t.steps):
            path, tree = t.steps[self._t].screenshot, t.steps[self._t].tree
        else:
            path, tree = t.final_screenshot, t.final_tree
        if path is not None:
            image = load_image(path, self.screen_size)
        else:
            from gui_gym.core.draw import draw_screenshot

            # Draw a copy: the tree would cache its picture, and a dataset keeps every tree.
            image = draw_screenshot(UITree(tree.elements, tree.width, tree.height, tree.name))
            if (image.shape[1], image.shape[0]) != self.screen_size:
                from PIL import Image

                resized = Image.fromarray(image).resize(self.screen_size, Image.Resampling.BILINEAR)
                image = np.asarray(resized, dtype=np.uint8).copy()
        self._shots[key] = image
        if len(self._shots) > self.screenshot_cache_size:
            self._shots.popitem(last=False)
        return image.copy()

    def _observation(self) -> dict[str, Any]:
        assert self.trajectory is not None
        instruction = self.trajectory.instruction
        if self.instruction_level == "low" and self._t < len(self.trajectory.steps):
            step = self.trajectory.steps[self._t].thought
            if step:  # AndroidControl's low-level instruction for this step
                instruction = f"{instruction}\nCurrent step: {step}"
        obs: dict[str, Any] = {
            "instruction": instruction[: self.max_instruction_length],
            "screen": self._screen_text(),
        }
        if self.history:
            obs["history"] = render_history(self._history, self.max_history_length)
        if self.screenshot:
            obs["screenshot"] = self._screenshot()
        return obs

    def _base_info(
        self, action_text: str, valid: bool, error: str | None, description: str, success: bool
    ) -> dict[str, Any]:
        assert self.trajectory is not None
        t = self.trajectory
        reached = t.steps[self._t - 1].milestones if self._t > 0 else ()
        return {
            "task_id": t.task_id,
            "category": t.category,
            "step": self._steps,
            "action": action_text,
            "action_valid": valid,
            "action_error": error,
            "action_description": description,
            "milestones": list(reached),
            "success": success,
            "task_reward": (1.0 if success else 0.0) if self._done else 0.0,
        }

    def _progress_info(self) -> dict[str, Any]:
        assert self.trajectory is not None
        t = self.trajectory
        prefix = self._first_mismatch if self._first_mismatch is not None else self._t
        return {
            "trajectory_id": t.trajectory_id,
            "trajectory_index": self.trajectory_index,
            "expert_steps": len(t),
            "patch": self.patch,
            "epsilon": self.epsilon,
            "patches_used": self._patches,
            "matched_prefix": prefix,
            "completed": self._completed,
        }


def _extract_thought(action: Any) -> str | None:
    # the length limit comes first, as in parse_action: the text is untrusted model output
    if not isinstance(action, str) or len(action) > MAX_ACTION_LENGTH:
        return None
    blocks = tagged_blocks(action, "think")
    if not blocks:
        return None
    text = blocks[-1].strip()
    return text or None
