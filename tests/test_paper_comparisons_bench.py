"""benchmarks/paper_comparisons.py: the bootstrap intervals, the claim verdicts and the arm
names every comparison uses (the runs themselves go through ``--quick`` in make check-docs)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require

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


# ------------------------------------------------------------------ a pretrained-model start


def _model_folder(path: Path) -> Path:
    """A folder that passes ``--model``'s check (a config.json), for the tests that never
    load it."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text("{}")
    return path


def test_without_model_the_tiny_defaults_are_unchanged_and_a_model_brings_its_own(
    tmp_path: Path,
) -> None:
    from gui_gym.train.sft import default_lr

    tiny = bench.Args()
    assert (tiny.sft_lr, tiny.learning_rate, tiny.iterations, tiny.max_steps) == (
        3e-3,
        5e-4,
        5,
        6,
    )
    assert (tiny.workers, tiny.threads, tiny.sft_tasks, tiny.seeds) == (2, 1, 8, [0, 1, 2, 3, 4])
    assert tiny.generalisation_tasks == 427 and tiny.model is None
    assert bench.result_path(tiny).name == "paper_comparisons.json"
    model = _model_folder(tmp_path / "SmolLM2 135M")
    real = bench.Args(model=str(model))
    assert real.sft_lr == default_lr(lora=True)  # the library's LoRA SFT rate
    assert real.learning_rate < 3e-4  # below real_model.py's GRPO rate that overshot
    assert (real.workers, real.threads) == (1, 2)  # one run at a time on both cores
    assert len(real.seeds) >= 3 and real.sft_tasks >= real.train_tasks
    assert bench.result_path(real).name == "paper_comparisons_SmolLM2-135M.json"
    registry = bench.Args(model="smollm2-135m-instruct")
    assert bench.result_path(registry).name == "paper_comparisons_smollm2-135m-instruct.json"
    # --model implies the generalisation start's model; --generalisation-model still wins
    assert bench.start_base(real, True, model) == model
    assert bench.start_base(real, False, model) == model
    other = _model_folder(tmp_path / "other")
    both = bench.Args(model=str(model), generalisation_model=str(other))
    assert bench.start_base(both, True, model) == other
    old_flag = bench.Args(generalisation_model=str(other))
    assert bench.start_base(old_flag, True, None) == other
    assert bench.start_base(old_flag, False, None) is None  # the tiny GPT-2 elsewhere


def test_a_bad_model_or_arm_is_one_line_naming_what_is_allowed(tmp_path: Path) -> None:
    for bad in (str(tmp_path / "missing"), str(_model_folder(tmp_path / "m").parent), "gpt-9"):
        with pytest.raises(SystemExit) as caught:
            bench.Args(model=bad)
        message = str(caught.value)
        assert "\n" not in message and message.startswith(f"--model {bad}:")
        assert "smollm2-135m-instruct" in message and "config.json" in message
    with pytest.raises(SystemExit, match=r"unknown arm\(s\) \['grpo:oops'\].*grpo:outcome"):
        bench.Args(comparisons=["admire_table4"], arms=["grpo:oops"])
    with pytest.raises(SystemExit, match="--sft-tasks 4 is fewer than --train-tasks 8"):
        bench.Args(model=str(tmp_path / "m"), sft_tasks=4)
    with pytest.raises(SystemExit, match="estimate a --model start"):
        bench.Args(budget_hours=2)


def test_the_budget_refuses_a_plan_over_it_with_the_worked_numbers(tmp_path: Path) -> None:
    """ProgRM Table 1 from a model at its defaults, 3 seeds: the WikiHow start (LoRA SFT on
    60 tasks x 2.94 oracle steps x 9 s, then 16 scored episodes x 4 steps x 3 s and SOP's
    16 x 2.94 turns x 3 s), the ORM's 8 rollouts x 8 tasks x 4 steps x 3 s, and 6 runs of 3
    iterations x 8 episodes x 4 steps x 11.25 s plus their 16 x 4 x 3 s of scores."""
    model = _model_folder(tmp_path / "model")
    args = bench.Args(
        model=str(model),
        comparisons=["progrm_table1"],
        seeds=[0, 1, 2],
        budget_hours=2.5,
        out=str(tmp_path),
    )
    start = 60 * 2.94 * 9 + 16 * 4 * 3 + 16 * 2.94 * 3
    orm = 8 * 8 * 4 * 3
    run = 3 * 8 * 4 * (6 * 60 / 32) + 16 * 4 * 3
    plan = bench.plan_costs(args, set(), tmp_path / "work")
    row = plan["progrm_table1"]
    assert row["start"] == pytest.approx(start) and row["orm"] == pytest.approx(orm)
    assert row["runs"] == 6 and row["training"] == pytest.approx(6 * run)
    hours = (start + orm + 6 * run) / 3600  # 2.87 h
    with pytest.raises(SystemExit) as caught:
        bench.main(args)  # refused before any model is loaded or task recorded
    message = str(caught.value)
    assert f"an estimated {hours:.2f} h, over --budget-hours 2.5" in message
    assert "--seeds" in message and "--resume" in message and "\n" not in message
    # runs already kept, a start already in the work folder and fewer arms all cut it
    done = {("progrm_table1", "orm", s) for s in (0, 1, 2)}
    assert bench.plan_costs(args, done, tmp_path / "work")["progrm_table1"]["runs"] == 3
    folder = tmp_path / "work" / "GuiGym_WikiHow-v0"
    _model_folder(folder / "sft")
    settings = {key: getattr(args, key) for key in bench.START_SETTINGS}
    (folder / "start.json").write_text(bench.json.dumps({"settings": settings, "start": {}}))
    assert bench.plan_costs(args, set(), tmp_path / "work")["progrm_table1"]["start"] == 0.0
    one_arm = bench.Args(model=str(model), comparisons=["progrm_table1"], arms=["progrm"])
    assert bench.plan_costs(one_arm, set(), tmp_path / "w2")["progrm_table1"]["runs"] == 3
    # within budget, --plan-only returns the plan and runs nothing
    fits = bench.Args(
        model=str(model),
        comparisons=["progrm_table1"],
        budget_hours=3.0,
        plan_only=True,
        out=str(tmp_path),
    )
    assert bench.main(fits)["plan"]["progrm_table1"]["runs"] == 6


def test_an_old_result_without_a_model_setting_resumes_as_the_tiny_start(tmp_path: Path) -> None:
    """benchmarks/reference/paper_comparisons.json was first written before --model,
    --sft-tasks and --threads existed (its GiGPO runs rewrote it with them): a file without
    them resumes as the tiny start, keeping all its runs, and a model run never reads it (its
    own JSON is another file)."""
    reference = PATH.parent / "reference" / "paper_comparisons.json"
    old = bench.json.loads(reference.read_text())
    assert old["args"].get("model") is None and old["args"]["sft_tasks"] == 8
    # the reference as it was before its GiGPO runs added the new settings
    for key in ("model", "sft_tasks", "threads", "arms", "budget_hours", "plan_only"):
        old["args"].pop(key, None)
    (tmp_path / "paper_comparisons.json").write_text(bench.json.dumps(old))
    fields = set(bench.Args.__dataclass_fields__)
    settings = {k: v for k, v in old["args"].items() if k in fields}
    args = bench.Args(**{**settings, "out": str(tmp_path), "resume": True})
    runs, starts = bench.previous_runs(args)
    assert len(runs) == len(old["runs"]) and "GuiGym/WikiHow-v0" in starts
    model = _model_folder(tmp_path / "model")
    assert bench.previous_runs(bench.Args(model=str(model), out=str(tmp_path))) == ([], {})


def test_the_smollm2_reference_resumes_with_the_next_piece(tmp_path: Path) -> None:
    """benchmarks/reference/paper_comparisons_smollm2-135m-instruct.json (piece 1 of
    docs/paper_comparisons.md's plan) resumes as the docs say (copied to --out, the next
    piece's command with --resume): its runs are kept, and its start's tasks are the ones the
    script picks today, so a rebuilt start on a fresh machine can match it."""
    name = "paper_comparisons_smollm2-135m-instruct.json"
    reference = PATH.parent / "reference" / name
    kept = bench.json.loads(reference.read_text())
    (tmp_path / name).write_text(reference.read_text())
    args = bench.Args(
        model="smollm2-135m-instruct",
        comparisons=["progrm_table1"],
        seeds=[0, 1],
        out=str(tmp_path),
        resume=True,
        budget_hours=2.0,
    )
    runs, starts = bench.previous_runs(args)
    assert len(runs) == len(kept["runs"]) >= 6  # piece 1's runs, and any added since
    start = starts["GuiGym/WikiHow-v0"]
    tasks, sft_tasks = bench.start_tasks("GuiGym/WikiHow-v0", args, False)
    assert tasks == start["tasks"] and sft_tasks == start["sft_tasks"]
    assert not set(start["sft_tasks"]) & set(start["tasks"]["held_out"])


def test_a_model_start_runs_quick_end_to_end_into_its_own_json(tmp_path: Path) -> None:
    """--model with a tiny Llama built from a config: UI-S1's three arms in --quick (LoRA SFT
    on 3 tasks, RL on the first 2, LoRA arms), its own JSON and figure, the tiny-model JSON
    untouched; a --resume reruns nothing."""
    import subprocess

    require("transformers", "llm")
    from transformers import LlamaConfig, LlamaForCausalLM

    from gui_gym.models.prm import build_tokenizer
    from gui_gym.train.runner import env_texts

    folder = tmp_path / "tiny-llama"
    tokenizer = build_tokenizer(env_texts("GuiGym/WikiHow-v0", count=8), 1024)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    out = tmp_path / "out"
    out.mkdir()
    tiny_json = out / "paper_comparisons.json"
    tiny_json.write_text('{"the tiny run": "stays"}')
    command = [
        sys.executable,
        str(PATH),
        "--model",
        str(folder),
        "--quick",
        "--comparisons",
        "ui_s1",
        "--threads",
        "1",
        "--out",
        str(out),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "plan (an ESTIMATE" in done.stdout
    assert tiny_json.read_text() == '{"the tiny run": "stays"}'
    result = bench.json.loads((out / "paper_comparisons_tiny-llama.json").read_text())
    assert (out / "paper_comparisons_tiny-llama.png").is_file()
    assert result["model"] == str(folder) and result["precision"] == "fp32"
    assert result["args"]["model"] == str(folder) and result["args"]["threads"] == 1
    start = result["comparisons"]["ui_s1"]["start"]
    assert len(start["sft_tasks"]) == 3 and start["tasks"]["train"] == start["sft_tasks"][:2]
    assert start["base"] == str(folder) and start["before_sft"] is None
    runs = {r["arm"]: r for r in result["runs"]}
    assert set(runs) == {"sft", "semi_online", "online"}
    assert all(r["seconds"] > 0 and r["cpu_seconds"] > 0 for r in (runs["online"],))
    work = out / "paper_comparisons_tiny-llama_work"
    trained = bench.json.loads((work / "runs" / "ui_s1_online_0" / "config.json").read_text())
    assert trained["lora"] is True and trained["learning_rate"] == 1e-4
    # the merged weights are dropped after scoring, the LoRA checkpoint stays
    assert not (work / "runs" / "ui_s1_online_0" / "model").exists()
    assert (work / "runs" / "ui_s1_online_0" / "checkpoint").is_dir()
    assert trained["mini_batches"] == 4 and trained["update_epochs"] == 1
    # a provenance note added to the file by hand survives a resumed run's rewrite
    written = out / "paper_comparisons_tiny-llama.json"
    written.write_text(bench.json.dumps({**result, "provenance": "piece 1: how it ran"}))
    again = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resuming: 3 runs kept" in again.stdout
    resumed = bench.json.loads(written.read_text())
    assert resumed["runs"] == result["runs"]  # nothing ran again
    assert resumed["provenance"] == "piece 1: how it ran"


def test_the_figure_fits_a_page_width_whatever_the_number_of_comparisons(tmp_path: Path) -> None:
    """Seven comparisons in one row made a 3,234 x 396 strip; in rows of PLOT_COLUMNS the
    figure stays about as wide as three panels, and grows in height instead."""
    import struct

    require("matplotlib", "examples")
    arm = {"mean": 0.5, "interval": [0.25, 0.75]}
    sizes = {}
    for count in (1, 3, 7):
        result = {
            "comparisons": {
                f"c{i}": {"arms": {"a": {"train": arm, "held_out": arm}}} for i in range(count)
            }
        }
        path = tmp_path / f"fig{count}.png"
        bench.plot(result, path)
        sizes[count] = struct.unpack(">II", path.read_bytes()[16:24])
    assert sizes[7][0] == sizes[3][0] <= 1600  # no wider than three panels
    assert sizes[7][1] >= 2.5 * sizes[3][1]  # three rows
    assert sizes[1][0] < sizes[3][0]
    bench.plot({"comparisons": {"c": {"arms": {}}}}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()  # nothing measured: no empty figure
