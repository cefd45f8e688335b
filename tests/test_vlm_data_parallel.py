"""Data-parallel RL with a VLM policy (issue 29, item 3) on two real processes (gloo): the
trajectories are all-gathered as JSON with content keys of screenshots held in each process's
own image store, so the processes also share the pixels; every process can then score every
step of the batch to the sampler's log-probs, and both train the same weights."""

from __future__ import annotations

import itertools
import json
import os
import socket
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.train import grpo  # noqa: E402
from gui_gym.train.config import TrainConfig  # noqa: E402
from gui_gym.train.losses import turns_from_trajectory  # noqa: E402
from gui_gym.train.trainer import Trainer  # noqa: E402
from tests.rl_helpers import TASK, make_env  # noqa: E402
from tests.test_vlm_rl import screenshot_prompt, vlm_folder  # noqa: E402

WORLD = 2
_EPISODES = itertools.count()  # per process (each forked worker counts its own)


class _RankScreens(gym.Wrapper):
    """The one-step env showing a screenshot of its own per episode and per process: no two
    processes' episodes share one."""

    def __init__(self, env: Any):
        super().__init__(env)
        self.count = 0

    def _screen(self) -> np.ndarray:
        seed = [int(os.environ.get("RANK", "0")), self.count]
        return np.random.default_rng(seed).integers(0, 256, (48, 40, 3), dtype=np.uint8)

    def reset(self, **kwargs: Any) -> Any:
        self.count = next(_EPISODES)
        observation, info = self.env.reset(**kwargs)
        return {**observation, "screenshot": self._screen()}, info

    def step(self, action: Any) -> Any:
        observation, *rest = self.env.step(action)
        return ({**observation, "screenshot": self._screen()}, *rest)


def make_rank_env() -> Any:
    return _RankScreens(make_env())


def _trainer(folder: Path, out: Path) -> Trainer:
    config = TrainConfig.for_algorithm(
        grpo.TRAIN_DEFAULTS,
        model=str(folder),
        out=str(out),
        iterations=1,
        learning_rate=2e-2,
        update_epochs=1,
        mini_batch_turns=8,
        micro_batch_turns=4,
        max_new_tokens=1,
        device="cpu",
        progress=False,
        save_every=100,
        screenshot=True,
    )
    algorithm = grpo.GRPO(make_rank_env, [TASK], grpo.GRPOConfig(tasks_per_iteration=1))
    return Trainer(config, algorithm, prompt=screenshot_prompt)


def _worker(rank: int, port: int, folder: str, root: str) -> None:
    from safetensors.torch import save_file

    torch.set_num_threads(1)
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(WORLD),
        LOCAL_RANK=str(rank),
    )
    torch.distributed.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        trainer = _trainer(Path(folder), Path(root) / "run")
        metrics = trainer.train()
        # a fresh batch from the trained policy, gathered from both processes
        [group] = trainer.algorithm.collect(trainer, 1)
        turns = [
            turn
            for index, trajectory in enumerate(group)
            for turn in turns_from_trajectory(trajectory, [0.0], episode=index)
        ]
        scored = trainer.score(trainer.policy.model, turns)
        error = max(
            float((s - torch.tensor(t.sampled_logprobs)).abs().max()) for s, t in zip(scored, turns)
        )
        keys = sorted({k for t in turns for k in t.vision["images"]})
        store = trainer.agent.llm.image_store
        result = {
            "metrics": metrics,
            "error": error,
            "batch_screens": len(keys),
            "held": sum(k in store for k in keys),
        }
        (Path(root) / f"result{rank}.json").write_text(json.dumps(result))
        weights = {n: p.detach().clone() for n, p in trainer.policy.model.named_parameters()}
        save_file(weights, str(Path(root) / f"weights{rank}.safetensors"))
    finally:
        torch.distributed.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(600)
def test_two_processes_share_screenshots_and_train_the_same_vlm(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from safetensors.torch import load_file

    root = tmp_path_factory.mktemp("vlm_dp")
    folder = vlm_folder(root / "policy")
    # forked (see tests/test_train_data_parallel.py): one thread per process, no OpenMP pool
    torch.multiprocessing.start_processes(
        _worker, args=(_free_port(), str(folder), str(root)), nprocs=WORLD, start_method="fork"
    )
    results = [json.loads((root / f"result{r}.json").read_text()) for r in range(WORLD)]
    for result in results:
        # 8 episodes, 4 per process, each with its own screenshot: every process holds all
        # 8 and scores every step (its own and the other's) to the sampler's log-probs
        assert result["batch_screens"] == 8
        assert result["held"] == 8
        assert result["error"] < 1e-5
        [metrics] = result["metrics"]
        assert metrics["episodes"] == 8 and metrics["turns"] == 8
    from gui_gym.train.trainer import TIMING_METRICS

    # every metric but the wall times (each process's own clock) is the same on both
    agreed = [
        [{k: v for k, v in m.items() if k not in TIMING_METRICS} for m in r["metrics"]]
        for r in results
    ]
    assert agreed[0] == agreed[1]
    first = load_file(str(root / "weights0.safetensors"))
    second = load_file(str(root / "weights1.safetensors"))
    assert all(torch.equal(first[n], second[n]) for n in first)
    from transformers import AutoModelForImageTextToText

    initial = dict(AutoModelForImageTextToText.from_pretrained(folder).named_parameters())
    assert sorted(initial) == sorted(first)
    assert any(not torch.equal(first[n], initial[n]) for n in first)  # it trained
