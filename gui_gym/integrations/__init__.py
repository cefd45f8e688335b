"""Adapters that let the RL engines users already run drive gui-gym's envs and reward stack.

* :mod:`gui_gym.integrations.trl`: TRL's ``GRPOTrainer(environment_factory=...)`` (extra ``trl``).
* :mod:`gui_gym.integrations.verl`: verl's multi-turn agent loop (extra ``verl``, in its own
  environment: docs/engines.md); :mod:`gui_gym.integrations.tasks` exports the task rows it
  reads (``gui-gym export-tasks``) without verl; :mod:`gui_gym.integrations.episode` is the
  engine-agnostic episode (env, reward stack and prompt format as one conversation).
* :mod:`gui_gym.integrations.openenv`: any env behind an OpenEnv server, ``gui-gym
  serve-openenv`` (extra ``openenv``).
* :mod:`gui_gym.integrations.skyrl`: any env as a skyrl-gym ``BaseTextEnv`` (extra ``skyrl``).

Each module imports its engine only when used; a missing engine raises
``gymnasium.error.DependencyNotInstalled`` naming the extra to install. The package sits at the
training layer (beside :mod:`gui_gym.train` and :mod:`gui_gym.distributed`): it may use the
envs, wrappers, agents' prompts and the reward stack, and nothing below imports it.
"""
