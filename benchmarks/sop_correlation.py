"""Does SOP track online success better than offline step accuracy? (UI-S1 Fig. 2 / Fig. 9)

UI-S1 reports that its semi-online metric SOP correlates with online AndroidWorld success at
R^2 = 0.934, against 0.470 for the offline AndroidControl-High step metric. This script runs
the same comparison on gui-gym's simulated apps with agents of graded skill:

1. Record expert datasets with the oracle on the test split of ``GuiGym/WikiHow-v0`` (150
   tasks) and ``GuiGym/AndroidWorld-v0`` (84 templates, parameters from the test seeds).
2. For every agent, measure online success in the live env on the same task instances
   (same seeds), SOP (PG, TSR, Score) on the recorded data, and the offline-style step
   accuracy (every mismatch patched with the expert action, i.e. conditioned on the expert
   history).
3. Fit online success linearly on each metric and report R^2, per env and pooled.

Agents (all built on the oracle, so the study is cheap and exactly reproducible):

* ``noisy-p``: a uniformly random sensible action with probability p at every step, after
  which it recovers (the oracle acts from whatever state it is in);
* ``fragile-p``: the same noise, but after its first random action it stays lost (random
  actions) unless the history it reads is put right, as semi-online patching does: errors
  compound through its own history, the failure mode UI-S1 targets;
* ``late-noise-p``: the same noise from the third step on;
* ``early-noise-p``: the same noise at the first step only;
* ``quits-after-k``: declares DONE after k steps;
* ``vote-N``: majority vote over N draws of ``noisy-0.5`` (a best-of-N by self-consistency);
* ``tiny-n`` (WikiHow only): a linear softmax policy over candidate actions trained by
  imitation on n oracle trajectories of the train split (``tiny_policy.py``); it never sees
  the oracle at test time.

The oracle-based agents are synthetic, so their numbers say how the metrics behave on those
error patterns; the tiny policies are real (if small) learned agents.

Usage: python benchmarks/sop_correlation.py [--out benchmarks/results/sop_correlation.json]
       [--data-dir DIR] [--plot benchmarks/results/sop_correlation.png]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tiny_policy import TinyPolicyAgent
from tiny_policy import train as train_tiny_policy

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.core.actions import Action, ActionType
from gui_gym.core.trajectory import atomic_write_text
from gui_gym.envs.replay import ExpertDataset
from gui_gym.runs.evaluate import evaluate
from gui_gym.runs.record import record_dataset
from gui_gym.runs.sop import evaluate_sop

ENVS = {
    "wikihow": ("GuiGym/WikiHow-v0", 150),
    "androidworld": ("GuiGym/AndroidWorld-v0", 84),
}


class SyntheticAgent:
    """The oracle with injected errors; works in live envs and in the replay env alike (both
    offer ``oracle_action()`` and ``candidate_actions()``).

    Args:
        env: The env it acts in.
        seed: Seed of its noise.
        p: Probability of a random action at a noisy step.
        noise_from, noise_until: Steps (0-based, its own count) where noise applies.
        quit_after: Declare DONE from this step on (None: never).
        votes: Majority vote over this many noisy draws (1: no vote).
        fragile: After a random action, keep acting randomly until a patch (replay env)
            corrects the history.
    """

    def __init__(
        self,
        env: gym.Env,
        seed: int,
        p: float = 0.0,
        noise_from: int = 0,
        noise_until: float = float("inf"),
        quit_after: int | None = None,
        votes: int = 1,
        fragile: bool = False,
    ):
        self.env = env.unwrapped
        self.rng = np.random.default_rng(seed)
        self.p, self.noise_from, self.noise_until = p, noise_from, noise_until
        self.quit_after, self.votes, self.fragile = quit_after, votes, fragile
        self.name = "synthetic"
        self.k = 0
        self.lost = False

    def reset(self, observation: dict[str, Any], info: dict[str, Any]) -> None:
        self.k = 0
        self.lost = False

    def _random(self) -> Action:
        candidates = self.env.candidate_actions()
        return candidates[int(self.rng.integers(len(candidates)))]

    def _draw(self) -> Action:
        if self.noise_from <= self.k < self.noise_until and self.rng.random() < self.p:
            self.lost = self.fragile
            return self._random()
        return self.env.oracle_action()

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        if info.get("semi_online", {}).get("patched"):
            self.lost = False  # the history it reads now holds the expert's action
        if self.lost:
            action = self._random()
        elif self.quit_after is not None and self.k >= self.quit_after:
            action = Action(ActionType.DONE)
        elif self.votes > 1:
            draws = [self._draw() for _ in range(self.votes)]
            action = Counter(draws).most_common(1)[0][0]
        else:
            action = self._draw()
        self.k += 1
        return action


AGENTS: dict[str, dict[str, Any]] = {
    **{f"noisy-{p}": {"p": p} for p in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)},
    **{f"fragile-{p}": {"p": p, "fragile": True} for p in (0.05, 0.1, 0.2, 0.3, 0.5)},
    **{f"late-noise-{p}": {"p": p, "noise_from": 2} for p in (0.3, 0.6, 1.0)},
    **{f"early-noise-{p}": {"p": p, "noise_until": 1} for p in (0.5, 1.0)},
    **{f"quits-after-{k}": {"quit_after": k} for k in (2, 3, 4)},
    **{f"vote-{n}": {"p": 0.5, "votes": n} for n in (3, 5)},
}


def factory(settings: dict[str, Any], base_seed: int) -> Callable[[gym.Env], SyntheticAgent]:
    """An ``env -> agent`` factory; each call (one per episode) gets the next seed."""
    counter = iter(range(10**9))

    def make(env: gym.Env) -> SyntheticAgent:
        return SyntheticAgent(env, seed=base_seed + next(counter), **settings)

    return make


@dataclass
class Fit:
    slope: float
    intercept: float
    r2: float


def linear_fit(x: list[float], y: list[float]) -> Fit:
    """Least-squares line ``y = slope x + intercept`` and its R^2 (UI-S1 Appendix C)."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    slope, intercept = np.polyfit(xs, ys, 1)
    predicted = slope * xs + intercept
    ss_res = float(((ys - predicted) ** 2).sum())
    ss_tot = float(((ys - ys.mean()) ** 2).sum())
    return Fit(float(slope), float(intercept), 1.0 - ss_res / ss_tot if ss_tot else 0.0)


TINY_POLICY_ENVS = ("wikihow",)
"""Envs with learned agents: the tiny policy has no OPEN_APP/DONE candidates, so it cannot
work AndroidWorld's tasks."""
TINY_POLICY_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 427)
"""Expert trajectories of the train split each tiny policy learns from."""


def tiny_policies(
    env_id: str, train_dir: Path
) -> dict[str, Callable[[], Callable[[gym.Env], Any]]]:
    """``tiny-n`` agents: linear softmax policies imitating n train-split oracle trajectories."""
    record_dataset(
        env_id, "oracle", episodes=427, out=train_dir, env_kwargs={"split": "train"}, progress=False
    )
    data = ExpertDataset.load(train_dir)
    out = {}
    for n in TINY_POLICY_SIZES:
        weights = train_tiny_policy(data, n, epochs=10)
        out[f"tiny-{n}"] = lambda w=weights: lambda env: TinyPolicyAgent(env, w)
    return out


def run(data_dir: Path) -> dict[str, Any]:
    results: dict[str, Any] = {"envs": {}, "agents": AGENTS}
    for name, (env_id, episodes) in ENVS.items():
        started = time.perf_counter()
        dataset = data_dir / name
        record_dataset(
            env_id,
            "oracle",
            episodes=episodes,
            out=dataset,
            env_kwargs={"split": "test"},
            progress=False,
        )
        record_s = time.perf_counter() - started
        makers: dict[str, Callable[[], Callable[[gym.Env], Any]]] = {
            agent: (lambda s=settings: factory(s, 1000)) for agent, settings in AGENTS.items()
        }
        if name in TINY_POLICY_ENVS:
            makers.update(tiny_policies(env_id, data_dir / f"{name}-train"))
        rows = {}
        for agent, make in makers.items():
            online, _ = evaluate(
                env_id, make(), episodes=episodes, env_kwargs={"split": "test"}, progress=False
            )
            sop, _ = evaluate_sop(dataset, make(), progress=False)
            rows[agent] = {
                "online_success": online.success_rate,
                "sop_pg": sop.sop.pg,
                "sop_tsr": sop.sop.tsr,
                "sop_score": sop.sop.score,
                "step_accuracy": sop.step_accuracy,
            }
            print(
                f"{name:12s} {agent:18s} "
                + " ".join(f"{k}={v:.3f}" for k, v in rows[agent].items())
            )
        results["envs"][name] = {
            "env_id": env_id,
            "trajectories": episodes,
            "record_s": round(record_s, 2),
            "agents": rows,
            "fits": fits(rows),
        }
    pooled = {
        f"{env}/{agent}": row
        for env, data in results["envs"].items()
        for agent, row in data["agents"].items()
    }
    results["pooled_fits"] = fits(pooled)
    results["group_fits"] = {
        group: fits({k: v for k, v in pooled.items() if GROUPS[_family(k)] == group})
        for group in sorted(set(GROUPS.values()))
    }
    results["group_fits"]["all but recovering"] = fits(
        {k: v for k, v in pooled.items() if GROUPS[_family(k)] != "recovering"}
    )
    return results


GROUPS = {
    "noisy": "recovering",
    "late-noise": "recovering",
    "early-noise": "recovering",
    "vote": "recovering",
    "fragile": "compounding",
    "quits-after": "quitting",
    "tiny": "learned",
}
"""How each agent family fails: recovers from its errors, compounds them, or stops early;
learned agents fail in their own ways."""


def _family(key: str) -> str:
    agent = key.split("/")[-1]
    return agent.rsplit("-", 1)[0]


def fits(rows: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    online = [r["online_success"] for r in rows.values()]
    out = {}
    for metric in ("sop_score", "sop_pg", "sop_tsr", "step_accuracy"):
        fit = linear_fit([r[metric] for r in rows.values()], online)
        out[metric] = {"slope": fit.slope, "intercept": fit.intercept, "r2": fit.r2}
    return out


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
    markers = {"wikihow": "o", "androidworld": "s"}
    colours = {
        "recovering": "tab:blue",
        "compounding": "tab:red",
        "quitting": "tab:green",
        "learned": "tab:purple",
    }
    for ax, metric, label in (
        (axes[0], "sop_score", "SOP Score"),
        (axes[1], "step_accuracy", "offline step accuracy (mismatches patched)"),
    ):
        for env, data in results["envs"].items():
            for agent, row in data["agents"].items():
                group = GROUPS[_family(agent)]
                ax.scatter(
                    row[metric], row["online_success"], marker=markers[env], c=colours[group], s=30
                )
        for group, colour in colours.items():
            r2 = results["group_fits"][group][metric]["r2"]
            ax.scatter([], [], c=colour, label=f"{group} agents (R² {r2:.3f})")
        for env, marker in markers.items():
            ax.scatter([], [], marker=marker, c="grey", label=env)
        pooled = results["pooled_fits"][metric]
        grid = np.linspace(0, 1, 50)
        ax.plot(
            grid,
            pooled["slope"] * grid + pooled["intercept"],
            "k--",
            lw=1,
            label=f"all agents, linear fit (R² {pooled['r2']:.3f})",
        )
        ax.set_xlabel(label)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.05)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("online success rate")
    fig.suptitle("Agents of graded skill: offline metrics vs online success")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/sop_correlation.json"))
    parser.add_argument("--plot", type=Path, default=Path("benchmarks/results/sop_correlation.png"))
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="keep the recorded datasets here"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    if args.data_dir is None:
        with tempfile.TemporaryDirectory() as tmp:
            results = run(Path(tmp))
    else:
        results = run(args.data_dir)
    results["wall_s"] = round(time.perf_counter() - started, 1)
    atomic_write_text(args.out, json.dumps(results, indent=1) + "\n")
    plot(results, args.plot)
    scopes = [
        *((env, d["fits"]) for env, d in results["envs"].items()),
        ("pooled", results["pooled_fits"]),
        *((f"{g} agents", f) for g, f in results["group_fits"].items()),
    ]
    for scope, data in scopes:
        print(
            f"{scope:20s} R² SOP Score {data['sop_score']['r2']:.3f}  "
            f"step accuracy {data['step_accuracy']['r2']:.3f}"
        )
    print(f"written to {args.out} and {args.plot} ({results['wall_s']} s)")


if __name__ == "__main__":
    main()
