"""Issue 33, item 6: a hung env step is an infrastructure failure. Past ``step_timeout`` the
rollout engine kills and restarts the env's worker (``workers="process"``) or interrupts the
call and rebuilds the env (inline), marks the episode ``infra_error``, and goes on; before,
a step that slept hung the run for ever (7 of 8 episodes written, then nothing)."""

from __future__ import annotations

import functools
import time
from typing import Any

import gymnasium as gym
import pytest
from typer.testing import CliRunner

import gui_gym  # noqa: F401  (registers the ids)
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine, as_batch_agent

HANG_SEED = 1


class _HangOnSeed(gym.Wrapper):
    """Sleeps (far past any timeout) in the first step of the episode reset with ``seed``."""

    def __init__(self, env: gym.Env, seed: int):
        super().__init__(env)
        self.hang_seed = seed
        self.hang = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.hang = seed == self.hang_seed
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any):
        if self.hang:
            time.sleep(3600)
        return self.env.step(action)


def _hanging_env(seed: int) -> gym.Env:
    return _HangOnSeed(gym.make("GuiGym/WikiHow-v0", split="test"), seed)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("workers", ["process", "inline"])
def test_a_hung_step_is_an_infra_error_and_the_run_goes_on(workers: str) -> None:
    make = functools.partial(_hanging_env, HANG_SEED)
    with RolloutEngine(
        make, as_batch_agent("oracle"), num_envs=2, workers=workers, step_timeout=2.0
    ) as engine:
        trajectories = engine.run([EpisodeSpec(None, seed) for seed in range(4)])
        stats = engine.stats
    lost = [t for t in trajectories if t.infra_error]
    assert [t.seed for t in lost] == [HANG_SEED]
    assert "no answer within step_timeout=2 s (hung)" in lost[0].infra_error
    ran = [t for t in trajectories if not t.infra_error]
    assert len(ran) == 3 and all(t.success for t in ran)  # the restarted env works
    assert stats.infra_errors == 1


def test_step_timeout_is_checked() -> None:
    with pytest.raises(ValueError, match="step_timeout must be > 0"):
        RolloutEngine("GuiGym/WikiHow-v0", as_batch_agent("oracle"), step_timeout=0)


def test_eval_step_timeout_option_refuses_a_negative_number_in_one_line() -> None:
    from gui_gym.cli import app

    result = CliRunner().invoke(
        app, ["eval", "GuiGym/WikiHow-v0", "--step-timeout", "-1", "--no-progress"]
    )
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--step-timeout must be a number of seconds >= 0" in lines[0]
