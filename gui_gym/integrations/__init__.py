"""Adapters that let the RL engines users already run drive gui-gym's envs and reward stack.

* :mod:`gui_gym.integrations.trl`: TRL's ``GRPOTrainer(environment_factory=...)`` (extra ``trl``).

Each module imports its engine only when used; a missing engine raises
``gymnasium.error.DependencyNotInstalled`` naming the extra to install. The package sits at the
training layer (beside :mod:`gui_gym.train` and :mod:`gui_gym.distributed`): it may use the
envs, wrappers, agents' prompts and the reward stack, and nothing below imports it.
"""
