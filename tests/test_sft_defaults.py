"""SFT's defaults for a real model (docs/real_model.md): LoRA trains at a LoRA rate (1e-3,
ten times a full fine-tune's 1e-4) and wraps every linear layer, as the RL trainers do; at the
old defaults (1e-4, peft's own targets) SmolLM2 learnt the tags but not the screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui_gym.runs.record import record_dataset
from tests.conftest import require


def _tiny(tmp_path: Path) -> tuple[Path, Path]:
    """Two recorded WikiHow train episodes and a tiny GPT-2 fitted on their text."""
    from gui_gym.envs.replay.dataset import ExpertDataset
    from gui_gym.train.runner import build_tiny_policy

    data = tmp_path / "data"
    record_dataset("GuiGym/WikiHow-v0", episodes=2, out=data, progress=False)
    texts = []
    for t in ExpertDataset.load(data).trajectories:
        texts += [t.instruction] + [s.screen for s in t.steps]
    model = build_tiny_policy(tmp_path / "tiny", texts, vocab_size=300, n_embd=32)
    return data, model


def test_default_learning_rate_depends_on_lora() -> None:
    from gui_gym.train.sft import SFTConfig, default_lr

    config = SFTConfig()
    assert config.lr is None and config.lora_targets == "all-linear"
    assert default_lr(lora=True) == 1e-3 and default_lr(lora=False) == 1e-4
    config.check()  # None is a valid lr
    with pytest.raises(ValueError, match="lr must be a positive number"):
        SFTConfig(lr=0.0).check()


@pytest.mark.parametrize("lora", [True, False])
def test_sft_uses_the_default_rate_and_lora_wraps_every_linear_layer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lora: bool
) -> None:
    require("transformers", "llm")
    import torch

    from gui_gym.train import sft
    from gui_gym.train.checkpoint import read_checkpoint

    torch.set_num_threads(1)
    data, model = _tiny(tmp_path)
    rates = []
    real_adamw = torch.optim.AdamW

    def spy(params, lr, **kwargs):  # type: ignore[no-untyped-def]
        rates.append(lr)
        return real_adamw(params, lr=lr, **kwargs)

    monkeypatch.setattr(torch.optim, "AdamW", spy)
    config = sft.SFTConfig(epochs=1, lora=lora, eval_fraction=0.0, batch_size=8)
    sft.train_sft(data, model, tmp_path / "out", config, device="cpu", progress=False)
    assert rates == [1e-3 if lora else 1e-4]
    if lora:
        _, weights, _ = read_checkpoint(tmp_path / "out" / "checkpoint")
        wrapped = {n.split(".lora_")[0].rsplit(".", 1)[-1] for n in weights if ".lora_A" in n}
        # peft's own choice for GPT-2 is c_attn alone; every linear layer trains now
        assert wrapped == {"c_attn", "c_proj", "c_fc"}
