"""The shared RL core (train/losses.py, policy.py, config.py): token-exact scoring, losses
with worked numbers, exact gradient accumulation, LoRA and the reward expression parser."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.conftest import require

torch = require("torch", "llm")
# tiny models gain nothing from threads; on a busy machine they only contend
torch.set_num_threads(1)

from gui_gym.train.config import TrainConfig  # noqa: E402
from gui_gym.train.losses import (  # noqa: E402
    TurnSample,
    aggregate_tokens,
    clipped_surrogate,
    kl_estimate,
    score_completions,
    turns_from_trajectory,
)
from gui_gym.train.policy import Policy  # noqa: E402
from gui_gym.train.reward_stack import parse_reward  # noqa: E402
from tests.rl_helpers import PROMPT, RIGHT, line_tokenizer, policy_folder  # noqa: E402
from tests.tiny_llm import tiny_gpt2  # noqa: E402


@pytest.fixture(scope="module")
def model_and_tokenizer():
    tokenizer = line_tokenizer()
    return tiny_gpt2(len(tokenizer), seed=3), tokenizer


def test_kl_estimators_worked_example() -> None:
    # r = log pi - log pi_ref = log 0.5 - log 0.25 = log 2
    logp, ref = torch.tensor([math.log(0.5)]), torch.tensor([math.log(0.25)])
    r = math.log(2)
    assert float(kl_estimate(logp, ref, "k1")) == pytest.approx(r)
    assert float(kl_estimate(logp, ref, "k2")) == pytest.approx(r**2 / 2)
    assert float(kl_estimate(logp, ref, "k3")) == pytest.approx(0.5 - 1 + r)
    assert float(kl_estimate(ref, ref, "k3")) == 0.0
    with pytest.raises(ValueError, match="k1, k2, k3"):
        kl_estimate(logp, ref, "k4")


def test_clipped_surrogate_worked_example() -> None:
    logp, old = torch.tensor([0.5, 0.5, -0.5]), torch.zeros(3)
    advantages = torch.tensor([1.0, -1.0, 1.0])
    loss, clipped = clipped_surrogate(logp, old, advantages, 0.2, 0.2)
    # ratio e^0.5 = 1.6487: A > 0 is clipped to 1.2; A < 0 keeps the ratio (pessimistic);
    # ratio e^-0.5 = 0.6065 with A > 0 keeps the ratio (below 0.8 the min takes it)
    assert loss.tolist() == pytest.approx([-1.2, math.exp(0.5), -math.exp(-0.5)], abs=1e-5)
    assert clipped.tolist() == [1.0, 0.0, 0.0]
    # DAPO clip-higher: the upper bound moves to 1.28
    loss_high, _ = clipped_surrogate(logp, old, advantages, 0.2, 0.28)
    assert float(loss_high[0]) == pytest.approx(-1.28)


def test_token_and_turn_mean_aggregation() -> None:
    per_token = [torch.tensor([1.0, 2.0, 3.0]), torch.tensor([5.0])]
    assert float(aggregate_tokens(per_token, "token_mean", total_tokens=4, total_turns=2)) == (
        pytest.approx(11 / 4)
    )
    # turn_mean: (mean(1,2,3) + mean(5)) / 2
    assert float(aggregate_tokens(per_token, "turn_mean", total_tokens=4, total_turns=2)) == (
        pytest.approx((2 + 5) / 2)
    )


def test_scoring_reads_the_given_ids_at_their_positions(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    prompt = tokenizer.encode(PROMPT, add_special_tokens=False)
    completion = [*tokenizer.encode(RIGHT, add_special_tokens=False), tokenizer.eos_token_id]
    turn = TurnSample(prompt, completion, [0.0, 0.0])
    with torch.no_grad():
        scored = score_completions(model, [turn], pad_id=0, temperature=0.7)[0]
        logits = model(torch.tensor([prompt + completion])).logits[0].float() / 0.7
    expected = [
        torch.log_softmax(logits[len(prompt) - 1 + k], -1)[token]
        for k, token in enumerate(completion)
    ]
    assert scored.tolist() == pytest.approx([float(e) for e in expected], abs=1e-5)


def test_scoring_does_not_depend_on_batch_padding(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    short = TurnSample([5], [6], [0.0])
    long = TurnSample([5, 9, 7, 8], [6, 4, 1], [0.0] * 3)
    with torch.no_grad():
        alone = score_completions(model, [short], pad_id=0)[0]
        batched = score_completions(model, [long, short], pad_id=0)
    assert batched[1].tolist() == pytest.approx(alone.tolist(), abs=1e-5)
    assert batched[0].shape == (3,)


def test_turn_sample_checks_shapes() -> None:
    with pytest.raises(ValueError, match="2 advantages for 1 completion tokens"):
        TurnSample([1], [2], [0.0, 1.0])
    with pytest.raises(ValueError, match="no completion tokens"):
        TurnSample([1], [], [])


def test_turns_from_a_trajectory_without_token_ids_is_a_clear_error() -> None:
    from gui_gym.core.trajectory import Step, Trajectory

    trajectory = Trajectory("GuiGym/WikiHow-v0", "t", "i", steps=[Step(0, "", "CLICK(1)")])
    with pytest.raises(ValueError, match="has no token ids"):
        turns_from_trajectory(trajectory, [1.0])


def test_micro_batches_accumulate_to_the_mini_batch_gradient(model_and_tokenizer) -> None:
    from gui_gym.train.losses import LossInputs, policy_loss

    model, _ = model_and_tokenizer
    turns = [
        TurnSample([5, 6], [7, 8, 1], [1.0, 1.0, 1.0]),
        TurnSample([5], [9], [-1.0]),
        TurnSample([6, 6, 6], [4, 1], [0.5, 0.5]),
    ]
    config = TrainConfig(loss_agg="token_mean", progress=False)

    def grads(chunks: list[list[int]]) -> list[torch.Tensor]:
        model.zero_grad()
        for chunk in chunks:
            batch = [turns[i] for i in chunk]
            logp = score_completions(model, batch, pad_id=0)
            inputs = LossInputs(
                batch,
                logp,
                [lp.detach() - 0.1 for lp in logp],
                None,
                [torch.tensor(t.advantages) for t in batch],
                total_tokens=6,
                total_turns=3,
                config=config,
            )
            policy_loss(inputs)[0].backward()
        return [p.grad.clone() for p in model.parameters() if p.grad is not None]

    whole, split = grads([[0, 1, 2]]), grads([[0], [1, 2]])
    for a, b in zip(whole, split):
        assert torch.allclose(a, b, atol=1e-6)


def test_lora_policy_trains_only_adapters_and_has_a_reference(tmp_path: Path) -> None:
    require("peft", "llm")
    folder = policy_folder(tmp_path / "policy")
    config = TrainConfig(model=str(folder), lora=True, lora_r=4, device="cpu", progress=False)
    policy = Policy.load(config, need_reference=True)
    names = [n for n, _ in policy.trainable_named_parameters()]
    assert names and all("lora_" in n for n in names)
    assert policy.reference_context() is not None
    policy.save_pretrained(tmp_path / "merged")
    assert any((tmp_path / "merged").glob("*.safetensors"))


def test_policy_load_refuses_folders_without_safetensors(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no \.safetensors"):
        Policy.load(TrainConfig(model=str(tmp_path / "m")), need_reference=False)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("clip_eps", 1.5, "clip_eps must be in"),
        ("kl_estimator", "k9", "kl_estimator must be one of"),
        ("loss_agg", "sum", "loss_agg must be one of"),
        ("micro_batch_turns", 0, "micro_batch_turns must be a positive int"),
    ],
)
def test_train_config_rejects_bad_values(name: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig(**{name: value})


def test_parse_reward_expressions() -> None:
    assert parse_reward("outcome") == {"outcome": 1.0}
    assert parse_reward("outcome+0.5*progress") == {"outcome": 1.0, "progress": 0.5}
    assert parse_reward("milestone") == {"milestone": 0.3, "outcome": 1.0}  # ADMIRE lambda0
    with pytest.raises(ValueError, match="unknown reward 'speed'"):
        parse_reward("outcome+speed")
    with pytest.raises(ValueError, match="named twice"):
        parse_reward("prm+prm")
    with pytest.raises(ValueError, match="takes no weight"):
        parse_reward("2*outcome")


def test_ppo_critic_from_a_prm_starts_at_the_prms_log_odds(tmp_path: Path) -> None:
    from gui_gym.models.prm import TransformersPRM
    from gui_gym.train.ppo import ValueModel

    prm = TransformersPRM.tiny(["click the search button", "type a name"], vocab_size=300)
    prm.save(tmp_path / "prm")
    critic = ValueModel.from_prm(tmp_path / "prm", "cpu")
    sequences = [prm._ids("click the search button"), prm._ids("type a name click")]
    logits = prm._label_logits(sequences)  # [negative, positive] at each sequence's end
    with torch.no_grad():
        values = critic(sequences, prm.pad_id)
    assert values.tolist() == pytest.approx(list(logits[:, 1] - logits[:, 0]), abs=1e-4)


@pytest.mark.parametrize(("population", "count"), [(116, 32), (7, 3), (5, 2), (10, 10)])
def test_tasks_are_drawn_without_replacement_within_an_epoch(population: int, count: int) -> None:
    from gui_gym.train.config import epoch_draw

    draws = [epoch_draw(3, i, population, count) for i in range(4 * population)]
    assert all(len(set(batch)) == count for batch in draws)  # distinct tasks per batch
    flat = [t for batch in draws for t in batch]
    for epoch in range(len(flat) // population):  # every task once per epoch
        assert sorted(flat[epoch * population : (epoch + 1) * population]) == list(
            range(population)
        )
    assert draws[5] == epoch_draw(3, 5, population, count)  # a resumed run draws the same
    assert draws[:4] != [epoch_draw(4, i, population, count) for i in range(4)]


def test_ppo_and_reinforce_pp_train_on_every_task_before_repeating_one() -> None:
    # with replacement 24% of PPO's iterations repeated a task over 116 tasks
    from types import SimpleNamespace

    from gui_gym.train.ppo import PPO
    from gui_gym.train.reinforce_pp import ReinforcePP

    tasks = [f"task-{i}" for i in range(6)]
    for cls, settings in ((PPO, {}), (ReinforcePP, {"episodes_per_task": 1})):
        requested: list[str] = []

        def run_episodes(make_env, requests, requested=requested):
            requested.extend(r["options"]["task"] for r in requests)
            return [SimpleNamespace(task_id=r["options"]["task"]) for r in requests]

        algo = SimpleNamespace(
            tasks=tasks, make_env=None, config=SimpleNamespace(tasks_per_iteration=2, **settings)
        )
        trainer = SimpleNamespace(config=SimpleNamespace(seed=0), run_episodes=run_episodes)
        for iteration in range(6):
            cls.collect(algo, trainer, iteration)
        assert sorted(requested[:6]) == sorted(tasks) == sorted(requested[6:]), cls.__name__


def test_progrm_reinforce_pp_uses_adam_betas_0_9_0_95(tmp_path: Path) -> None:
    # ProgRM App. D: Adam with betas (0.9, 0.95) for online RL too; others keep torch's
    from gui_gym.train import grpo, reinforce_pp

    progrm = TrainConfig.for_algorithm(reinforce_pp.TRAIN_DEFAULTS)
    assert (progrm.adam_beta1, progrm.adam_beta2) == (0.9, 0.95)
    other = TrainConfig.for_algorithm(grpo.TRAIN_DEFAULTS)
    assert (other.adam_beta1, other.adam_beta2) == (0.9, 0.999)
    with pytest.raises(ValueError, match="adam_beta2 must be in"):
        TrainConfig(adam_beta2=1.0)


def test_a_large_critic_gradient_does_not_shrink_the_actors_step() -> None:
    # verl clips the actor's and the critic's gradients apart; a joint clip_grad_norm_ let
    # an early, large critic gradient scale the actor's gradient down
    from gui_gym.train.trainer import clip_group_gradients

    actor, critic = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
    optimizer = torch.optim.AdamW(
        [
            {"params": actor.parameters()},
            {"params": critic.parameters(), "max_grad_norm": 1.0, "name": "critic"},
        ]
    )
    x = torch.ones(1, 3)
    (actor(x).sum() * 0.1 + critic(x).sum() * 1e6).backward()
    before = [p.grad.clone() for p in actor.parameters()]
    norms = clip_group_gradients(optimizer, default_max_norm=1.0)
    assert norms[0] == pytest.approx(0.2)  # the actor's norm: 0.1 * sqrt(3 + 1)
    assert norms[1] == pytest.approx(2e6)
    for p, g in zip(actor.parameters(), before):
        assert torch.equal(p.grad, g)  # under its own clip: untouched
    total = torch.sqrt(sum((p.grad**2).sum() for p in critic.parameters()))
    assert float(total) == pytest.approx(1.0, rel=1e-4)


def test_admire_decay_counts_epochs_over_the_task_set_from_one() -> None:
    # ADMIRE Algorithm 1 lines 3-4: for epoch E = 1, 2, ...: lambda = lambda0 * gamma**E;
    # an epoch is a pass over the tasks, not one batch
    from types import SimpleNamespace

    from gui_gym.train.config import epoch_of
    from gui_gym.train.runner import milestone_epoch

    assert [epoch_of(i, 116, 32) for i in (0, 3, 4, 7, 8)] == [1, 1, 2, 2, 3]
    grpo_like = SimpleNamespace(
        tasks=list(range(10)), config=SimpleNamespace(tasks_per_iteration=4)
    )
    assert [milestone_epoch(grpo_like, i) for i in range(6)] == [1, 1, 1, 2, 2, 3]
    assert milestone_epoch(SimpleNamespace(), 0) == 1


def test_scoring_groups_turns_of_similar_length_and_keeps_their_order(model_and_tokenizer) -> None:
    """Micro-batches hold turns of similar length (a batch pads to its longest turn), and
    the scores come back in the turns' own order."""
    from types import SimpleNamespace

    from gui_gym.train.trainer import Trainer, _micro_batches

    model, _ = model_and_tokenizer
    lengths = [9, 2, 7, 3, 8, 2]
    turns = [TurnSample([5 + k % 4 for k in range(n)], [4, 1], [0.0, 0.0]) for n in lengths]
    # sorted by length (stable): 2 (turn 1), 2 (5), 3 (3), 7 (2), 8 (4), 9 (0)
    assert list(_micro_batches(range(6), turns, 2)) == [[1, 5], [3, 2], [4, 0]]
    assert list(_micro_batches([0, 2, 3], turns, 8)) == [[3, 2, 0]]
    fake = SimpleNamespace(
        config=TrainConfig(micro_batch_turns=2, progress=False),
        policy=SimpleNamespace(model=model, pad_id=0, device="cpu"),
        vision=None,
    )
    scored = Trainer.score(fake, model, turns)  # type: ignore[arg-type]
    with torch.no_grad():
        alone = [score_completions(model, [t], pad_id=0)[0] for t in turns]
    assert len({round(float(a.sum()), 4) for a in alone}) > 3  # the order is observable
    for got, want in zip(scored, alone, strict=True):
        assert got.tolist() == pytest.approx(want.tolist(), abs=1e-5)
