"""SFT's defaults for a real model (docs/real_model.md): LoRA trains at a LoRA rate (1e-3,
ten times a full fine-tune's 1e-4) and wraps every linear layer, as the RL trainers do; at the
old defaults (1e-4, peft's own targets) SmolLM2 learnt the tags but not the screen."""

from __future__ import annotations

import math
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


def _right_padded_loss(model, rows, pad):  # type: ignore[no-untyped-def]
    """The plain reference: right padding, logits at every position, prompt labels -100."""
    import torch

    width = max(len(p) + len(c) for p, c, _ in rows)
    ids = torch.full((len(rows), width), pad)
    labels = torch.full((len(rows), width), -100)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for r, (p, c, _) in enumerate(rows):
        ids[r, : len(p) + len(c)] = torch.tensor(p + c)
        labels[r, len(p) : len(p) + len(c)] = torch.tensor(c)
        mask[r, : len(p) + len(c)] = 1
    logits = model(input_ids=ids, attention_mask=mask).logits.float()
    return torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=-100
    )


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_the_completion_only_loss_equals_the_loss_over_every_position(arch: str) -> None:
    """Left padding + logits at the completion positions only (``logits_to_keep``) gives the
    loss and the gradients that right padding and logits everywhere give, and the RL scorer
    the same log-probabilities, for rows of different lengths: a learned-position model
    (GPT-2) and a RoPE one (Llama, as SmolLM2)."""
    require("transformers", "llm")
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    from gui_gym.train.losses import TurnSample, score_completions, takes_logits_to_keep
    from gui_gym.train.sft import _completion_loss

    torch.manual_seed(0)
    if arch == "gpt2":
        model = GPT2LMHeadModel(GPT2Config(vocab_size=97, n_embd=32, n_layer=2, n_head=2))
    else:
        config = LlamaConfig(
            vocab_size=97,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
        )
        model = LlamaForCausalLM(config)
    model.eval()  # no dropout: the two passes must see the same network
    assert takes_logits_to_keep(model)

    class Holder:
        device = torch.device("cpu")
        processor = None

    rows = [
        ([5, 6, 7, 8, 9, 10, 11], [12, 13], None),
        ([20, 21], [22, 23, 24, 25], None),
        ([30, 31, 32, 33], [34], None),
    ]
    results = []
    for compute in (
        lambda: _completion_loss(model, Holder(), rows, 0, {}),
        lambda: _right_padded_loss(model, rows, 0),
    ):
        model.zero_grad()
        loss = compute()
        loss.backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        results.append((float(loss), grads))
    (short, short_grads), (full, full_grads) = results
    assert short == pytest.approx(full, rel=1e-5) and math.isfinite(short)
    assert len(short_grads) == len(full_grads)
    for a, b in zip(short_grads, full_grads):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4)
    # the RL scorer reads the same positions: its log-probs sum to minus the summed loss
    with torch.no_grad():
        turns = [
            TurnSample(prompt_ids=p, completion_ids=c, advantages=[0.0] * len(c))
            for p, c, _ in rows
        ]
        logps = score_completions(model, turns, pad_id=0)
    assert [len(x) for x in logps] == [2, 4, 1]
    total = -sum(float(x.sum()) for x in logps) / 7
    assert total == pytest.approx(full, rel=1e-5)
