"""A real model learns here: SmolLM2-135M-Instruct, zero-shot, SFT (LoRA and full), then GRPO.

For each env (WikiHow, AndroidWorld):

1. The tasks: the first ``--train-tasks`` train-split tasks and the first ``--test-tasks``
   test-split tasks (none of the train ones) that the env's scripted expert solves within
   ``--max-steps`` (:func:`gui_gym.runs.probe.oracle_short_tasks`). Held out means: on WikiHow,
   other tasks (the splits are disjoint task lists); on AndroidWorld, other templates (the
   train templates are excluded) drawn from the test split's parameter stream.
2. ``record``: ``--train-episodes`` expert episodes of the train tasks
   (:func:`gui_gym.runs.record.record_dataset`, what ``gui-gym record`` runs).
3. ``zero_shot``: greedy success of the model as it comes on one episode per test task.
4. ``sft_lora`` / ``sft_full``: :func:`gui_gym.train.sft.train_sft` with the library's
   defaults for the arm (:func:`gui_gym.train.sft.default_lr`: what ``gui-gym sft`` runs),
   per seed, then the same test episodes.
5. ``grpo``: ``gui_gym.train.runner.make_trainer("grpo", ...)`` (what ``gui-gym train --algo
   grpo`` runs) from the first seed's LoRA SFT model on the train tasks for
   ``--grpo-iterations`` iterations with ``--grpo-reward``, then the same test episodes.
6. ``train_eval``: greedy success of that GRPO model and of its SFT start on one train-split
   episode per train task (the tasks GRPO sampled from, at the same seed 0 as every eval):
   whether RL raised success where it trained, apart from whether that carried over.

Every figure has its 95% Wilson interval over episodes, the wall time and the precision it ran
under. Results go to ``--out`` (JSON, rewritten atomically after each stage); a rerun skips the
stages already there, so a killed run resumes. ``--quick`` runs every stage on a tiny GPT-2
built from a config (seconds; tests/test_real_model_script.py runs it).

Usage::

    nice -n 10 python benchmarks/real_model.py --model /work/cache/smollm2-135m-instruct
    python benchmarks/real_model.py --envs wikihow --stages record zero_shot sft_lora
    python benchmarks/real_model.py --quick --out /tmp/quick.json
"""

from __future__ import annotations

import contextlib
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import machine_at_end, wilson, write_json

ENVS = {"wikihow": "GuiGym/WikiHow-v0", "androidworld": "GuiGym/AndroidWorld-v0"}
STAGES = ["record", "zero_shot", "sft_lora", "sft_full", "grpo", "train_eval"]
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class Args:
    model: str = "smollm2-135m-instruct"  # a registry name or a Hugging Face folder
    envs: list[str] = field(default_factory=lambda: list(ENVS))
    stages: list[str] = field(default_factory=lambda: list(STAGES))
    seeds: list[int] = field(default_factory=lambda: [0])
    train_tasks: int = 30
    test_tasks: int = 20
    train_episodes: int = 60
    max_steps: int = 6
    max_new_tokens: int = 48
    epochs: int = 2
    lr_lora: float | None = None  # None: the library's default (gui_gym.train.sft.default_lr)
    lr_full: float | None = None
    grpo_iterations: int = 4
    grpo_group_size: int = 4
    grpo_tasks_per_iteration: int = 2
    grpo_lr: float = 1e-5
    grpo_mini_batches: int | None = None  # optimizer steps per iteration (None: one)
    grpo_temperature: float = 1.0  # GRPO's rollout sampling temperature
    # GRPO's reward (gui-gym train --reward); any other than 'outcome' is its own run,
    # e.g. 'outcome+progress' (ProgRM's progress over the env's milestones): key <env>/grpo_<reward>
    grpo_reward: str = "outcome"
    dtype: str = "auto"  # auto: bf16 autocast on a CPU with native bf16, else fp32
    threads: int = 2  # torch threads
    out: Path = RESULTS / "real_model.json"  # results JSON (a rerun skips what it holds)
    work: Path = RESULTS / "real_model_work"  # datasets and trained models
    quick: bool = False  # every stage on a tiny GPT-2 from a config, in seconds


def precision(args: Args) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on CPU (fp32 master weights) with ``--dtype bfloat16``, or with ``auto``
    where the CPU computes bf16 natively; else nothing (fp32)."""
    from gui_gym.models.llm.precision import autocast

    return autocast("cpu", precision_name(args) != "fp32")


def precision_name(args: Args) -> str:
    """What the figures ran under: ``bf16 autocast`` or ``fp32``."""
    from gui_gym.models.llm.precision import bf16_available

    if args.quick or args.dtype == "float32":
        return "fp32"
    if args.dtype == "bfloat16" or bf16_available("cpu"):
        return "bf16 autocast"
    return "fp32"


def resolve(model: str) -> str:
    """A model name through the registry when it exists, else the folder as given."""
    if Path(model).exists():
        return model
    try:
        from gui_gym.models.llm.local import resolve_model
    except ImportError:
        return model
    return str(resolve_model(model))


def evaluate(
    llm: Any, env_id: str, tasks: list[str], args: Args, seed: int = 0, split: str = "test"
) -> dict:
    """Greedy success of ``llm`` on one ``split`` episode per task, with the interval, the
    share of invalid actions and the wall time."""
    import gymnasium as gym

    from gui_gym.agents.llm import LLMAgent
    from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine

    def make_env() -> Any:
        return gym.make(env_id, split=split, max_steps=args.max_steps)

    started = time.perf_counter()
    agent = LLMAgent(llm, temperature=0.0, max_new_tokens=args.max_new_tokens)
    engine = RolloutEngine(make_env, agent, num_envs=max(1, len(tasks)))
    try:
        with precision(args):
            episodes = engine.run([EpisodeSpec(task, seed) for task in tasks])
    finally:
        engine.close()
    lost = [t.task_id for t in episodes if t.infra_error is not None]
    if lost:
        raise RuntimeError(f"episodes lost to infrastructure errors: {lost}")
    wins = sum(bool(t.success) for t in episodes)
    steps = [s for t in episodes for s in t.steps]
    return {
        "success": wins / max(1, len(episodes)),
        "successes": wins,
        "episodes": len(episodes),
        "interval_95": wilson(wins, len(episodes)),
        "invalid_action_rate": sum(not s.action_valid for s in steps) / max(1, len(steps)),
        "first_actions": [t.steps[0].action[:60] for t in episodes[:5] if t.steps],
        "solved": [t.task_id for t in episodes if t.success],
        "seconds": round(time.perf_counter() - started, 1),
    }


def pick(env_id: str, args: Args) -> dict[str, list[str]]:
    """The train and held-out test tasks (see the module docstring)."""
    from gui_gym.runs.probe import oracle_short_tasks

    train = oracle_short_tasks(env_id, "train", args.max_steps, args.train_tasks)
    test = oracle_short_tasks(env_id, "test", args.max_steps, args.test_tasks, exclude=train)
    return {"train": train, "test": test}


def tiny_model(folder: Path, dataset: Path) -> str:
    """The quick mode's model: a tiny GPT-2 whose tokenizer is trained on the dataset's text."""
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.train.runner import build_tiny_policy

    if not (folder / "config.json").is_file():
        texts = []
        for t in ExpertDataset.load(dataset).trajectories:
            texts += [t.instruction] + [s.screen for s in t.steps]
        build_tiny_policy(folder, texts, vocab_size=400, n_embd=32, n_positions=4096)
    return str(folder)


def sft(arm: str, seed: int, dataset: Path, model: str, out: Path, args: Args) -> dict:
    """One SFT run with the library's defaults for the arm (LoRA or full)."""
    from gui_gym.train.sft import SFTConfig, default_lr, train_sft

    lora = arm == "sft_lora"
    bf16 = precision_name(args) != "fp32"
    config = SFTConfig(epochs=1 if args.quick else args.epochs, lora=lora, seed=seed, bf16=bf16)
    chosen = args.lr_lora if lora else args.lr_full
    if chosen is not None:
        config.lr = chosen
    config.eval_fraction = 0.0
    # a run killed mid-epoch resumes from its last checkpoint (LoRA's are small; a full
    # fine-tune's weights and Adam state are ~1.6 GB, so less often)
    config.checkpoint_every = 0 if args.quick else (10 if lora else 25)
    with precision(args):
        report = train_sft(dataset, model, out, config, device="cpu", progress=False)
    settings = asdict(config)
    settings["lr"] = default_lr(lora) if config.lr is None else config.lr
    return {
        "config": {
            k: settings[k]
            for k in (
                "epochs",
                "lr",
                "lora",
                "lora_r",
                "lora_alpha",
                "lora_targets",
                "batch_size",
                "history",
                "seed",
            )
        },
        "examples": report.train_examples,
        "optimizer_steps": report.optimizer_steps,
        "loss_first": round(sum(report.losses[:5]) / max(1, len(report.losses[:5])), 4),
        "loss_last": round(sum(report.losses[-5:]) / max(1, len(report.losses[-5:])), 4),
        "train_seconds": round(report.seconds, 1),
    }


def grpo(
    env_id: str,
    start: str,
    tasks: list[str],
    out: Path,
    args: Args,
    *,
    reward: str = "outcome",
    env_kwargs: dict[str, Any] | None = None,
    seed: int | None = None,
    embedder: str | None = None,
    resume: bool = False,
) -> tuple[Any, dict]:
    """GRPO (LoRA) from ``start`` on the train tasks with ``reward``; the trained policy as an
    LLM and the metrics. ``env_kwargs`` default to the train split at ``--max-steps``;
    ``resume`` continues a killed run from its last checkpoint (benchmarks/baselines.py)."""
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.runner import make_trainer

    settings = {
        "out": str(out),
        "iterations": 1 if args.quick else args.grpo_iterations,
        "seed": args.seeds[0] if seed is None else seed,
        "learning_rate": args.grpo_lr,
        "max_new_tokens": args.max_new_tokens,
        "temperature": args.grpo_temperature,
        "device": "cpu",
        "group_size": 2 if args.quick else args.grpo_group_size,
        "tasks_per_iteration": 1 if args.quick else args.grpo_tasks_per_iteration,
        "update_epochs": 1,
        "micro_batch_turns": 4,
        # an iteration costs minutes on a CPU and a LoRA checkpoint is small: keep every one,
        # so a killed run resumes where it stopped (the default, 10, saved nothing mid-run)
        "save_every": 1,
        "progress": False,
    }
    if args.grpo_mini_batches is not None:
        settings["mini_batches"] = args.grpo_mini_batches
    started = time.perf_counter()
    extra = {} if embedder is None else {"embedder": embedder}
    trainer = make_trainer(
        "grpo",
        env_id,
        model=start,
        lora=True,
        reward=reward,
        settings=settings,
        env_kwargs=env_kwargs or {"split": "train", "max_steps": args.max_steps},
        tasks=tasks,
        resume=resume,
        **extra,
    )
    with precision(args):
        history = trainer.train()
    policy = trainer.policy
    llm = TransformersLLM(policy.model, policy.tokenizer, device=policy.device)
    return llm, {
        "settings": {k: v for k, v in settings.items() if k not in ("out", "progress")},
        "reward": reward,
        "rollout_success": [round(m["success_rate"], 4) for m in history],
        # 0 in an iteration: every group's episodes had one return, and nothing was learned
        "advantage_std": [round(m["advantage_std"], 4) for m in history],
        "train_seconds": round(time.perf_counter() - started, 1),
    }


def grpo_key(env: str, reward: str) -> str:
    """The JSON key of a GRPO run: ``<env>/grpo`` for the outcome reward (as every earlier
    run), ``<env>/grpo_<reward>`` for another (``outcome+progress`` -> ``grpo_outcome_progress``)."""
    from gui_gym.train.reward_stack import parse_reward

    parse_reward(reward)  # a typo is an error before hours of training, not a new key
    if reward.strip() == "outcome":
        return f"{env}/grpo"
    slug = "".join(c if c.isalnum() else "_" for c in reward.strip()).strip("_")
    return f"{env}/grpo_{slug}"


def seed_summary(runs: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per env and SFT arm (``<env>/<arm>``), what its seeds give together: the seeds, each
    seed's success, their mean and spread, and the episodes pooled (successes over every
    seed's episodes, with the Wilson interval of the pooled rate). Seeds share the test
    episodes, so the pooled interval is of the recipe, not of more tasks."""
    grouped: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for key, run in runs.items():
        parts = key.split("/")
        if len(parts) == 3 and parts[2].startswith("seed") and "successes" in run:
            grouped.setdefault(f"{parts[0]}/{parts[1]}", []).append((int(parts[2][4:]), run))
    summary = {}
    for arm, seeded in sorted(grouped.items()):
        seeded.sort()
        rates = [run["success"] for _, run in seeded]
        successes = sum(run["successes"] for _, run in seeded)
        episodes = sum(run["episodes"] for _, run in seeded)
        mean = sum(rates) / len(rates)
        summary[arm] = {
            "seeds": [seed for seed, _ in seeded],
            "success_per_seed": rates,
            "success_mean": round(mean, 4),
            "success_std": round((sum((r - mean) ** 2 for r in rates) / len(rates)) ** 0.5, 4),
            "successes": successes,
            "episodes": episodes,
            "pooled_interval_95": wilson(successes, episodes),
        }
    return summary


def main(args: Args) -> dict[str, Any]:
    """Run the missing stages and return (and write) the results."""
    import json

    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.runs.record import record_dataset

    torch.set_num_threads(args.threads)
    bad = [s for s in args.stages if s not in STAGES] + [e for e in args.envs if e not in ENVS]
    if bad:
        raise SystemExit(f"unknown stage or env {bad[0]!r}; stages: {STAGES}, envs: {list(ENVS)}")
    try:
        grpo_key("env", args.grpo_reward)
    except ValueError as error:
        raise SystemExit(f"--grpo-reward: {error}") from None
    if args.quick:
        args.train_tasks, args.test_tasks, args.train_episodes = 2, 2, 2
        args.max_steps, args.max_new_tokens = 3, 8
    result: dict[str, Any] = {}
    if args.out.is_file():
        result = json.loads(args.out.read_text())
    result["args"] = {k: str(v) for k, v in asdict(args).items()}
    result.setdefault("runs", {})
    ran_under = precision_name(args)

    def save(key: str, value: dict) -> None:
        result["runs"][key] = {**value, "precision": ran_under}
        result["seeds"] = seed_summary(result["runs"])
        result["machine"] = machine_at_end()
        write_json(args.out, result)
        print(f"{key}: {json.dumps(value)[:300]}", flush=True)

    for name in args.envs:
        env_id = ENVS[name]
        work = args.work / name
        tasks = pick(env_id, args)
        result.setdefault("tasks", {})[name] = tasks
        dataset = work / "dataset"
        if f"{name}/record" not in result["runs"] or not dataset.is_dir():
            started = time.perf_counter()
            report = record_dataset(
                env_id,
                episodes=args.train_episodes,
                out=dataset,
                env_kwargs={"split": "train", "max_steps": args.max_steps},
                tasks=tasks["train"],
                progress=False,
            )
            save(
                f"{name}/record",
                {
                    "episodes": report.episodes,
                    "successes": report.successes,
                    "seconds": round(time.perf_counter() - started, 1),
                },
            )
        model = tiny_model(work / "tiny", dataset) if args.quick else resolve(args.model)
        if "zero_shot" in args.stages and f"{name}/zero_shot" not in result["runs"]:
            llm = TransformersLLM(model, device="cpu")
            save(f"{name}/zero_shot", evaluate(llm, env_id, tasks["test"], args))
        for arm in ("sft_lora", "sft_full"):
            if arm not in args.stages:
                continue
            for seed in args.seeds:
                key = f"{name}/{arm}/seed{seed}"
                if key in result["runs"]:
                    continue
                out = work / f"{arm}_seed{seed}"
                trained = sft(arm, seed, dataset, model, out, args)
                llm = TransformersLLM(str(out), device="cpu")
                save(key, {**trained, **evaluate(llm, env_id, tasks["test"], args)})
        start = work / f"sft_lora_seed{args.seeds[0]}"
        key = grpo_key(name, args.grpo_reward)
        run_dir = work / key.split("/")[1]  # grpo, or grpo_<reward>
        if "grpo" in args.stages and key not in result["runs"] and start.is_dir():
            llm, trained = grpo(
                env_id,
                str(start),
                tasks["train"],
                run_dir,
                args,
                reward=args.grpo_reward,
                resume=True,
            )
            before = result["runs"].get(f"{name}/sft_lora/seed{args.seeds[0]}", {})
            save(
                key,
                {
                    **trained,
                    "start": str(start),
                    "success_before": before.get("success"),
                    **evaluate(llm, env_id, tasks["test"], args),
                },
            )
        if "train_eval" in args.stages and (run_dir / "model").is_dir():
            # the start is the same SFT model whatever GRPO's reward: played once, under its key
            start_key = f"{name}/sft_lora/seed{args.seeds[0]}/train_tasks"
            for tag, folder in ((start_key, start), (f"{key}/train_tasks", run_dir / "model")):
                if tag not in result["runs"]:
                    llm = TransformersLLM(str(folder), device="cpu")
                    save(tag, evaluate(llm, env_id, tasks["train"], args, split="train"))
    return result


if __name__ == "__main__":
    main(tyro.cli(Args))
