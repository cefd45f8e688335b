"""Measure what ``benchmarks/baselines.py``'s cost plan reads, cheaply: the scripted expert
and SmolLM2's tokenizer only (no model weights, no generation).

For each env of the baselines table (``benchmarks/baselines.py``'s ``ENVS``):

* the train split's expert episodes in the order ``baselines.py`` records its SFT data (the
  split's tasks in order, seeds from 0, at the env's own step budget): steps per episode, and
  the SFT examples per recorded episode at shorter budgets (SFT keeps only successful
  episodes: an expert episode longer than the budget is a failure at that budget);
* the first ``--test-episodes`` test episodes (the ones every row plays first: task ``i``,
  seed ``10_000 + i``) at the env's budget: the expert's success and steps at each shorter
  budget, the ceiling of every row at that budget (one shorter budget, ``--check-budget``, is
  also played directly, to check the derivation);
* the default prompt (history 8) at every expert step of both, in SmolLM2 tokens (its chat
  template, as ``TransformersLLM`` feeds it): median and 90th percentile; and the expert's
  actions as the model must write them (the completion SFT teaches), against
  ``--max-new-tokens``.

The figures go into ``benchmarks/cpu_costs.py``'s docstrings (``PROMPT_SCALE``,
``RECORDED_STEPS``, ``ORACLE_CEILING``). Seconds per env, MiniWoB++ a minute (one Chromium);
build ALFWorld's games first (``scripts/generate_alfworld.py --split train --count 60`` and
``--split valid_unseen --count 50``), or a build past the 60 s reset timeout loses episodes.
Usage::

    nice -n 19 python scripts/measure_plan_inputs.py --envs webshop miniwob --out /tmp/plan
    nice -n 19 python scripts/measure_plan_inputs.py --envs alfworld --train-episodes 60
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tyro

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import harness  # noqa: E402

baselines = harness.load_script(ROOT / "benchmarks" / "baselines.py", "baselines_for_measure")


@dataclass
class Args:
    envs: list[str] = field(default_factory=lambda: list(baselines.ENVS))
    train_episodes: int = 120  # train-split episodes recorded (baselines.py's default)
    test_episodes: int = 50  # first test episodes played (baselines.py's --llm-episodes)
    min_budget: int = 3  # the shortest budget tabled (every one from it to the env's own)
    check_budget: int = 6  # a shorter budget also played directly on the test episodes
    tokenizer: str = "smollm2-135m-instruct"  # a registry name or a tokenizer folder
    out: Path = Path("/tmp/plan_inputs")  # recordings and <env>.json


class _NoModel:
    """Stands in for an LLM: prompts are built, never generated from."""

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("measure_plan_inputs builds prompts only")


def tokenizer(spec: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(baselines.real_model_script().resolve(spec))


def prompt_tokens(trajectories: list[Any], tok: Any) -> tuple[list[int], list[int]]:
    """SmolLM2 tokens of the default prompt at every step of ``trajectories`` (SFT's
    prompts: the same history of action descriptions an episode shows), and of each step's
    completion (the expert's action in the prompt's format)."""
    from gui_gym.agents.llm import LLMAgent
    from gui_gym.models.llm.chat_messages import to_messages
    from gui_gym.train.sft import build_examples

    agent = LLMAgent(_NoModel(), history=8)
    lengths, actions = [], []
    for example in build_examples(trajectories, agent):
        text = tok.apply_chat_template(
            to_messages(example.prompt), tokenize=False, add_generation_prompt=True
        )
        lengths.append(len(tok(text, add_special_tokens=False)["input_ids"]))
        actions.append(len(tok(example.completion, add_special_tokens=False)["input_ids"]))
    return lengths, actions


def spread(lengths: list[int]) -> dict[str, Any]:
    ordered = sorted(lengths)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] if ordered else 0
    return {
        "count": len(ordered),
        "median": statistics.median(ordered) if ordered else 0,
        "p90": p90,
        "max": ordered[-1] if ordered else 0,
    }


def played(name: str, split: str, episodes: int, budget: int, out: Path) -> list[Any]:
    """The expert's episodes (failed ones too), in episode order."""
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.runs.record import record_dataset

    env = baselines.ENVS[name]
    kwargs = {**(env.train if split == "train" else env.test), "max_steps": budget}
    record_dataset(
        env.env_id,
        episodes=episodes,
        out=out,
        seed=0 if split == "train" else baselines.TEST_SEED,
        env_kwargs=kwargs,
        progress=False,
    )
    found = ExpertDataset.load(out, include_failed=True).trajectories
    return sorted(found, key=lambda t: t.trajectory_id)


def at_budgets(episodes: list[Any], budgets: list[int]) -> dict[str, Any]:
    """Per budget: the expert's successes and mean steps (an episode over the budget is cut
    there and fails), and the SFT examples per episode (steps of the successful ones)."""
    table = {}
    for budget in budgets:
        wins = [t for t in episodes if t.success and len(t.steps) <= budget]
        steps = [min(len(t.steps), budget) for t in episodes]
        table[str(budget)] = {
            "success": round(len(wins) / len(episodes), 4),
            "successes": len(wins),
            "mean_steps": round(sum(steps) / len(episodes), 2),
            "sft_examples_per_episode": round(sum(len(t.steps) for t in wins) / len(episodes), 2),
        }
    return table


def measure(name: str, args: Args, tok: Any) -> dict[str, Any]:
    started = time.perf_counter()
    default = baselines.default_steps(name)
    budgets = list(range(min(args.min_budget, default), default + 1))
    folder = args.out / name
    train = played(name, "train", args.train_episodes, default, folder / "train")
    train_seconds = time.perf_counter() - started
    test = played(name, "test", args.test_episodes, default, folder / "test")
    check = played(name, "test", args.test_episodes, args.check_budget, folder / "test_check")
    derived = at_budgets(test, [args.check_budget])[str(args.check_budget)]
    direct = sum(t.success for t in check)
    train_prompts, train_actions = prompt_tokens([t for t in train if t.success], tok)
    test_prompts, test_actions = prompt_tokens(test, tok)
    return {
        "env": name,
        "default_budget": default,
        "train": {
            "episodes": len(train),
            "tasks": len({t.task_id for t in train}),
            "steps": [len(t.steps) for t in train],
            "by_budget": at_budgets(train, budgets),
            "prompt_tokens": spread(train_prompts),
            "action_tokens": spread(train_actions),
            "record_seconds": round(train_seconds, 1),
        },
        "test": {
            "episodes": len(test),
            "steps": [len(t.steps) for t in test],
            "by_budget": at_budgets(test, budgets),
            "prompt_tokens": spread(test_prompts),
            "action_tokens": spread(test_actions),
            "check": {
                "budget": args.check_budget,
                "direct_successes": direct,
                "derived_successes": derived["successes"],
            },
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(args: Args) -> dict[str, Any]:
    tok = tokenizer(args.tokenizer)
    args.out.mkdir(parents=True, exist_ok=True)
    result = {}
    for name in args.envs:
        result[name] = measure(name, args, tok)
        harness.write_json(args.out / f"{name}.json", result[name], indent=1)
        train, test = result[name]["train"], result[name]["test"]
        print(
            f"{name}: train prompts {train['prompt_tokens']}, test prompts "
            f"{test['prompt_tokens']}, test actions {test['action_tokens']}, test check "
            f"{test['check']}, {result[name]['seconds']} s",
            flush=True,
        )
        for split in ("train", "test"):
            figure = "sft_examples_per_episode" if split == "train" else "success"
            table = {b: row[figure] for b, row in result[name][split]["by_budget"].items()}
            print(f"  {split} {figure} by budget: {table}", flush=True)
    return result


if __name__ == "__main__":
    main(tyro.cli(Args))
