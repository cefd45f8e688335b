"""benchmarks/baselines.py: the cheap rows' figures, resume after a finished or a killed run,
``--quick``'s SmolLM2 rows end to end on a tiny model, and one-line errors for bad names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))  # as a script has
import harness

script = harness.load_script(Path(harness.__file__).parent / "baselines.py", "baselines_script")


def _args(tmp_path: Path, **kwargs) -> object:
    return script.Args(out=tmp_path / "baselines.json", work=tmp_path / "work", **kwargs)


def test_cheap_rows_give_the_oracle_full_success_and_random_less(tmp_path: Path) -> None:
    args = _args(tmp_path, envs=["wikihow"], rows=["random", "oracle"], episodes=2)
    result = script.main(args)
    oracle, random_ = result["cells"]["wikihow/oracle"], result["cells"]["wikihow/random"]
    assert oracle["success"] == 1.0 and oracle["episodes"] == 2
    assert random_["success"] < oracle["success"]
    # the Wilson interval of 2/2 and the CPU time the cell cost
    assert oracle["interval_95"][0] < 1.0 == oracle["interval_95"][1]
    assert oracle["cpu_seconds"] >= 0 and "held_out" in oracle and "agent" in oracle
    assert oracle["settings"]["env_kwargs"]["split"] == "test"
    on_disk = json.loads(args.out.read_text())
    assert on_disk["cells"] == result["cells"] and on_disk["format"] == "gui-gym/baselines"


def test_a_rerun_skips_done_cells_and_fresh_reruns_the_chosen_ones(tmp_path, monkeypatch):
    args = _args(tmp_path, envs=["wikihow"], rows=["random", "oracle"], episodes=2)
    first = script.main(args)["cells"]
    ran: list[str] = []
    stub = {**first["wikihow/oracle"], "success": 0.5}
    monkeypatch.setattr(script, "run_cell", lambda name, row, seed, a: ran.append(row) or stub)
    assert script.main(args)["cells"] == first and ran == []
    args.fresh, args.rows = True, ["oracle"]
    again = script.main(args)["cells"]
    assert ran == ["oracle"] and again["wikihow/oracle"]["success"] == 0.5
    assert again["wikihow/random"] == first["wikihow/random"]  # not chosen: kept


def test_a_killed_run_leaves_the_json_valid_with_the_cells_before(tmp_path: Path, monkeypatch):
    real = script.run_cell

    def dies_on_oracle(name, row, seed, args):
        if row == "oracle":
            raise RuntimeError("killed")  # as a run killed mid-cell stops
        return real(name, row, seed, args)

    monkeypatch.setattr(script, "run_cell", dies_on_oracle)
    args = _args(tmp_path, envs=["webshop"], rows=["rule", "random", "oracle"], episodes=2)
    with pytest.raises(RuntimeError, match="killed"):
        script.main(args)
    saved = json.loads(args.out.read_text())
    # the cells before the kill, whole (table order: random, rule, oracle)
    assert list(saved["cells"]) == ["webshop/random", "webshop/rule"]
    assert 0.0 <= saved["cells"]["webshop/rule"]["score"] <= 1.0
    monkeypatch.setattr(script, "run_cell", real)
    done = script.main(args)["cells"]
    assert list(done) == ["webshop/random", "webshop/rule", "webshop/oracle"]
    assert done["webshop/rule"] == saved["cells"]["webshop/rule"]  # resumed, not rerun
    assert done["webshop/oracle"]["success"] == 1.0


def test_quick_runs_the_smollm2_rows_end_to_end(tmp_path: Path) -> None:
    rows = list(script.LLM_ROWS)
    args = _args(tmp_path, envs=["wikihow"], rows=rows, quick=True, max_steps=3)
    cells = script.main(args)["cells"]
    assert set(cells) == {
        "wikihow/zero_shot",
        "wikihow/sft/seed0",
        "wikihow/sft_grpo_outcome/seed0",
        "wikihow/sft_grpo_shaped/seed0",
    }
    for cell in cells.values():
        assert cell["episodes"] == 2 and cell["precision"] == "fp32"
        assert 0.0 <= cell["interval_95"][0] <= cell["interval_95"][1] <= 1.0
    assert cells["wikihow/sft/seed0"]["sft"]["optimizer_steps"] >= 1
    shaped = cells["wikihow/sft_grpo_shaped/seed0"]["training"]
    assert shaped["reward"] == script.ENVS["wikihow"].shaped == "outcome+progress"
    assert cells["wikihow/sft_grpo_outcome/seed0"]["training"]["reward"] == "outcome"
    # both GRPO rows start from the sft row's model in the work folder
    assert shaped["start"] == str(tmp_path / "work" / "wikihow" / "sft_seed0")


def test_grpo_without_the_sft_model_says_which_row_to_run(tmp_path: Path) -> None:
    args = _args(tmp_path, envs=["wikihow"], rows=["sft_grpo_outcome"], quick=True, max_steps=3)
    with pytest.raises(SystemExit, match="run --rows sft --envs wikihow --seeds 0 first"):
        script.main(args)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"rows": ["oracle", "best"]}, "unknown row 'best'; --rows takes random, rule, oracle"),
        ({"envs": ["osworld"]}, "unknown env 'osworld'; --envs takes wikihow, androidworld"),
        ({"episodes": 0}, "--episodes must be at least 1, got 0"),
    ],
)
def test_bad_options_are_one_line_naming_what_is_allowed(tmp_path, option, message) -> None:
    with pytest.raises(SystemExit, match=message) as err:
        script.main(_args(tmp_path, **option))
    assert "\n" not in str(err.value)


def test_table_and_figure_come_from_the_json(tmp_path: Path) -> None:
    args = _args(tmp_path, envs=["wikihow"], rows=["oracle"], episodes=2)
    script.main(args)
    table = script.markdown(json.loads(args.out.read_text()))
    assert "| WikiHow | oracle | 1.000 [0.342, 1.000] | - | 2 |" in table
    assert "| WebShop (10k) | rule | not run yet |" in table
    args.figure = tmp_path / "baselines.png"
    script.main(args)
    from PIL import Image

    with Image.open(args.figure) as image:
        assert image.width <= 1600
