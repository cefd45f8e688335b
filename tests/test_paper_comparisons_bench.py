"""benchmarks/paper_comparisons.py: the bootstrap intervals, the claim verdicts and the arm
names every comparison uses (the runs themselves go through ``--quick`` in make check-docs)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "paper_comparisons.py"


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location("paper_comparisons_bench", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = load_bench()


def test_a_clear_gain_excludes_zero_and_a_tie_does_not() -> None:
    gain = bench.bootstrap_difference([0.6, 0.7, 0.65, 0.7, 0.6], [0.3, 0.35, 0.3, 0.4, 0.3], 2000)
    assert gain["difference"] == pytest.approx(0.65 - 0.33)
    low, high = gain["interval"]
    assert 0 < low <= gain["difference"] <= high
    assert gain["agrees_with_paper"] and gain["excludes_zero"]
    tie = bench.bootstrap_difference([0.5, 0.0, 1.0, 0.5, 0.5], [0.5, 1.0, 0.0, 0.5, 0.5], 2000)
    assert tie["difference"] == pytest.approx(0.0)
    assert tie["interval"][0] < 0 < tie["interval"][1] and not tie["excludes_zero"]
    loss = bench.bootstrap_difference([0.1] * 5, [0.6] * 5, 200)
    assert loss["difference"] == pytest.approx(-0.5)
    assert not loss["agrees_with_paper"] and loss["excludes_zero"]
    assert loss["interval"] == pytest.approx([-0.5, -0.5])  # no spread, no interval
    with pytest.raises(ValueError, match="at least one run"):
        bench.bootstrap_difference([], [0.1], 10)


def test_mean_interval_brackets_the_mean() -> None:
    row = bench.mean_interval([0.0, 0.25, 0.5, 0.75, 1.0], 2000)
    assert row["mean"] == 0.5 and row["n"] == 5
    assert row["interval"][0] < 0.5 < row["interval"][1]


def test_every_arm_is_a_trainer_the_runner_knows_and_every_claim_names_arms() -> None:
    from gui_gym.train.reward_stack import parse_reward
    from gui_gym.train.runner import ALGORITHM_NAMES

    for name, comparison in bench.COMPARISONS.items():
        for label, arm in comparison.arms.items():
            if arm == "sft":
                continue
            algo, reward, settings = bench.parse_arm(arm)
            assert algo in ALGORITHM_NAMES, (name, label)
            if reward != "replay":
                parse_reward(reward)
            assert set(settings) <= {"milestone_mode"}, (name, label)
        for better, worse in comparison.claims:
            assert {better, worse} <= set(comparison.arms), name
    with pytest.raises(ValueError, match="ALGO:REWARD"):
        bench.parse_arm("grpo:outcome:oops")


def test_full_runs_hold_32_episodes_per_update_and_five_seeds() -> None:
    args = bench.Args()
    assert len(args.seeds) >= 5
    assert args.group_size * args.tasks_per_iteration >= 32
    quick = bench.Args(quick=True)
    assert len(quick.seeds) == 1 and quick.iterations == 1
    with pytest.raises(SystemExit, match="unknown comparison"):
        bench.Args(comparisons=["progrm"])


def test_default_comparisons_and_action_budgets() -> None:
    default = bench.Args().comparisons
    # every paper's comparison runs by default; Table 4 on ALFWorld (a tiny model cannot type
    # WebShop's 44-72-token search queries), generalisation only when asked for
    assert set(default) == set(bench.COMPARISONS) - set(bench.NOT_BY_DEFAULT)
    assert bench.COMPARISONS["admire_table4"].env == "GuiGym/ALFWorld-v0"
    assert bench.COMPARISONS["admire_table4_webshop"].env == "GuiGym/WebShop-v0"
    args = bench.Args()
    assert bench.new_tokens("GuiGym/WebShop-v0", args) >= 72 + 4  # the query and its tags
    assert bench.new_tokens("GuiGym/WikiHow-v0", args) == args.max_new_tokens


def test_the_weight_ablation_differs_from_table4_admire_only_in_the_milestone_weight() -> None:
    from gui_gym.train.reward_stack import parse_reward

    table4, ablation = bench.COMPARISONS["admire_table4"], bench.COMPARISONS["admire_table4_weight"]
    assert ablation.env == table4.env  # the same start and tasks, so runs pair by seed
    assert "admire_table4_weight" not in bench.Args().comparisons
    algo, reward = table4.arms["grpo:admire"].split(":")
    (arm,) = ablation.arms.values()
    ablation_algo, ablation_reward = arm.split(":")
    assert ablation_algo == algo
    weights, ablated = parse_reward(reward), parse_reward(ablation_reward)
    assert weights == {"outcome": 1.0, "milestone": 0.3}  # ADMIRE's lambda0
    assert ablated == {**weights, "milestone": 0.1}


def test_the_gigpo_arm_pairs_with_table4_grpo_outcome() -> None:
    table4, gigpo = bench.COMPARISONS["admire_table4"], bench.COMPARISONS["admire_table4_gigpo"]
    assert gigpo.env == table4.env  # the same start and tasks, so runs pair by seed
    assert "admire_table4_gigpo" not in bench.Args().comparisons
    (arm,) = gigpo.arms.values()
    assert arm.split(":")[1] == table4.arms["grpo:outcome"].split(":")[1] == "outcome"
    assert bench.parse_arm(arm)[0] == "gigpo"


def test_resume_keeps_runs_of_the_same_settings_and_refuses_others(tmp_path: Path) -> None:
    args = bench.Args(out=str(tmp_path), comparisons=["progrm_table1"], seeds=[0, 1])
    assert bench.previous_runs(args) == ([], {})  # nothing yet: a fresh run
    run = {"comparison": "progrm_table1", "arm": "orm", "seed": 0, "train": 0.5}
    start = {"tasks": {"train": ["a"]}, "sft": {"train": 0.5}}
    written = bench.asdict(args) | {"comparisons": ["ui_s1"], "workers": 1, "resume": False}
    body = {
        "args": written,
        "runs": [run],
        "comparisons": {"progrm_table1": {"env": "GuiGym/WikiHow-v0", "start": start}},
    }
    (tmp_path / "paper_comparisons.json").write_text(bench.json.dumps(body))
    runs, starts = bench.previous_runs(args)  # which runs and workers may differ
    assert runs == [run] and starts == {"GuiGym/WikiHow-v0": start}
    changed = bench.Args(out=str(tmp_path), iterations=7)
    with pytest.raises(SystemExit, match=r"iterations=5 \(now 7\)"):
        bench.previous_runs(changed)
    (tmp_path / "paper_comparisons.json").write_text("{not json")
    with pytest.raises(SystemExit, match="not a paper_comparisons result"):
        bench.previous_runs(args)


def test_a_failed_run_is_reported_and_the_others_are_kept() -> None:
    """One run's error (a locked output folder, a crash) must not throw away the runs still
    going: each finished run is kept and saved, the failed ones come back to be resumed."""
    from concurrent.futures import ThreadPoolExecutor

    def run(seed: int) -> dict[str, Any]:
        if seed == 1:
            raise RuntimeError("output in use")
        return {"comparison": "c", "arm": "a", "seed": seed, "train": 0.5, "held_out": 0.0}

    runs: list[dict[str, Any]] = []
    saves: list[int] = []
    with ThreadPoolExecutor(2) as pool:
        pending = {pool.submit(run, seed): ("c", "a", seed) for seed in range(4)}
        failed = bench.gather(pending, runs, lambda: saves.append(len(runs)))
    assert sorted(r["seed"] for r in runs) == [0, 2, 3]
    assert failed == [("c", "a", 1, "RuntimeError: output in use")]
    assert sorted(saves) == [1, 2, 3]  # saved after every finished run


def test_a_run_that_lost_training_episodes_is_not_kept() -> None:
    """A training batch short of episodes lost to infra errors (steps past their deadline on
    a starved machine: 15 of 32 in one Table 4 iteration) must fail the run, not enter the
    comparison as if its updates had seen the whole batch."""
    bench.check_no_episode_lost([{"infra_errors": 0}, {"infra_errors": 0}, {}])
    with pytest.raises(bench.RunIncomplete, match=r"15 training episodes lost .*iteration 2: 15"):
        bench.check_no_episode_lost(
            [{"infra_errors": 0}, {"infra_errors": 0}, {"infra_errors": 15}]
        )


def test_a_comparison_from_a_start_of_0_or_1_trains_no_arm() -> None:
    """From a start that solves none of its train tasks every outcome-reward group is flat:
    a full run must not spend hours training arms that can only tie (the generalisation
    start solved 0 of 427); --quick still runs every arm."""
    tasks = {"train": ["a", "b", "c", "d"], "held_out": ["e"]}
    ok = {"tasks": tasks, "sft": {"train": 0.5}, "sft_start_ok": True}
    zero = {"tasks": tasks, "sft": {"train": 0.0}, "sft_start_ok": False}
    full = {"tasks": tasks, "sft": {"train": 1.0}, "sft_start_ok": False}
    assert bench.not_run_reason(ok, quick=False) is None
    assert "0.00" in bench.not_run_reason(zero, quick=False)
    assert "1.00" in bench.not_run_reason(full, quick=False)
    assert bench.not_run_reason(zero, quick=True) is None
    args = bench.Args(comparisons=["progrm_table1", "generalisation"], seeds=[0, 1])
    starts = {"GuiGym/WikiHow-v0": ok, "generalisation": zero}
    done = {("progrm_table1", "orm", 0)}
    jobs, skipped = bench.plan_jobs(args, starts, done)
    arms = list(bench.COMPARISONS["progrm_table1"].arms)
    assert jobs == [("progrm_table1", a, s) for s in (0, 1) for a in arms if (a, s) != ("orm", 0)]
    assert list(skipped) == ["generalisation"] and "4 train tasks" in skipped["generalisation"]
    quick = bench.Args(comparisons=["generalisation"], seeds=[0], quick=True)
    jobs, skipped = bench.plan_jobs(quick, starts, set())
    assert skipped == {} and {j[0] for j in jobs} == {"generalisation"}


def test_the_generalisation_model_must_be_a_model_folder_and_old_results_resume(
    tmp_path: Path,
) -> None:
    with pytest.raises(SystemExit, match="not a Hugging Face model folder"):
        bench.Args(generalisation_model=str(tmp_path / "missing"))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    assert bench.Args(generalisation_model=str(tmp_path / "model")).generalisation_model
    # a result written before the setting existed resumes with it unset
    args = bench.Args(out=str(tmp_path), comparisons=["progrm_table1"])
    written = {k: v for k, v in bench.asdict(args).items() if k != "generalisation_model"}
    run = {"comparison": "progrm_table1", "arm": "orm", "seed": 0, "train": 0.5}
    body = {"args": written, "runs": [run], "comparisons": {}}
    (tmp_path / "paper_comparisons.json").write_text(bench.json.dumps(body))
    assert bench.previous_runs(args)[0] == [run]
