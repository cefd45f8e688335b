"""Every gui-gym env as a skyrl-gym text env (``BaseTextEnv``), with the reward stack's
per-step rewards, for SkyRL's multi-turn generators.

::

    import skyrl_gym
    from gui_gym.integrations.skyrl import register

    register()                                   # skyrl-gym id "gui_gym" (idempotent)
    env = skyrl_gym.make(
        "gui_gym",
        env_config={"env_id": "GuiGym/WikiHow-v0", "reward": "outcome+progress"},
        extras={"task_id": "change_a_flat_tire-references", "seed": 0},
    )
    messages, meta = env.init([])                # system + user prompt: goal and screen
    out = env.step("Thought: search\\n<action>INPUT(0, \\"change a flat tire\\")</action>")
    out["reward"], out["done"], out["observations"], out["metadata"]["reward_components"]

* ``env_config`` (SkyRL's ``environment.skyrl_gym.gui_gym`` section) holds what every episode
  shares: ``env_id``, ``reward`` (the expressions of ``gui-gym train``), ``env_kwargs``
  (``gym.make`` arguments), ``prompt`` (a gui-gym prompt format, ``default``),
  ``max_turns`` (the env's ``max_steps`` unless ``env_kwargs`` gives it), and the reward
  stack's options (``prm_model``, ``progress_model``, ``orm_model``,
  ``milestone_store``, ``embedder``, ``progress_k``), and ``screenshot`` (a VLM policy: each
  user message also carries the screen as an OpenAI ``image_url`` part, a base64 PNG data URL
  bounded to Qwen2.5-VL's ``max_pixels``, what SkyRL's multi-turn VLM generator reads).
* ``extras`` (a dataset row's) picks the episode: ``task_id`` and ``seed``; it may override
  ``env_id``, ``reward`` and ``env_kwargs`` per row (its other columns are ignored).
* :meth:`GuiGymTextEnv.init` ignores the dataset prompt and returns the prompt format's
  messages for the first screen; each step's observation is one user message with what the
  action did and the next screen. The model's whole output is the action: the env reads
  the last ``<action>...</action>`` block (a bad one is a counted, invalid step, never an
  exception).
* ``reward`` is the wrapped env's reward for the step (what ``gui-gym train``'s return-based
  algorithms read), ``metadata["reward_components"]`` splits it per term
  (:func:`~gui_gym.integrations.reward_components.step_reward_components`), and the last
  step's metadata holds ``success`` and, with milestones, ADMIRE's deferred credit
  (``metadata["milestone"]``). ``get_metrics()`` gives success, steps and each term's sum.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput
except ImportError as err:  # pragma: no cover - exercised by the missing-extra test
    raise gym.error.DependencyNotInstalled(
        f'skyrl-gym is not installed ({err}): pip install "gui-gym[skyrl]"'
    ) from err

from gui_gym.agents.prompts import PromptInput, get_prompt
from gui_gym.core.trajectory import json_safe
from gui_gym.integrations.reward_components import step_reward_components
from gui_gym.train.reward_stack import RewardStack, parse_reward

__all__ = ["SKYRL_ENV_ID", "GuiGymTextEnv", "register"]

SKYRL_ENV_ID = "gui_gym"
"""The id :func:`register` gives the env in skyrl-gym's registry (a dataset's ``env_class``)."""

_STACK_OPTIONS = (
    "prm_model",
    "progress_model",
    "orm_model",
    "milestone_store",
    "embedder",
    "progress_k",
    "milestone_mode",
)
_CONFIG_KEYS = (
    "env_id",
    "reward",
    "env_kwargs",
    "prompt",
    "max_turns",
    "screenshot",
    *_STACK_OPTIONS,
)

MAX_OUTPUT_CHARS = 200_000
"""Longest model output :meth:`GuiGymTextEnv.step` reads; a longer one is cut to its last
this many characters (the last ``<action>`` block wins) before parsing."""


def _plain(value: Any) -> Any:
    """An omegaconf container (SkyRL's configs) as plain dicts and lists."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf
    except ImportError:  # pragma: no cover - skyrl-gym depends on omegaconf
        return value
    if isinstance(value, DictConfig | ListConfig):
        return OmegaConf.to_container(value, resolve=True)
    return value


def _mapping(value: Any, what: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    value = _plain(value)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a mapping, got {type(value).__name__}")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ValueError(f"unknown {what} key(s) {unknown}; allowed: {', '.join(allowed)}")
    return dict(value)


class GuiGymTextEnv(BaseTextEnv):
    """A gui-gym env with its reward stack, as skyrl-gym's text env (module docstring).

    Args:
        env_config: What every episode shares (``env_id``, ``reward``, ``env_kwargs``,
            ``prompt``, the reward stack's options).
        extras: The dataset row's ``task_id`` and ``seed`` (and per-row overrides).

    Raises:
        ValueError: for a missing ``env_id``, an unknown key, a bad reward expression, or
            an argument ``gym.make`` refuses.
    """

    def __init__(self, env_config: Any = None, extras: Any = None):
        super().__init__()
        config = _mapping(env_config, "env_config", _CONFIG_KEYS)
        # a dataset row carries its other columns too (prompt, data_source, ...): ignored
        row = _plain(extras) or {}
        if not isinstance(row, Mapping):
            raise TypeError(f"extras must be a mapping, got {type(row).__name__}")
        env_id = row.get("env_id") or config.get("env_id")
        if not env_id:
            raise ValueError("give env_id in env_config (or in the row's extras)")
        self.env_id = str(env_id)
        self.task_id = row.get("task_id")
        self.seed = row.get("seed")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ValueError(f"extras seed must be an int, got {self.seed!r}")
        reward = str(row.get("reward") or config.get("reward") or "outcome")
        weights = parse_reward(reward)
        self.reward_terms = weights
        options = {k: config[k] for k in _STACK_OPTIONS if config.get(k) is not None}
        self.stack = RewardStack(weights, **options)
        env_kwargs = {**(_plain(config.get("env_kwargs")) or {}), **(row.get("env_kwargs") or {})}
        if config.get("max_turns") is not None:  # SkyRL's usual name for the episode length
            env_kwargs.setdefault("max_steps", int(config["max_turns"]))
        self.screenshot = bool(config.get("screenshot", False))
        if self.screenshot:
            env_kwargs["screenshot"] = True
        import gui_gym  # noqa: F401  (registers the ids)

        self.env = self.stack.wrap(gym.make(self.env_id, **env_kwargs))
        self.prompt = get_prompt(config.get("prompt", "default"))
        self.max_turns = int(getattr(self.env.unwrapped, "max_steps", 0) or 0) or 1
        self._totals: dict[str, float] = {}
        self._success: bool | None = None
        self._live = False  # an episode is running (init succeeded, not done)
        self.turns = 0

    def _content(self, text: str, observation: Mapping[str, Any]) -> Any:
        """A user message's content: the text, and with ``screenshot`` the screen as an
        OpenAI ``image_url`` part (a base64 PNG data URL at most Qwen2.5-VL's ``max_pixels``,
        as the OpenAI-compatible client sends it), the form SkyRL's multi-turn VLM generator
        reads."""
        image = observation.get("screenshot") if self.screenshot else None
        if image is None:
            return text
        from gui_gym.models.llm.chat_messages import openai_messages

        parts = [{"type": "text", "text": text}, {"type": "image", "image": image}]
        return openai_messages([{"role": "user", "content": parts}])[0]["content"]

    def init(self, prompt: Any = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Reset the env; the first prompt is the prompt format's, for the first screen."""
        options = {"task": self.task_id} if self.task_id is not None else None
        self._live = False
        try:
            observation, info = self.env.reset(seed=self.seed, options=options)
        except Exception as err:
            raise RuntimeError(
                f"{self.env_id} failed to reset (task {self.task_id!r}, seed {self.seed!r}): "
                f"{type(err).__name__}: {err}"
            ) from err
        self._live = True
        self.turns = 0
        self._totals = dict.fromkeys(self.reward_terms, 0.0)
        self._success = None
        messages = self.prompt.build(
            PromptInput(
                instruction=str(observation["instruction"]),
                screen=str(observation["screen"]),
                info=info,
            )
        )
        if self.screenshot and messages and messages[-1].get("role") == "user":
            last = messages[-1]
            messages = [
                *messages[:-1],
                {**last, "content": self._content(last["content"], observation)},
            ]
        return messages, {"task_id": info.get("task_id"), "env_id": self.env_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One model output: the env acts on its ``<action>`` block. Before :meth:`init` or
        after the episode ended nothing is stepped: ``done`` is True, the reward 0 and
        ``metadata["action_error"]`` says why."""
        if not self._live:
            return BaseTextEnvStepOutput(
                observations=[],
                reward=0.0,
                done=True,
                metadata={
                    "action_valid": False,
                    "action_error": "no episode is running: call init() first (the episode "
                    "ended, its reset failed, or it never started)",
                },
                postprocessed_action=None,
            )
        self.turns += 1
        text = action if isinstance(action, str) else str(action)
        thought, action_text = self.prompt.parse(text[-MAX_OUTPUT_CHARS:])
        observation, reward, terminated, truncated, info = self.env.step(action_text)
        components = step_reward_components(self.env, float(reward), info, self.reward_terms)
        for name, value in components.items():
            self._totals[name] = self._totals.get(name, 0.0) + value
        done = bool(terminated or truncated)
        metadata: dict[str, Any] = {
            "reward_components": components,
            "action_valid": bool(info.get("action_valid", True)),
            "action_error": info.get("action_error"),
            "action_description": info.get("action_description"),
            "task_id": info.get("task_id"),
            "step": info.get("step"),
        }
        observations: list[dict[str, str]] = []
        if done:
            self._live = False
            self._success = bool(info.get("success", False))
            metadata.update(success=self._success, terminated=bool(terminated))
            if isinstance(info.get("milestone"), dict):
                metadata["milestone"] = json_safe(info["milestone"])
        else:
            text = self._next_turn(observation, info)
            observations.append({"role": "user", "content": self._content(text, observation)})
        return BaseTextEnvStepOutput(
            observations=observations,
            reward=float(reward),
            done=done,
            metadata=metadata,
            postprocessed_action=action_text,
        )

    @staticmethod
    def _next_turn(observation: Mapping[str, Any], info: Mapping[str, Any]) -> str:
        done = info.get("action_description") or info.get("action") or "the action"
        if info.get("action_valid", True):
            result = f"Done: {done}."
        else:
            result = f"The action was refused: {info.get('action_error')}."
        return f"{result}\nScreen:\n{observation['screen']}\nWhat is the next action?"

    def get_metrics(self) -> dict[str, Any]:
        """``success`` (1/0 once the episode ended), ``steps`` and each reward term's sum."""
        metrics: dict[str, Any] = {"steps": self.turns}
        if self._success is not None:
            metrics["success"] = float(self._success)
        metrics.update({f"reward/{k}": v for k, v in self._totals.items()})
        return metrics

    def close(self) -> None:
        self.env.close()


def register() -> None:
    """Register :class:`GuiGymTextEnv` in skyrl-gym as :data:`SKYRL_ENV_ID` (once)."""
    if SKYRL_ENV_ID not in skyrl_gym.registry:
        skyrl_gym.register(id=SKYRL_ENV_ID, entry_point="gui_gym.integrations.skyrl:GuiGymTextEnv")


register()
