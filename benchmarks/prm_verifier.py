"""GUI-Shepherd as an inference-time verifier (Sec. 4.2, Table 5) on WikiHow and AndroidWorld.

A noisy policy (the task's expert with probability ``p``, a random sensible action otherwise)
acts alone (N = 1) or through best-of-N: N proposals per step, scored by a PRM on the current
state, the argmax executed (Eq. 6). Two verifiers:

* ``RulePRM``: the rule-based judge (expert action or new env milestone);
* ``TransformersPRM``: a tiny GPT-2 built from a config, with a BPE tokenizer trained on the
  prompts, fine-tuned on the label token (Eq. 2) with labelled steps collected from the
  *train* split of both envs (``gui-gym train-prm``'s pipeline), on CPU.

With ``--actor-model DIR`` (a policy LM, e.g. ``gui-gym sft`` output) a second table puts that
LLM in the policy's place and adds Table 5's "actor itself" verifier
(:class:`gui_gym.agents.ActorVerifier`: its own log-probability, or its yes/no judgement).

Reported on the *test* split (WikiHow test tasks; AndroidWorld templates with the test
parameter stream): success rate for N = 1, 2, 4, 8 per env and verifier, and the trained
PRM's step accuracy (accuracy, AUC, F1, per step position) on labelled steps collected from
the test split, and its per-state ranking (:func:`gui_gym.rewards.prm.ranking_metrics`: how
often the expert's action is ranked first among every action the noisy policy can propose, in
states on and off the expert's path; what it prefers when it is wrong). Writes JSON and a plot of success rate against N.

Usage::

    python benchmarks/prm_verifier.py [--out benchmarks/results/prm_verifier.json]
        [--plot benchmarks/results/prm_verifier.png] [--p 0.4] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.agents import BestOfNAgent, NoisyOraclePolicy, run_episode
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.models.prm import RulePRM, TransformersPRM
from gui_gym.rewards.prm import PromptTemplate, classification_metrics, source_counts
from gui_gym.train.prm import PRMTrainConfig, evaluate_ranking, train_prm
from gui_gym.train.prm_data import build_prm_dataset, collect_prm_steps, collect_ranking_states

ENVS = ("GuiGym/WikiHow-v0", "GuiGym/AndroidWorld-v0")
SHORT = {"GuiGym/WikiHow-v0": "WikiHow", "GuiGym/AndroidWorld-v0": "AndroidWorld"}


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _test_episodes(env_id: str, repeats: int, limit: int | None) -> list[tuple[str, int]]:
    """``(task_id, seed)`` pairs covering the test split ``repeats`` times."""
    env = gym.make(env_id, split="test")
    tasks = [t.task_id for t in env.unwrapped._pool]
    env.close()
    episodes = [(task, 1000 * r + i) for r in range(repeats) for i, task in enumerate(tasks)]
    return episodes[:limit] if limit else episodes


def _success_rate(
    env_id: str,
    episodes: list[tuple[str, int]],
    prm: Any,
    n: int,
    p: float,
    max_steps: int,
    selection: str = "positive_logit",
    make_policy: Any = None,
) -> dict[str, Any]:
    env = gym.make(env_id, split="test", max_steps=max_steps)
    wins = 0
    steps = 0
    started = time.perf_counter()
    for task_id, seed in episodes:
        # The policy's randomness depends on the episode only, so N = 1 is the same run for
        # every verifier and the N > 1 runs differ from it only by the verifier's choices.
        if make_policy is None:
            policy = NoisyOraclePolicy(env, p=p, seed=seed)
        else:
            policy = make_policy(seed)
        agent = BestOfNAgent(policy, prm, n, env=env, selection=selection)
        trajectory = run_episode(env, agent, seed=seed, options={"task": task_id})
        wins += trajectory.success
        steps += len(trajectory)
    env.close()
    return {
        "success_rate": wins / len(episodes),
        "episodes": len(episodes),
        "mean_steps": steps / len(episodes),
        "seconds": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/prm_verifier.json"))
    parser.add_argument("--plot", type=Path, default=Path("benchmarks/results/prm_verifier.png"))
    parser.add_argument("--p", type=float, default=0.4, help="probability of the expert action")
    parser.add_argument("--ns", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--max-steps", type=int, default=15, help="GUI-Shepherd caps at 15")
    parser.add_argument("--train-tasks", type=int, default=250, help="WikiHow train tasks used")
    parser.add_argument("--random-rollouts", type=int, default=0, help="random rollouts per task")
    parser.add_argument(
        "--noisy-rollouts", type=int, default=2, help="noisy-expert rollouts per task (PRM data)"
    )
    parser.add_argument("--proposals-per-state", type=int, default=3)
    parser.add_argument("--perturbations-per-kind", type=int, default=2)
    parser.add_argument(
        "--pair-leftovers",
        action="store_true",
        help="pair class leftovers across action types (default: each type exactly balanced)",
    )
    parser.add_argument(
        "--keep-best",
        choices=("ranking", "auc", "none"),
        default="none",
        help="epoch kept: the last (GUI-Shepherd's, the default), or ours: best validation "
        "ranking top-1 or best validation AUC",
    )
    parser.add_argument(
        "--batch-size", type=int, default=32, help="PRM training batch (GUI-Shepherd's 32)"
    )
    parser.add_argument(
        "--episodes", type=int, default=None, help="cap best-of-N episodes per env (iterating)"
    )
    parser.add_argument(
        "--aw-repeats", type=int, default=2, help="AndroidWorld test seeds per template"
    )
    parser.add_argument(
        "--aw-train-repeats",
        type=int,
        default=2,
        help="passes over the AndroidWorld templates (train parameter stream) for PRM data",
    )
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--vocab-size", type=int, default=1024)
    parser.add_argument("--max-length", type=int, default=384)
    parser.add_argument("--n-layer", type=int, default=2)
    parser.add_argument("--n-embd", type=int, default=64)
    parser.add_argument("--screen-chars", type=int, default=400, help="screen cut for the PRM")
    parser.add_argument("--history", type=int, default=4, help="earlier actions in the prompt")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--lr-schedule", choices=("constant", "linear"), default="linear")
    parser.add_argument("--prompt-lm-weight", type=float, default=0.5)
    parser.add_argument(
        "--ranking-tasks", type=int, default=30, help="test tasks per env for the ranking metric"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a few tasks, for a smoke run")
    parser.add_argument("--save-model", type=Path, default=None, help="save the trained PRM here")
    parser.add_argument(
        "--actor-model",
        type=Path,
        default=None,
        help="a policy LM folder (e.g. gui-gym sft output): adds best-of-N with that policy, "
        "verified by itself (Table 5's 'actor itself') and by the PRMs",
    )
    parser.add_argument(
        "--actor-episodes", type=int, default=30, help="test episodes per env for the actor arm"
    )
    parser.add_argument("--device", default=None, help="cpu or cuda for the actor (default: auto)")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    limit = 12 if args.quick else None
    train_tasks = 10 if args.quick else args.train_tasks
    started = time.perf_counter()
    report: dict[str, Any] = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "load_average_at_start": os.getloadavg(),
        },
    }

    # 1. Labelled steps from the train split of both envs; a PRM trained on them.
    t = time.perf_counter()
    steps = []
    passes = [(ENVS[0], 0)] + [(ENVS[1], r) for r in range(args.aw_train_repeats)]
    for env_id, r in passes:
        steps += collect_prm_steps(
            env_id,
            split="train",
            max_tasks=train_tasks if env_id == ENVS[0] else (limit or None),
            random_rollouts=args.random_rollouts,
            noisy_rollouts=args.noisy_rollouts,
            noisy_p=args.p,
            proposals_per_state=args.proposals_per_state,
            perturbations_per_kind=args.perturbations_per_kind,
            max_steps=args.max_steps,
            seed=args.seed + 7 * r,
            progress=True,
        )
    dataset = build_prm_dataset(
        steps, eval_fraction=0.1, seed=args.seed, pair_leftovers=args.pair_leftovers
    )
    # Held-out ranking states (train split, the validation tasks) to pick the best epoch by.
    held_tasks: dict[str, list[str]] = {}
    for s in dataset.eval:
        held_tasks.setdefault(s.env_id, [])
        if s.task_id not in held_tasks[s.env_id]:
            held_tasks[s.env_id].append(s.task_id)
    validation_states = []
    for env_id, tasks in held_tasks.items():
        validation_states += collect_ranking_states(
            env_id,
            split="train",
            tasks=tasks[:20],
            p=args.p,
            max_steps=args.max_steps,
            max_candidates=10,
            seed=args.seed + 3,
        )
    report["data"] = {**dataset.report, "collect_seconds": time.perf_counter() - t}
    print(f"data: {dataset.report['train']} train / {dataset.report['eval']} validation steps")

    template = PromptTemplate(max_screen_chars=args.screen_chars, max_history=args.history)
    texts = [template.render(s.query, " True", " False") for s in dataset.train[:4000]]
    prm = TransformersPRM.tiny(
        texts,
        vocab_size=args.vocab_size,
        n_layer=args.n_layer,
        n_embd=args.n_embd,
        n_head=max(1, args.n_embd // 32),
        n_positions=args.max_length,
        template=template,
        seed=args.seed,
        batch_size=32,
    )
    n_params = sum(p.numel() for p in prm.model.parameters())
    training = train_prm(
        prm,
        dataset.train,
        dataset.eval,
        config=PRMTrainConfig(
            epochs=args.epochs,
            batch_size=args.batch_size,
            lr=args.lr,
            prompt_lm_weight=args.prompt_lm_weight,
            keep_best=None if args.keep_best == "none" else "auc",
            lr_schedule=args.lr_schedule,
            seed=args.seed,
        ),
        progress=True,
        select=(
            (lambda model: evaluate_ranking(model, validation_states)["top1"])
            if args.keep_best == "ranking" and validation_states
            else None
        ),
    )
    if args.save_model is not None:
        prm.save(args.save_model)
    report["training"] = {
        "parameters": n_params,
        "updates": training["updates"],
        "seconds": training["seconds"],
        "train_accuracy_last_50_updates": training["train_accuracy"],
        "validation": training["eval"],
        "validation_ranking_states": len(validation_states),
        "history": training["history"],
        "best_epoch": training["best_epoch"],
        "selection": training["selection"],
    }
    print(
        f"trained {n_params:,} parameters, {training['updates']} updates in "
        f"{training['seconds']:.0f} s; validation accuracy {training['eval']['accuracy']:.3f}"
    )

    # 2. Step accuracy on labelled steps of the test split.
    report["step_accuracy"] = {}
    labels_all: list[int] = []
    scores_all: list[float] = []
    positions_all: list[int] = []
    for env_id in ENVS:
        test_steps = collect_prm_steps(
            env_id,
            split="test",
            max_tasks=limit,
            random_rollouts=1,
            max_steps=args.max_steps,
            seed=args.seed + 1,
        )
        test_set = build_prm_dataset(test_steps, eval_fraction=0.0, seed=args.seed).train
        t = time.perf_counter()
        queries = [s.query for s in test_set]
        scores = np.concatenate(
            [prm.score(queries[i : i + 64]) for i in range(0, len(queries), 64)]
        )
        labels = [s.label for s in test_set]
        positions = [s.query.step for s in test_set]
        metrics = classification_metrics(labels, scores, positions)
        metrics["seconds"] = time.perf_counter() - t
        metrics["sources"] = source_counts(test_set)
        report["step_accuracy"][SHORT[env_id]] = metrics
        labels_all += labels
        scores_all += scores.tolist()
        positions_all += positions
        print(
            f"{SHORT[env_id]}: step accuracy {metrics['accuracy']:.3f}, AUC {metrics['auc']:.3f} "
            f"on {metrics['n']} test steps"
        )
    report["step_accuracy"]["all"] = classification_metrics(labels_all, scores_all, positions_all)

    # 3. Per-state ranking: what best-of-N needs (the expert's action against every action
    # the noisy policy can propose, in the states a noisy expert visits).
    report["ranking"] = {}
    for env_id in ENVS:
        t = time.perf_counter()
        states = collect_ranking_states(
            env_id,
            split="test",
            max_tasks=limit or args.ranking_tasks,
            p=args.p,
            max_steps=args.max_steps,
            seed=args.seed + 2,
        )
        metrics = evaluate_ranking(prm, states)
        metrics["seconds"] = time.perf_counter() - t
        report["ranking"][SHORT[env_id]] = metrics
        print(
            f"{SHORT[env_id]}: ranking top-1 {metrics['top1']:.3f} (on path "
            f"{metrics['top1_on_path']:.3f}, off {metrics['top1_off_path']:.3f}), pairwise "
            f"{metrics['pairwise']:.3f} over {metrics['n_states']} states"
        )

    # 4. Best-of-N on the test split.
    # The headline is the paper's rule (Eq. 6 over the positive label's logit, Sec. 4.2); the
    # softmax-probability argmax and the count-weighted variant (probability times how often
    # the policy proposed the candidate) are ours.
    verifiers = {
        "RulePRM": (RulePRM(), "positive_logit"),
        "TransformersPRM": (prm, "positive_logit"),
        "TransformersPRM softmax": (prm, "softmax"),
        "TransformersPRM count-weighted": (prm, "count_weighted"),
    }
    report["best_of_n"] = {}
    for env_id in ENVS:
        repeats = args.aw_repeats if env_id == ENVS[1] else 1
        episodes = _test_episodes(env_id, repeats, limit or args.episodes)
        rows: dict[str, Any] = {}
        for name, (verifier, selection) in verifiers.items():
            rows[name] = {}
            for n in args.ns:
                result = _success_rate(
                    env_id, episodes, verifier, n, args.p, args.max_steps, selection
                )
                rows[name][str(n)] = result
                print(
                    f"{SHORT[env_id]:12s} {name:30s} N={n}: success {result['success_rate']:.3f} "
                    f"({result['episodes']} episodes, {result['seconds']:.0f} s)"
                )
        report["best_of_n"][SHORT[env_id]] = rows
    if args.actor_model is not None:
        report["best_of_n_llm_actor"] = _actor_arm(args, prm, limit)
    report["seconds"] = time.perf_counter() - started

    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(_json_safe(report), indent=2) + "\n")
    print(f"written to {args.out}")
    _plot(report, args.plot, args.ns, args.p)
    return report


def _actor_arm(args: argparse.Namespace, prm: Any, limit: int | None) -> dict[str, Any]:
    """Best-of-N with an LLM policy sampling its own candidates (temperature 1), verified by
    the policy itself (GUI-Shepherd Sec. 5.4, Table 5: "the actor model serves as its own
    verifier"; its mean token log-probability, or its yes/no self-judgement) and by the PRMs."""
    import torch

    from gui_gym.agents import ActorVerifier, LLMPolicy
    from gui_gym.models.llm import TransformersLLM

    llm = TransformersLLM(args.actor_model, device=args.device)
    template = LLMPolicy(llm).prompt_template  # what the actor is prompted with
    verifiers = {
        "actor itself (log-probability)": ActorVerifier(llm, template, mode="logprob"),
        "actor itself (yes/no judgement)": ActorVerifier(llm, template, mode="judge"),
        "RulePRM": RulePRM(),
        "TransformersPRM": prm,
    }

    def make_policy(seed: int) -> Any:
        torch.manual_seed(seed)  # the same proposals for every verifier at the same N
        return LLMPolicy(llm, temperature=1.0)

    out: dict[str, Any] = {"model": str(args.actor_model)}
    for env_id in ENVS:
        episodes = _test_episodes(env_id, 1, limit or args.actor_episodes)
        rows: dict[str, Any] = {}
        for name, verifier in verifiers.items():
            rows[name] = {}
            for n in args.ns:
                result = _success_rate(
                    env_id, episodes, verifier, n, args.p, args.max_steps, make_policy=make_policy
                )
                rows[name][str(n)] = result
                print(
                    f"{SHORT[env_id]:12s} LLM actor, {name:32s} N={n}: success "
                    f"{result['success_rate']:.3f} ({result['episodes']} episodes)"
                )
        out[SHORT[env_id]] = rows
    return out


def _plot(report: dict[str, Any], path: Path, ns: list[int], p: float) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing (pip install 'gui-gym[examples]'); no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, len(report["best_of_n"]), figsize=(10, 4), sharey=True)
    for ax, (env, rows) in zip(np.atleast_1d(axes), report["best_of_n"].items()):
        for name, style in (
            ("RulePRM", "o-"),
            ("TransformersPRM", "s-"),
            ("TransformersPRM count-weighted", "s:"),
        ):
            rates = [rows[name][str(n)]["success_rate"] for n in ns]
            ax.plot(ns, rates, style, label=f"best-of-N, {name}")
        ax.axhline(
            rows["RulePRM"][str(ns[0])]["success_rate"], color="grey", ls="--", label="policy alone"
        )
        ax.set_xscale("log", base=2)
        ax.set_xticks(ns, [str(n) for n in ns])
        ax.set_xlabel("N (candidates per step)")
        ax.set_title(f"{env} test split")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("success rate")
    np.atleast_1d(axes)[0].legend(loc="lower right")
    fig.suptitle(f"Noisy expert (p = {p:g}) with a PRM verifier")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
