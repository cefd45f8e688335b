"""Registration of every gui-gym environment id with string entry points.

String entry points keep ``import gui_gym`` cheap and let ``gym.make`` work in subprocesses
and async vector envs. No ``max_episode_steps`` is registered: each env truncates at its own
``max_steps`` argument, so a TimeLimit wrapper would only duplicate it.
"""

from __future__ import annotations

from gymnasium.envs.registration import WrapperSpec, register, registry

ENV_CHECKER = WrapperSpec("EnvChecker", "gui_gym.core.env:EnvChecker", {})
"""Every id's env checker: Gymnasium's passive checks, without its broken state after a
first reset that raises (``gui_gym.core.env.EnvChecker``; issue 46). The ids register with
``disable_env_checker=True`` so Gymnasium's own checker is not applied as well."""

ENV_IDS: dict[str, str] = {
    "GuiGym/WikiHow-v0": "gui_gym.envs.wikihow:WikiHowEnv",
    "GuiGym/AndroidWorld-v0": "gui_gym.envs.androidworld:make_env",
    "GuiGym/AndroidWorldPlus-v0": "gui_gym.envs.androidworld:make_plus_env",
    "GuiGym/WebShop-v0": "gui_gym.envs.webshop:WebShopEnv",
    "GuiGym/WebShop-Text-v0": "gui_gym.envs.webshop:WebShopTextEnv",
}
"""The ids of simulated environments (no browser or device needed) and their entry points."""

MINIWOB_ENTRY_POINT = "gui_gym.envs.miniwob:MiniWoBEnv"


def _miniwob_ids() -> dict[str, dict[str, str]]:
    from gui_gym.envs.miniwob.catalog import MINIWOB_TASKS, env_id

    ids: dict[str, dict[str, str]] = {"GuiGym/MiniWoB-v0": {}}
    ids.update({env_id(name): {"task": name} for name in MINIWOB_TASKS})
    return ids


MINIWOB_ENV_IDS: dict[str, dict[str, str]] = _miniwob_ids()
"""Browser-backed ids (``GuiGym/MiniWoB-v0`` and one per MiniWoB++ task) and their kwargs."""

REPLAY_ENV_IDS: dict[str, str] = {
    "GuiGym/SemiOnlineReplay-v0": "gui_gym.envs.replay:SemiOnlineReplayEnv",
}
"""Ids that replay recorded expert data (UI-S1) and their entry points. They need a
``dataset`` kwarg, so they are kept out of ``ENV_IDS`` (whose every-id tests and benchmarks
make envs with no arguments); ``tests/test_replay_env.py`` checks them on the bundled sample."""


ALFWORLD_ENV_IDS: dict[str, str] = {
    "GuiGym/ALFWorld-v0": "gui_gym.envs.alfworld:ALFWorldEnv",
}
"""ALFWorld on its own engine (the ``alfworld`` extra; resets run the PDDL planner, ~1 s), kept
out of ``ENV_IDS`` so every-id tests stay quick; ``tests/test_alfworld.py`` covers it."""


_CHECKED = {"disable_env_checker": True, "additional_wrappers": (ENV_CHECKER,)}


def register_envs() -> None:
    """Register every id (idempotent)."""
    for env_id, entry_point in ENV_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point, **_CHECKED)
    for env_id, entry_point in {**REPLAY_ENV_IDS, **ALFWORLD_ENV_IDS}.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point, **_CHECKED)
    for env_id, kwargs in MINIWOB_ENV_IDS.items():
        if env_id not in registry:
            register(
                id=env_id,
                entry_point=MINIWOB_ENTRY_POINT,
                kwargs=dict(kwargs),
                **_CHECKED,
            )
