"""Each RL algorithm learns on a one-step env where one action string is right; a resumed run
makes exactly the update an uninterrupted one makes; a crashed run resumes; env failures are
excluded, never scored 0."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from tests.conftest import require

torch = require("torch", "llm")
# tiny models gain nothing from threads; on a busy machine they only contend
torch.set_num_threads(1)

from gui_gym.train import (  # noqa: E402
    arpo,
    gigpo,
    grpo,
    offline_grpo,
    ppo,
    reinforce_pp,
    semi_online,
)
from gui_gym.train.config import TrainConfig  # noqa: E402
from gui_gym.train.trainer import TIMING_METRICS, Trainer, load_metrics  # noqa: E402
from tests.rl_helpers import (  # noqa: E402
    TASK,
    make_env,
    one_step_prompt,
    policy_folder,
    right_action_logprob,
)


def build(name: str, env_factory: Any = make_env) -> tuple[Any, dict[str, Any]]:
    """The algorithm on the one-step env, sized for CI, and its module's shared defaults."""
    if name == "grpo":
        return grpo.GRPO(env_factory, [TASK], grpo.GRPOConfig(tasks_per_iteration=1)), (
            grpo.TRAIN_DEFAULTS
        )
    if name == "grpo_rloo_episode":
        config = grpo.GRPOConfig(tasks_per_iteration=1, level="episode", baseline="rloo")
        return grpo.GRPO(env_factory, [TASK], config), grpo.TRAIN_DEFAULTS
    if name == "arpo":
        return arpo.ARPO(env_factory, [TASK], arpo.ARPOConfig()), arpo.TRAIN_DEFAULTS
    if name == "gigpo":
        config = gigpo.GiGPOConfig(tasks_per_iteration=1)
        return gigpo.GiGPO(env_factory, [TASK], config), gigpo.TRAIN_DEFAULTS
    if name == "reinforce_pp":
        config = reinforce_pp.ReinforcePPConfig(tasks_per_iteration=8)
        return reinforce_pp.ReinforcePP(env_factory, [TASK], config), reinforce_pp.TRAIN_DEFAULTS
    if name == "ppo":
        config = ppo.PPOConfig(tasks_per_iteration=8, critic_learning_rate=1e-2)
        return ppo.PPO(env_factory, [TASK], config), ppo.TRAIN_DEFAULTS
    if name == "semi_online":
        config = semi_online.SemiOnlineConfig(trajectories_per_iteration=1, max_resamples=1)
        return semi_online.SemiOnline(env_factory, [0], config), semi_online.TRAIN_DEFAULTS
    config = offline_grpo.OfflineGRPOConfig(states_per_iteration=1)
    return (
        offline_grpo.OfflineGRPO(env_factory, config, states=[(0, 0)]),
        offline_grpo.TRAIN_DEFAULTS,
    )


def config_for(defaults: dict[str, Any], folder: Path, out: Path, **settings: Any) -> TrainConfig:
    base = dict(
        model=str(folder),
        out=str(out),
        iterations=8,
        learning_rate=2e-2,
        update_epochs=1,
        mini_batch_turns=8,
        micro_batch_turns=4,
        max_new_tokens=1,
        device="cpu",
        progress=False,
        save_every=100,
    )
    return TrainConfig.for_algorithm(defaults, **{**base, **settings})


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return policy_folder(tmp_path_factory.mktemp("policy") / "tiny")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "grpo",
        "grpo_rloo_episode",
        "gigpo",
        "arpo",
        "reinforce_pp",
        "ppo",
        "semi_online",
        "offline_grpo",
    ],
)
def test_algorithm_raises_the_right_actions_probability(
    name: str, folder: Path, tmp_path: Path
) -> None:
    algorithm, defaults = build(name)
    trainer = Trainer(config_for(defaults, folder, tmp_path), algorithm, prompt=one_step_prompt)
    before = math.exp(right_action_logprob(trainer))
    metrics = trainer.train()
    after = math.exp(right_action_logprob(trainer))
    assert before < 0.2
    assert after > max(0.5, 3 * before), (name, before, after)
    updated = [m for m in metrics if m["turns"]]
    assert updated and all(m["tokens"] == m["turns"] for m in updated)  # one token per turn
    assert all(math.isfinite(m["pg_loss"]) for m in updated)
    if name == "ppo":
        assert all(math.isfinite(m["value_loss"]) for m in updated)
    if defaults["kl_coef"] > 0 or name == "reinforce_pp":
        assert all(m["kl"] >= 0 for m in updated)  # k3 never negative
    # the final weights load as a plain Hugging Face folder
    assert any((tmp_path / "model").glob("*.safetensors"))


def test_grpo_step_advantages_are_normalised_over_the_group(folder: Path, tmp_path: Path) -> None:
    from gui_gym.train.reward_stack import admire_format_rewards

    algorithm, defaults = build("grpo")
    trainer = Trainer(config_for(defaults, folder, tmp_path), algorithm, prompt=one_step_prompt)
    groups = algorithm.collect(trainer, 0)
    assert [len(g) for g in groups] == [8]
    assert len({(t.seed, t.task_id) for t in groups[0]}) == 1  # one task, one seed
    turns = algorithm.advantages(trainer, groups, 0)
    advantages = [t.advantages[0] for t in turns]
    # R_total = outcome + eta R_format (ADMIRE Sec. 3.3; eta 0.5, -1 for an unparsable action)
    rewards = [t.steps[0].reward + 0.5 * admire_format_rewards(t)[0] for t in groups[0]]
    mean = sum(rewards) / 8
    std = (sum((r - mean) ** 2 for r in rewards) / 8) ** 0.5
    assert advantages == pytest.approx([(r - mean) / (std + 1e-6) for r in rewards], abs=1e-6)
    assert all(len(t.advantages) == len(t.completion_ids) for t in turns)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grpo", "ppo"])
def test_resume_makes_the_same_next_update(name: str, folder: Path, tmp_path: Path) -> None:
    def run(out: Path, iterations: int) -> Trainer:
        algorithm, defaults = build(name)
        config = config_for(defaults, folder, out, iterations=iterations, save_every=1)
        trainer = Trainer(config, algorithm, prompt=one_step_prompt)
        trainer.train()
        return trainer

    straight = run(tmp_path / "straight", 3)
    run(tmp_path / "resumed", 2)
    resumed = run(tmp_path / "resumed", 3)  # loads the iteration-2 checkpoint, runs one more
    assert resumed.iteration == 3
    for (_, a), (_, b) in zip(
        straight.policy.model.named_parameters(), resumed.policy.model.named_parameters()
    ):
        assert torch.equal(a, b)
    if name == "ppo":
        for a, b in zip(
            straight.algorithm.critic.parameters(), resumed.algorithm.critic.parameters()
        ):
            assert torch.equal(a, b)
    assert [m["iteration"] for m in load_metrics(tmp_path / "resumed")] == [0, 1, 2]
    assert (
        load_metrics(tmp_path / "resumed")[-1]["mean_return"]
        == (load_metrics(tmp_path / "straight")[-1]["mean_return"])
    )
    # every metric but the wall times is the uninterrupted run's
    straight_metrics, resumed_metrics = (
        [{k: v for k, v in m.items() if k not in TIMING_METRICS} for m in load_metrics(path)]
        for path in (tmp_path / "straight", tmp_path / "resumed")
    )
    assert resumed_metrics == straight_metrics


def test_each_iteration_says_where_its_time_went(folder: Path, tmp_path: Path) -> None:
    algorithm, defaults = build("grpo")
    trainer = Trainer(
        config_for(defaults, folder, tmp_path, iterations=2), algorithm, prompt=one_step_prompt
    )
    trainer.train()
    for metrics in load_metrics(tmp_path):
        rollout, update, total = (metrics[k] for k in TIMING_METRICS)
        assert rollout > 0 and update > 0  # a group was generated and an update made
        assert total == pytest.approx(rollout + update, abs=2e-3)  # the parts add up


def test_a_crashed_run_resumes_from_its_last_checkpoint(folder: Path, tmp_path: Path) -> None:
    algorithm, defaults = build("grpo")
    config = config_for(defaults, folder, tmp_path, iterations=3, save_every=1)

    def crash(metrics: dict[str, Any]) -> None:
        if metrics["iteration"] == 1:
            raise KeyboardInterrupt  # killed after iteration 1 was checkpointed

    with pytest.raises(KeyboardInterrupt):
        Trainer(config, algorithm, prompt=one_step_prompt).train(on_iteration=crash)
    algorithm, _ = build("grpo")
    again = Trainer(config, algorithm, prompt=one_step_prompt)
    assert again.iteration == 2
    again.train()
    assert [m["iteration"] for m in load_metrics(tmp_path)] == [0, 1, 2]


def test_env_failures_are_excluded_not_scored_zero(folder: Path, tmp_path: Path) -> None:
    made = {"count": 0}

    class Flaky(gym.Wrapper):
        """Every third step of the run kills its env."""

        def __init__(self) -> None:
            super().__init__(make_env())

        def step(self, action: str) -> Any:
            made["count"] += 1
            if made["count"] % 3 == 0:
                raise ConnectionError("emulator lost")
            return self.env.step(action)

    algorithm, defaults = build("grpo", env_factory=Flaky)
    trainer = Trainer(
        config_for(defaults, folder, tmp_path, iterations=1), algorithm, prompt=one_step_prompt
    )
    groups = algorithm.collect(trainer, 0)
    lost = [t for g in groups for t in g if t.infra_error]
    assert len(lost) == 2 and all("emulator lost" in t.infra_error for t in lost)
    turns = algorithm.advantages(trainer, groups, 0)
    assert len(turns) == 6  # the two lost episodes are left out, not given reward 0
    metrics = trainer.train()[0]  # steps 9..16 of the run: 9, 12 and 15 fail
    assert metrics["infra_errors"] == 3 and metrics["episodes"] == 5


@pytest.mark.parametrize(
    "name", ["grpo", "grpo_rloo_episode", "reinforce_pp", "ppo", "semi_online", "offline_grpo"]
)
def test_advantage_and_logprob_shapes(name: str, folder: Path, tmp_path: Path) -> None:
    algorithm, defaults = build(name)
    config = config_for(defaults, folder, tmp_path, max_new_tokens=3, kl_coef=0.01)
    trainer = Trainer(config, algorithm, prompt=one_step_prompt)
    groups = algorithm.collect(trainer, 0)
    turns = algorithm.advantages(trainer, groups, 0)
    stats = trainer.update(turns)
    for turn in turns:
        width = len(turn.completion_ids)
        assert 1 <= width <= 3
        assert len(turn.advantages) == width
        assert len(turn.old_logprobs) == width and len(turn.ref_logprobs) == width
        assert all(math.isfinite(a) for a in turn.advantages)
        if name == "ppo":
            assert turn.returns is not None
    if turns:
        assert stats["tokens"] == sum(len(t.completion_ids) for t in turns)
        assert stats["kl"] >= 0.0 and math.isfinite(stats["pg_loss"])
        # the sampler's log-probs and the scorer's agree on the ids it sampled
        assert stats["logprob_drift"] < 1e-4


def test_lora_run_uses_the_base_model_as_reference(folder: Path, tmp_path: Path) -> None:
    require("peft", "llm")
    algorithm, defaults = build("grpo")
    config = config_for(
        defaults,
        folder,
        tmp_path,
        iterations=2,
        lora=True,
        lora_r=4,
        kl_coef=0.1,
        learning_rate=5e-2,
    )
    trainer = Trainer(config, algorithm, prompt=one_step_prompt)
    assert trainer.policy.reference is None  # the adapter switched off is the reference
    first, second = trainer.train()
    # LoRA's B matrices start at zero: the policy starts as the reference, KL 0
    assert first["kl"] == pytest.approx(0.0, abs=1e-6)
    assert second["kl"] > 0.0


@pytest.mark.parametrize(("name", "betas"), [("reinforce_pp", (0.9, 0.95)), ("grpo", (0.9, 0.999))])
def test_the_optimizer_takes_each_papers_adam_betas(
    name: str, betas: tuple[float, float], folder: Path, tmp_path: Path
) -> None:
    # ProgRM App. D: Adam betas (0.9, 0.95) for its online RL (REINFORCE++)
    algorithm, defaults = build(name)
    trainer = Trainer(config_for(defaults, folder, tmp_path), algorithm, prompt=one_step_prompt)
    try:
        assert {tuple(g["betas"]) for g in trainer.optimizer.param_groups} == {betas}
    finally:
        trainer.close()


def test_each_algorithm_takes_its_papers_update_schedule() -> None:
    # UI-S1 Table 9: fixed_num_mini_batches 4, verl's one epoch; PPO, REINFORCE++ and ARPO one
    # epoch; GRPO keeps ADMIRE App. A.1.2's 2 epochs of 128-turn mini-batches
    def schedule(module: Any) -> tuple[int, int | None, int]:
        config = TrainConfig.for_algorithm(module.TRAIN_DEFAULTS)
        return config.update_epochs, config.mini_batches, config.mini_batch_turns

    assert schedule(semi_online) == (1, 4, 128)
    assert schedule(ppo)[0] == schedule(reinforce_pp)[0] == schedule(arpo)[0] == 1
    assert schedule(grpo) == (2, None, 128)
    assert schedule(offline_grpo)[0] == 1


def test_fixed_mini_batches_make_that_many_optimizer_steps(folder: Path, tmp_path: Path) -> None:
    from gui_gym.train.trainer import mini_batch_size

    config = TrainConfig(mini_batches=4)
    assert [mini_batch_size(n, config) for n in (1, 4, 10, 128)] == [1, 1, 3, 32]
    algorithm, defaults = build("semi_online")
    trainer = Trainer(
        config_for(defaults, folder, tmp_path, iterations=1), algorithm, prompt=one_step_prompt
    )
    try:
        trainer.train()
        turns = int(trainer.history[-1]["turns"])
        assert turns >= 4
        size = mini_batch_size(turns, trainer.config)
        steps = {int(s["step"]) for s in trainer.optimizer.state.values()}
        assert steps == {math.ceil(turns / size)}  # one epoch of (about) 4 mini-batches
        assert math.ceil(turns / size) <= 4
    finally:
        trainer.close()
