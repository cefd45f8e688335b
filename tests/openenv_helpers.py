"""Worker-side helpers for tests/test_openenv_server.py, kept free of heavy imports: a
spawned env worker unpickles them (importing this module, not the test module, which
imports OpenEnv)."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym

from gui_gym.integrations.wire import make_wire_env


class _SleepOnWait(gym.Wrapper):
    """``WAIT()`` sleeps ``seconds`` before stepping: a step that hangs."""

    def __init__(self, env: gym.Env, seconds: float):
        super().__init__(env)
        self.seconds = seconds

    def step(self, action: Any):
        if isinstance(action, str) and action.strip().upper() == "WAIT()":
            time.sleep(self.seconds)
        return self.env.step(action)


def make_hanging_env(env_id: str, env_kwargs: dict[str, Any], stack: Any, seconds: float):
    """The served env with a ``WAIT()`` that takes ``seconds``."""
    env = make_wire_env(env_id, env_kwargs, stack)
    env.env = _SleepOnWait(env.env, seconds)
    return env
