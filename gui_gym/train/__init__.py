"""Training: SFT and the RL algorithms for LLM GUI agents, over the rollout engine every
trainer and ``gui-gym eval`` share (:mod:`gui_gym.runs.rollout`).

* What every RL algorithm shares, split by job: :mod:`~gui_gym.train.config` (the shared
  hyperparameters, device and seeding), :mod:`~gui_gym.train.policy` (model, LoRA,
  reference, dtype), :mod:`~gui_gym.train.losses` (token scoring, clipped surrogate, KL
  estimators, loss aggregation), :mod:`~gui_gym.train.checkpoint` (the one checkpoint format,
  SFT's too) and :mod:`~gui_gym.train.trainer` (the ``Algorithm`` interface and the training
  loop: optimizer and schedule, checkpoints with exact resume, metrics, progress).
* :mod:`gui_gym.train.data_parallel`: data-parallel training over the processes
  ``accelerate launch`` starts (sharded rollouts, summed gradients, rank 0 writes).
* One module per algorithm, holding only its advantages and loss: :mod:`~gui_gym.train.grpo`
  (ADMIRE's step-level and episode-level GRPO, RLOO, DAPO clip-higher),
  :mod:`~gui_gym.train.reinforce_pp` (ProgRM's REINFORCE++), :mod:`~gui_gym.train.ppo`
  (GUI-Shepherd's PPO with GAE and a PRM-initialised critic), :mod:`~gui_gym.train.
  semi_online` (UI-S1), :mod:`~gui_gym.train.offline_grpo` (GUI-Shepherd App. C) and
  :mod:`~gui_gym.train.arpo` (ARPO, GUI-Shepherd's trajectory-level GRPO baseline with a
  replay buffer of successes).
* The reward models' trainers: :mod:`~gui_gym.train.prm` (GUI-Shepherd's PRM, on the labelled
  steps :mod:`~gui_gym.train.prm_data` collects) and :mod:`~gui_gym.train.progress_model`
  (ProgRM's progress model and the ORM baseline); both checkpoint in the one format.

Nothing here is imported by ``import gui_gym``; torch and transformers load with the modules.
"""
