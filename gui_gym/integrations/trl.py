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
* the tools are gui-gym's whole action space, generated from
  :data:`~gui_gym.integrations.tools.TOOLS` (one per argument form of the grammar:
  ``click``, ``click_at``, ``click_label``, ``input_text``, ``type_text``, ``scroll``,
  ``drag_at``, ``key``, ``search``, ``command``, ...; ``tools=`` picks a subset); each checks
  its arguments strictly, steps the env with the :class:`~gui_gym.core.actions.Action` it
  builds, and returns the next screen (or how the episode ended, or a one-line error);
* the env is closed by a ``weakref.finalize`` when TRL drops the instance (no ``close``
  tool); ``reset()`` refuses a row without ``task_id`` unless ``random_tasks=True``;
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
import inspect
import io
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from gui_gym.integrations.tools import (
    COMMAND_TOOL,
    TOOLS,
    TOOLS_BY_NAME,
    ToolArgumentError,
    ToolSpec,
    build_action,
)

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
    "input_text, scroll, ... on element ids (or the _at tools on screenshot pixels); call "
    "answer to reply to a question and done when the task is complete."
)

NO_EPISODE = "No episode is running yet: reset() starts one before any tool call."
ENDED = "The episode has ended; no more actions are taken."
_NOT_STEPPED = (NO_EPISODE, ENDED, "No episode is running: ")
"""Results of calls outside an episode: shared strings, so never a rollout's key."""

_SNAPSHOTS: OrderedDict[int | str, tuple[Any, dict[str, float]]] = OrderedDict()
"""Metrics of finished rollouts, keyed by their last tool result (a string's identity, or a
screenshot result's ``str()``, the form the async worker gives it): what :func:`metric_functions` reads on TRL's ``AsyncGRPOTrainer``, which
scores a group after its environments went back to the pool and passes no ``environments``."""
_MAX_SNAPSHOTS = {int: 8192, str: 64}
"""How many rollouts' metrics are kept for the async trainer: text results, and screenshot
results (each keeps its image alive, so its ``str()`` stays unique: few)."""


def _require_trl() -> Any:
    try:
        import trl
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            "gui_gym.integrations.trl needs TRL: pip install 'gui-gym[trl]'"
        ) from err
    return trl


def _image_block(image: Any, max_pixels: int) -> dict[str, Any]:
    """A screenshot as the image content block TRL's multimodal messages carry, bounded to
    ``max_pixels`` as the OpenAI-compatible client bounds it (Qwen2.5-VL's default)."""
    from gui_gym.models.llm.chat_messages import bounded_image

    return {"type": "image", "image": bounded_image(image, max_pixels)}


def _close_env(env: Any) -> None:
    """Close an env when TRL drops the instance that made it (a ``weakref.finalize``)."""
    try:
        env.close()
    except Exception as err:  # a finaliser must not raise; say what failed
        warnings.warn(f"closing a gui-gym env failed: {err}", RuntimeWarning, stacklevel=1)


_HINTS = {"int": int, "float": float, "str": str, "direction": str, "points": list[float]}


def _tool_method(spec: ToolSpec) -> Callable[..., Any]:
    """The method TRL exposes as ``spec``'s tool: name, docstring and typed signature from the
    table; the call checks its arguments strictly (:func:`~gui_gym.integrations.tools.
    build_action`) and returns errors as one-line tool results."""
    names = [p.name for p in spec.params]

    def tool(self: _GuiGymEnvironment, *args: Any, **kwargs: Any) -> str | list[dict[str, Any]]:
        if len(args) > len(names):
            return f"Error: {spec.name} takes {len(names)} argument(s), got {len(args)}"
        for name, value in zip(names, args, strict=False):
            if name in kwargs:
                return f"Error: {spec.name} got {name!r} twice"
            kwargs[name] = value
        return self._call(spec, kwargs)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for p in spec.params:
        hint: Any = _HINTS[p.kind]
        if p.optional:
            hint = hint | None
        annotations[p.name] = hint
        parameters.append(
            inspect.Parameter(
                p.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=None if p.optional else inspect.Parameter.empty,
                annotation=hint,
            )
        )
    annotations["return"] = str | list[dict[str, Any]]
    tool.__signature__ = inspect.Signature(parameters, return_annotation=annotations["return"])
    tool.__annotations__ = annotations
    tool.__name__ = tool.__qualname__ = spec.name
    args_doc = "".join(f"\n    {p.name}: {p.doc}" for p in spec.params)
    tool.__doc__ = spec.doc + (f"\n\nArgs:{args_doc}" if spec.params else "")
    return tool


class _GuiGymEnvironment:
    """Base of the classes :func:`make_environment_factory` returns (one rollout each); the
    factory adds the tool methods (:data:`~gui_gym.integrations.tools.TOOLS`)."""

    env_id: ClassVar[str] = ""
    reward: ClassVar[str] = "outcome"
    screenshot: ClassVar[bool] = False
    max_pixels: ClassVar[int] = 0
    random_tasks: ClassVar[bool] = False
    env_kwargs: ClassVar[dict[str, Any]] = {}
    stack_kwargs: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._env: Any = None
        # one entry per tool call: (reward, info) when it stepped the env, None when not
        self._calls: list[tuple[float, dict[str, Any]] | None] = []
        self._seen: int | None = None  # tool results the model saw (metric_functions sets it)
        self._state = "new"  # new | running | ended | failed
        self._reset_error = ""
        self._last_result: Any = None
        self._finalizer: weakref.finalize | None = None  # closes the env once made

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
        return [
            {"type": "text", "text": text},
            _image_block(observation["screenshot"], self.max_pixels),
        ]

    def reset(self, **row: Any) -> str | list[dict[str, Any]]:
        """Start the task of a dataset row (``task_id``, ``seed``; other columns ignored) and
        return the instruction and the first screen.

        Raises:
            ValueError: for a row without ``task_id`` (TRL without ``train_dataset`` resets
                with a placeholder row) unless the factory allows random tasks.
        """
        # the previous episode is over whatever happens next: no stale reward or live tools
        self._calls, self._seen, self._last_result = [], None, None
        self._state, self._reset_error = "failed", ""
        if not row.get("task_id") and not self.random_tasks:
            self._reset_error = "no task_id in the dataset row"
            raise ValueError(
                "reset() got no task_id: without a task dataset TRL resets with a placeholder "
                "row, so each rollout would draw its own random task and a GRPO group would "
                "not share one; pass train_dataset=task_dataset(env_id), or "
                "make_environment_factory(..., random_tasks=True) to accept random tasks"
            )
        try:
            if self._env is None:
                self._env = self._make()
                self._finalizer = weakref.finalize(self, _close_env, self._env)
            options = {"task": row["task_id"]} if row.get("task_id") else None
            seed = row.get("seed")
            observation, _ = self._env.reset(
                seed=None if seed is None else int(seed), options=options
            )
        except Exception as err:
            self._reset_error = (
                f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
            )
            raise
        self._state = "running"
        note = f"Task: {observation.get('instruction', '')}\n"
        return self._view(observation, note)

    def _call(self, spec: ToolSpec, arguments: dict[str, Any]) -> str | list[dict[str, Any]]:
        """One tool call: check the arguments, build the action, step the env."""
        if self._state != "running":
            if self._state == "ended":
                self._calls.append(None)  # a tool message in the completion all the same
                message = ENDED
            elif self._state == "failed":
                message = (
                    f"No episode is running: the last reset() failed ({self._reset_error}); "
                    "no action is taken."
                )
            else:
                message = NO_EPISODE
            return message  # not a step's result: the rollout stays known by its last one
        try:
            action = build_action(spec.name, arguments)
            if spec.name == COMMAND_TOOL:
                action = self._command(action.label or "")
        except ToolArgumentError as err:
            self._calls.append(None)
            return self._result(f"Error: {err}")
        observation, reward, terminated, truncated, info = self._env.step(action)
        self._calls.append((float(reward), info))
        if terminated or truncated:
            self._state = "ended"
            success = bool(info.get("success"))
            how = "completed" if success else ("cut by the step limit" if truncated else "over")
            return self._result(f"The episode is {how}.")
        error = info.get("action_error")
        note = f"That action failed: {error}\n" if error else ""
        return self._result(self._view(observation, note))

    def _command(self, text: str) -> Any:
        """``CLICK(i)`` on the listed command (a clickable element) whose text is ``text``."""
        from gui_gym.core.actions import Action, ActionType

        wanted = " ".join(text.split()).lower()
        listed = [e for e in self._env.unwrapped.ui_tree.elements if e.clickable and e.text]
        for element in listed:
            if " ".join(element.text.split()).lower() == wanted:
                return Action(ActionType.CLICK, index=element.index)
        shown = "; ".join(e.text for e in listed[:20])
        raise ToolArgumentError(f"command: no listed command {text!r:.60}; listed: {shown:.300}")

    def _result(self, result: Any) -> Any:
        self._last_result = result
        return result

    # -- the reward ---------------------------------------------------------------------

    def _kept(self) -> list[tuple[float, dict[str, Any]]]:
        """The steps whose results the model saw: TRL drops a tool result that would overrun
        ``max_completion_length`` after the env stepped; such a step is not rewarded."""
        calls = self._calls if self._seen is None else self._calls[: self._seen]
        return [c for c in calls if c is not None]

    def _see(self, completion: Any) -> None:
        """Count the tool results ``completion`` (TRL's message list) holds."""
        if isinstance(completion, list):
            self._seen = sum(
                1 for m in completion if isinstance(m, dict) and m.get("role") == "tool"
            )

    def get_reward(self) -> float:
        """The episode's return under the reward expression over the steps whose results the
        model saw (0 when no action was taken)."""
        reward = float(sum(r for r, _ in self._kept()))
        result = self._last_result
        if isinstance(result, str | list):  # AsyncGRPOTrainer's metrics read it later
            # a str result reaches the completion as itself; a list (a screenshot) as
            # str(list), unique while its image lives (its repr holds the image's address)
            key: int | str = id(result) if isinstance(result, str) else str(result)
            _SNAPSHOTS[key] = (result, {name: self._metric(name) for name in METRICS})
            _SNAPSHOTS.move_to_end(key)
            same = [k for k in _SNAPSHOTS if type(k) is type(key)]
            for old in same[: max(0, len(same) - _MAX_SNAPSHOTS[type(key)])]:
                del _SNAPSHOTS[old]
        return reward

    def _metric(self, name: str) -> float:
        kept = self._kept()
        if name == "success":
            return float(bool(kept) and bool(kept[-1][1].get("success")))
        if name == "steps":
            return float(len(kept))
        if name == "outcome":
            return float(kept[-1][1].get("task_reward", 0.0)) if kept else 0.0
        total = 0.0
        for _, info in kept:
            part = info.get(name)
            if isinstance(part, dict):
                total += float(part.get("delta", part.get("reward", 0.0)) or 0.0)
        return total


def make_environment_factory(
    env_id: str,
    reward: str = "outcome",
    screenshot: bool = False,
    *,
    tools: Sequence[str] | None = None,
    max_pixels: int | None = None,
    random_tasks: bool = False,
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
        screenshot: Show the screenshot with each screen (a VLM policy), at most
            ``max_pixels`` pixels (default: Qwen2.5-VL's ``max_pixels``, as the
            OpenAI-compatible client sends it; larger ones are downscaled, aspect kept).
        tools: The tools to offer, by name (default: every tool of
            :data:`~gui_gym.integrations.tools.TOOLS` whose action type the env performs,
            i.e. all but its ``unsupported_actions``: the env's whole action space).
        random_tasks: Let ``reset()`` without a ``task_id`` (TRL without ``train_dataset``)
            draw a random task per rollout; by default it refuses, since a GRPO group would
            then not share a task.
        milestone_store, embedder, prm_model, progress_model, orm_model: As
            :class:`~gui_gym.train.reward_stack.RewardStack`.
        **env_kwargs: ``gym.make`` arguments (``split``, ``max_steps``, ...).

    Raises:
        gymnasium.error.DependencyNotInstalled: without TRL.
        ValueError: for a bad reward expression, an id that is not registered or an
            unknown tool name (checked now, not in TRL's first rollout).
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
    from gui_gym.models.llm.chat_messages import MAX_IMAGE_PIXELS

    if tools is None:  # every tool the env can perform (a backend lists what it cannot)
        probe = gym.make(env_id, **env_kwargs)
        try:
            unsupported = set(getattr(probe.unwrapped, "unsupported_actions", None) or ())
        finally:
            probe.close()
        names = [t.name for t in TOOLS if t.type not in unsupported]
    else:
        names = list(tools)
    unknown = [n for n in names if n not in TOOLS_BY_NAME]
    if unknown or not names:
        raise ValueError(
            f"unknown tool(s) {unknown or '(none given)'}; allowed: {', '.join(TOOLS_BY_NAME)}"
        )
    pixels = MAX_IMAGE_PIXELS if max_pixels is None else int(max_pixels)
    if pixels < 1:
        raise ValueError(f"max_pixels must be >= 1, got {max_pixels}")
    name = "GuiGym_" + env_id.split("/")[-1].replace("-", "_")
    return type(
        name,
        (_GuiGymEnvironment,),
        {
            "env_id": env_id,
            "reward": reward,
            "screenshot": bool(screenshot),
            "max_pixels": pixels,
            "random_tasks": bool(random_tasks),
            "env_kwargs": dict(env_kwargs),
            "stack_kwargs": stack_kwargs,
            "__doc__": f"{env_id} under reward {reward!r} for TRL's GRPOTrainer.",
            **{n: _tool_method(TOOLS_BY_NAME[n]) for n in dict.fromkeys(names)},
        },
    )


def metric_functions(names: tuple[str, ...] = ("success", "outcome", "steps")) -> list[Callable]:
    """Reward functions that only log (give them weight 0 in ``GRPOConfig.reward_weights``):
    each rollout's success, outcome, step count or a reward component (``progress``,
    ``milestone``, ``prm``, ``format``), under ``rewards/<name>`` in TRL's metrics.

    Each returns one value per rollout on ``GRPOTrainer`` (from ``environments=``) and on the
    experimental ``AsyncGRPOTrainer`` (which passes no ``environments``: the values are those
    :meth:`get_reward` recorded as the rollout ended, found by its last tool result; ``None``,
    which TRL ignores, where none was recorded). On ``GRPOTrainer`` they also tell each env
    how many tool results its completion kept, so a result TRL dropped as overlong is not
    rewarded by ``get_reward`` (TRL calls reward functions before the env's ``get_reward``).

    Raises:
        ValueError: for a name outside :data:`METRICS`.
    """
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise ValueError(f"unknown metric(s) {unknown}; allowed: {', '.join(METRICS)}")
    out = []
    for name in names:

        def metric(
            environments: list[Any] | None = None,
            completions: list[Any] | None = None,
            _name: str = name,
            **_: Any,
        ) -> list:
            if environments is not None:
                values = []
                for k, env in enumerate(environments):
                    if not isinstance(env, _GuiGymEnvironment):
                        values.append(None)
                        continue
                    if completions is not None and k < len(completions):
                        env._see(completions[k])
                    values.append(env._metric(_name))
                return values
            return [_snapshot_metric(c, _name) for c in completions or []]

        metric.__name__ = name
        out.append(metric)
    return out


def _snapshot_metric(completion: Any, name: str) -> float | None:
    """``name`` of the rollout whose last tool result ``completion`` ends with (async)."""
    if not isinstance(completion, list):
        return None
    tools = [
        m.get("content")
        for m in completion
        if isinstance(m, dict)
        and m.get("role") == "tool"
        and not (isinstance(m.get("content"), str) and m["content"].startswith(_NOT_STEPPED))
    ]
    if not tools:
        return 0.0  # no tool call: no step, no success, no reward term
    content = tools[-1]
    found = _SNAPSHOTS.get(id(content))
    if found is not None and found[0] is content:
        return found[1][name]
    found = _SNAPSHOTS.get(content) if isinstance(content, str) else None
    return None if found is None else found[1][name]


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
