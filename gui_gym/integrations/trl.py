"""gui-gym envs in TRL's ``GRPOTrainer``: ``environment_factory`` and the task dataset.

::

    from trl import GRPOConfig, GRPOTrainer
    from gui_gym.integrations.trl import make_environment_factory, metric_functions, task_dataset

    factory = make_environment_factory("GuiGym/WikiHow-v0", reward="outcome+progress")
    metrics = metric_functions()          # success and reward components, logged (weight 0)
    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B",
        train_dataset=task_dataset("GuiGym/WikiHow-v0", split="train"),
        environment_factory=factory,
        reward_funcs=metrics,
        args=GRPOConfig(reward_weights=[0.0] * len(metrics), ...),
    )

TRL (>= 1.16) calls the factory with no arguments for each rollout slot, then
``reset(**row)`` with a dataset row, exposes every public method with a docstring as a tool
(its typed arguments become the tool's JSON schema), and calls ``get_reward()`` once the
rollout ends. Here:

* ``reset(task_id=..., seed=...)`` starts that task and returns the instruction and the
  screen (and, with ``screenshot=True``, the screenshot as an image block);
* the tools are gui-gym's actions: ``click``, ``long_click``, ``input_text``, ``scroll``,
  ``go_back``, ``home``, ``enter``, ``open_app``, ``answer``, ``wait`` and ``done``; each
  steps the env and returns the next screen (or how the episode ended);
* ``get_reward()`` is the episode's return under the same ``--reward`` expression as
  ``gui-gym train`` (:class:`~gui_gym.train.reward_stack.RewardStack`): the sum of the wrapped
  env's step rewards, ADMIRE's milestone credit included. TRL's GRPO is episode-level: it
  has one reward per rollout, so ADMIRE's step-level advantages (Eq. 13) and PPO's per-step
  credit do not exist there (docs/engines.md).

Milestones are refined after each success in the rollout (``adaptive=True``, online credit),
not once per batch as gui-gym's own trainer does: TRL has no batch hook an env can use.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any, ClassVar

__all__ = [
    "METRICS",
    "make_environment_factory",
    "metric_functions",
    "task_dataset",
]

METRICS = ("success", "outcome", "progress", "milestone", "prm", "format", "steps")
"""What :func:`metric_functions` can log per rollout."""

SYSTEM_PROMPT = (
    "You operate a graphical user interface to complete the user's task, one tool call at a "
    "time. Each screen is a list of elements, one a line, each with its id. Call click, "
    "input_text, scroll, ... on element ids; call answer to reply to a question and done when "
    "the task is complete."
)


def _require_trl() -> Any:
    try:
        import trl
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            "gui_gym.integrations.trl needs TRL: pip install 'gui-gym[trl]'"
        ) from err
    return trl


def _image_block(image: Any) -> dict[str, Any]:
    """A screenshot as the image content block TRL's multimodal messages carry."""
    from PIL import Image

    return {"type": "image", "image": Image.fromarray(image)}


class _GuiGymEnvironment:
    """Base of the classes :func:`make_environment_factory` returns (one rollout each)."""

    env_id: ClassVar[str] = ""
    reward: ClassVar[str] = "outcome"
    screenshot: ClassVar[bool] = False
    env_kwargs: ClassVar[dict[str, Any]] = {}
    stack_kwargs: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._env: Any = None
        self._rewards: list[float] = []
        self._infos: list[dict[str, Any]] = []
        self._done = True
        self._success = False

    # -- the env ------------------------------------------------------------------------

    def _make(self) -> Any:
        import gymnasium as gym

        import gui_gym  # noqa: F401  (registers the ids)
        from gui_gym.train.reward_stack import RewardStack

        kwargs = dict(self.env_kwargs)
        if self.screenshot:
            kwargs["screenshot"] = True
        env = gym.make(self.env_id, **kwargs)
        stack = RewardStack.from_text(self.reward, **self.stack_kwargs)
        if "milestone" in stack.weights:
            from gui_gym.wrappers import MilestoneWrapper

            # TRL has no batch hook: refine on each success, credit given as the steps go
            weights = dict(stack.weights)
            lambda0 = weights.pop("milestone")
            env = RewardStack(weights, **self.stack_kwargs).wrap(env)
            generator, matcher = stack._model("milestone", stack._milestone_models)
            return MilestoneWrapper(
                env,
                store=stack.milestone_store,
                generator=generator,
                matcher=matcher,
                lambda0=lambda0,
                credit="online",
                adaptive=True,
            )
        return stack.wrap(env)

    def _view(self, observation: dict[str, Any], note: str = "") -> str | list[dict[str, Any]]:
        text = f"{note}Screen:\n{observation.get('screen', '')}"
        if not self.screenshot or observation.get("screenshot") is None:
            return text
        return [{"type": "text", "text": text}, _image_block(observation["screenshot"])]

    def reset(self, **row: Any) -> str | list[dict[str, Any]]:
        """Start the task of a dataset row (``task_id``, ``seed``; other columns ignored) and
        return the instruction and the first screen."""
        if self._env is None:
            self._env = self._make()
        options = {"task": row["task_id"]} if row.get("task_id") else None
        seed = row.get("seed")
        observation, _ = self._env.reset(seed=None if seed is None else int(seed), options=options)
        self._rewards, self._infos = [], []
        self._done, self._success = False, False
        note = f"Task: {observation.get('instruction', '')}\n"
        return self._view(observation, note)

    def _act(self, action: str) -> str | list[dict[str, Any]]:
        if self._env is None or self._done:
            return "The episode has ended; no more actions are taken."
        observation, reward, terminated, truncated, info = self._env.step(action)
        self._rewards.append(float(reward))
        self._infos.append(info)
        if terminated or truncated:
            self._done = True
            self._success = bool(info.get("success"))
            how = (
                "completed" if self._success else ("cut by the step limit" if truncated else "over")
            )
            return f"The episode is {how}."
        error = info.get("action_error")
        note = f"That action failed: {error}\n" if error else ""
        return self._view(observation, note)

    # -- the tools (TRL reads their names, docstrings and type hints) -------------------

    def click(self, element_id: int) -> str | list[dict[str, Any]]:
        """Click an element of the screen.

        Args:
            element_id: The id of the element to click.
        """
        return self._act(f"CLICK({int(element_id)})")

    def long_click(self, element_id: int) -> str | list[dict[str, Any]]:
        """Long-press an element of the screen.

        Args:
            element_id: The id of the element to long-press.
        """
        return self._act(f"LONG_CLICK({int(element_id)})")

    def input_text(self, element_id: int, text: str) -> str | list[dict[str, Any]]:
        """Type text into a text field.

        Args:
            element_id: The id of the text field.
            text: The text to type.
        """
        from gui_gym.core.actions import Action, ActionType

        return self._act(
            Action(ActionType.INPUT, index=int(element_id), text=str(text)).to_string()
        )

    def scroll(self, direction: str) -> str | list[dict[str, Any]]:
        """Scroll the screen to see more of it.

        Args:
            direction: One of up, down, left, right.
        """
        return self._act(f"SCROLL({direction})")

    def go_back(self) -> str | list[dict[str, Any]]:
        """Press the back button."""
        return self._act("GOBACK()")

    def home(self) -> str | list[dict[str, Any]]:
        """Go to the home screen."""
        return self._act("HOME()")

    def enter(self) -> str | list[dict[str, Any]]:
        """Press the enter key."""
        return self._act("ENTER()")

    def open_app(self, name: str) -> str | list[dict[str, Any]]:
        """Open an app by its name.

        Args:
            name: The app's name.
        """
        from gui_gym.core.actions import Action, ActionType

        return self._act(Action(ActionType.OPEN_APP, text=str(name)).to_string())

    def answer(self, text: str) -> str | list[dict[str, Any]]:
        """Answer the user's question.

        Args:
            text: The answer.
        """
        from gui_gym.core.actions import Action, ActionType

        return self._act(Action(ActionType.ANSWER, text=str(text)).to_string())

    def wait(self) -> str | list[dict[str, Any]]:
        """Wait one step for the screen to change."""
        return self._act("WAIT()")

    def done(self) -> str | list[dict[str, Any]]:
        """Declare the task complete."""
        return self._act("DONE()")

    # -- the reward ---------------------------------------------------------------------

    def get_reward(self) -> float:
        """The episode's return under the reward expression (0 when no action was taken)."""
        return float(sum(self._rewards))

    def _metric(self, name: str) -> float:
        if name == "success":
            return float(self._success)
        if name == "steps":
            return float(len(self._rewards))
        if name == "outcome":
            return float(self._infos[-1].get("task_reward", 0.0)) if self._infos else 0.0
        total = 0.0
        for info in self._infos:
            part = info.get(name)
            if isinstance(part, dict):
                total += float(part.get("delta", part.get("reward", 0.0)) or 0.0)
        return total


def make_environment_factory(
    env_id: str,
    reward: str = "outcome",
    screenshot: bool = False,
    *,
    milestone_store: str = "milestones.json",
    embedder: str = "hashing",
    prm_model: str | None = None,
    progress_model: str | None = None,
    orm_model: str | None = None,
    **env_kwargs: Any,
) -> type:
    """The zero-argument environment class ``GRPOTrainer(environment_factory=...)`` takes.

    Args:
        env_id: A registered gui-gym id.
        reward: A reward expression, as ``gui-gym train --reward``
            (:func:`~gui_gym.train.reward_stack.parse_reward`).
        screenshot: Show the screenshot with each screen (a VLM policy).
        milestone_store, embedder, prm_model, progress_model, orm_model: As
            :class:`~gui_gym.train.reward_stack.RewardStack`.
        **env_kwargs: ``gym.make`` arguments (``split``, ``max_steps``, ...).

    Raises:
        gymnasium.error.DependencyNotInstalled: without TRL.
        ValueError: for a bad reward expression or an id that is not registered (checked
            now, not in TRL's first rollout).
    """
    _require_trl()
    import gymnasium as gym

    import gui_gym  # noqa: F401
    from gui_gym.train.reward_stack import RewardStack

    if env_id not in gym.registry:
        known = sorted(k for k in gym.registry if k.startswith("GuiGym/"))
        raise ValueError(f"unknown env id {env_id!r}; registered: {', '.join(known)}")
    stack_kwargs = {
        "milestone_store": milestone_store,
        "embedder": embedder,
        "prm_model": prm_model,
        "progress_model": progress_model,
        "orm_model": orm_model,
    }
    RewardStack.from_text(reward, **stack_kwargs)  # a bad expression fails here
    name = "GuiGym_" + env_id.split("/")[-1].replace("-", "_")
    return type(
        name,
        (_GuiGymEnvironment,),
        {
            "env_id": env_id,
            "reward": reward,
            "screenshot": bool(screenshot),
            "env_kwargs": dict(env_kwargs),
            "stack_kwargs": stack_kwargs,
            "__doc__": f"{env_id} under reward {reward!r} for TRL's GRPOTrainer.",
        },
    )


def metric_functions(names: tuple[str, ...] = ("success", "outcome", "steps")) -> list[Callable]:
    """Reward functions that only log (give them weight 0 in ``GRPOConfig.reward_weights``):
    each rollout's success, outcome, step count or a reward component (``progress``,
    ``milestone``, ``prm``, ``format``), under ``rewards/<name>`` in TRL's metrics.

    Raises:
        ValueError: for a name outside :data:`METRICS`.
    """
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(METRICS)}")
    out = []
    for name in names:

        def metric(environments: list[Any] | None = None, _name: str = name, **_: Any) -> list:
            return [
                e._metric(_name) if isinstance(e, _GuiGymEnvironment) else None
                for e in environments or []
            ]

        metric.__name__ = name
        out.append(metric)
    return out


def task_dataset(
    env_id: str,
    split: str = "train",
    *,
    seeds: int = 1,
    repeat: int = 1,
    system_prompt: str = SYSTEM_PROMPT,
    **env_kwargs: Any,
) -> Any:
    """The ``datasets.Dataset`` of task rows for ``env_id``'s ``split``: one row per task and
    seed (``prompt``: the system message and an empty user turn ``reset`` fills; ``task_id``;
    ``seed``), the whole list ``repeat`` times.

    Raises:
        gymnasium.error.DependencyNotInstalled: without TRL (and its ``datasets``).
        ValueError: for an unknown id or split, or ``seeds``/``repeat`` < 1.
    """
    _require_trl()
    import datasets
    import gymnasium as gym

    import gui_gym  # noqa: F401

    if seeds < 1 or repeat < 1:
        raise ValueError(f"seeds and repeat must be >= 1, got {seeds}, {repeat}")
    env = gym.make(env_id, split=split, **env_kwargs)
    try:
        tasks = list(env.unwrapped.task_ids)
    finally:
        env.close()
    rows = [
        {
            "prompt": [
                {"role": "system", "content": system_prompt},
                {"role": "user", "content": ""},
            ],
            "task_id": task,
            "seed": seed,
        }
        for _ in range(repeat)
        for task in tasks
        for seed in range(seeds)
    ]
    return datasets.Dataset.from_list(rows)


def encode_screenshot(image: Any) -> str:
    """A screenshot as base64 PNG (for servers that take images as data URLs)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()
