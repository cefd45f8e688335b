"""Registration of every gui-gym environment id with string entry points.

String entry points keep ``import gui_gym`` cheap and let ``gym.make`` work in subprocesses
and async vector envs. No ``max_episode_steps`` is registered: each env truncates at its own
``max_steps`` argument, so a TimeLimit wrapper would only duplicate it.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

ENV_IDS: dict[str, str] = {
    "GuiGym/WikiHow-v0": "gui_gym.envs.wikihow:WikiHowEnv",
    "GuiGym/AndroidWorld-v0": "gui_gym.envs.androidworld:make_env",
}
"""Every registered id and its entry point."""


def register_envs() -> None:
    """Register every id (idempotent)."""
    for env_id, entry_point in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point, disable_env_checker=False)
