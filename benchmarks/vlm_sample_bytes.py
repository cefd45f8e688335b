"""What a token-exact VLM sample costs to keep: bytes per step with UI-S1's prompt (the
current screenshot + ``images`` earlier ones), stored once per screen in the policy's
content-addressed ImageStore, against a naive copy of every image each prompt shows.

Runs the rollout engine with a tiny LLaVA (built from a config, tests/tiny_llm.py) on
WikiHow with real screenshots; the pixels dominate, so the figures hold for any model
(the ids are ~4 bytes a token on top, reported separately).

Usage::

    python benchmarks/vlm_sample_bytes.py [--images 3] [--episodes 4] [--steps 6]
        [--out benchmarks/results/vlm_sample_bytes.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gui_gym  # noqa: F401
from gui_gym.agents import LLMAgent
from gui_gym.core.files import atomic_write_text
from gui_gym.models.llm import TransformersLLM
from gui_gym.runs.rollout import EpisodeSpec, RolloutEngine
from tests.tiny_llm import tiny_llava


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=3)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--env", default="GuiGym/WikiHow-v0")
    parser.add_argument("--out", default="benchmarks/results/vlm_sample_bytes.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tiny_llava(folder)
        llm = TransformersLLM(Path(folder), device="cpu")
    agent = LLMAgent(llm, "ui_s1", screenshot=True, images=args.images, max_new_tokens=4)
    engine = RolloutEngine(
        args.env,
        agent,
        num_envs=2,
        env_kwargs={"split": "train", "screenshot": True, "max_steps": args.steps},
    )
    with engine:
        out = engine.run([EpisodeSpec(None, s) for s in range(args.episodes)])
    steps = [s for t in out for s in t.steps]
    store = llm.image_store
    naive = sum(store.get(k).nbytes for s in steps for k in s.vision["images"])
    ids = sum(4 * (len(s.prompt_ids) + len(s.completion_ids)) for s in steps)
    refs = sum(len(json.dumps(s.vision)) for s in steps)
    shape = list(store.get(steps[0].vision["images"][0]).shape)
    report = {
        "env": args.env,
        "images": args.images,
        "episodes": len(out),
        "steps": len(steps),
        "screenshot_shape": shape,
        "distinct_screenshots": len(store),
        "store_bytes_per_step": store.nbytes / len(steps),
        "naive_copy_bytes_per_step": naive / len(steps),
        "vision_ref_bytes_per_step": refs / len(steps),
        "token_id_bytes_per_step": ids / len(steps),
        "saving": naive / store.nbytes,
        # the tiny random policy rarely changes the screen; when every step shows a new one
        # the store holds one screenshot a step and a naive copy holds images + 1
        "new_screen_every_step_store_bytes_per_step": store.get(
            steps[0].vision["images"][0]
        ).nbytes,
        "new_screen_every_step_naive_bytes_per_step": (args.images + 1)
        * store.get(steps[0].vision["images"][0]).nbytes,
    }
    print(json.dumps(report, indent=1))
    atomic_write_text(args.out, json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
