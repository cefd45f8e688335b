"""PPO's clipped value loss (verl's ``compute_value_loss``, cleanrl's ``clip_vloss``) with a
worked vector, and the rollout values the PPO trainer clips around."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.train import ppo  # noqa: E402
from gui_gym.train.config import TrainConfig  # noqa: E402
from gui_gym.train.trainer import Trainer  # noqa: E402
from tests.rl_helpers import TASK, make_env, one_step_prompt, policy_folder  # noqa: E402


def test_clipped_value_loss_worked_vector() -> None:
    values = torch.tensor([1.0, 0.2, -0.9, 0.3], requires_grad=True)
    old = torch.zeros(4)
    returns = torch.tensor([2.0, 0.0, 0.0, 1.0])
    loss = ppo.clipped_value_loss(values, old, returns, 0.5)
    # 1: V moved 1.0 toward R=2, past the band: max((1-2)^2, (0.5-2)^2) = 2.25 -> 1.125
    # 2: inside the band: 0.2^2 = 0.04 -> 0.02
    # 3: V moved away from R: max(0.81, (-0.5)^2) = 0.81 -> 0.405
    # 4: inside the band: 0.7^2 = 0.49 -> 0.245
    assert loss.tolist() == pytest.approx([1.125, 0.02, 0.405, 0.245])
    loss.sum().backward()
    # the clipped term is taken for 1 (no gradient: the critic may not move further);
    # the others pull V toward R with gradient V - R
    assert values.grad.tolist() == pytest.approx([0.0, 0.2, -0.9, -0.7])
    unclipped = ppo.clipped_value_loss(values.detach(), old, returns, None)
    assert unclipped.tolist() == pytest.approx([0.5, 0.02, 0.405, 0.245])


def test_value_clip_defaults_to_verls_and_rejects_bad_values() -> None:
    assert ppo.PPOConfig().value_clip == 0.5  # verl critic.cliprange_value
    assert ppo.PPOConfig(value_clip=None).value_clip is None
    with pytest.raises(ValueError, match="value_clip must be > 0, or None"):
        ppo.PPOConfig(value_clip=0.0)


@pytest.mark.parametrize("value_clip", [0.5, None])
def test_ppo_clips_around_the_rollout_values(value_clip: float | None, tmp_path: Path) -> None:
    folder = policy_folder(tmp_path / "policy")
    algorithm = ppo.PPO(
        make_env, [TASK], ppo.PPOConfig(tasks_per_iteration=4, value_clip=value_clip)
    )
    config = TrainConfig.for_algorithm(
        ppo.TRAIN_DEFAULTS,
        model=str(folder),
        out=str(tmp_path / "run"),
        max_new_tokens=1,
        mini_batch_turns=4,
        device="cpu",
        progress=False,
    )
    trainer = Trainer(config, algorithm, prompt=one_step_prompt)
    groups = algorithm.collect(trainer, 0)
    turns = algorithm.advantages(trainer, groups, 0)
    rollout_values = algorithm.values(turns).tolist()
    assert [t.old_value for t in turns] == pytest.approx(rollout_values, abs=1e-6)
    stats = trainer.update(turns)
    assert stats["value_loss"] >= 0.0
    assert 0.0 <= stats["value_clip_fraction"] <= 1.0
    if value_clip is None:
        assert stats["value_clip_fraction"] == 0.0
