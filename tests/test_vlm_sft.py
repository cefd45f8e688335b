"""VLM SFT (issue 29, item 2): ``gui-gym sft --screenshot`` trains a tiny LLaVA on a dataset
recorded with ``--screenshots``: completion-only loss, vision tower frozen unless
``--train-vision``, the SFT checkpoint format with exact resume, one-line errors with nothing
written for a text-only model, a dataset without screenshots or a bad image file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import gui_gym  # noqa: F401
from gui_gym.cli import app
from gui_gym.runs.record import record_dataset
from tests.conftest import require
from tests.tiny_llm import tiny_gpt2, tiny_llava, tiny_qwen2_vl, tiny_tokenizer

ENV = "GuiGym/WikiHow-v0"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    require("transformers", "llm")
    root = tmp_path_factory.mktemp("vlm_sft")
    for name, shots in (("shots", True), ("plain", False)):
        record_dataset(
            ENV,
            "oracle",
            episodes=2,
            out=root / name,
            env_kwargs={"split": "train", "max_steps": 3},
            screenshots=shots,
            progress=False,
        )
    tiny_llava(root / "vlm")
    tok = tiny_tokenizer()
    tiny_gpt2(len(tok)).save_pretrained(root / "text")
    tok.save_pretrained(root / "text")
    return {"root": root, "shots": root / "shots", "plain": root / "plain", "vlm": root / "vlm"}


def _weights(folder: Path) -> dict[str, Any]:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _config(**kw: Any) -> Any:
    from gui_gym.train.sft import SFTConfig

    base = {"epochs": 2, "lr": 5e-3, "batch_size": 2, "eval_fraction": 0.0, "history": 2}
    return SFTConfig(screenshot=True, images=1, **{**base, **kw})


def test_vlm_sft_lowers_the_completion_loss_and_keeps_the_vision_tower(
    data: dict[str, Path], tmp_path: Path
) -> None:
    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.sft import train_sft

    report = train_sft(data["shots"], data["vlm"], tmp_path / "out", _config(epochs=4))
    assert report.train_examples >= 4 and report.optimizer_steps >= 8
    first, last = report.losses[:2], report.losses[-2:]
    assert sum(last) < 0.7 * sum(first), report.losses
    before, after = _weights(data["vlm"]), _weights(tmp_path / "out")
    tower = [k for k in before if "vision_tower" in k]
    language = [k for k in before if "language_model" in k]
    assert tower and language
    assert all(torch.equal(before[k], after[k]) for k in tower)  # frozen by default
    assert any(not torch.equal(before[k], after[k]) for k in language)
    # the output is a vision-language model folder again
    llm = TransformersLLM(tmp_path / "out", device="cpu")
    assert llm.processor is not None


def test_vlm_sft_trains_a_qwen2_vl(data: dict[str, Path], tmp_path: Path) -> None:
    """The second architecture: a tiny Qwen2-VL (its ``visual`` tower frozen, M-RoPE with the
    token types the processor makes) SFT'd on the same screenshots; the output loads back with
    its image-only processor and samples token-exactly."""
    import numpy as np
    import torch

    from gui_gym.models.llm import TransformersLLM
    from gui_gym.train.losses import TurnSample, score_completions
    from gui_gym.train.sft import train_sft

    tiny_qwen2_vl(tmp_path / "qwen")
    report = train_sft(data["shots"], tmp_path / "qwen", tmp_path / "out", _config(epochs=4))
    first, last = report.losses[:2], report.losses[-2:]
    assert sum(last) < 0.7 * sum(first), report.losses
    before, after = _weights(tmp_path / "qwen"), _weights(tmp_path / "out")
    tower = [k for k in before if ".visual." in k or k.startswith("visual.")]
    language = [k for k in before if ".layers." in k and k not in tower]
    assert tower and language
    assert all(torch.equal(before[k], after[k]) for k in tower)
    assert any(not torch.equal(before[k], after[k]) for k in language)
    llm = TransformersLLM(tmp_path / "out", device="cpu")
    assert type(llm.processor).__name__ == "Qwen2VLProcessor"
    screen = np.random.default_rng(0).integers(0, 256, (360, 720, 3), dtype=np.uint8)
    prompt = [{"role": "user", "content": [{"type": "image", "image": screen}]}]
    torch.manual_seed(0)
    [[generation]] = llm.generate_with_tokens([prompt], max_new_tokens=4, temperature=1.0)
    completion = generation.completion_ids
    turn = TurnSample(
        generation.prompt_ids, completion, [0.0] * len(completion), vision=generation.vision
    )
    with torch.no_grad():
        [scored] = score_completions(
            llm.model, [turn], pad_id=0, vision=(llm.processor, llm.image_store)
        )
    np.testing.assert_allclose(scored.numpy(), generation.logprobs, atol=1e-5, rtol=0)


def test_train_vision_trains_the_tower_and_lora_stays_off_it(
    data: dict[str, Path], tmp_path: Path
) -> None:
    import torch

    from gui_gym.train.sft import train_sft

    train_sft(data["shots"], data["vlm"], tmp_path / "all", _config(epochs=1, train_vision=True))
    before, after = _weights(data["vlm"]), _weights(tmp_path / "all")
    assert any(not torch.equal(before[k], after[k]) for k in before if "vision_tower" in k)
    lora = _config(epochs=1, lora=True, lora_targets=["q_proj", "v_proj"])
    train_sft(data["shots"], data["vlm"], tmp_path / "lora", lora)
    merged = _weights(tmp_path / "lora")
    assert all(torch.equal(before[k], merged[k]) for k in before if "vision_tower" in k)
    assert any(not torch.equal(before[k], merged[k]) for k in before if "language_model" in k)


def test_vlm_sft_resumes_exactly(
    data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from gui_gym.train import sft

    config = _config(checkpoint_every=1, seed=3)
    sft.train_sft(data["shots"], data["vlm"], tmp_path / "full", config, progress=False)
    original = sft._save_checkpoint
    saves = {"n": 0}

    def crash_after_two(*args: Any, **kwargs: Any) -> None:
        original(*args, **kwargs)
        saves["n"] += 1
        if saves["n"] == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(sft, "_save_checkpoint", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        sft.train_sft(data["shots"], data["vlm"], tmp_path / "cut", config, progress=False)
    monkeypatch.setattr(sft, "_save_checkpoint", original)
    report = sft.train_sft(data["shots"], data["vlm"], tmp_path / "cut", config, progress=False)
    assert report.resumed_from_step == 2
    full, cut = _weights(tmp_path / "full"), _weights(tmp_path / "cut")
    assert full.keys() == cut.keys() and all(torch.equal(full[k], cut[k]) for k in full)


def _sft(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, ["sft", "--no-progress", *args])


def test_vlm_sft_cli_errors_are_one_line_and_write_nothing(
    data: dict[str, Path], tmp_path: Path
) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    shots, root = str(data["shots"]), data["root"]
    cases = [
        (
            [
                "--dataset",
                shots,
                "--model",
                str(root / "text"),
                "--out",
                str(out),
                "--screenshot",
            ],
            "text-only model",
        ),
        (
            [
                "--dataset",
                str(data["plain"]),
                "--model",
                str(data["vlm"]),
                "--out",
                str(out),
                "--screenshot",
            ],
            "has no screenshot",
        ),
        (
            ["--dataset", shots, "--model", str(data["vlm"]), "--out", str(out), "--images", "2"],
            "needs --screenshot",
        ),
    ]
    broken = tmp_path / "broken"
    shutil.copytree(data["shots"], broken)
    first = json.loads((broken / "trajectories.jsonl").read_text().splitlines()[0])
    (broken / first["steps"][1]["screenshot"]).write_bytes(b"not a png")
    cases.append(
        (
            [
                "--dataset",
                str(broken),
                "--model",
                str(data["vlm"]),
                "--out",
                str(out),
                "--screenshot",
            ],
            "not a readable image",
        )
    )
    for args, message in cases:
        result = _sft(runner, *args)
        assert result.exit_code != 0, result.output
        lines = [line for line in result.output.strip().splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], result.output
        assert not out.exists()  # nothing written


def test_vlm_sft_cli_trains(data: dict[str, Path], tmp_path: Path) -> None:
    result = _sft(
        CliRunner(),
        *["--dataset", str(data["shots"]), "--model", str(data["vlm"])],
        *["--out", str(tmp_path / "o"), "--screenshot", "--images", "1", "--epochs", "1"],
    )
    assert result.exit_code == 0, result.output
    from gui_gym.train.sft import is_vision_model_folder

    assert is_vision_model_folder(tmp_path / "o")  # the processor is saved with the model
    state = json.loads((tmp_path / "o" / "checkpoint" / "trainer_state.json").read_text())
    assert state["algorithm"] == "sft" and state["config"]["screenshot"] is True


def test_train_cli_checks_screenshot_flags_before_the_model_loads(
    data: dict[str, Path], tmp_path: Path
) -> None:
    runner = CliRunner()
    out = tmp_path / "run"
    base = ["train", "--no-progress", "--algo", "grpo", "--env", ENV, "--out", str(out)]
    for extra, message in (
        (["--model", str(data["root"] / "text"), "--screenshot"], "text-only model"),
        (["--model", str(data["vlm"]), "--images", "2"], "--images needs --screenshot"),
        (["--model", str(data["vlm"]), "--screenshot", "--images", "-1"], "--images must be"),
    ):
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code != 0, result.output
        lines = [line for line in result.output.strip().splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], result.output
        assert not out.exists()
