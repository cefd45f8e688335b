"""The env an engine adapter's worker holds: the reward stack around ``gym.make``, answering
each reset and step with plain, JSON-ready fields (the screenshot as a PNG data URL, the
reward split per term).

It lives apart from :mod:`gui_gym.integrations.openenv` so a worker process unpickling
:func:`make_wire_env` imports only gui-gym, not the engine's server stack (OpenEnv's import
pulls in gradio: seconds per worker).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from gui_gym.core.trajectory import json_safe
from gui_gym.integrations.reward_components import step_reward_components
from gui_gym.train.reward_stack import RewardStack

__all__ = ["WireFormat", "make_wire_env"]


def make_wire_env(env_id: str, env_kwargs: dict[str, Any], stack: RewardStack) -> gym.Env:
    """The env a worker holds: ``gym.make`` with the reward stack, answering in the wire
    format (runs in the worker process)."""
    import gui_gym  # noqa: F401  (registers the ids in the worker)

    return WireFormat(stack.wrap(gym.make(env_id, **env_kwargs)), stack.weights)


class WireFormat(gym.Wrapper):
    """Turns each reset and step into the JSON-ready fields of :class:`GuiObservation` in the
    worker process, so screenshots are encoded there and only plain data crosses the pipe.
    Not a Gymnasium-conformant observation: it exists only between a worker and the server.
    """

    def __init__(self, env: gym.Env, weights: dict[str, float]):
        super().__init__(env)
        self.weights = dict(weights)

    def _fields(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
        screenshot = observation.get("screenshot")
        if screenshot is not None:
            from gui_gym.models.llm.chat_messages import _image_data_url

            screenshot = _image_data_url(screenshot)
        return {
            "instruction": str(observation.get("instruction", "")),
            "screen": str(observation.get("screen", "")),
            "screenshot": screenshot,
            "task_id": str(info.get("task_id", "")),
            "step": int(info.get("step", 0)),
            "action_valid": bool(info.get("action_valid", True)),
            "action_error": info.get("action_error"),
            "action_description": str(info.get("action_description") or ""),
            "milestones": [str(m) for m in info.get("milestones", ())],
        }

    def reset(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        observation, info = self.env.reset(**kwargs)
        return self._fields(observation, info), {}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        fields = self._fields(observation, info)
        fields["reward_components"] = step_reward_components(
            self.env, float(reward), info, self.weights
        )
        ended = bool(terminated or truncated)
        fields["success"] = bool(info.get("success", False)) if ended else None
        extra: dict[str, Any] = {}
        if ended and isinstance(info.get("milestone"), dict):
            extra["milestone"] = json_safe(info["milestone"])
        return fields, float(reward), bool(terminated), bool(truncated), extra
