"""ProRe judge accuracy and test-time scaling on AndroidWorld-sim and WikiHow (seed 004).

Part 1, judge accuracy (ProRe Table 2 style). A mixed pool of episodes on test tasks, from
the scripted expert (``oracle``), the expert with slips (``fallible``: random actions,
premature DONE, wrong answers) and a random agent that sometimes says DONE, is judged by
judges built from the same scripted components (``JUDGES``): trajectory-only (no probing);
ProRe with one probe; three parallel probes judged jointly (the paper's) or voted (ours);
three iterative rounds with a vote (the paper's); our options (8-15 step budget, one app
per probe instead of sequential sub-goals, the grounded claim filter on both traces);
Table 4's ablations (no probing / rule-prompt probing / scheduled probing, each with the
raw-observation judge instead of chain-of-claims); and Table 2's trajectory-only baselines
after DigiRL and WebRL (last screen or full trajectory; by rules here, their LLM prompts are
``models.judge.LLMTrajectoryJudge``). Verdicts are compared with the env's true
outcome: accuracy, precision, recall, F1. It also measures how much of the text an LLM
would read ProRe's trace condensing (Sec. 3.4) leaves out.

Part 2, test-time scaling (ProRe App. B). ``BestOfTrialsAgent`` retries the fallible policy
up to N times on forks of each test task's start and submits the first trial the judge
calls a success (else the last). The measured success rate per N is set against Lemma 1:
the corrected closed form (``rewards.probing.test_time_scaling_success``) with the judge's
measured true-positive and true-negative rates, once with the policy's pooled success rate
(the lemma as stated) and once averaged over tasks with each task's own success rate; the
paper's printed form is shown too.

With ``--llm-model PATH`` (a local transformers model, ``--device cuda``) or ``--llm-url URL
--llm-name NAME`` (an OpenAI-compatible server) the LLM arms run too, on every
``--llm-every``-th episode (``LLM_JUDGES``: trajectory-only and ProRe-1 with the LLM
components, Table 4's raw-observation ablations, and Table 2's DigiRL/WebRL-style
trajectory judges), summarised beside the scripted arms on the same episodes. With
``--screenshot`` the envs make screenshots and the LLM arms show them (the evaluator the
current screen, the claim extractor and filter the trace's screens, the judge the final
screen; an OpenAI-compatible server gets them as PNG ``image_url`` parts): ``--llm-model``
must then be a vision-language folder (one with a processor), and a vision-language folder
without ``--screenshot`` is refused too (its judge would see no screen).

Usage: python benchmarks/judge_accuracy.py [--out benchmarks/results/judge_accuracy.json]
       [--plot benchmarks/results/judge_accuracy.png] [--aw-seeds 3] [--wikihow-tasks 150]
       [--tts-n 5] [--quick] [--llm-model PATH --device cuda | --llm-url URL --llm-name M]
       [--llm-every 10] [--screenshot]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import BestOfTrialsAgent, FallibleOracleAgent, OracleAgent, RandomAgent
from gui_gym.core.trajectory import atomic_write_text, json_default
from gui_gym.envs.androidworld.tasks import TASKS
from gui_gym.models.judge import (
    LLMRawJudge,
    LLMTrajectoryJudge,
    PolicyTraceRecorder,
    ProReJudge,
    RuleClaimFilter,
    RulePromptReasoner,
    RuleRawJudge,
    RuleTrajectoryJudge,
    ScriptedReasoner,
    Trace,
    llm_components,
    scripted_components,
)
from gui_gym.rewards.probing import (
    judge_metrics,
    lemma1_paper_form,
    select_submitted_trial,
    test_time_scaling_success,
)

JUDGES: dict[str, dict[str, Any]] = {
    "trajectory-only": {"n_probes": 0},
    "prore-1": {"n_probes": 1},  # ProRe's defaults throughout
    "prore-3-parallel": {"n_probes": 3, "mode": "parallel"},  # joint judgment (paper)
    "prore-3-iterative": {"n_probes": 3, "mode": "iterative"},  # majority vote (paper)
    # our options
    "prore-1 budget 8-15 (ours)": {"n_probes": 1, "probe_steps": 15, "probe_steps_min": 8},
    "prore-3-parallel vote (ours)": {"n_probes": 3, "aggregation": "vote"},
    "prore-1 one app per probe (ours)": {
        "n_probes": 1,
        "reasoner": ScriptedReasoner(sub_goals=False),
    },
    "prore-1 grounded filter on both (ours)": {
        "n_probes": 1,
        "claim_filter": RuleClaimFilter("grounded"),
        "filter_policy_claims": True,
    },
    # ProRe Table 4 ablations (rows 1-3; row 4 is prore-1, row 5 prore-3-iterative)
    "t4 no probing, raw judge": {"n_probes": 0, "raw_judge": RuleRawJudge()},
    "t4 rule-prompt probing, raw judge": {
        "n_probes": 1,
        "reasoner": RulePromptReasoner(),
        "raw_judge": RuleRawJudge(),
    },
    "t4 scheduled probing, raw judge": {"n_probes": 1, "raw_judge": RuleRawJudge()},
    "t4 rule-prompt probing, claims": {"n_probes": 1, "reasoner": RulePromptReasoner()},
}

BASELINES: dict[str, RuleTrajectoryJudge] = {
    # ProRe Table 2's trajectory-only baselines ("Last N States": 1 or Full)
    "digirl-style last-1": RuleTrajectoryJudge("digirl", 1),
    "digirl-style full": RuleTrajectoryJudge("digirl", None),
    "webrl-style last-1": RuleTrajectoryJudge("webrl", 1),
    "webrl-style full": RuleTrajectoryJudge("webrl", None),
}

ALL_JUDGES = [*JUDGES, *BASELINES]


def llm_judges(llm: Any) -> dict[str, Any]:
    """The LLM arms on one model: ProRe's components, Table 4's ablations, Table 2's
    trajectory-only baselines."""

    def prore(**kwargs: Any) -> ProReJudge:
        return ProReJudge(**{**llm_components(llm), **kwargs})

    return {
        "llm trajectory-only": prore(n_probes=0),
        "llm prore-1": prore(n_probes=1),
        "llm t4 no probing, raw judge": prore(n_probes=0, raw_judge=LLMRawJudge(llm)),
        "llm t4 rule-prompt probing, raw judge": prore(
            n_probes=1, reasoner=RulePromptReasoner(), raw_judge=LLMRawJudge(llm)
        ),
        "llm t4 scheduled probing, raw judge": prore(n_probes=1, raw_judge=LLMRawJudge(llm)),
        "llm digirl-style last-1": LLMTrajectoryJudge(llm, "digirl", 1),
        "llm digirl-style full": LLMTrajectoryJudge(llm, "digirl", None),
        "llm webrl-style last-1": LLMTrajectoryJudge(llm, "webrl", 1),
        "llm webrl-style full": LLMTrajectoryJudge(llm, "webrl", None),
    }


PLOTTED = ["trajectory-only", "webrl-style full", "prore-1", "prore-3-parallel"]

POLICIES: dict[str, Callable[[gym.Env, int], Any]] = {
    "oracle": lambda env, seed: OracleAgent(env),
    "fallible": lambda env, seed: FallibleOracleAgent(
        env, random_prob=0.15, stop_prob=0.1, wrong_answer_prob=0.3, seed=seed
    ),
    "random": lambda env, seed: RandomAgent(env, seed=seed, done_prob=0.1),
}


def make_judge(name: str) -> Any:
    """The judge ``name`` of :data:`JUDGES` (a ProReJudge) or :data:`BASELINES`."""
    if name in BASELINES:
        return BASELINES[name]
    return ProReJudge(**{**scripted_components(), **JUDGES[name]})


def play(env: gym.Env, agent: Any, seed: int, task: str | None = None) -> tuple[Trace, bool]:
    """One episode; the policy trace (with screenshots when the env makes them) and its
    true outcome."""
    options = {"task": task} if task else None
    obs, info = env.reset(seed=seed, options=options)
    base = env.unwrapped
    recorder = PolicyTraceRecorder()
    recorder.start(base, obs["instruction"], obs.get("screenshot"))
    agent.reset(obs, info)
    while True:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        recorder.record(base, info, terminated, obs.get("screenshot"))
        if terminated or truncated:
            assert recorder.trace is not None
            return recorder.trace, bool(info["success"])


def episodes(
    benchmark: str, aw_seeds: int, wikihow_tasks: int, aw_tasks: list[str] | None = None
) -> list[tuple[str, str | None, int]]:
    """``(env id, task id, seed)`` for the pool; AndroidWorld draws test parameters per seed."""
    if benchmark == "androidworld":
        names = aw_tasks or list(TASKS)
        return [
            ("GuiGym/AndroidWorld-v0", name, seed) for name in names for seed in range(aw_seeds)
        ]
    env = gym.make("GuiGym/WikiHow-v0", split="test")
    tasks = [t.task_id for t in env.unwrapped.suite.select("test", None)][:wikihow_tasks]
    return [("GuiGym/WikiHow-v0", t, 0) for t in tasks]


def env_for(env_id: str, task: str | None, screenshot: bool = False) -> gym.Env:
    if env_id == "GuiGym/AndroidWorld-v0":
        return gym.make(env_id, task=task, split="test", screenshot=screenshot)
    return gym.make(env_id, split="test", screenshot=screenshot)


# ----------------------------------------------------------------------- judge accuracy


def judge_accuracy(
    aw_seeds: int,
    wikihow_tasks: int,
    aw_tasks: list[str] | None = None,
    llm: Any = None,
    llm_every: int = 10,
    screenshot: bool = False,
) -> dict[str, Any]:
    judges = {name: make_judge(name) for name in ALL_JUDGES}
    with_llm = llm_judges(llm) if llm is not None else {}
    rows: list[dict[str, Any]] = []
    timing: dict[str, float] = defaultdict(float)
    chars = {"full": 0, "condensed": 0}
    k = 0
    for benchmark in ("androidworld", "wikihow"):
        for env_id, task, seed in episodes(benchmark, aw_seeds, wikihow_tasks, aw_tasks):
            env = env_for(env_id, task, screenshot)
            for policy_name, make_policy in POLICIES.items():
                k += 1  # each episode's agent gets its own seed: no shared slip pattern
                agent = make_policy(env, k)
                trace, truth = play(env, agent, seed, task if benchmark == "wikihow" else None)
                row = {
                    "benchmark": benchmark,
                    "task": env.unwrapped.task.task_id,
                    "seed": seed,
                    "policy": policy_name,
                    "success": truth,
                    "steps": len(trace.steps),
                }
                for name, judge in judges.items():
                    start = time.perf_counter()
                    report = judge.judge_episode(env.unwrapped, trace)
                    timing[name] += time.perf_counter() - start
                    row[name] = report.verdict
                    if name == "prore-1":  # what an LLM would read: policy and probe traces
                        traces = [trace] + [p.trace for p in report.probes if p.trace]
                        for t in traces:
                            chars["full"] += len(t.render(3000))
                            chars["condensed"] += len(t.render(3000, condense=True))
                if with_llm and (k - 1) % llm_every == 0:
                    for name, judge in with_llm.items():
                        start = time.perf_counter()
                        row[name] = judge.judge_episode(env.unwrapped, trace).verdict
                        timing[name] += time.perf_counter() - start
                rows.append(row)
    summary: dict[str, Any] = {}
    for scope in ("androidworld", "wikihow", "all"):
        selected = [r for r in rows if scope in ("all", r["benchmark"])]
        summary[scope] = {
            "episodes": len(selected),
            "true_success_rate": float(np.mean([r["success"] for r in selected])),
            "per_policy_success": {
                p: float(np.mean([r["success"] for r in selected if r["policy"] == p]))
                for p in POLICIES
            },
            "judges": {
                name: {
                    **judge_metrics(
                        [r[name] == "success" for r in selected], [r["success"] for r in selected]
                    ).as_dict(),
                    "invalid": sum(r[name] == "invalid" for r in selected),
                }
                for name in ALL_JUDGES
            },
        }
    # where probing changed the trajectory-only verdict, and who was right
    flips = {
        name: {
            "fixed": sum(
                r[name] != r["trajectory-only"] and (r[name] == "success") == r["success"]
                for r in rows
            ),
            "broken": sum(
                r[name] != r["trajectory-only"]
                and (r["trajectory-only"] == "success") == r["success"]
                for r in rows
            ),
        }
        for name in ALL_JUDGES
        if name != "trajectory-only"
    }
    # AndroidWorld by template, WikiHow by task kind (the suffix of its task id)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        key = (
            r["task"]
            if r["benchmark"] == "androidworld"
            else "wikihow:" + r["task"].rsplit("-", 1)[-1]
        )
        grouped[key].append(r)
    per_task: dict[str, dict[str, float]] = {
        key: {
            name: float(np.mean([(g[name] == "success") == g["success"] for g in group]))
            for name in ALL_JUDGES
        }
        | {"episodes": len(group)}
        for key, group in sorted(grouped.items())
    }
    llm_summary: dict[str, Any] = {}
    if with_llm:
        judged = [r for r in rows if "llm prore-1" in r]
        truth = [r["success"] for r in judged]
        llm_summary = {
            "episodes": len(judged),
            "every": llm_every,
            "true_success_rate": float(np.mean(truth)) if judged else None,
            "judges": {
                name: {
                    **judge_metrics([r[name] == "success" for r in judged], truth).as_dict(),
                    "invalid": sum(r[name] == "invalid" for r in judged),
                    "seconds_per_episode": timing[name] / max(1, len(judged)),
                }
                for name in [*with_llm, *ALL_JUDGES]
            },
        }
    return {
        "summary": summary,
        "llm": llm_summary,
        "probing_changed_verdicts": flips,
        "per_task_accuracy": per_task,
        "seconds_per_episode": {name: timing[name] / max(1, len(rows)) for name in ALL_JUDGES},
        "trace_condensing": {
            **chars,
            "left_out_fraction": 1 - chars["condensed"] / max(1, chars["full"]),
        },
        "episodes": rows,
    }


# ------------------------------------------------------------------- test-time scaling


def test_time_scaling(
    aw_seeds: int, wikihow_tasks: int, n_max: int, aw_tasks: list[str] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"n": list(range(1, n_max + 1)), "judges": {}}
    instances = episodes("androidworld", aw_seeds, 0, aw_tasks)
    instances += episodes("wikihow", 0, wikihow_tasks)

    def policy(env: gym.Env, i: int, base_seed: int) -> FallibleOracleAgent:
        return FallibleOracleAgent(
            env, random_prob=0.15, stop_prob=0.1, wrong_answer_prob=0.3, seed=base_seed * 100 + i
        )

    for judge_name in ("trajectory-only", "prore-1"):
        judge = make_judge(judge_name)
        per_instance: list[dict[str, Any]] = []
        for k, (env_id, task, seed) in enumerate(instances):
            env = env_for(env_id, task)
            agent = BestOfTrialsAgent(
                env, lambda e, i, s=k: policy(e, i, s), judge, n_trials=n_max, run_all=True
            )
            options = {"task": task} if env_id == "GuiGym/WikiHow-v0" else None
            obs, info = env.reset(seed=seed, options=options)
            agent.reset(obs, info)
            # replay the chosen trial in the real env: the agent's own procedure end to end
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
            outcomes = [t.task_reward >= 1.0 for t in agent.trials]
            positives = [t.positive for t in agent.trials]
            assert bool(info["success"]) == outcomes[agent.chosen]
            per_instance.append({"outcomes": outcomes, "positives": positives})
        outcomes = np.array([p["outcomes"] for p in per_instance], dtype=bool)
        positives = np.array([p["positives"] for p in per_instance], dtype=bool)
        measured = []
        for n in range(1, n_max + 1):
            chosen = [select_submitted_trial(list(row[:n])) for row in positives]
            measured.append(float(np.mean([outcomes[i, c] for i, c in enumerate(chosen)])))
        p_a = float(outcomes.mean())
        tpr = float(positives[outcomes].mean()) if outcomes.any() else float("nan")
        tnr = float((~positives[~outcomes]).mean()) if (~outcomes).any() else float("nan")
        accuracy = float((positives == outcomes).mean())
        per_task_pa = outcomes.mean(axis=1)
        rates_known = not (np.isnan(tpr) or np.isnan(tnr))

        def predict(
            fn: Callable[..., float], *args: Any, known: bool = rates_known
        ) -> list[float | None]:
            return [fn(*args, n) if known else None for n in out["n"]]

        out["judges"][judge_name] = {
            "instances": len(per_instance),
            "trials_per_instance": n_max,
            "p_a": p_a,
            "judge_accuracy": accuracy,
            "judge_tpr": None if np.isnan(tpr) else tpr,
            "judge_tnr": None if np.isnan(tnr) else tnr,
            "measured": measured,
            "lemma1_pooled": [
                test_time_scaling_success(p_a, tpr, n, tnr) if rates_known else None
                for n in out["n"]
            ],
            "lemma1_per_task": [
                float(
                    np.mean(
                        [test_time_scaling_success(float(pa), tpr, n, tnr) for pa in per_task_pa]
                    )
                )
                if rates_known
                else None
                for n in out["n"]
            ],
            "lemma1_symmetric_pooled": predict(
                lambda pa, pc, n: test_time_scaling_success(pa, pc, n), p_a, accuracy
            ),
            "paper_form_pooled": predict(lemma1_paper_form, p_a, accuracy),
        }
    return out


# ---------------------------------------------------------------------------------- plot


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    names = PLOTTED
    for ax, scope in zip(axes[:2], ("androidworld", "wikihow")):
        judges = result["accuracy"]["summary"][scope]["judges"]
        x = np.arange(len(names))
        for j, metric in enumerate(("accuracy", "precision", "recall")):
            values = [judges[n][metric] for n in names]
            bars = ax.bar(x + (j - 1) * 0.26, values, 0.26, label=metric)
            ax.bar_label(bars, fmt="%.2f", fontsize=6)
        ax.set_xticks(x, [n.replace("-", "\n", 1) for n in names], fontsize=8)
        ax.set_ylim(0.5, 1.02)
        n_eps = result["accuracy"]["summary"][scope]["episodes"]
        ax.set_title(f"{scope} judge quality ({n_eps} episodes)")
        ax.legend(fontsize=7, loc="lower right")
    ax = axes[2]
    tts = result["test_time_scaling"]
    for name, color in (("prore-1", "tab:blue"), ("trajectory-only", "tab:red")):
        data = tts["judges"][name]
        ax.plot(tts["n"], _series(data["measured"]), "o-", color=color, label=f"{name}: measured")
        ax.plot(
            tts["n"],
            data["lemma1_pooled"],
            "x--",
            color=color,
            alpha=0.7,
            label=f"{name}: Lemma 1 (pooled p_a)",
        )
        ax.plot(
            tts["n"],
            data["lemma1_per_task"],
            ":",
            color=color,
            alpha=0.7,
            label=f"{name}: Lemma 1 (per-task p_a)",
        )
    data = tts["judges"]["prore-1"]
    ax.plot(
        tts["n"],
        data["paper_form_pooled"],
        "s:",
        color="grey",
        alpha=0.7,
        label="prore-1: paper's printed form",
    )
    ax.set_xticks(tts["n"])
    ax.set_xlabel("trial budget N")
    ax.set_ylabel("success rate of the submitted trial")
    ax.set_title("test-time scaling (fallible policy)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp.png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=130)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="benchmarks/results/judge_accuracy.json")
    parser.add_argument("--plot", default="benchmarks/results/judge_accuracy.png")
    parser.add_argument("--aw-seeds", type=int, default=3, help="parameter draws per template")
    parser.add_argument("--wikihow-tasks", type=int, default=150, help="WikiHow test tasks")
    parser.add_argument("--tts-n", type=int, default=5, help="largest trial budget")
    parser.add_argument("--tts-aw-seeds", type=int, default=2)
    parser.add_argument("--tts-wikihow-tasks", type=int, default=100)
    parser.add_argument("--aw-tasks", nargs="*", default=None, help="AndroidWorld templates")
    parser.add_argument("--quick", action="store_true", help="a few episodes, for a smoke test")
    parser.add_argument("--llm-model", help="local transformers model folder for the LLM arms")
    parser.add_argument("--device", default=None, help="device of --llm-model (cuda, cpu)")
    parser.add_argument("--llm-url", help="OpenAI-compatible server (with --llm-name)")
    parser.add_argument("--llm-name", help="model name on --llm-url")
    parser.add_argument("--llm-every", type=int, default=10, help="LLM arms on every N-th episode")
    parser.add_argument(
        "--screenshot",
        action="store_true",
        help="envs make screenshots and the LLM arms see them (a vision-language judge)",
    )
    args = parser.parse_args()
    if args.screenshot and not (args.llm_model or args.llm_url):
        parser.error("--screenshot is for the LLM arms: give --llm-model or --llm-url")
    if args.llm_model:  # checked before the model loads
        from gui_gym.models.prm.vision_prm import has_processor

        vision = has_processor(args.llm_model)
        if args.screenshot and not vision:
            parser.error(
                f"--screenshot needs a vision-language --llm-model (a folder with a processor); "
                f"{args.llm_model} is a text-only model"
            )
        if vision and not args.screenshot:
            parser.error(
                f"--llm-model {args.llm_model} is a vision-language model: add --screenshot so "
                "its judge sees the screens (the envs are text-only without it)"
            )
    if args.quick:
        args.aw_seeds, args.wikihow_tasks = 1, 6
        args.tts_aw_seeds, args.tts_wikihow_tasks, args.tts_n = 1, 3, 3
    start = time.perf_counter()
    llm = None
    if args.llm_model:
        from gui_gym.models.llm import TransformersLLM

        llm = TransformersLLM(args.llm_model, device=args.device)
    elif args.llm_url:
        from gui_gym.models.llm import OpenAICompatLLM

        if not args.llm_name:
            parser.error("--llm-url needs --llm-name")
        llm = OpenAICompatLLM(args.llm_name, args.llm_url)
    if args.llm_every < 1:
        parser.error("--llm-every must be >= 1")
    accuracy = judge_accuracy(
        args.aw_seeds,
        args.wikihow_tasks,
        args.aw_tasks,
        llm=llm,
        llm_every=args.llm_every,
        screenshot=args.screenshot,
    )
    t_accuracy = time.perf_counter() - start
    tts = test_time_scaling(args.tts_aw_seeds, args.tts_wikihow_tasks, args.tts_n, args.aw_tasks)
    result = {
        "benchmark": "judge_accuracy",
        "args": vars(args),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "seconds": {
            "judge_accuracy": t_accuracy,
            "test_time_scaling": time.perf_counter() - start - t_accuracy,
        },
        "accuracy": accuracy,
        "test_time_scaling": tts,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(result, indent=1, default=json_default) + "\n")
    if args.plot:
        plot(result, Path(args.plot))
    print_report(result)
    print(f"written to {out}" + (f" and {args.plot}" if args.plot else ""))


def _f(value: float | None) -> str:
    return "-" if value is None or np.isnan(value) else f"{value:.3f}"


def _series(values: list[float | None]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def print_report(result: dict[str, Any]) -> None:
    for scope, data in result["accuracy"]["summary"].items():
        print(
            f"\n{scope}: {data['episodes']} episodes, true success {data['true_success_rate']:.1%}"
        )
        print(f"  {'judge':<40} {'acc':>6} {'prec':>6} {'recall':>6} {'f1':>6}")
        for name, m in data["judges"].items():
            print(
                f"  {name:<40} {_f(m['accuracy']):>6} {_f(m['precision']):>6} "
                f"{_f(m['recall']):>6} {_f(m['f1']):>6}"
            )
    llm = result["accuracy"]["llm"]
    if llm:
        print(
            f"\nLLM arms on every {llm['every']}th episode ({llm['episodes']} episodes), "
            "beside the scripted arms on the same episodes"
        )
        print(f"  {'judge':<40} {'acc':>6} {'prec':>6} {'recall':>6} {'f1':>6} {'inv':>4}")
        for name, m in llm["judges"].items():
            print(
                f"  {name:<40} {_f(m['accuracy']):>6} {_f(m['precision']):>6} "
                f"{_f(m['recall']):>6} {_f(m['f1']):>6} {m['invalid']:>4}"
            )
    condensing = result["accuracy"]["trace_condensing"]
    print(
        f"\ntrace condensing (Sec. 3.4): {condensing['left_out_fraction']:.1%} of the rendered "
        f"trace text left out ({condensing['full']} -> {condensing['condensed']} characters)"
    )
    tts = result["test_time_scaling"]
    for name, data in tts["judges"].items():
        print(
            f"\ntest-time scaling with {name} ({data['instances']} tasks, p_a={_f(data['p_a'])}, "
            f"judge acc={_f(data['judge_accuracy'])}, tpr={_f(data['judge_tpr'])}, "
            f"tnr={_f(data['judge_tnr'])})"
        )
        print(f"  {'N':>3} {'measured':>9} {'per-task':>9} {'pooled':>9} {'paper':>9}")
        for i, n in enumerate(tts["n"]):
            print(
                f"  {n:>3} {_f(data['measured'][i]):>9} {_f(data['lemma1_per_task'][i]):>9} "
                f"{_f(data['lemma1_pooled'][i]):>9} {_f(data['paper_form_pooled'][i]):>9}"
            )


if __name__ == "__main__":
    main()
