"""MaskablePPO (sb3-contrib) on a gui-gym env, with an optional shaped reward.

One file to read top to bottom and copy (cleanrl style): the arguments, ``make_env``, the
training loop, and an evaluation of success on the train tasks and on held-out test tasks
before and after training.

The env is adapted for array RL libraries by ``gui_gym.wrappers.sb3``: a ``Discrete`` action
over the screen's candidate actions with ``action_masks()``, and a ``Box`` of hashed
bag-of-words features (``--features minilm`` for sentence embeddings). The reward is the
task outcome, optionally plus one of the project's shaped rewards:

* ``progress``: ProgRM's progress reward over the env's milestones (``ProgressRewardWrapper``
  with ``MilestoneProgress``);
* ``milestone``: ADMIRE's milestone reward with online credit (``MilestoneWrapper``), its
  store seeded with one expert run of each train task;
* ``prm``: the rule PRM's process reward (``PRMWrapper(RulePRM())``).

Usage::

    python examples/sb3_maskable_ppo.py --env-id GuiGym/WikiHow-v0 --reward progress \\
        --total-timesteps 12000 --num-train-tasks 4
    python examples/sb3_maskable_ppo.py --device cuda --features minilm   # on a GPU

``--num-envs`` sub-envs run in this process (SB3's ``DummyVecEnv``): the simulated apps
step in well under a millisecond, so the policy update, not the env, is the cost here.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym
import numpy as np
import torch

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents.oracle import OracleAgent
from gui_gym.models.embeddings import HashingEmbedder
from gui_gym.models.milestones import CosineMatcher, TrajectoryMilestoneGenerator
from gui_gym.models.prm import RulePRM
from gui_gym.models.progress import MilestoneProgress
from gui_gym.wrappers import MilestoneWrapper, PRMWrapper, ProgressRewardWrapper
from gui_gym.wrappers.sb3 import make_sb3_env
from gui_gym.wrappers.task_subset import TaskSubset

REWARDS = ("outcome", "progress", "milestone", "prm")


@dataclass
class Args:
    env_id: str = "GuiGym/WikiHow-v0"
    """a simulated gui-gym id"""
    reward: Literal["outcome", "progress", "milestone", "prm"] = "outcome"
    """the reward the agent is trained on (the outcome, or the outcome plus a shaped reward)"""
    train_tasks: tuple[str, ...] = ()
    """task ids to train on (default: the first --num-train-tasks of --category)"""
    test_tasks: tuple[str, ...] = ()
    """held-out task ids to evaluate on (default: the first --num-test-tasks of the test split)"""
    category: str | None = "In-Page"
    """task category the default task lists are drawn from (WikiHow: In-Page, Cross-Page, QA)"""
    num_train_tasks: int = 4
    num_test_tasks: int = 8
    max_steps: int = 10
    """step budget of an episode"""
    max_candidates: int = 40
    """K, the size of the Discrete action space"""
    features: Literal["hash", "minilm"] = "hash"
    """observation features: hashed bag-of-words or MiniLM sentence embeddings"""
    total_timesteps: int = 12_288
    num_envs: int = 4
    n_steps: int = 128
    """rollout length per env per update (SB3's n_steps)"""
    batch_size: int = 128
    n_epochs: int = 4
    learning_rate: float = 1e-3
    ent_coef: float = 0.01
    gamma: float = 0.99
    hidden: int = 64
    """width of the two hidden layers of the policy and value MLPs"""
    shaping_weight: float = 1.0
    """weight of the shaped reward (progress/prm); ADMIRE uses its own lambda0"""
    eval_every: int = 2048
    """env steps between evaluations (0: only before and after)"""
    eval_episodes: int = 20
    seed: int = 0
    device: str = "cpu"
    """torch device of the policy ("cuda" on a GPU)"""
    threads: int = 1
    """torch CPU threads"""
    out: Path | None = None
    """write the curve as JSON here"""


def default_tasks(args: Args) -> tuple[list[str], list[str]]:
    suite = gym.make(args.env_id).unwrapped.suite
    train = list(args.train_tasks) or [
        t.task_id for t in suite.select("train", args.category)[: args.num_train_tasks]
    ]
    test = list(args.test_tasks)
    if not test:
        held_out = [t.task_id for t in suite.select("test", args.category)] or [
            t.task_id for t in suite.select("train", args.category) if t.task_id not in train
        ]
        test = held_out[: args.num_test_tasks]
    return train, test


def seed_milestone_store(args: Args, store: Path, train_tasks: list[str]) -> None:
    """ADMIRE initialises each task's milestones from one success: give it the expert's."""
    env = reward_wrapper(args, store)(gym.make(args.env_id, max_steps=args.max_steps))
    for task_id in train_tasks:
        observation, info = env.reset(seed=args.seed, options={"task": task_id})
        oracle, done = OracleAgent(env), False
        while not done:
            observation, _, terminated, truncated, info = env.step(oracle.act(observation, info))
            done = terminated or truncated
    env.close()


def reward_wrapper(args: Args, store: Path | None) -> Callable[[gym.Env], gym.Env]:
    """The shaped-reward wrapper of ``args.reward`` (identity for the outcome alone)."""
    if args.reward == "progress":
        model = MilestoneProgress.from_env_id(args.env_id)
        return lambda env: ProgressRewardWrapper(env, model, weight=args.shaping_weight)
    if args.reward == "prm":
        return lambda env: PRMWrapper(env, RulePRM(), weight=args.shaping_weight)
    if args.reward == "milestone":
        embedder = HashingEmbedder(256)  # cheap and deterministic; MiniLM works the same way
        return lambda env: MilestoneWrapper(
            env,
            store=store,
            generator=TrajectoryMilestoneGenerator(embedder),
            matcher=CosineMatcher(embedder),
            credit="online",
        )
    return lambda env: env


def make_env(args: Args, tasks: list[str], store: Path | None, shaped: bool = True) -> gym.Env:
    """gym.make -> (shaped reward) -> TaskSubset -> CandidateActions -> FeaturizedObservation."""
    wrappers = [reward_wrapper(args, store)] if shaped else []
    wrappers.append(lambda env: TaskSubset(env, tasks))
    return make_sb3_env(
        args.env_id,
        max_steps=args.max_steps,
        max_candidates=args.max_candidates,
        features=args.features,
        wrappers=wrappers,
    )


def success_rate(model: Any, env: gym.Env, tasks: list[str], episodes: int, seed: int) -> float:
    """Deterministic policy, ``episodes`` episodes cycling over ``tasks`` (seeds fixed)."""
    wins = 0
    for k in range(episodes):
        observation, info = env.reset(seed=seed + k, options={"task": tasks[k % len(tasks)]})
        done = False
        while not done:
            if model is None:  # the random baseline: uniform over the real candidates
                action = env.action_space.sample()
            else:
                action, _ = model.predict(
                    observation, action_masks=env.action_masks(), deterministic=True
                )
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        wins += bool(info["success"])
    return wins / episodes


def main(args: Args) -> dict[str, Any]:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(args.threads)
    np.random.seed(args.seed)
    train_tasks, test_tasks = default_tasks(args)
    workdir = Path(tempfile.mkdtemp(prefix="sb3_ppo_"))
    store = workdir / "milestones.json"
    if args.reward == "milestone":
        seed_milestone_store(args, store, train_tasks)

    envs = DummyVecEnv([lambda: make_env(args, train_tasks, store)] * args.num_envs)
    envs.seed(args.seed)
    model = MaskablePPO(
        "MlpPolicy",
        envs,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        learning_rate=args.learning_rate,
        ent_coef=args.ent_coef,
        gamma=args.gamma,
        policy_kwargs={"net_arch": [args.hidden, args.hidden]},
        device=args.device,
        seed=args.seed,
    )
    evaluation = make_env(args, train_tasks, store, shaped=False)  # success only, no shaping
    evaluation.action_space.seed(args.seed)
    curve: list[dict[str, Any]] = []

    def evaluate(steps: int, policy: Any) -> None:
        row = {
            "steps": steps,
            "train_success": success_rate(
                policy, evaluation, train_tasks, args.eval_episodes, 10_000
            ),
            "test_success": success_rate(
                policy, evaluation, test_tasks, args.eval_episodes, 20_000
            ),
            "seconds": round(time.perf_counter() - started, 2),
        }
        curve.append(row)
        print(json.dumps(row), flush=True)

    started = time.perf_counter()
    random_train = success_rate(None, evaluation, train_tasks, args.eval_episodes, 10_000)
    random_test = success_rate(None, evaluation, test_tasks, args.eval_episodes, 20_000)
    print(f"random policy: train {random_train:.2f}, test {random_test:.2f}")
    evaluate(0, model)
    chunk = args.eval_every or args.total_timesteps
    while model.num_timesteps < args.total_timesteps:
        model.learn(
            min(chunk, args.total_timesteps - model.num_timesteps), reset_num_timesteps=False
        )
        evaluate(model.num_timesteps, model)
    envs.close()
    result = {
        "env_id": args.env_id,
        "reward": args.reward,
        "seed": args.seed,
        "train_tasks": train_tasks,
        "test_tasks": test_tasks,
        "random": {"train_success": random_train, "test_success": random_test},
        "curve": curve,
    }
    if args.out is not None:
        from gui_gym.core.trajectory import atomic_write_text

        atomic_write_text(args.out, json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    import tyro

    main(tyro.cli(Args))
