"""GUI-Shepherd's PRM as a vision-language model (issue 29 item 5): instruction + screenshot +
candidate action -> the two label tokens, trained with the PRM trainer, loaded by path,
scoring through PRMWrapper and ranking best-of-N candidates by its positive logit."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from tests.conftest import require

torch = require("torch", "llm")
torch.set_num_threads(1)

from gui_gym.models.prm import TransformersPRM, VisionPRM, verification_scores  # noqa: E402
from gui_gym.rewards.prm import LabelledStep, PRMQuery  # noqa: E402
from tests.tiny_llm import tiny_llava  # noqa: E402

LABELS = {"positive_token": " yes", "negative_token": " no"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vlm")
    tiny_llava(path)
    return path


def _shot(color: tuple[int, int, int], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    image = np.zeros((40, 40, 3), np.uint8) + np.array(color, np.uint8)
    return np.clip(image + rng.integers(0, 30, image.shape), 0, 255).astype(np.uint8)


def _steps(n: int) -> list[LabelledStep]:
    """The same instruction, screen and action each time: only the screenshot tells whether
    the action is right (red screens: right; blue: wrong)."""
    steps = []
    for i in range(n):
        right = i % 2 == 0
        query = PRMQuery(
            instruction="open the settings app",
            screen="home",
            action="CLICK(3)",
            screenshot=_shot((220, 30, 30) if right else (30, 30, 220), i),
        )
        steps.append(
            LabelledStep(
                query,
                int(right),
                task_id=f"t{i % 4}",
                source="oracle" if right else "random_failed",
            )
        )
    return steps


def test_a_vision_prm_learns_a_label_only_the_screenshot_shows(
    folder: Path, tmp_path: Path
) -> None:
    from gui_gym.train.prm import PRMTrainConfig, train_prm

    torch.manual_seed(0)
    prm = VisionPRM.load(folder, **LABELS)
    test = _steps(8)
    labels = np.array([s.label for s in test])

    def right_probability() -> float:
        scores = prm.score([s.query for s in test])
        return float(np.mean(np.where(labels == 1, scores, 1 - scores)))

    before = right_probability()
    train_prm(
        prm,
        _steps(16),
        config=PRMTrainConfig(epochs=6, batch_size=8, lr=5e-3, rationale_weight=0.0),
        out_dir=tmp_path / "run",
        progress=False,
    )
    after = right_probability()
    assert after > before + 0.2 and after > 0.75, (before, after)
    # the trained PRM is a folder TransformersPRM.load (and so RewardStack) opens as a VLM PRM
    again = TransformersPRM.load(tmp_path / "run" / "model")
    assert isinstance(again, VisionPRM)
    queries = [s.query for s in test]
    assert np.allclose(again.score(queries), prm.score(queries), atol=1e-5)
    # best-of-N ranks by the positive label's logit
    assert np.allclose(verification_scores(again, queries), again.label_logits(queries)[:, 1])


def test_prm_wrapper_scores_the_screenshot_the_action_was_chosen_on(folder: Path) -> None:
    from gui_gym.wrappers import PRMWrapper

    prm = VisionPRM.load(folder, **LABELS)
    env = PRMWrapper(gym.make("GuiGym/WikiHow-v0", screenshot=True), prm)
    observation, _ = env.reset(seed=0)
    shown = observation["screenshot"].copy()
    action = env.unwrapped.oracle_action()
    _, _, _, _, info = env.step(action)
    expected = prm.score(
        [
            PRMQuery(
                instruction=observation["instruction"],
                screen=observation["screen"],
                action=action.to_string(),
                action_description=info["action_description"],
                screenshot=shown,
            )
        ]
    )[0]
    assert info["prm"]["score"] == pytest.approx(float(expected), abs=1e-6)


def test_a_query_without_a_screenshot_is_a_clear_error(folder: Path) -> None:
    prm = VisionPRM.load(folder, **LABELS)
    with pytest.raises(ValueError, match="has no screenshot: a vision PRM judges"):
        prm.score([PRMQuery(instruction="x", screen="y", action="CLICK(0)")])
    with pytest.raises(ValueError, match="must be exactly one token"):
        VisionPRM.load(folder, positive_token=" yes please", negative_token=" no")


def test_env_collected_prm_steps_carry_the_screenshot_when_the_env_makes_them() -> None:
    from gui_gym.train.prm_data import collect_prm_steps

    steps = collect_prm_steps(
        "GuiGym/WikiHow-v0", max_tasks=1, random_rollouts=0, env_kwargs={"screenshot": True}
    )
    assert steps and all(s.query.screenshot is not None for s in steps)
    assert steps[0].query.screenshot.shape == (720, 360, 3)
    plain = collect_prm_steps("GuiGym/WikiHow-v0", max_tasks=1, random_rollouts=0)
    assert all(s.query.screenshot is None for s in plain)


def test_gui_gym_train_prm_trains_a_vision_prm_on_env_screenshots(
    folder: Path, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from gui_gym.cli import app
    from gui_gym.train.prm_data import read_labelled_steps

    runner = CliRunner()
    out = tmp_path / "prm"
    args = ["train-prm", "--out", str(out), "--model", str(folder), "--no-progress"]
    result = runner.invoke(
        app,
        [
            *args,
            "--max-tasks",
            "2",
            "--random-rollouts",
            "0",
            "--epochs",
            "1",
            "--batch-size",
            "16",
            "--positive-token",
            " yes",
            "--negative-token",
            " no",
        ],
    )
    assert result.exit_code == 0, result.output
    steps = read_labelled_steps(out / "data" / "train.jsonl")
    assert steps and all(s.query.screenshot is not None for s in steps)
    assert isinstance(TransformersPRM.load(out / "model"), VisionPRM)
    bad = runner.invoke(app, [*args[:-1], "--rationale"])
    assert bad.exit_code == 2
    assert "--rationale is not for a vision-language --model" in bad.output


def test_a_vision_prm_trains_on_a_recorded_datasets_screenshots(
    folder: Path, tmp_path: Path
) -> None:
    """GUI-Shepherd's second source (single-step states of recorded expert episodes) for a
    VLM PRM: every query carries the state's recorded screenshot; a dataset recorded without
    screenshots is a one-line refusal before anything trains."""
    from PIL import Image
    from typer.testing import CliRunner

    from gui_gym.cli import app
    from gui_gym.envs.replay import ExpertDataset
    from gui_gym.runs.record import record_dataset
    from gui_gym.train.prm_data import collect_replay_steps, read_labelled_steps

    shots, plain = tmp_path / "shots", tmp_path / "plain"
    for out, screenshots in ((shots, True), (plain, False)):
        record_dataset(
            "GuiGym/WikiHow-v0",
            "oracle",
            episodes=2,
            out=out,
            env_kwargs={"split": "train"},
            screenshots=screenshots,
            progress=False,
        )
    steps = collect_replay_steps(shots, proposals_per_state=1, screenshots=True)
    recorded = ExpertDataset.load(shots).trajectories
    first = recorded[0].steps[0].screenshot
    assert steps and all(s.query.screenshot is not None for s in steps)
    with Image.open(first) as image:  # the recorded file itself, not a drawn tree
        pixels = np.asarray(image.convert("RGB"))
    assert any(np.array_equal(s.query.screenshot, pixels) for s in steps)
    with pytest.raises(ValueError, match="has steps without a screenshot"):
        collect_replay_steps(plain, screenshots=True)

    runner = CliRunner()
    args = ["train-prm", "--model", str(folder), "--no-progress", "--epochs", "1"]
    args += ["--positive-token", " yes", "--negative-token", " no"]  # no --env-id: replay only
    result = runner.invoke(
        app, [*args, "--out", str(tmp_path / "a"), "--replay-dataset", str(shots)]
    )
    assert result.exit_code == 0, result.output
    trained = read_labelled_steps(tmp_path / "a" / "data" / "train.jsonl")
    assert {s.source for s in trained} and all(s.query.screenshot is not None for s in trained)
    refused = runner.invoke(
        app, [*args, "--out", str(tmp_path / "b"), "--replay-dataset", str(plain)]
    )
    assert refused.exit_code == 2 and "has steps without screenshots" in refused.output
    assert not (tmp_path / "b").exists()
