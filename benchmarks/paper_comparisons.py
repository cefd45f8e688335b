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

Usage::

    nice -n 10 python benchmarks/paper_comparisons.py                 # full: hours on 2 cores
    python benchmarks/paper_comparisons.py --quick                     # minutes (make check-docs)
    python benchmarks/paper_comparisons.py --comparisons progrm_table1 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness, when loaded by path too
from harness import (
    bootstrap_difference,
    mean_interval,
    parse_arm,
    pick_tasks,
    split_success,
    write_json,
)


@dataclass(frozen=True)
class Comparison:
    """One paper's comparison: its env, arms (label -> ``ALGO:REWARD[:NAME=VALUE...]``, or
    ``sft`` for the start model itself) and claims ``(better, worse)``."""

    env: str
    paper: str
    arms: dict[str, str]
    claims: tuple[tuple[str, str], ...]
    sop: bool = False


def _table4(env: str) -> Comparison:
    """ADMIRE Table 4 on ``env``: GRPO, RLOO and DAPO, each with the outcome, a process reward
    and ADMIRE's milestones."""
    return Comparison(
        env,
        "ADMIRE Table 4: with GRPO, RLOO and DAPO alike, ADMIRE beats outcome and process rewards",
        {
            f"{algo}:{label}": f"{algo}:{reward}"
            for algo in ("grpo", "rloo", "dapo")
            for label, reward in (
                ("outcome", "outcome"),
                ("process", "outcome+0.3*prm"),  # ADMIRE App. A: process weight 0.3
                ("admire", "outcome+milestone"),
            )
        },
        tuple(
            (f"{algo}:admire", f"{algo}:{other}")
            for algo in ("grpo", "rloo", "dapo")
            for other in ("outcome", "process")
        ),
    )


COMPARISONS: dict[str, Comparison] = {
    "progrm_table1": Comparison(
        "GuiGym/WikiHow-v0",
        "ProgRM Table 1: REINFORCE++ with ProgRM (Env) beats REINFORCE++ with a learned ORM",
        {"orm": "reinforce_pp:orm", "progrm": "reinforce_pp:outcome+progress"},
        (("progrm", "orm"),),
    ),
    "admire_table1_3": Comparison(
        "GuiGym/AndroidWorld-v0",
        "ADMIRE Tables 1 and 3: adaptive milestones beat the outcome reward and static milestones",
        {
            "outcome": "grpo:outcome",
            "static": "grpo:outcome+milestone:milestone_mode=static",
            "adaptive": "grpo:outcome+milestone",
        },
        (("adaptive", "outcome"), ("adaptive", "static")),
    ),
    "admire_table4": _table4("GuiGym/ALFWorld-v0"),
    "admire_table4_webshop": _table4("GuiGym/WebShop-v0"),
    # Not a paper's claim: one arm, paired by seed with admire_table4's GRPO arms (the same
    # start, settings and seeds), to test why ADMIRE trails them there: at a third of
    # ADMIRE's milestone weight (lambda0 0.1, not 0.3), does GRPO with milestones move
    # toward the outcome arm?
    "admire_table4_weight": Comparison(
        "GuiGym/ALFWorld-v0",
        "Ablation, not a paper's claim: GRPO with ADMIRE's milestones at lambda0 = 0.1 "
        "(ADMIRE's 0.3 is admire_table4's grpo:admire)",
        {"grpo:admire_0.1": "grpo:outcome+0.1*milestone"},
        (),
    ),
    # GiGPO (verl-agent, arXiv 2505.10978: +12% over GRPO on ALFWorld at 1.5B), one arm paired
    # by seed with admire_table4's grpo:outcome (the same start, settings and seeds)
    "admire_table4_gigpo": Comparison(
        "GuiGym/ALFWorld-v0",
        "GiGPO (verl-agent Table 1): step groups of the same anchor state on top of GRPO's "
        "episode groups beat GRPO (admire_table4's grpo:outcome)",
        {"gigpo:outcome": "gigpo:outcome"},
        (),
    ),
    "shepherd_table1": Comparison(
        "GuiGym/AndroidWorld-v0",
        "GUI-Shepherd Table 1: PPO with the PRM reward beats PPO with the ORM reward",
        {"orm": "ppo:outcome+format", "prm": "ppo:outcome+prm"},
        (("prm", "orm"),),
    ),
    "ui_s1": Comparison(
        "GuiGym/WikiHow-v0",
        "UI-S1: semi-online RL beats offline SFT alone on SOP and online success, and keeps up "
        "with online GRPO",
        {"sft": "sft", "semi_online": "semi_online:replay", "online": "grpo:outcome"},
        (("semi_online", "sft"),),
        sop=True,
    ),
    "generalisation": Comparison(
        "GuiGym/WikiHow-v0",
        "Held-out generalisation: RL after SFT on every train task raises test-split success",
        {"sft": "sft", "grpo": "grpo:outcome"},
        (("grpo", "sft"),),
    ),
}

REPLAY_ID = "GuiGym/SemiOnlineReplay-v0"

LONGER = {"GuiGym/WebShop-v0": 3, "GuiGym/ALFWorld-v0": 3}
"""Extra oracle and episode steps of an env whose shortest tasks are longer (WebShop: search,
open a result, pick options, buy; ALFWorld: go to the object, take it, go to the receptacle,
put it, with a clean/heat/cool or lamp step between)."""

LONGER_ACTIONS = {"GuiGym/WebShop-v0": 48}
"""Extra new tokens per action of an env with long actions (WebShop's first action types the
instruction into the search box: 44-72 tokens of the env's BPE tokenizer)."""

SFT_EPOCHS = {"GuiGym/ALFWorld-v0": 13}
"""SFT epochs of an env whose start the default epochs memorise: on ALFWorld's 8 short train
games the 2x64 model solved 0/8 after 5, 8 epochs, 1/8 after 11, 4/8 after 13 and 7/8 after
15 (greedy, lr 3e-3); 13 leaves room to improve and to fall."""

WIDE_SFT_EPOCHS = 5
"""SFT epochs of the generalisation arm's start. Its 427 tasks give about 1,570 turns, 392
batches an epoch at about 12 minutes each on one core (the 4x128 model, prompts up to about
1,500 tokens): the 15 epochs that make the 2x64 model learn 8 tasks would take 3 hours before
any RL, and many tasks need fewer passes than few tasks do."""

NOT_BY_DEFAULT = (
    "generalisation",
    "admire_table4_webshop",
    "admire_table4_weight",
    "admire_table4_gigpo",
)
"""Comparisons a plain run leaves out: ``generalisation`` is hours on its own, and on WebShop
no tiny model gets a start above 0 (it must type a 44-72-token instruction into the search
box: SFT'd 2x64 and 4x128 models, 15 and 30 epochs, solved none of the 8 train tasks), so
ADMIRE's Table 4 runs on ALFWorld, the paper's other Table 4 env; ``admire_table4_weight``
is an ablation, not a paper's comparison; ``admire_table4_gigpo`` (GiGPO) awaits a full run
from a start that generalises (issue 45)."""


@dataclass
class Args:
    comparisons: list[str] = field(
        default_factory=lambda: [c for c in COMPARISONS if c not in NOT_BY_DEFAULT]
    )
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4])
    train_tasks: int = 8
    held_out_tasks: int = 8
    # the generalisation comparison's SFT set (WikiHow has 427 train tasks)
    generalisation_tasks: int = 427
    # a local Hugging Face causal-LM folder the generalisation start is SFT'd from instead of
    # the tiny model (which does not learn to copy the query: docs/paper_comparisons.md);
    # with a pretrained model, also lower --sft-lr and --learning-rate and use --device cuda
    generalisation_model: str | None = None

    max_oracle_steps: int = 3  # the subset: tasks the oracle solves in at most this many steps
    max_steps: int = 6
    sft_epochs: int = 15
    sft_lr: float = 3e-3
    iterations: int = 5
    # episodes per update: GRPO/RLOO/DAPO tasks x group, PPO/REINFORCE++ one per task
    group_size: int = 8

    tasks_per_iteration: int = 4
    learning_rate: float = 5e-4
    max_new_tokens: int = 48
    temperature: float = 0.5  # rollout sampling temperature
    workers: int = 2  # runs at once (each single-threaded): one per core
    device: str = "cpu"
    embedder: str = "hashing"  # the milestone embedder: hashing, or a sentence-transformers name
    bootstrap: int = 2000  # bootstrap resamples of each interval
    quick: bool = False  # every arm once on 2 tasks, 1 seed: minutes, says nothing of the claims
    out: str = "benchmarks/results"  # folder of the results JSON
    work: str | None = None  # keep the SFT models and runs here (default: a temp folder)
    # keep the runs of ``<out>/paper_comparisons.json`` (same settings) and run only the rest
    resume: bool = False

    def __post_init__(self) -> None:
        unknown = [c for c in self.comparisons if c not in COMPARISONS]
        if unknown:
            raise SystemExit(f"unknown comparison(s) {unknown}; allowed: {', '.join(COMPARISONS)}")
        if self.quick:  # minutes: every arm once, tiny batches; says nothing about the claims
            self.seeds = self.seeds[:1]
            self.train_tasks, self.held_out_tasks = 2, 2
            self.iterations, self.group_size, self.tasks_per_iteration = 1, 2, 2
            self.sft_epochs, self.bootstrap = 2, 200
            self.generalisation_tasks = min(self.generalisation_tasks, 4)
        model = self.generalisation_model
        if model is not None and not (Path(model) / "config.json").is_file():
            raise SystemExit(
                f"--generalisation-model {model}: not a Hugging Face model folder (no "
                "config.json); give a local causal-LM folder, e.g. one save_pretrained wrote"
            )


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
        if (name, label, seed) not in done
    ]
    return jobs, skipped


RESUME_FREE = ("comparisons", "seeds", "workers", "out", "work", "resume", "bootstrap")
"""Settings a resumed run may change: which runs to add, where, and how they are summarised.
Every other setting changes what a run measures, so a resume must match it."""


def previous_runs(args: Args) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The runs and starts ``<out>/paper_comparisons.json`` holds, for ``--resume``.

    Raises:
        SystemExit: one line when the file was written with other settings or is unreadable.
    """
    path = Path(args.out) / "paper_comparisons.json"
    if not path.exists():
        return [], {}
    try:
        old = json.loads(path.read_text())
        runs, settings = list(old["runs"]), dict(old["args"])
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


def prepare_start(env_id: str, work: Path, args: Args, *, wide: bool = False) -> dict[str, Any]:
    """Tasks, oracle datasets, the tiny base model and its SFT for one env (reused from
    ``work`` when a previous run left them)."""
    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.runs.record import record_dataset
    from gui_gym.train.runner import build_tiny_policy, env_texts
    from gui_gym.train.sft import SFTConfig, train_sft

    torch.set_num_threads(1)
    work.mkdir(parents=True, exist_ok=True)
    count = args.generalisation_tasks if wide else args.train_tasks
    steps = args.max_oracle_steps + LONGER.get(env_id, 0)
    tasks = pick_tasks(
        env_id, steps, count, args.held_out_tasks, train_oracle_steps=12 if wide else steps
    )
    if not tasks["train"] or not tasks["held_out"]:
        raise SystemExit(f"{env_id}: no short tasks for {tasks}; raise --max-oracle-steps")
    datasets = {}
    for split, chosen in tasks.items():
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
    # a wider model for the generalisation arm: it must copy queries from the instruction
    size = {"n_layer": 4, "n_embd": 128} if wide else {}
    # the tokenizer's text: 50 episodes (8 in --quick: an ALFWorld episode of a game not yet
    # built costs its planner run, seconds to minutes)
    if wide and args.generalisation_model is not None:
        base = Path(args.generalisation_model)
    else:
        texts = env_texts(env_id, count=8 if args.quick else 50)
        base = build_tiny_policy(work / "base", texts, n_positions=2048, **size)
    sft_model = work / "sft"
    if not (sft_model / "config.json").exists():
        # nothing else of the benchmark runs yet: the SFT may use every worker's core (the
        # scores below stay on one thread, as the kept starts were scored)
        torch.set_num_threads(max(1, args.workers))
        train_sft(
            Path(datasets["train"]),
            base,
            sft_model,
            SFTConfig(
                epochs=min(
                    args.sft_epochs,
                    WIDE_SFT_EPOCHS if wide else SFT_EPOCHS.get(env_id, args.sft_epochs),
                ),
                lr=args.sft_lr,
                eval_fraction=0.0,
                batch_size=4,
            ),
            device=args.device,
            progress=False,
        )
        torch.set_num_threads(1)
    start: dict[str, Any] = {"tasks": tasks, "datasets": datasets, "model": str(sft_model)}
    before = TransformersLLM(base, device=args.device)
    after = TransformersLLM(sft_model, device=args.device)
    start["before_sft"] = success(before, env_id, tasks, args)
    start["sft"] = scores(after, env_id, start, args, sop=True)
    # the comparison means something only from a start that is neither 0 nor memorised
    start["sft_start_ok"] = 0.0 < start["sft"]["train"] < 1.0
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
            [EpisodeSpec(t, s) for t in start["tasks"]["train"] for s in range(8)]
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

    torch.set_num_threads(1)  # tiny models: threads only contend
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


# --------------------------------------------------------------------------------- summary


def summarise(
    args: Args, starts: dict[str, Any], runs: list[dict[str, Any]], seconds: float
) -> dict[str, Any]:
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
        "comparisons": out,
        "runs": runs,
        "seconds": seconds,
        "cpu_seconds": sum(r["cpu_seconds"] for r in runs),
    }
    folder = Path(args.out)
    write_json(folder / "paper_comparisons.json", result)
    plot(result, folder / "paper_comparisons.png")
    return result


def plot(result: dict[str, Any], path: Path) -> None:
    """One panel per comparison: each arm's mean success on trained and held-out tasks with
    its 95% interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, c in result["comparisons"].items() if c["arms"]]
    if not names:
        return
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    for ax, name in zip(axes[0], names):
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
    axes[0][0].set_ylabel("greedy success (mean, 95% CI)")
    axes[0][0].legend(fontsize=7)
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
    started = time.perf_counter()
    work = Path(args.work or tempfile.mkdtemp())
    args.work = str(work)
    runs: list[dict[str, Any]] = []
    earlier: dict[str, Any] = {}
    if args.resume:
        runs, earlier = previous_runs(args)
        print(f"resuming: {len(runs)} runs kept from {Path(args.out) / 'paper_comparisons.json'}")
    done = {(r["comparison"], r["arm"], r["seed"]) for r in runs}
    starts: dict[str, Any] = dict(earlier)
    prepared: set[str] = set()
    for name in args.comparisons:
        comparison = COMPARISONS[name]
        key = start_key(name)
        if key not in prepared:
            prepared.add(key)
            folder = work / key.replace("/", "_")
            start = prepare_start(comparison.env, folder, args, wide=name == "generalisation")
            kept = earlier.get(key)
            if kept and (kept.get("tasks"), kept.get("sft")) != (start["tasks"], start["sft"]):
                raise SystemExit(
                    f"cannot resume: {key}'s SFT start in {folder} is not the one the kept runs "
                    "trained from (another --work?); resume with the same --work or another --out"
                )
            starts[key] = start
            print(f"{key}: start {starts[key]['sft']} (before SFT {starts[key]['before_sft']})")
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
            lambda: summarise(args, starts, runs, time.perf_counter() - started),
        )
    result = summarise(args, starts, runs, time.perf_counter() - started)
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
