"""ARPO (GUI-Shepherd's trajectory-level GRPO baseline with experience replay, App. B.3):
the replay buffer and the advantages with hand-computed numbers, and its checkpoint state."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from gui_gym.core.trajectory import Step, Trajectory
from tests.conftest import require

require("torch", "llm")

from gui_gym.train.arpo import (  # noqa: E402
    ARPO,
    ARPOConfig,
    remember_successes,
    replay_into_group,
)

TRAINER = SimpleNamespace(config=SimpleNamespace(seed=0))  # advantages read only the seed


def episode(task: str, success: bool, tag: int = 0, steps: int = 1) -> Trajectory:
    """A finished episode whose steps carry token ids; its outcome on the last step."""
    reward = 1.0 if success else 0.0
    return Trajectory(
        env_id="GuiGym/WikiHow-v0",
        task_id=task,
        instruction=f"do {task}",
        seed=tag,
        steps=[
            Step(
                index=i,
                screen="<button id=1>Next</button>",
                action="CLICK(1)",
                reward=reward if i == steps - 1 else 0.0,
                task_reward=reward if i == steps - 1 else 0.0,
                prompt_ids=[5, 6, tag],
                completion_ids=[7 + i, 8],
            )
            for i in range(steps)
        ],
        success=success,
        task_reward=reward,
    )


def test_successes_are_kept_per_task_newest_first_out_last() -> None:
    buffer: dict[str, list[Trajectory]] = {}
    group = [episode("a", True, 1), episode("a", False, 2), episode("a", True, 3)]
    assert remember_successes(buffer, group, capacity=2) == 2
    assert remember_successes(buffer, [episode("a", True, 4)], capacity=2) == 1
    assert [t.seed for t in buffer["a"]] == [3, 4]  # the oldest success went out
    remember_successes(buffer, [episode("b", False)], capacity=2)
    assert "b" not in buffer


def test_a_group_without_success_takes_one_from_the_buffer() -> None:
    rng = np.random.default_rng(0)
    buffer = {"a": [episode("a", True, 9)]}
    failed = [episode("a", False, i) for i in range(4)]
    mixed, replayed = replay_into_group(failed, buffer, rng)
    assert replayed and mixed[:3] == failed[:3] and mixed[3] is buffer["a"][0]
    # a group with a success of its own, or a task with nothing stored, stays as it is
    lucky = [*failed[:3], episode("a", True, 5)]
    assert replay_into_group(lucky, buffer, rng) == (lucky, False)
    other = [episode("b", False, i) for i in range(4)]
    assert replay_into_group(other, buffer, rng) == (other, False)


def test_advantages_of_a_replayed_group_are_grpo_over_episodes() -> None:
    arpo = ARPO(lambda: None, ["a"], ARPOConfig(group_size=4))
    arpo.buffer["a"] = [episode("a", True, 9, steps=2)]
    groups = [[episode("a", False, i) for i in range(4)]]
    turns = arpo.advantages(TRAINER, groups, iteration=0)
    # returns (0, 0, 0, 1): mean 1/4, std sqrt(3)/4; each failure (0 - 1/4) / (sqrt(3)/4)
    failure, success = -1 / 3**0.5, 3 / 3**0.5
    assert [t.advantages for t in turns[:3]] == [[pytest.approx(failure, rel=1e-5)] * 2] * 3
    # the replayed success: both of its steps, every token, the same episode advantage
    assert [t.step for t in turns[3:]] == [0, 1] and turns[3].prompt_ids == [5, 6, 9]
    assert all(a == pytest.approx(success, rel=1e-5) for t in turns[3:] for a in t.advantages)
    assert all(t.old_logprobs is None for t in turns)  # pi_old is rescored before the update
    assert arpo.metrics() == {"replayed_groups": 1, "replay_buffer_episodes": 1}


def test_without_anything_to_replay_an_all_failed_group_teaches_nothing() -> None:
    arpo = ARPO(lambda: None, ["a"], ARPOConfig(group_size=2))
    turns = arpo.advantages(TRAINER, [[episode("a", False, 0), episode("a", False, 1)]], 0)
    assert [t.advantages for t in turns] == [[0.0, 0.0], [0.0, 0.0]]
    # a group with a success: plain GRPO, and the success goes into the buffer
    turns = arpo.advantages(TRAINER, [[episode("a", True, 2), episode("a", False, 3)]], 1)
    assert turns[0].advantages[0] == pytest.approx(1.0, rel=1e-5)
    assert turns[1].advantages[0] == pytest.approx(-1.0, rel=1e-5)
    assert [t.seed for t in arpo.buffer["a"]] == [2] and arpo.replayed == 0


def test_the_buffer_survives_a_checkpoint_as_json() -> None:
    arpo = ARPO(lambda: None, ["a"])
    arpo.buffer["a"] = [episode("a", True, 9, steps=2)]
    arpo.replayed = 3
    state = json.loads(json.dumps(arpo.state_dict()))
    again = ARPO(lambda: None, ["a"])
    again.load_state_dict(state)
    assert again.replayed == 3
    assert again.buffer["a"][0].steps[1].completion_ids == [8, 8]
    assert again.buffer["a"][0].to_dict() == arpo.buffer["a"][0].to_dict()
    assert "replay_buffer" not in arpo.metrics()  # metrics.jsonl gets the counters only


def test_arpo_config_follows_gui_shepherd_and_checks_its_values() -> None:
    config = ARPOConfig()
    assert (config.group_size, config.tasks_per_iteration, config.level) == (8, 1, "episode")
    with pytest.raises(ValueError, match="trajectory-level"):
        ARPOConfig(level="step")
    with pytest.raises(ValueError, match="replay_capacity must be a positive int"):
        ARPOConfig(replay_capacity=0)


def test_gui_gym_train_builds_arpo(tmp_path) -> None:
    from gui_gym.train.runner import ALGORITHM_NAMES, make_trainer
    from tests.rl_helpers import policy_folder

    assert "arpo" in ALGORITHM_NAMES
    trainer = make_trainer(
        "arpo",
        "GuiGym/WikiHow-v0",
        model=policy_folder(tmp_path / "policy"),
        reward="outcome+format",  # GUI-Shepherd's ORM reward (App. B.2)
        settings={"out": str(tmp_path / "run"), "device": "cpu", "replay_capacity": 2},
    )
    assert isinstance(trainer.algorithm, ARPO) and trainer.algorithm.config.replay_capacity == 2
    assert (trainer.algorithm.config.group_size, trainer.algorithm.config.tasks_per_iteration) == (
        8,
        1,
    )
    assert trainer.config.kl_coef == 0.0 and trainer.config.loss_agg == "token_mean"
    trainer.close()
