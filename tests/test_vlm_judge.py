"""ProRe's LLM judge and evaluator and ADMIRE's milestone generator on screenshots (issue 29
item 5): with an image-text backend the screenshots reach the model (image tokens in the ids,
pixel values beside them) in its own chat template, or the request body as ``image_url``
parts; a text-only backend handed screenshots is a one-line error, never a silent drop; and a
verdict can rest on what only the screenshot shows."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.core.trajectory import Step, Trajectory
from gui_gym.models.judge import (
    LLMClaimExtractor,
    LLMEvaluator,
    LLMJudge,
    LLMRawJudge,
    LLMReasoner,
    LLMTrajectoryJudge,
    PolicyTraceRecorder,
    ProbeSession,
    Trace,
    llm_components,
)
from gui_gym.models.llm import ScriptedLLM, prompt_images, prompt_text
from gui_gym.models.llm.chat_messages import MAX_IMAGE_PIXELS, bounded_image, openai_messages
from gui_gym.models.milestones import LLMMilestoneGenerator, trajectory_screenshots
from tests.conftest import require

RED = np.zeros((48, 32, 3), np.uint8) + np.array([230, 20, 20], np.uint8)
BLUE = np.zeros((48, 32, 3), np.uint8) + np.array([20, 20, 230], np.uint8)


class PixelBackend:
    """A stub image-text backend: answers every prompt from its last image (``Status:
    success`` on a red screen, ``failure`` otherwise) and records what it was shown."""

    reads_images = True

    def __init__(self, reply: Any = None) -> None:
        self.prompts: list[Any] = []
        self.reply = reply

    def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
        out = []
        for prompt in prompts:
            self.prompts.append(prompt)
            if self.reply is not None:
                out.append([self.reply(prompt)] * n)
                continue
            images = prompt_images(prompt)
            red = bool(images) and images[-1][..., 0].mean() > 2 * images[-1][..., 2].mean()
            out.append([f"Analysis: by the screen.\nStatus: {'success' if red else 'failure'}"] * n)
        return out


def _played_trace(steps: int = 2) -> tuple[Trace, dict[str, Any]]:
    """A WikiHow episode's policy trace with screenshots (oracle actions), and the last
    observation."""
    env = gym.make("GuiGym/WikiHow-v0", screenshot=True)
    obs, _ = env.reset(seed=0)
    recorder = PolicyTraceRecorder()
    recorder.start(env.unwrapped, obs["instruction"], obs["screenshot"])
    for _ in range(steps):
        obs, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        recorder.record(env.unwrapped, info, terminated, obs["screenshot"])
        if terminated or truncated:
            break
    env.close()
    assert recorder.trace is not None
    return recorder.trace, obs


# ------------------------------------------------------------------- traces and the rule


def test_traces_keep_one_screenshot_per_screen_from_the_env() -> None:
    trace, obs = _played_trace()
    assert trace.has_screenshots and len(trace.screenshots) == len(trace.screens)
    assert np.array_equal(trace.screenshots[-1], obs["screenshot"])
    # a probe on a fork reads the fork's screenshots
    env = gym.make("GuiGym/WikiHow-v0", screenshot=True)
    env.reset(seed=0)
    session = ProbeSession(env.unwrapped.fork(), "look", max_steps=2)
    session.step("SCROLL(down)")
    assert session.trace.has_screenshots and len(session.trace.screenshots) == 2
    assert session.trace.screenshots[0].shape == (720, 360, 3)
    # an env without screenshots gives traces without them
    plain = gym.make("GuiGym/WikiHow-v0")
    plain.reset(seed=0)
    assert not ProbeSession(plain.unwrapped.fork(), "look", 1).trace.has_screenshots
    assert "screenshots" not in trace.to_dict()
    assert not ProbeSession(env.unwrapped.fork(), "look", 1, screenshots=False).trace.screenshots
    # the scripted components read UI trees: a wrapper of only those keeps no screenshots
    from gui_gym.wrappers import ProbingJudgeWrapper

    wrapped = ProbingJudgeWrapper(gym.make("GuiGym/WikiHow-v0", screenshot=True))
    wrapped.reset(seed=0)
    assert not wrapped.pipeline.reads_screenshots and not wrapped._recorder.trace.screenshots


def test_text_only_backend_with_screenshots_is_a_one_line_error() -> None:
    from gui_gym.wrappers import ProbingJudgeWrapper

    text_only = ScriptedLLM(lambda _: "Status: success")
    with pytest.raises(ValueError, match=r"LLMJudge\(screenshots=True\) needs an image-text") as e:
        LLMJudge(text_only, screenshots=True)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="needs an image-text"):
        LLMMilestoneGenerator(text_only, screenshots=True)
    # on automatic, the wrapper refuses a text-only component on an env with screenshots
    env = gym.make("GuiGym/WikiHow-v0", screenshot=True)
    with pytest.raises(ValueError, match="makes screenshots but LLMJudge's ScriptedLLM") as e:
        ProbingJudgeWrapper(env, judge=LLMJudge(text_only))
    assert "\n" not in str(e.value) and "screenshots=False" in str(e.value)
    with pytest.raises(ValueError, match="LLMEvaluator's ScriptedLLM reads text only"):
        ProbingJudgeWrapper(env, evaluator=LLMEvaluator(text_only))
    # handed a trace with screenshots directly, it raises too (never a silent drop)
    trace, _ = _played_trace(1)
    with pytest.raises(ValueError, match="the trace has screenshots but LLMJudge's"):
        LLMJudge(text_only).judge("t", [], [], trace)
    # the explicit opt-out judges from the text, and the reasoner never takes screenshots
    judge = LLMJudge(text_only, screenshots=False)
    ProbingJudgeWrapper(env, judge=judge, reasoner=LLMReasoner(text_only))
    assert judge.judge("t", [], [], trace).verdict == "success"
    assert "<image>" not in text_only.calls[-1]
    # an image-text judge that asks for screenshots on an env without them
    with pytest.raises(ValueError, match="the env makes no screenshots"):
        ProbingJudgeWrapper(
            gym.make("GuiGym/WikiHow-v0"), judge=LLMJudge(PixelBackend(), screenshots=True)
        )


def test_a_verdict_can_depend_on_the_screenshot_alone() -> None:
    trace, _ = _played_trace()
    judge = LLMJudge(PixelBackend())
    verdicts = {}
    for name, colour in (("red", RED), ("blue", BLUE)):
        trace.screenshots[-1] = colour  # same screens, same claims: only the pixels differ
        verdicts[name] = judge.judge(trace.goal, [], [], trace).verdict
    assert verdicts == {"red": "success", "blue": "failure"}
    # the trajectory-only baseline reads the final screenshot too
    baseline = LLMTrajectoryJudge(PixelBackend(), "digirl", 1)
    trace.screenshots[-1] = RED
    assert baseline.judge_episode(None, trace).verdict == "success"
    trace.screenshots[-1] = BLUE
    assert baseline.judge_episode(None, trace).verdict == "failure"


def test_the_wrapper_judges_on_the_final_observation_screenshot() -> None:
    from gui_gym.models.judge import ProReJudge
    from gui_gym.wrappers import ProbingJudgeWrapper

    backend = PixelBackend()
    env = ProbingJudgeWrapper(
        gym.make("GuiGym/WikiHow-v0", screenshot=True), judge=LLMJudge(backend), n_probes=0
    )
    assert isinstance(env.pipeline, ProReJudge)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        done = terminated or truncated
    [prompt] = backend.prompts
    [shown] = prompt_images(prompt)
    assert np.array_equal(shown, obs["screenshot"])
    assert "Final screen the policy left" in prompt_text(prompt)
    assert info["judge"]["verdict"] in ("success", "failure")


def test_evaluator_sees_the_current_probe_screenshot_and_extractor_the_kept_screens() -> None:
    env = gym.make("GuiGym/WikiHow-v0", screenshot=True)
    env.reset(seed=0)
    session = ProbeSession(env.unwrapped.fork(), "find the answer", max_steps=2)
    backend = PixelBackend(reply=lambda _: "<action>SCROLL(down)</action>")
    LLMEvaluator(backend).probe("find the answer", session)
    assert len(backend.prompts) == 2
    for prompt, shot in zip(backend.prompts, session.trace.screenshots):
        [image] = prompt_images(prompt)
        assert np.array_equal(image, shot)
    # the claim extractor shows the screens it keeps, the last max_images of them, in order
    trace, _ = _played_trace(3)
    claims = '{"policy_claims": [{"steps": [0], "reasoning": "r", "claim": "c"}]}'
    backend = PixelBackend(reply=lambda _: claims)
    LLMClaimExtractor(backend, max_images=2, condense=False).extract(trace.goal, trace)
    [prompt] = backend.prompts
    shown = prompt_images(prompt)
    assert len(shown) == 2
    assert np.array_equal(shown[0], trace.screenshots[-2])
    assert np.array_equal(shown[1], trace.screenshots[-1])
    text = prompt_text(prompt)
    last = len(trace.screens) - 1
    assert text.index(f"Screen {last - 1}:") < text.index(f"Screen {last}:")
    # the raw judge shows the policy's and each probe's last screenshots
    backend = PixelBackend()
    LLMRawJudge(backend, max_images=1).judge_raw(trace.goal, trace, [session.trace])
    assert len(prompt_images(backend.prompts[0])) == 2
    # a retry keeps the images and appends the complaint to the text
    replies = iter(["garbage", "<action>DONE()</action>"])
    backend = PixelBackend(reply=lambda _: next(replies))
    fresh = ProbeSession(env.unwrapped.fork(), "look", max_steps=1)
    LLMEvaluator(backend, retries=1).probe("look", fresh)
    assert len(prompt_images(backend.prompts[1])) == 1
    assert "could not be used" in prompt_text(backend.prompts[1])


def test_llm_components_pass_screenshots_to_the_four_components_that_look() -> None:
    components = llm_components(PixelBackend(), screenshots=True)
    assert components["reasoner"].screenshots is False
    for name in ("evaluator", "claim_extractor", "claim_filter", "judge"):
        assert components[name].screenshots is True


# ------------------------------------------------------------------ milestone generator


def _trajectory_with_screens(shots: list[Any]) -> Trajectory:
    steps = [
        Step(index=i, screen=f"screen {i}", action=f"CLICK({i})", action_description=f"tap {i}")
        for i in range(len(shots))
    ]
    for step, shot in zip(steps, shots):
        step.screenshot = shot
    return Trajectory(env_id="e", task_id="t", instruction="do it", steps=steps, success=True)


def test_milestone_generator_shows_the_trajectory_screenshots_with_its_actions(
    tmp_path: Path,
) -> None:
    from PIL import Image

    # a recorded dataset: relative paths read from image_root
    for i, colour in enumerate((RED, BLUE, RED)):
        Image.fromarray(colour).save(tmp_path / f"{i}.png")
    trajectory = _trajectory_with_screens([f"{i}.png" for i in range(3)])
    backend = PixelBackend(reply=lambda _: '["Open <App>", "Tap <Target>"]')
    generator = LLMMilestoneGenerator(backend, image_root=tmp_path, max_images=2)
    assert generator.initialize(trajectory) == ["Open <App>", "Tap <Target>"]
    [prompt] = backend.prompts
    shown = prompt_images(prompt)
    assert len(shown) == 2  # evenly spread, first and last kept
    assert np.array_equal(shown[0], RED) and np.array_equal(shown[1], RED)
    text = prompt_text(prompt)
    assert "Screen before action 1:" in text and "Screen before action 3:" in text
    assert "1. tap 0" in text
    generator.refine(trajectory, ["Open <App>"])
    assert len(prompt_images(backend.prompts[-1])) == 2
    # without image_root a relative path is a clear error; a text-only backend is too
    with pytest.raises(ValueError, match="give image_root"):
        trajectory_screenshots(trajectory)
    with pytest.raises(ValueError, match="the trajectory has screenshots but"):
        LLMMilestoneGenerator(ScriptedLLM(lambda _: '["a"]'), image_root=tmp_path).initialize(
            trajectory
        )
    # screenshots=False reads the actions alone; True on a trajectory without any is an error
    text_only = ScriptedLLM(lambda _: '["a"]')
    assert LLMMilestoneGenerator(text_only, screenshots=False).initialize(trajectory) == ["a"]
    with pytest.raises(ValueError, match="the trajectory has no screenshots"):
        LLMMilestoneGenerator(backend, screenshots=True).initialize(
            _trajectory_with_screens([None, None])
        )


def test_milestone_wrapper_hands_a_live_success_screenshots_to_the_generator(
    tmp_path: Path,
) -> None:
    from gui_gym.models.embeddings import default_embedder
    from gui_gym.models.milestones import CosineMatcher
    from gui_gym.wrappers import MilestoneWrapper

    backend = PixelBackend(reply=lambda _: '["Open the article"]')
    env = MilestoneWrapper(
        gym.make("GuiGym/WikiHow-v0", screenshot=True),
        tmp_path / "store.json",
        generator=LLMMilestoneGenerator(backend),
        matcher=CosineMatcher(default_embedder("hashing")),
    )
    obs, _ = env.reset(seed=0)
    seen = [obs["screenshot"]]
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        seen.append(obs["screenshot"])
        done = terminated or truncated
    assert info["success"] and info["milestone"]["update"]["status"] == "initialized"
    [prompt] = backend.prompts
    shown = prompt_images(prompt)
    assert len(shown) == len(seen) - 1  # one per action, the screen it was taken on
    for image, expected in zip(shown, seen):
        assert np.array_equal(image, expected)
    # a text-only generator on this env is refused at construction, one line
    with pytest.raises(ValueError, match="makes screenshots but LLMMilestoneGenerator's"):
        MilestoneWrapper(
            gym.make("GuiGym/WikiHow-v0", screenshot=True),
            tmp_path / "other.json",
            generator=LLMMilestoneGenerator(ScriptedLLM(lambda _: "[]")),
            matcher=CosineMatcher(default_embedder("hashing")),
        )


# ------------------------------------------------------------------ OpenAI-compatible path


def _decode(url: str) -> np.ndarray:
    from PIL import Image

    assert url.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
        assert image.format == "PNG"
        return np.asarray(image.convert("RGB"))


def test_openai_judge_and_generator_send_screenshots_as_png_image_url_parts() -> None:
    require("openai", "llm")
    from gui_gym.models.llm import OpenAICompatLLM
    from gui_gym.models.llm.stub_server import StubChatServer

    trace, _ = _played_trace()
    server = StubChatServer(latency=0.0, reply="Analysis: ok\nStatus: success")
    with server.running() as url:
        llm = OpenAICompatLLM("judge", url, max_retries=0)
        assert LLMJudge(llm).judge(trace.goal, [], [], trace).verdict == "success"
        [message] = server.last_request["messages"]
        parts = message["content"]
        kinds = [p["type"] for p in parts]
        assert kinds == ["text", "image_url", "text"]
        assert np.array_equal(_decode(parts[1]["image_url"]["url"]), trace.screenshots[-1])
        server.reply = '["Open <App>"]'
        generator = LLMMilestoneGenerator(llm)
        assert generator.initialize(_trajectory_with_screens([RED, BLUE])) == ["Open <App>"]
        parts = server.last_request["messages"][0]["content"]
        urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        assert [_decode(u)[0, 0].tolist() for u in urls] == [
            RED[0, 0].tolist(),
            BLUE[0, 0].tolist(),
        ]


def test_openai_image_parts_are_size_bounded() -> None:
    big = np.zeros((4000, 4000, 3), np.uint8)  # 16M pixels, over Qwen2.5-VL's max_pixels
    big[:, :2000] = 255
    image = bounded_image(big)
    width, height = image.size
    assert width * height <= MAX_IMAGE_PIXELS and abs(width - height) <= 1  # aspect kept
    small = bounded_image(RED)
    assert small.size == (32, 48) and np.array_equal(np.asarray(small), RED)  # untouched
    [message] = openai_messages([{"role": "user", "content": [{"type": "image", "image": big}]}])
    sent = _decode(message["content"][0]["image_url"]["url"])
    assert sent.shape[0] * sent.shape[1] <= MAX_IMAGE_PIXELS
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        bounded_image(np.zeros((4, 4), np.float32))


# ------------------------------------------------------------------------ tiny real VLMs


@pytest.fixture(scope="module", params=["llava", "qwen2_vl"])
def vlm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    torch = require("torch", "llm")
    torch.set_num_threads(1)
    from gui_gym.models.llm import TransformersLLM
    from tests.tiny_llm import tiny_llava, tiny_qwen2_vl

    folder = tmp_path_factory.mktemp(request.param)
    (tiny_llava if request.param == "llava" else tiny_qwen2_vl)(folder)
    return TransformersLLM(folder, device="cpu", generation="hf")


class _Spy:
    """Records the keyword inputs of every ``model.generate`` call."""

    def __init__(self, llm: Any) -> None:
        self.calls: list[dict[str, Any]] = []
        inner = llm.model.generate

        def generate(**kwargs: Any) -> Any:
            self.calls.append(kwargs)
            return inner(**kwargs)

        llm.model.generate = generate


def _image_tokens(llm: Any, ids: Any) -> int:
    from gui_gym.models.llm.vision_inputs import image_token_id

    return int((ids == image_token_id(llm.processor)).sum())


def test_tiny_vlm_judge_and_generator_feed_image_tokens_and_pixels(vlm: Any) -> None:
    from gui_gym.models.llm.vision_inputs import expected_image_tokens

    spy = _Spy(vlm)
    trace, _ = _played_trace(1)
    judge = LLMJudge(vlm, max_new_tokens=2, retries=0)
    judge.judge(trace.goal, [], [], trace)
    [call] = spy.calls
    assert "pixel_values" in call and call["pixel_values"].shape[0] > 0
    need = expected_image_tokens(vlm.processor, [trace.screenshots[-1]])
    assert need > 0 and _image_tokens(vlm, call["input_ids"]) == need
    # the prompt is rendered in the model's own chat template, image slot before the text
    rendered = vlm.format_prompt(
        [
            {
                "role": "user",
                "content": [{"type": "image", "image": RED}, {"type": "text", "text": "x"}],
            }
        ]
    )
    assert rendered.startswith("<|user|>") and rendered.rstrip().endswith("<|assistant|>")
    # the milestone generator: one image per step, each expanded by the processor
    spy.calls.clear()
    generator = LLMMilestoneGenerator(vlm, max_new_tokens=2)
    with pytest.raises(ValueError):  # a random model's reply is no milestone list
        generator.initialize(_trajectory_with_screens([RED, BLUE, RED]))
    [call] = spy.calls
    need = expected_image_tokens(vlm.processor, [RED, BLUE, RED])
    assert _image_tokens(vlm, call["input_ids"]) == need
    # a text-only transformers model is refused when asked for screenshots
    from gui_gym.models.llm import TransformersLLM
    from tests.tiny_llm import tiny_gpt2, tiny_tokenizer

    tokenizer = tiny_tokenizer()
    text_only = TransformersLLM(tiny_gpt2(len(tokenizer)), tokenizer, device="cpu")
    with pytest.raises(ValueError, match="TransformersLLM reads text only"):
        LLMEvaluator(text_only, screenshots=True)


# --------------------------------------------------------------------- the benchmark's CLI


def _bench() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "judge_accuracy.py"
    spec = importlib.util.spec_from_file_location("judge_accuracy_bench_vlm", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_judge_accuracy_with_screenshot_shows_the_llm_arms_the_screens() -> None:
    import json

    def claims(text: str) -> str:
        key = "policy_claims" if "Trace of the policy agent" in text else "evaluator_claims"
        return json.dumps({key: [{"steps": [0], "reasoning": "r", "claim": "it is there"}]})

    scripted = ScriptedLLM(
        [
            (r"Answer: YES \(the instruction", "Answer: YES"),
            (r"one decision per claim", '{"decisions": [{"claim": 0, "keep": true}]}'),
            (r"turn a GUI agent's trace into short", claims),
            (r"write ONE short goal|Improve the goal", "Analysis: saved.\nGoal: Find it."),
            (r"You are an evaluator agent", '<action>ANSWER("ok")</action>'),
        ],
        default="Analysis: fine.\nStatus: success",
    )
    shown: dict[str, int] = {}

    class VisionScripted:
        reads_images = True

        def generate(self, prompts, max_new_tokens=256, temperature=0.0, n=1):
            for p in prompts:
                text = prompt_text(p)
                kind = next(
                    (
                        k
                        for k in ("You are an evaluator agent", "trace into short", "You decide")
                        if k in text
                    ),
                    "other",
                )
                shown[kind] = shown.get(kind, 0) + len(prompt_images(p))
            return scripted.generate(prompts, max_new_tokens, temperature, n)

    result = _bench().judge_accuracy(
        1, 1, ["ContactsAddContact"], llm=VisionScripted(), llm_every=3, screenshot=True
    )
    assert result["llm"]["episodes"] == 2
    # the evaluator, the claim extractor and the chain-of-claims judge all saw screens
    assert shown["You are an evaluator agent"] > 0 and shown["trace into short"] > 0
    assert shown["You decide"] > 0
    assert all(m["invalid"] == 0 for m in result["llm"]["judges"].values())


def test_judge_accuracy_cli_refuses_mismatched_screenshot_and_model(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    text_model, vision_model = tmp_path / "text", tmp_path / "vision"
    text_model.mkdir()
    vision_model.mkdir()
    (text_model / "config.json").write_text("{}")
    (vision_model / "config.json").write_text("{}")
    (vision_model / "preprocessor_config.json").write_text("{}")
    script = str(root / "benchmarks" / "judge_accuracy.py")
    for args, message in (
        (["--screenshot", "--llm-model", str(text_model)], "--screenshot needs a vision-language"),
        (["--llm-model", str(vision_model)], "is a vision-language model: add --screenshot"),
        (["--screenshot"], "--screenshot is for the LLM arms"),
    ):
        run = subprocess.run(
            [sys.executable, script, "--out", str(tmp_path / "x.json"), *args],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2, run.stderr
        last = run.stderr.strip().splitlines()[-1]
        assert message in last, run.stderr
    assert not (tmp_path / "x.json").exists()


def test_admire_example_screenshot_switch_builds_a_screenshot_reading_llm_generator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util
    import sys

    require("tyro", "examples")
    require("openai", "llm")
    path = Path(__file__).resolve().parent.parent / "examples" / "admire_grpo.py"
    spec = importlib.util.spec_from_file_location("admire_grpo", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "admire_grpo", example)  # dataclasses look it up
    spec.loader.exec_module(example)
    store = str(tmp_path / "m.json")
    assert "--screenshot is for --generator llm" in example.refuse(
        example.Args(screenshot=True, store=store)
    )
    args = example.Args(screenshot=True, generator="llm", store=store, embedder="hashing")
    assert example.refuse(args) is None
    from gui_gym.models.embeddings import default_embedder

    env = example.make_env(args, default_embedder("hashing"))
    assert "screenshot" in env.observation_space.spaces
    assert env.tracker.generator.screenshots is True


def test_milestone_vector_wrapper_hands_each_env_its_own_screenshots(tmp_path: Path) -> None:
    from gymnasium.vector import SyncVectorEnv

    from gui_gym.models.embeddings import default_embedder
    from gui_gym.models.milestones import CosineMatcher
    from gui_gym.wrappers import MilestoneVectorWrapper

    task = "clean_oil_paint_brushes-bookmark"
    envs = SyncVectorEnv(
        [lambda: gym.make("GuiGym/WikiHow-v0", task=task, screenshot=True) for _ in range(2)]
    )
    backend = PixelBackend(reply=lambda _: '["Search <Text>"]')
    vector = MilestoneVectorWrapper(
        envs,
        tmp_path / "store.json",
        generator=LLMMilestoneGenerator(backend),
        matcher=CosineMatcher(default_embedder("hashing")),
    )
    obs, _ = vector.reset(seed=0)
    seen = [obs["screenshot"][0].copy()]
    for _ in range(10):  # env 0 follows the oracle, env 1 scrolls
        actions = [envs.envs[0].unwrapped.oracle_action().to_string(), "SCROLL(down)"]
        obs, _, terminated, truncated, info = vector.step(actions)
        if terminated[0] or truncated[0]:
            break
        seen.append(obs["screenshot"][0].copy())
    assert terminated[0] and len(backend.prompts) == 1
    shown = prompt_images(backend.prompts[0])
    assert len(shown) == len(seen)
    for image, expected in zip(shown, seen):
        assert np.array_equal(image, expected)


def test_probing_wrapper_runs_the_llm_evaluator_and_judge_on_a_tiny_vlm(vlm: Any) -> None:
    from gui_gym.models.judge import (
        ComponentError,
        LLMClaimFilter,
        RuleClaimExtractor,
        ScriptedReasoner,
    )
    from gui_gym.wrappers import ProbingJudgeWrapper

    budget = {"max_new_tokens": 3, "retries": 0}
    env = ProbingJudgeWrapper(
        gym.make("GuiGym/WikiHow-v0", screenshot=True),
        reasoner=ScriptedReasoner(),
        evaluator=LLMEvaluator(vlm, **budget),
        claim_extractor=RuleClaimExtractor(),
        claim_filter=LLMClaimFilter(vlm, **budget),
        judge=LLMJudge(vlm, **budget),
        n_probes=1,
    )
    spy = _Spy(vlm)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        done = terminated or truncated
    # a random model's replies parse as nothing: the probe fails, the verdict is invalid and
    # says why; both the evaluator and the judge were shown a screen
    assert info["judge"]["verdict"] == "invalid" and reward == 0.0
    assert any("probe" in note for note in info["judge"]["notes"])
    assert len(spy.calls) == 2
    from gui_gym.models.llm.vision_inputs import expected_image_tokens

    assert all("pixel_values" in call for call in spy.calls)
    # the judge's call: the final screen, with the image tokens the processor makes for it
    need = expected_image_tokens(vlm.processor, [obs["screenshot"]])
    assert _image_tokens(vlm, spy.calls[-1]["input_ids"]) == need
    # the reasoner plans from the task and the actions: text only, no pixels
    spy.calls.clear()
    trace, _ = _played_trace(1)
    with pytest.raises(ComponentError):
        LLMReasoner(vlm, **budget).schedule(trace.goal, trace, 1)
    assert spy.calls and all("pixel_values" not in call for call in spy.calls)


def test_best_of_trials_shows_a_screenshot_reading_judge_each_trial_final_screen() -> None:
    from gui_gym.agents import BestOfTrialsAgent, OracleAgent

    env = gym.make("GuiGym/WikiHow-v0", screenshot=True)
    backend = PixelBackend()  # every final screen is white-ish, not red: failure
    judge = LLMTrajectoryJudge(backend, "digirl", 1)
    agent = BestOfTrialsAgent(env, lambda fork, i: OracleAgent(fork), judge, n_trials=2)
    obs, info = env.reset(seed=0)
    agent.reset(obs, info)
    assert [t.verdict for t in agent.trials] == ["failure", "failure"]
    assert len(backend.prompts) == 2
    for prompt in backend.prompts:
        [image] = prompt_images(prompt)
        assert image.shape == obs["screenshot"].shape
