"""The baselines table: every benchmark's test split under the same rows of agents.

Envs (:data:`ENVS`): WikiHow, AndroidWorld, WebShop (10,000-product catalog), ALFWorld
(``valid_unseen``) and a fixed sample of 12 MiniWoB++ tasks (:data:`MINIWOB_SAMPLE`, real
Chromium). Rows (:data:`ROWS`):

* ``random``: uniform over the screen's candidate actions (:class:`gui_gym.agents.RandomAgent`);
* ``rule``: WebShop's own rule baseline (search the instruction, buy the first result;
  :class:`gui_gym.agents.WebShopGreedyAgent`, not its informed variant), WebShop only;
* ``rule_informed``: that agent keeping to the price ceiling and choosing the options the
  instruction names, from the page alone (``informed=True``): WebShop's ``sft`` teacher;
* ``oracle``: the env's scripted expert (:class:`gui_gym.agents.OracleAgent`);
* ``zero_shot``: the model as it comes (default SmolLM2-135M-Instruct), greedy;
* ``sft``: LoRA SFT on the train split's successful episodes of the env's teacher
  (:attr:`BenchEnv.teacher`: the expert, except on WebShop, whose expert reads the hidden
  target; ``benchmarks/real_model.py``'s ``sft``: the library's defaults, what
  ``gui-gym sft --lora`` runs), per training seed;
* ``sft_grpo_outcome`` / ``sft_grpo_shaped``: GRPO from that SFT model on train tasks it was
  not trained on (:func:`grpo_tasks`), with the task outcome, or with the env's shaped reward
  (:attr:`BenchEnv.shaped`).

Every row of an env plays the same test episodes (``gui_gym.runs.evaluate.evaluate``, what
``gui-gym eval`` runs): episode ``i`` is the split's ``i``-th task (cycling) reset with seed
``10_000 + i``; the SmolLM2 rows play the first ``--llm-episodes`` of them. A cell
(env x row [x seed]) records test-split success with its 95% Wilson interval, the mean score
(WebShop's reward; 0/1 elsewhere) with a 95% bootstrap interval over episodes, the wall and
CPU seconds (``getrusage``: this process and its reaped children), the agent and settings,
and what held out means for the env. The JSON (``--out``) is rewritten atomically after every
cell; a rerun skips the cells already there (resume is the default; ``--fresh`` runs the chosen
cells again, keeping the others).
A trained row finds the models it starts from in ``--work``.

Before a SmolLM2 cell runs, the plan of the cells left is printed with an estimated cost
(:func:`plan_costs`, from the unit costs measured on this CPU in ``cpu_costs.py``);
``--budget-hours`` refuses a plan over budget, ``--plan-only`` prints it and runs nothing.
docs/baselines.md sizes one piece of under 2 hours per benchmark with it.

Usage::

    nice -n 10 python benchmarks/baselines.py --rows random rule rule_informed oracle
    nice -n 10 python benchmarks/baselines.py --rows zero_shot sft sft_grpo_outcome \\
        sft_grpo_shaped --envs wikihow --max-steps 5 --llm-episodes 40 --train-episodes 60 \\
        --epochs 1 --grpo-iterations 3 --max-new-tokens 32 --budget-hours 2
    python benchmarks/baselines.py --plan-only                        # the cost of the rest
    python benchmarks/baselines.py --quick --out /tmp/quick.json     # tiny GPT-2, 2 episodes
    python benchmarks/baselines.py --figure docs/baselines.png        # from --out's JSON
    python benchmarks/baselines.py --markdown                         # the docs table
"""

from __future__ import annotations

import functools
import resource
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_costs
from cpu_costs import (
    EVAL_SECONDS_PER_TURN,
    PROMPT_SCALE,
    RL_SECONDS_PER_EPISODE_STEP,
    SFT_SECONDS_PER_EXAMPLE,
    oracle_ceiling,
    recorded_steps,
    token_factor,
)
from harness import load_script, machine_at_end, mean_interval, wilson, write_json

RESULTS = Path(__file__).resolve().parent / "results"
TEST_SEED = 10_000
"""Episode ``i`` of a test cell is reset with seed ``TEST_SEED + i``; training data is
recorded from seed 0, so no MiniWoB++ instance (a task's seed) is both trained and tested."""

MINIWOB_SAMPLE: tuple[str, ...] = (
    "click-button",  # one click on the named button
    "click-checkboxes",  # a multi-select, then submit
    "click-tab-2",  # find a link behind tabs
    "click-collapsible-2",  # open accordions to find a link
    "enter-text",  # type a given word
    "login-user",  # a two-field form
    "choose-list",  # a drop-down
    "email-inbox",  # a small app: open, reply, forward, delete, star
    "navigate-tree",  # expand a folder tree
    "use-autocomplete-nodelay",  # type, then pick the suggestion
    "drag-items",  # reorder a list by dragging
    "simple-arithmetic",  # read a sum, type its value
)
"""The fixed MiniWoB++ sample: one task per kind of skill, each deterministic (none in
``NONDETERMINISTIC_TASKS``) and solved by its expert on 10 of 10 seeds (docs/miniwob.md)."""


TEACHER_EXAMPLES_WEBSHOP = 1.65
"""SFT examples per recorded episode of WebShop's teacher (``webshop-greedy:informed``) on
the train split's first 120 goals at 8 steps (10k catalog): it bought the target on 45 of
them, in 198 steps (0.36 and 4.4 steps a success; 82 of 200, 1.77 an episode, on the first
200). Measured with the agent alone; its test figures at 8 steps: 40 of the first 100 goals,
score 0.67."""


@dataclass(frozen=True)
class BenchEnv:
    """One benchmark of the table: its id, test and train ``gym.make`` arguments, what held
    out means, its shaped reward (``--reward`` of ``gui-gym train``), how many LLM episodes
    run at once (browsers are heavier than simulated apps), and the agent whose recorded
    train-split episodes the ``sft`` row learns from (an ``--agent`` name; SFT keeps the
    successful ones). ``teacher_examples`` is the SFT examples one recorded episode gives on
    average where the teacher is not the expert (its success rate x its steps), measured."""

    env_id: str
    test: dict[str, Any]
    train: dict[str, Any]
    held_out: str
    shaped: str
    shaped_note: str
    llm_batch: int = 16
    teacher: str = "oracle"
    teacher_note: str = "the env's scripted expert"
    teacher_examples: float | None = None


_PROGRESS = "ProgRM's progress difference over the env's own milestones (MilestoneProgress)"
ENVS: dict[str, BenchEnv] = {
    "wikihow": BenchEnv(
        "GuiGym/WikiHow-v0",
        {"split": "test"},
        {"split": "train"},
        "other tasks: the test split's 150 tasks are a task list disjoint from the train split's",
        "outcome+progress",
        _PROGRESS + " (Mobile-Env's task events)",
    ),
    "androidworld": BenchEnv(
        "GuiGym/AndroidWorld-v0",
        {"split": "test"},
        {"split": "train"},
        "other parameter draws: the test split draws each of the 116 templates' parameters "
        "from its own seed stream; the templates are shared with the train split",
        "outcome+progress",
        _PROGRESS + " (each template's milestones)",
    ),
    "webshop": BenchEnv(
        "GuiGym/WebShop-v0",
        {"split": "test", "catalog_size": 10_000},
        {"split": "train", "catalog_size": 10_000},
        "other goals: the 500 test goals' target products (and their near-duplicates) are in "
        "no train goal (10,000-product catalog)",
        "outcome+progress",
        _PROGRESS + " (searched, product opened, options chosen, bought)",
        teacher="webshop-greedy:informed",
        teacher_note="WebShopGreedyAgent(informed=True), which acts on the page alone: "
        "WebShop's expert reads the hidden target (it searches the target's title and "
        "clicks its id), which no screen shows; only the teacher's successful episodes are "
        "learned from",
        teacher_examples=TEACHER_EXAMPLES_WEBSHOP,
    ),
    "alfworld": BenchEnv(
        "GuiGym/ALFWorld-v0",
        {"split": "valid_unseen"},
        {"split": "train"},
        "unseen rooms: ALFWorld's valid_unseen games (134) are on ALFRED's held-out floor "
        "plans, never in a train game",
        "outcome+progress",
        _PROGRESS + " (the goal's PDDL conditions)",
    ),
    "miniwob": BenchEnv(
        "GuiGym/MiniWoB-v0",
        {"tasks": list(MINIWOB_SAMPLE), "split": "test", "time_limit_s": 600.0},
        {"tasks": list(MINIWOB_SAMPLE), "split": "train", "time_limit_s": 600.0},
        "other instances: the same 12 tasks, test episodes on seeds 10,000+ (miniwob's test "
        "data mode), training episodes on seeds from 0",
        "outcome+milestone",
        "ADMIRE's adaptive milestones (lambda0 0.3; MiniWoB++ tasks ship no milestones)",
        llm_batch=4,
    ),
}
"""The benchmarks, by ``--envs`` name. MiniWoB++'s 10 s limit is raised for every row alike
(a model on CPU needs seconds a step; the expert and random rows end long before)."""

CHEAP_ROWS = {
    "random": "random",
    "rule": "webshop-greedy",
    "rule_informed": "webshop-greedy:informed",
    "oracle": "oracle",
}
"""Rows run by a built-in agent (``gui-gym eval --agent`` names)."""
LLM_ROWS = ("zero_shot", "sft", "sft_grpo_outcome", "sft_grpo_shaped")
GRPO_ROWS = ("sft_grpo_outcome", "sft_grpo_shaped")
"""The rows trained from the ``sft`` row's model: ``--fresh`` on ``sft`` drops them too."""
ROWS = (*CHEAP_ROWS, *LLM_ROWS)
RULE_ENVS = ("webshop",)
"""Envs with a rule baseline of their own (the ``rule`` and ``rule_informed`` rows)."""
RULE_ROWS = ("rule", "rule_informed")

AGENTS = {
    "random": "uniform over the screen's candidate actions (RandomAgent), never DONE",
    "rule": "WebShop's rule baseline: search the instruction, buy the first result "
    "(WebShopGreedyAgent, informed=False)",
    "rule_informed": "the rule keeping to the instruction's price ceiling and choosing the "
    "options it names, from the page alone (WebShopGreedyAgent, informed=True): the sft "
    "row's teacher",
    "oracle": "the env's scripted expert (OracleAgent)",
    "zero_shot": "the model as it comes, greedy (LLMAgent, default prompt)",
    "sft": "LoRA SFT on the teacher's successful recorded train-split episodes (the expert's; "
    "WebShop: a screen-only agent's), greedy",
    "sft_grpo_outcome": "the sft row's model, then GRPO (LoRA) with the task outcome on train "
    "tasks it was not trained on",
    "sft_grpo_shaped": "the sft row's model, then GRPO (LoRA) with the env's shaped reward on "
    "train tasks it was not trained on",
}


def env_rows(name: str) -> list[str]:
    """The rows of env ``name``, in table order (the rule rows on :data:`RULE_ENVS` only)."""
    return [r for r in ROWS if r not in RULE_ROWS or name in RULE_ENVS]


@dataclass
class Args:
    envs: list[str] = field(default_factory=lambda: list(ENVS))
    rows: list[str] = field(default_factory=lambda: list(ROWS))
    episodes: int = 200  # test episodes per cell of the random, rule and oracle rows
    llm_episodes: int = 50  # test episodes per cell of the SmolLM2 rows (the first ones)
    max_steps: int | None = None  # every row's step budget; None: each env's default
    seeds: list[int] = field(default_factory=lambda: [0])  # training seeds (sft, sft_grpo_*)
    model: str = "smollm2-135m-instruct"  # a registry name or a Hugging Face folder
    train_episodes: int = 120  # expert episodes recorded for SFT (the train split in order)
    max_new_tokens: int = 48
    epochs: int = 2
    grpo_iterations: int = 4
    grpo_group_size: int = 4
    grpo_tasks_per_iteration: int = 2
    grpo_lr: float = 1e-5
    batch: int = 16  # LLM episodes in flight at once (MiniWoB++: at most 4 browsers)
    dtype: str = "auto"  # auto: bf16 autocast on a CPU with native bf16, else fp32
    threads: int = 2  # torch threads
    out: Path = RESULTS / "baselines.json"  # results JSON (a rerun skips the cells it holds)
    work: Path = RESULTS / "baselines_work"  # datasets and trained models
    # run the chosen cells again, retraining their models (the default resumes: they are skipped)
    fresh: bool = False
    quick: bool = False  # every row on a tiny GPT-2 from a config, 2 episodes
    figure: Path | None = None  # draw the figure from --out's JSON to this PNG, run nothing
    markdown: bool = False  # print the docs table from --out's JSON, run nothing
    # refuse to start when the estimated wall hours of the SmolLM2 cells to run exceed this
    budget_hours: float | None = None
    plan_only: bool = False  # print the cells to run and their estimated cost, run nothing


# ------------------------------------------------------------------------------- checks


def check(args: Args) -> None:
    """One line naming what was wrong and what is allowed.

    Raises:
        SystemExit: for an unknown env or row, or a count below 1.
    """
    for name in args.envs:
        if name not in ENVS:
            raise SystemExit(f"unknown env {name!r}; --envs takes {', '.join(ENVS)}")
    for name in args.rows:
        if name not in ROWS:
            raise SystemExit(f"unknown row {name!r}; --rows takes {', '.join(ROWS)}")
    for option in ("episodes", "llm_episodes", "train_episodes", "batch", "threads"):
        if getattr(args, option) < 1:
            flag = "--" + option.replace("_", "-")
            raise SystemExit(f"{flag} must be at least 1, got {getattr(args, option)}")
    if args.max_steps is not None and args.max_steps < 1:
        raise SystemExit(f"--max-steps must be at least 1 (or omitted), got {args.max_steps}")
    if args.budget_hours is not None and not args.budget_hours > 0:
        raise SystemExit(f"--budget-hours must be > 0, got {args.budget_hours}")
    if args.quick and (args.budget_hours is not None or args.plan_only):
        raise SystemExit(
            "--budget-hours and --plan-only estimate SmolLM2's cells (unit costs measured on "
            "this CPU: benchmarks/cpu_costs.py); --quick's tiny model costs seconds"
        )


# ------------------------------------------------------------------------------ measuring


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its children that have ended."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def figures(rows: list[Any]) -> dict[str, Any]:
    """Success with its 95% Wilson interval and the mean score with its 95% bootstrap interval
    (2,000 resamples, seed 0) over evaluated episodes (``gui_gym.runs.evaluate`` rows), and
    ``by_task``: each task's ``[successes, episodes]``, in the order first played."""
    wins = sum(bool(r.success) for r in rows)
    by_task: dict[str, list[int]] = {}
    for r in rows:
        tally = by_task.setdefault(r.task_id, [0, 0])
        tally[0] += bool(r.success)
        tally[1] += 1
    scores = [float(r.task_reward) for r in rows]
    steps = sum(r.steps for r in rows)
    score = mean_interval(scores, 2000) if scores else {"mean": 0.0, "interval": [0.0, 0.0]}
    return {
        "success": round(wins / max(1, len(rows)), 4),
        "successes": wins,
        "episodes": len(rows),
        "interval_95": wilson(wins, len(rows)),
        "score": round(score["mean"], 4),
        "score_interval_95": [round(x, 4) for x in score["interval"]],
        "mean_steps": round(steps / max(1, len(rows)), 2),
        "invalid_action_rate": round(sum(r.invalid_actions for r in rows) / max(1, steps), 4),
        "infra_errors": 0,
        "by_task": by_task,
    }


def play(name: str, agent: Any, episodes: int, args: Args, num_envs: int = 1) -> dict:
    """``agent`` (a built-in name or a batch agent) on the first ``episodes`` test episodes of
    env ``name``: the figures of :func:`figures`.

    Raises:
        RuntimeError: when an episode was lost to infrastructure (no rate over fewer).
    """
    from gui_gym.runs.evaluate import evaluate

    summary, rows = evaluate(
        ENVS[name].env_id,
        agent,
        episodes=episodes,
        seed=TEST_SEED,
        env_kwargs=test_kwargs(name, args),
        progress=False,
        num_envs=num_envs,
    )
    if summary.infra_errors:
        lost = [r for r in rows if r.infra_error is not None]
        raise RuntimeError(
            f"{name}: {len(lost)} of {len(rows)} episodes lost to infrastructure "
            f"(first: {lost[0].task_id}: {lost[0].infra_error})"
        )
    return figures(rows)


def max_steps(name: str, args: Args) -> int:
    """The step budget of env ``name``: ``--max-steps``, else the env's own default."""
    return args.max_steps if args.max_steps is not None else default_steps(name)


@functools.cache
def default_steps(name: str) -> int:
    """Env ``name``'s own ``max_steps`` (read from an env made with its test arguments; no
    browser starts before a reset)."""
    import gymnasium as gym

    import gui_gym  # noqa: F401  (registers the ids)

    env = gym.make(ENVS[name].env_id, **ENVS[name].test)
    try:
        return int(env.unwrapped.max_steps)
    finally:
        env.close()


def test_kwargs(name: str, args: Args) -> dict[str, Any]:
    """``gym.make`` arguments of env ``name``'s test episodes."""
    return {**ENVS[name].test, "max_steps": max_steps(name, args)}


def train_kwargs(name: str, args: Args) -> dict[str, Any]:
    """``gym.make`` arguments of env ``name``'s training episodes (recording and GRPO)."""
    return {**ENVS[name].train, "max_steps": max_steps(name, args)}


# ------------------------------------------------------------------------- the LLM rows


def real_model_script() -> Any:
    """``benchmarks/real_model.py`` as a module: its ``sft``, ``tiny_model``, ``resolve`` and
    precision helpers are what these rows run, so both scripts train the same way."""
    name = "real_model_for_baselines"
    if name in sys.modules:
        return sys.modules[name]
    return load_script(Path(__file__).resolve().parent / "real_model.py", name)


def real_model_args(args: Args, name: str) -> Any:
    """``real_model.Args`` carrying this run's settings (what its ``sft`` and precision
    helpers read)."""
    rm = real_model_script()
    return rm.Args(
        model=args.model,
        envs=[],
        seeds=list(args.seeds),
        max_steps=max_steps(name, args),
        max_new_tokens=args.max_new_tokens,
        epochs=args.epochs,
        grpo_iterations=args.grpo_iterations,
        grpo_group_size=args.grpo_group_size,
        grpo_tasks_per_iteration=args.grpo_tasks_per_iteration,
        grpo_lr=args.grpo_lr,
        dtype=args.dtype,
        threads=args.threads,
        quick=args.quick,
    )


def dataset_folder(name: str, args: Args) -> Path:
    """Where env ``name``'s SFT recording lives: ``dataset`` for the expert's, else named
    after its teacher (a recording by another agent never resumes into the expert's)."""
    teacher = ENVS[name].teacher
    suffix = "" if teacher == "oracle" else "_" + teacher.replace(":", "-")
    return args.work / name / f"dataset{suffix}"


def record(name: str, args: Args) -> Path:
    """The train split's episodes of env ``name``'s teacher (the expert, or for WebShop a
    screen-only agent: :class:`BenchEnv`) on the first ``--train-episodes`` tasks of the
    split in order, seeds from 0, recorded once into the work folder."""
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.runs.record import record_dataset

    dataset = dataset_folder(name, args)
    record_dataset(
        ENVS[name].env_id,
        ENVS[name].teacher,
        episodes=args.train_episodes,
        out=dataset,
        env_kwargs=train_kwargs(name, args),
        progress=False,
    )
    if not any(t.success for t in ExpertDataset.load(dataset, include_failed=True)):
        raise SystemExit(  # SFT learns from the successful episodes alone
            f"{name}'s teacher ({ENVS[name].teacher}) succeeded on none of the "
            f"{args.train_episodes} recorded train episodes in {dataset}: raise --train-episodes"
        )
    return dataset


def base_model(name: str, args: Args, dataset: Path | None) -> str:
    """The model the LLM rows start from: ``--model`` (a registry name resolved to its
    folder), or with ``--quick`` a tiny GPT-2 whose tokenizer is fitted to the dataset."""
    rm = real_model_script()
    if args.quick:
        assert dataset is not None
        return rm.tiny_model(args.work / name / "tiny", dataset)
    return rm.resolve(args.model)


def train_tasks(dataset: Path) -> list[str]:
    """The distinct task ids of a recorded dataset, in recording order (GRPO's tasks)."""
    from gui_gym.envs.replay.dataset import ExpertDataset

    return list(dict.fromkeys(t.task_id for t in ExpertDataset.load(dataset).trajectories))


def dataset_summary(name: str, dataset: Path, args: Args) -> dict[str, Any]:
    """What the ``sft`` row learned from: the teacher, the episodes recorded, how many it
    succeeded on (SFT keeps those) and their steps (the SFT examples)."""
    from gui_gym.envs.replay.dataset import ExpertDataset

    kept = ExpertDataset.load(dataset).trajectories
    return {
        "teacher": ENVS[name].teacher,
        "teacher_is": ENVS[name].teacher_note,
        "episodes": args.train_episodes,
        "tasks": len({t.task_id for t in kept}),
        "successful_episodes": len(kept),
        "examples": sum(len(t.steps) for t in kept),
    }


def grpo_tasks(name: str, args: Args, dataset: Path) -> tuple[list[str], str]:
    """GRPO's tasks and where they come from: the train split's tasks after the recorded ones,
    in split order, as many as the run draws (``--grpo-iterations`` x
    ``--grpo-tasks-per-iteration``, each drawn once). The SFT model has memorised the tasks
    it was trained on: on WikiHow every group of them succeeded, every advantage was 0 and GRPO
    left the model as it was, so the groups are drawn from tasks it has not seen, where their
    outcomes can differ. A split with no task left (MiniWoB++: 12 tasks, all recorded) gives
    the recorded tasks again (other instances: GRPO's episode seeds are its own)."""
    import gymnasium as gym

    recorded = train_tasks(dataset)
    env = gym.make(ENVS[name].env_id, **train_kwargs(name, args))
    try:
        split = list(env.unwrapped.task_ids)
    finally:
        env.close()
    seen = set(recorded)
    # past the recording: a task the teacher failed within the budget is unseen by SFT too,
    # but chosen for being hard (AndroidWorld's first two were a maze and a calculation no
    # 9-step episode finishes), so the recording's tasks are skipped whether kept or not
    unseen = [t for t in split[args.train_episodes :] if t not in seen]
    wanted = 1 if args.quick else args.grpo_iterations * args.grpo_tasks_per_iteration
    if not unseen:
        return recorded, "recorded (the split has no other task)"
    return unseen[:wanted], "unseen by SFT (the train split's next tasks after the recorded ones)"


def sft_folder(name: str, seed: int, args: Args) -> Path:
    """Where the ``sft`` row of env ``name`` and ``seed`` keeps its model."""
    return trained_folder(name, "sft", seed, args)


def trained_folder(name: str, row: str, seed: int, args: Args) -> Path:
    """Where a trained row (``sft``, ``sft_grpo_*``) of env ``name`` keeps its model and, for
    GRPO, the checkpoints a killed run resumes from."""
    return args.work / name / f"{row}_seed{seed}"


def grpo(name: str, row: str, seed: int, args: Args, dataset: Path) -> tuple[Any, dict]:
    """GRPO (LoRA) from the ``sft`` row's model on train tasks it has not seen
    (:func:`grpo_tasks`), with the outcome
    (``sft_grpo_outcome``) or the env's shaped reward (``sft_grpo_shaped``); the settings
    are ``benchmarks/real_model.py``'s ``grpo`` stage's. Returns the trained policy as an LLM
    and what the training did.

    Raises:
        SystemExit: when the ``sft`` row's model is not in the work folder.
    """
    start = sft_folder(name, seed, args)
    if not (start / "sft_report.json").is_file():
        raise SystemExit(
            f"{row} on {name} starts from the sft row's model, not in {start}: "
            f"run --rows sft --envs {name} --seeds {seed} first"
        )
    reward = "outcome" if row == "sft_grpo_outcome" else ENVS[name].shaped
    rm = real_model_script()
    tasks, source = grpo_tasks(name, args, dataset)
    llm, done = rm.grpo(
        ENVS[name].env_id,
        str(start),
        tasks,
        trained_folder(name, row, seed, args),
        real_model_args(args, name),
        reward=reward,
        env_kwargs=train_kwargs(name, args),
        seed=seed,
        embedder="hashing" if args.quick else "minilm",
        resume=True,  # a killed run continues from its last checkpoint
    )
    return llm, {
        "reward": reward,
        "start": str(start),
        "grpo": done["settings"],
        "tasks": tasks,
        "tasks_are": source,
        "rollout_success": done["rollout_success"],
        "advantage_std": done["advantage_std"],
        "train_seconds": done["train_seconds"],
    }


def llm_cell(name: str, row: str, seed: int | None, args: Args) -> dict[str, Any]:
    """One SmolLM2 row of env ``name``: train what it needs, then play its test episodes."""
    import torch

    from gui_gym.agents.llm import LLMAgent
    from gui_gym.models.llm import TransformersLLM

    torch.set_num_threads(args.threads)
    rm = real_model_script()
    rm_args = real_model_args(args, name)
    # zero-shot needs no training data, but --quick's tiny model fits its tokenizer to it
    dataset = record(name, args) if row != "zero_shot" or args.quick else None
    model = base_model(name, args, dataset)
    extra: dict[str, Any] = {"model": args.model if not args.quick else "tiny GPT-2 (--quick)"}
    if row == "zero_shot":
        llm = TransformersLLM(model, device="cpu")
    elif row == "sft":
        assert seed is not None and dataset is not None
        out = sft_folder(name, seed, args)
        extra["sft"] = rm.sft("sft_lora", seed, dataset, model, out, rm_args)
        llm = TransformersLLM(str(out), device="cpu")
    else:
        assert seed is not None and dataset is not None
        llm, extra["training"] = grpo(name, row, seed, args, dataset)
    if dataset is not None and row != "zero_shot":
        extra["train_dataset"] = dataset_summary(name, dataset, args)
    agent = LLMAgent(llm, temperature=0.0, max_new_tokens=args.max_new_tokens)
    batch = min(args.batch, ENVS[name].llm_batch)
    with rm.precision(rm_args):
        played = play(name, agent, args.llm_episodes, args, num_envs=batch)
    return {**played, **extra, "precision": rm.precision_name(rm_args)}


# ------------------------------------------------------------------------------- the run


def cells(args: Args) -> list[tuple[str, str, int | None]]:
    """``(env, row, training seed or None)`` of every cell asked for, in table order."""
    chosen = []
    for name in args.envs:
        for row in env_rows(name):
            if row not in args.rows:
                continue
            seeds = args.seeds if row in LLM_ROWS and row != "zero_shot" else [None]
            chosen += [(name, row, seed) for seed in seeds]
    return chosen


def cell_key(name: str, row: str, seed: int | None) -> str:
    """``env/row`` or, for a trained row, ``env/row/seedN``."""
    return f"{name}/{row}" if seed is None else f"{name}/{row}/seed{seed}"


def run_cell(name: str, row: str, seed: int | None, args: Args) -> dict[str, Any]:
    """Measure one cell: its figures, wall and CPU seconds, agent and settings."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    if row in CHEAP_ROWS:
        figures_ = play(name, CHEAP_ROWS[row], args.episodes, args)
    else:
        figures_ = llm_cell(name, row, seed, args)
    settings = {
        "env_id": ENVS[name].env_id,
        "env_kwargs": test_kwargs(name, args),
        "episodes_asked": args.llm_episodes if row in LLM_ROWS else args.episodes,
        "seeds": f"{TEST_SEED} + episode",
    }
    if row in LLM_ROWS:
        settings["max_new_tokens"] = args.max_new_tokens
    if seed is not None:
        settings["training_seed"] = seed
    return {
        "env": name,
        "row": row,
        **figures_,
        "agent": AGENTS[row],
        "settings": settings,
        "held_out": ENVS[name].held_out,
        "wall_seconds": round(time.perf_counter() - wall, 2),
        "cpu_seconds": round(cpu_seconds() - cpu, 2),
    }


def quick(args: Args) -> None:
    """``--quick``'s sizes: 2 test episodes, 2 recorded episodes, 8 new tokens, one thread
    (the step budget stays the env's, or ``--max-steps``: the expert must finish a task)."""
    args.episodes, args.llm_episodes, args.train_episodes = 2, 2, 2
    args.max_new_tokens, args.threads = 8, 1


def load(path: Path) -> dict[str, Any]:
    """The result JSON at ``path`` (empty when missing).

    Raises:
        SystemExit: when the file is not a baselines result.
    """
    import json

    if not path.is_file():
        return {}
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise SystemExit(
            f"{path}: not JSON ({err}); move it away or choose another --out"
        ) from None
    if not isinstance(result, dict) or result.get("format") != "gui-gym/baselines":
        raise SystemExit(f"{path}: not a baselines result; move it away or choose another --out")
    return result


# ---------------------------------------------------------------------------------- plan


def turn_seconds(name: str, args: Args) -> float:
    """Estimated wall seconds of one greedy SmolLM2 turn on env ``name``:
    :data:`EVAL_SECONDS_PER_TURN` (measured at 32 new tokens) times the env's prompt scale and
    :func:`cpu_costs.token_factor` of ``--max-new-tokens``."""
    scale = PROMPT_SCALE.get(ENVS[name].env_id, 1.0)
    return EVAL_SECONDS_PER_TURN * scale * token_factor(args.max_new_tokens)


def eval_seconds(name: str, args: Args) -> float:
    """A SmolLM2 row's test episodes, every one at its full step budget: exact for a model
    that writes invalid actions (zero-shot runs every episode to its budget), an upper bound
    for a trained one (a solved or DONE episode ends early)."""
    return args.llm_episodes * max_steps(name, args) * turn_seconds(name, args)


def sft_seconds(name: str, args: Args) -> float:
    """The ``sft`` row's LoRA SFT: its examples (``--train-episodes`` x the expert's steps per
    recorded episode at this budget, :func:`cpu_costs.recorded_steps`, or the teacher's
    ``teacher_examples`` where it is not the expert, x ``--epochs``) at
    :data:`SFT_SECONDS_PER_EXAMPLE` x the prompt scale."""
    scale = PROMPT_SCALE.get(ENVS[name].env_id, 1.0)
    steps = ENVS[name].teacher_examples
    if steps is None:
        steps = recorded_steps(ENVS[name].env_id, max_steps(name, args))
    return args.train_episodes * steps * args.epochs * SFT_SECONDS_PER_EXAMPLE * scale


def grpo_seconds(name: str, args: Args) -> float:
    """A GRPO row's training: iterations x group x tasks per iteration episodes, each at its
    full step budget, at :data:`RL_SECONDS_PER_EPISODE_STEP` x the prompt scale x the token
    factor (sampling, scoring and update together)."""
    episodes = args.grpo_iterations * args.grpo_group_size * args.grpo_tasks_per_iteration
    scale = PROMPT_SCALE.get(ENVS[name].env_id, 1.0) * token_factor(args.max_new_tokens)
    return episodes * max_steps(name, args) * RL_SECONDS_PER_EPISODE_STEP * scale


def plan_costs(args: Args, done: set[str]) -> dict[str, dict[str, Any]]:
    """The cells this run will play (those of :func:`cells` not in ``done``, the keys already
    in ``--out``'s JSON, exactly as the run skips them) and their estimated wall seconds:
    ``{key: {"env", "row", "seed", "train", "eval", "seconds"}}``. The scripted rows count
    0 (seconds each); ``sft_grpo_*`` counts the ``sft`` model it starts from once per env and
    seed when that model is neither in ``--work`` nor trained by this run's ``sft`` cell.

    An estimate from the unit costs of ``benchmarks/cpu_costs.py`` (SmolLM2-135M-Instruct,
    2 threads, fp32, this 2-core CPU), not a measurement; each cell's own seconds are in the
    JSON. A cell resumed from a checkpoint costs less than counted here.
    """
    todo = [(n, r, s) for n, r, s in cells(args) if cell_key(n, r, s) not in done]
    pending = {cell_key(n, r, s) for n, r, s in todo}
    plan: dict[str, dict[str, Any]] = {}
    counted: set[tuple[str, int | None]] = set()
    for name, row, seed in todo:
        train = evaluation = 0.0
        if row in LLM_ROWS:
            evaluation = eval_seconds(name, args)
        if row == "sft":
            train = sft_seconds(name, args)
        elif row in LLM_ROWS and row != "zero_shot":
            train = grpo_seconds(name, args)
            kept = (sft_folder(name, seed, args) / "sft_report.json").is_file()
            trains_it = cell_key(name, "sft", seed) in pending
            if not kept and not trains_it and (name, seed) not in counted:
                counted.add((name, seed))
                train += sft_seconds(name, args)
        plan[cell_key(name, row, seed)] = {
            "env": name,
            "row": row,
            "seed": seed,
            "train": train,
            "eval": evaluation,
            "seconds": train + evaluation,
        }
    return plan


def print_plan(plan: dict[str, dict[str, Any]], args: Args) -> float:
    """Print the plan, one line per env (its step budget, the expert's ceiling there where
    measured, each cell's estimate), and return its estimated wall hours."""
    print(
        "plan (an ESTIMATE from unit costs measured on this 2-core CPU at 2 threads, fp32: "
        "benchmarks/cpu_costs.py; every SmolLM2 episode counted at its full step budget, so "
        "trained rows are upper bounds; scripted rows ~0):"
    )
    for name in args.envs:
        mine = [(key, c) for key, c in plan.items() if c["env"] == name]
        if not mine:
            continue
        budget = max_steps(name, args)
        ceiling = oracle_ceiling(ENVS[name].env_id, budget)
        known = "" if ceiling is None else f"; the expert solves {ceiling:.0%} of the first 50"
        parts = ", ".join(
            f"{key.split('/', 1)[1]} {c['seconds'] / 3600:.2f} h"
            for key, c in mine
            if c["row"] in LLM_ROWS
        )
        hours = sum(c["seconds"] for _, c in mine) / 3600
        print(f"  {name} ({budget} steps{known}): {parts or 'scripted rows only'}: {hours:.2f} h")
    hours = sum(c["seconds"] for c in plan.values()) / 3600
    print(
        f"  total: {hours:.2f} h wall (about {hours * args.threads:.1f} CPU-hours on "
        f"{args.threads} cores)"
    )
    return hours


BUDGET_CUTS = (
    "cut --envs, --rows, --seeds, --llm-episodes, --max-steps, --train-episodes, --epochs, "
    "--grpo-iterations, --grpo-group-size or --grpo-tasks-per-iteration, or run it in "
    "pieces (a rerun resumes)"
)
"""What ``--budget-hours``' refusal (:func:`cpu_costs.check_budget`) names as the options
that cut the plan."""


def main(args: Args) -> dict[str, Any]:
    """Run the missing cells (or draw/print from ``--out``) and return the result; before a
    SmolLM2 cell runs, print the plan (:func:`plan_costs`) and refuse one over
    ``--budget-hours``; with ``--plan-only``, return ``{"plan": ...}`` and run nothing."""
    check(args)
    if args.figure is not None or args.markdown:
        result = load(args.out)
        if not result:
            raise SystemExit(f"{args.out}: no result to draw; run the cells first")
        if args.figure is not None:
            plot(result, args.figure)
        if args.markdown:
            print(markdown(result))
        return result
    if args.quick:
        quick(args)
    result = load(args.out)
    result.update(format="gui-gym/baselines", version=1)
    result.setdefault("cells", {})
    if args.fresh:  # the cells asked for run again; the others stay
        chosen = cells(args)
        for name, row, seed in chosen:
            result["cells"].pop(cell_key(name, row, seed), None)
            if seed is not None:  # retrain: a kept model or checkpoint would be resumed
                shutil.rmtree(trained_folder(name, row, seed, args), ignore_errors=True)
            if row != "sft":
                continue
            for after in GRPO_ROWS:  # they started from the sft model retrained here
                if (name, after, seed) in chosen:
                    continue
                shutil.rmtree(trained_folder(name, after, seed, args), ignore_errors=True)
                if result["cells"].pop(cell_key(name, after, seed), None) is not None:
                    print(
                        f"{cell_key(name, after, seed)}: dropped, it started from the sft "
                        f"model retrained now (run --rows {after} to measure it again)",
                        flush=True,
                    )
    result["args"] = {k: str(v) for k, v in asdict(args).items()}
    result["envs"] = {
        name: {
            "env_id": env.env_id,
            "test": test_kwargs(name, args),
            "held_out": env.held_out,
            "shaped_reward": env.shaped,
            "shaped_reward_is": env.shaped_note,
        }
        for name, env in ENVS.items()
        if name in args.envs or name in result.get("envs", {})
    }
    plan = plan_costs(args, set(result["cells"]))
    if args.plan_only or (
        not args.quick and any(c["row"] in LLM_ROWS for c in plan.values())
    ):  # before any cell runs: a plan over --budget-hours runs nothing
        cpu_costs.check_budget(print_plan(plan, args), args.budget_hours, BUDGET_CUTS)
        if args.plan_only:
            return {"plan": plan}
    for name, row, seed in cells(args):
        key = cell_key(name, row, seed)
        if key in result["cells"]:
            ran = result["cells"][key]["settings"]["env_kwargs"]
            note = "" if ran == test_kwargs(name, args) else f", with {ran} (not this run's)"
            print(f"{key}: done already{note} (--fresh reruns it)", flush=True)
            continue
        print(f"{key}: running", flush=True)
        cell = run_cell(name, row, seed, args)
        result["cells"][key] = cell
        result["machine"] = machine_at_end()
        write_json(args.out, result)
        print(
            f"{key}: success {cell['success']:.3f} {cell['interval_95']} score "
            f"{cell['score']:.3f}, {cell['episodes']} episodes, {cell['cpu_seconds']} CPU s",
            flush=True,
        )
    write_json(args.out, result)
    return result


# -------------------------------------------------------------------------- table, figure

TITLES = {
    "wikihow": "WikiHow",
    "androidworld": "AndroidWorld",
    "webshop": "WebShop (10k)",
    "alfworld": "ALFWorld (unseen)",
    "miniwob": "MiniWoB++ (12 tasks)",
}


def row_cells(result: dict[str, Any], name: str, row: str) -> list[dict[str, Any]]:
    """The cells of one env and row (one per training seed for trained rows)."""
    return [
        c for key, c in sorted(result.get("cells", {}).items()) if key.split("/")[:2] == [name, row]
    ]


def _span(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def markdown(result: dict[str, Any]) -> str:
    """The docs table: one line per env and row, "not run yet" where a row has no cell; the
    steps column is the step budget the cell ran at (``--max-steps`` may differ by env)."""
    lines = [
        "| benchmark | row | success [95% CI] | score [95% CI] | episodes | steps | CPU s | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ENVS:
        for row in env_rows(name):
            found = row_cells(result, name, row)
            if not found:
                lines.append(f"| {TITLES[name]} | {row} | not run yet | | | | | |")
                continue
            for c in found:
                seed = c["settings"].get("training_seed")
                label = row if seed is None else f"{row} (seed {seed})"
                score = f"{c['score']:.3f} {_span(*c['score_interval_95'])}"
                lines.append(
                    f"| {TITLES[name]} | {label} | {c['success']:.3f} {_span(*c['interval_95'])} "
                    f"| {score if name == 'webshop' else '-'} | {c['episodes']} "
                    f"| {c['settings']['env_kwargs'].get('max_steps', '-')} "
                    f"| {c['cpu_seconds']:.1f} | {c['wall_seconds']:.1f} |"
                )
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    """One panel per benchmark (horizontal bars: success with its 95% Wilson interval; a row
    with no cell says "not run yet") and a sixth for WebShop's score; 1,320 x 726 pixels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3, figsize=(12, 6.6))
    panels: list[tuple[str, str, Callable[[dict], tuple[float, list[float]]]]] = [
        (name, TITLES[name] + ": success", lambda c: (c["success"], c["interval_95"]))
        for name in ENVS
    ]
    panels.append(
        ("webshop", "WebShop (10k): score", lambda c: (c["score"], c["score_interval_95"]))
    )
    for ax, (name, title, pick) in zip(axes.flat, panels):
        rows = env_rows(name)
        for y, row in enumerate(rows):
            found = row_cells(result, name, row)
            if not found:
                ax.text(0.01, y, "not run yet", va="center", fontsize=8, color="0.5")
                continue
            value, (low, high) = pick(found[0])  # the first training seed
            color = "0.55" if row in CHEAP_ROWS else "tab:blue"
            ax.barh(y, value, color=color, height=0.6)
            ax.errorbar(
                value,
                y,
                xerr=[[value - low], [high - value]],
                fmt="none",
                ecolor="k",
                capsize=3,
                lw=1,
            )
            if high + 0.1 <= 1.0:  # the value right of its interval, or inside the bar
                ax.text(high + 0.02, y, f"{value:.2f}", va="center", fontsize=8)
            else:
                ax.text(
                    low - 0.02,
                    y,
                    f"{value:.2f}",
                    va="center",
                    ha="right",
                    fontsize=8,
                    color="white",
                )
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)  # first row on top, room below the last
        ax.set_xlim(0, 1.0)
        ax.set_title(title, fontsize=10)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(
        "Test-split success with 95% intervals over episodes (grey: scripted rows; "
        "blue: SmolLM2-135M-Instruct)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)  # atomic: a reader sees the old figure or the new one


if __name__ == "__main__":
    main(tyro.cli(Args))
