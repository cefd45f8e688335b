"""Every docs/*.md works as written: its Python blocks and its commands run, in document
order, on small inputs (README.md has tests/test_readme.py).

Each document runs as one fresh Python process in an empty folder: its Python blocks one
after the other (a later block uses what an earlier one defined, as a reader pasting them
would), its ``gui-gym`` lines through the CLI and its ``python examples/...`` lines as
subprocesses, at the point where the document shows them. What cannot run here is in
``EXCLUDED`` with the reason; what takes minutes on 2 cores is in ``FULL_ONLY`` and runs with
``make check-docs``; an excluded Python block is still compiled and its ``gui_gym``
imports resolved, so a renamed function fails here too. Sizes are cut by ``SMALLER`` (text
replaced in a block or command) and ``tests/doc_commands.SMALL`` (``gui-gym`` options).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_commands import ROOT, DocStep, command_argv, doc_steps, small

DOCS = sorted((ROOT / "docs").glob("*.md"))

# (document, a piece of the block or command) -> why it is not run here.
EXCLUDED: dict[tuple[str, str], str] = {
    # a model the user has (a folder or a hub name); the same calls run with tiny models in
    # the tests named
    ("admire.md", "--model /models/Qwen2.5"): "a 0.5B model on CUDA; tests/test_admire_example",
    ("admire.md", "--generator llm"): "an LLM server; tests/test_admire_example (ScriptedLLM)",
    ("agents_training.md", "--model models/qwen --prompt"): "a user's model; tests/test_rollout",
    ("agents_training.md", "--model models/qwen-vl"): "a user's VLM; tests/test_vlm.py",
    ("agents_training.md", "--agent openai"): "an LLM server; tests/test_rollout (stub server)",
    ("agents_training.md", "gui-gym sft"): "a user's model; tests/test_sft.py (tiny GPT-2)",
    ("agents_training.md", "--model models/qwen-sft"): "the sft line's output; tests/test_sft",
    ("agents_training.md", "LLMAgent("): "a user's model folder; tests/test_llm.py, test_rollout",
    ("agents_training.md", "RolloutEngine("): "the LLMAgent above; tests/test_rollout.py",
    ("llm.md", "class LLM(Protocol)"): "a protocol's signature, not code to run",
    ("models.md", "--model smollm2-135m-instruct --out runs/sft"): (
        "a recorded dataset; tests/test_sft.py (tiny GPT-2), tests/test_local_models.py"
    ),
    ("models.md", "my-qwen2.Q8_0.gguf"): "a user's GGUF; tests/test_local_models.py (tiny llama)",
    ("llm.md", "TransformersLLM("): "a user's model folder and CUDA; tests/test_llm.py",
    ("training.md", "gui-gym sft"): "a user's base model (/models/base); tests/test_sft.py",
    ("training.md", "gui-gym train "): "the sft line's model; tests/test_train_cli.py",
    ("training.md", "make_trainer("): "the sft line's model; tests/test_train_core.py",
    ("engines.md", "GRPOTrainer("): "a user's tool-calling model; tests/test_integration_trl.py",
    ("engines.md", "accelerate launch"): "GPUs and vLLM; tests/test_integration_trl.py on CPU",
    ("training.md", "--kind orm --out runs/orm"): (
        "labels.jsonl of docs/progrm.md's run; tests/test_paper_baselines.py trains an ORM's "
        "reward path"
    ),
    ("vlm.md", "--model VLM_DIR"): "a user's VLM; tests/test_vlm_sft.py (tiny LLaVA)",
    ("engines.md", "gui-gym serve-openenv"): (
        "a server that runs until stopped; tests/test_openenv_server.py starts it on a free port"
    ),
    ("engines.md", "GenericEnvClient("): (
        "the server above and a person typing actions; tests/test_openenv_server.py"
    ),
    ("vlm.md", "--model runs/vlm_sft"): "the sft line's output; tests/test_vlm_rl.py",
    ("vlm.md", "--model runs/xy"): "the sft line's output; tests/test_screenshot_only.py",
    ("vlm.md", "--model VLM_DIR --env-id"): "a user's VLM; tests/test_vlm_prm.py (tiny LLaVA)",
    ("vlm.md", "--prm-model runs/vlm-prm"): "the lines above' outputs; tests/test_vlm_prm.py",
    ("vlm.md", 'TransformersLLM("VLM_DIR")'): "a user's VLM; tests/test_vlm_judge.py (tiny VLMs)",
    ("prm.md", "--env-id GuiGym/AndroidWorld-v0"): "the first line on two envs; test_prm_models",
    ("prm.md", "--model path/to/causal-lm"): "a user's causal LM; tests/test_prm_models.py",
    ("prm.md", "--data steps.jsonl"): "the user's own labelled steps; tests/test_prm_models.py",
    ("prm.md", "--replay-dataset data/ac"): "a converted dataset; tests/test_prm_models.py",
    ("prm.md", "--keep-best auc"): "minutes of best-of-N data; benchmarks/prm_verifier.py",
    # other machines
    ("distributed.md", "ray start"): "a Ray cluster across hosts; the local one runs above",
    ("distributed.md", 'address="auto"'): "a Ray cluster across hosts; tests/test_distributed",
    ("distributed.md", "RAY_AUTH_TOKEN=<"): (
        "a Ray cluster across hosts; scripts/ray_cluster_local.sh runs it in network namespaces"
    ),
    ("distributed.md", "scripts/ray_cluster_local.sh"): (
        "root, network namespaces and minutes; tests/test_distributed_cluster.py runs a cluster"
    ),
    ("distributed.md", "ray stop"): "a Ray cluster across hosts; tests/test_distributed_cluster",
    ("paper_comparisons.md", "paper_comparisons.py --quick"): (
        "minutes: make check-docs runs it (Makefile); tests/test_paper_comparisons_bench.py"
    ),
    ("paper_comparisons.md", "nice -n 10 python benchmarks/paper_comparisons.py"): (
        "hours on 2 cores; benchmarks/reference/paper_comparisons.json is its run"
    ),
    ("paper_comparisons.md", "--comparisons progrm_table1 ui_s1"): (
        "an hour on 2 cores; benchmarks/reference/paper_comparisons.json holds their 5 seeds"
    ),
    ("rl_libraries.md", "benchmarks/learning_curves.py"): (
        "a 30-minute benchmark; benchmarks/reference/learning_curves.json is its run, "
        "tests/test_sb3.py its logic"
    ),
    ("rl_libraries.md", "--device cuda"): "a CUDA device (the lead's GPU run)",
    ("training.md", "accelerate launch"): (
        "8 GPUs; tests/test_train_data_parallel.py launches 2 gloo workers through the CLI"
    ),
    ("viewer.md", "gui-gym serve"): "a server that runs until stopped; tests/test_view.py",
    ("engines.md", "python3 -m venv .venv-verl"): (
        "verl's own environment (minutes, 1.9 GB): scripts/setup.sh builds it for "
        "tests/test_verl_integration.py"
    ),
    ("engines.md", "verl.trainer.main_ppo"): (
        "verl's Ray trainer with vLLM on GPUs; tests/test_verl_integration.py runs the agent loop "
        "through verl's worker on CPU"
    ),
}

# Commands that take tens of seconds to minutes on 2 CPU cores even when cut small: run by
# `make check-docs` (GUI_GYM_DOCS_FULL=1); in the test suite they are excluded, and the
# tests named run the same calls.
FULL_ONLY: dict[tuple[str, str], str] = {
    ("admire.md", "python examples/admire_grpo.py "): "tests/test_admire_example.py",
    ("alfworld.md", "gui-gym bench --alfworld"): "tests/test_alfworld.py (1 game, 4 steps)",
    ("distributed.md", "RayVectorEnv("): "starts Ray; tests/test_distributed.py",
    ("models.md", "--agent llm --episodes 2"): "SmolLM2 on CPU; tests/test_local_models.py",
    ("prm.md", "gui-gym train-prm --out runs/prm "): "tests/test_prm_models.py (train-prm)",
    ("progrm.md", "gui-gym train-progress"): "tests/test_readme.py runs the same line",
    ("progrm.md", "ProgRM.load("): "the model the line above trains; tests/test_progress_model",
    ("rl_libraries.md", "MaskablePPO("): "tests/test_sb3.py trains MaskablePPO",
    ("rl_libraries.md", "examples/sb3_maskable_ppo.py --env-id"): "tests/test_sb3.py",
}
FULL = os.environ.get("GUI_GYM_DOCS_FULL", "") == "1"

# (document, text) -> smaller text: the same call on fewer steps, episodes or products.
SMALLER: dict[tuple[str, str], str] = {
    ("admire.md", "python examples/admire_grpo.py "): (
        "python examples/admire_grpo.py --num-tasks 1 --tasks-per-iteration 1 --group-size 2 "
        "--iterations 1 --max-steps 3 --update-epochs 1 --max-prompt-tokens 64 "
        "--embedder hashing "
    ),
    ("distributed.md", "n=100"): "n=8",
    ("progrm.md", "range(100)"): "range(4)",
    ("engines.md", "--split train --seeds 4"): "--split train --seeds 1",
    ("rl_libraries.md", ".learn(10_000)"): ".learn(64)",
    ("rl_libraries.md", "--total-timesteps 10240"): (
        "--total-timesteps 64 --n-steps 32 --batch-size 32 --eval-every 64 --eval-episodes 1 "
        "--num-envs 1"
    ),
}

# Documents that need the user's own files: written before the document runs.
NEEDS_FILES = {
    "semi_online.md": "episodes.jsonl: AndroidControl-style episodes (the shipped sample)",
    "viewer.md": "episodes, before, after, big, rollouts .jsonl: recorded runs",
}

# Documents whose run takes more than a few seconds (MiniLM, Chromium; all of them in full).
SLOW = {"admire.md", "miniwob.md"}


def _steps(doc: Path) -> list[DocStep]:
    return doc_steps(doc.read_text(encoding="utf-8"))


def _exclusion(doc: Path, step: DocStep) -> str | None:
    for (name, piece), why in EXCLUDED.items():
        if name == doc.name and piece in step.text:
            return why
    for (name, piece), covered_by in FULL_ONLY.items():
        if not FULL and name == doc.name and piece in step.text:
            return f"slow on 2 cores: `make check-docs` runs it; {covered_by}"
    return None


def _smaller(doc: Path, text: str) -> str:
    for (name, old), new in SMALLER.items():
        if name == doc.name:
            text = text.replace(old, new)
    return text


def test_every_exclusion_and_size_cut_names_a_documented_command() -> None:
    texts = {doc.name: [s.text for s in _steps(doc)] for doc in DOCS}
    for name, piece in [*EXCLUDED, *FULL_ONLY, *SMALLER]:
        assert any(piece in text for text in texts.get(name, [])), (
            f"docs/{name} has no block or command with {piece!r}: update the table"
        )
    for name in NEEDS_FILES:
        assert name in texts


def test_every_documented_command_is_one_the_test_knows() -> None:
    """A shell line is a ``gui-gym`` command, an example script, or excluded with a reason."""
    for doc in DOCS:
        for step in _steps(doc):
            if step.kind != "shell" or _exclusion(doc, step):
                continue
            argv = command_argv(step.text)
            known = argv[0] == "gui-gym" or (
                argv[0] == "python" and argv[1].startswith("examples/")
            )
            assert known, f"docs/{doc.name}:{step.line}: {step.text!r} is neither run nor excluded"
            if argv[0] == "python":
                assert (ROOT / argv[1]).is_file(), f"docs/{doc.name}:{step.line}: no {argv[1]}"


def _gui_gym_imports(block: str) -> list[tuple[str, str]]:
    # a block may show an ``await`` (the async API) outside a function
    tree = compile(block, "<doc>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    return [
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gui_gym")
        for alias in node.names
    ]


def test_excluded_python_blocks_compile_and_their_imports_exist() -> None:
    for doc in DOCS:
        for step in _steps(doc):
            if step.kind != "python" or not _exclusion(doc, step):
                continue
            where = f"docs/{doc.name}:{step.line}"
            for module, name in _gui_gym_imports(step.text):
                assert hasattr(importlib.import_module(module), name), f"{where}: {module}.{name}"


def _write_user_files(name: str, cwd: Path) -> None:
    """The files a document assumes the reader has (see ``NEEDS_FILES``)."""
    if name == "semi_online.md":
        shutil.copy(ROOT / "tests/data/androidcontrol_sample.jsonl", cwd / "episodes.jsonl")
        shutil.copytree(ROOT / "tests/data/shots", cwd / "shots")
    if name == "viewer.md":
        import gymnasium as gym

        import gui_gym  # noqa: F401
        from gui_gym.agents import OracleAgent, RandomAgent, run_episode
        from gui_gym.wrappers import RecordTrajectories

        for file, agent in [
            ("before.jsonl", RandomAgent),
            ("after.jsonl", OracleAgent),
            ("episodes.jsonl", OracleAgent),
            ("big.jsonl", RandomAgent),
            ("rollouts.jsonl", RandomAgent),
        ]:
            env = RecordTrajectories(gym.make("GuiGym/WikiHow-v0", max_steps=5), cwd / file)
            for seed in range(2):
                run_episode(
                    env, agent(env) if agent is OracleAgent else agent(env, seed=seed), seed=seed
                )
            env.close()


_DRIVER_HEAD = """\
import subprocess, sys, time
from typer.testing import CliRunner
from gui_gym.cli import app


def _gui_gym(argv, where):
    result = CliRunner().invoke(app, argv)
    print(result.output, flush=True)
    if result.exit_code != 0:
        raise SystemExit(f"{where}: gui-gym {' '.join(argv)} exited {result.exit_code}")


_start = time.perf_counter()


def _mark(where):  # when each step starts, on stderr: a slow step shows in a failure report
    print(f"[{time.perf_counter() - _start:.1f} s] {where}", file=sys.stderr, flush=True)


def _example(argv, where):
    if subprocess.run([sys.executable, *argv]).returncode != 0:
        raise SystemExit(f"{where}: python {' '.join(argv)} failed")

"""


def _driver(doc: Path) -> tuple[str, list[str]]:
    """One script that runs the document's steps in order, and what it skipped (and why)."""
    parts, skipped = [_DRIVER_HEAD], []
    for step in _steps(doc):
        where = f"docs/{doc.name}:{step.line}"
        why = _exclusion(doc, step)
        if why:
            skipped.append(f"{where}: {why}")
            continue
        text = _smaller(doc, step.text)
        parts.append(f"_mark({where!r})")
        if step.kind == "python":
            parts.append(text)
            continue
        argv = command_argv(text)
        if argv[0] == "gui-gym":
            parts.append(f"_gui_gym({json.dumps(small(argv[1:]))}, {where!r})")
        else:
            script = [str(ROOT / argv[1]), *argv[2:]]
            parts.append(f"_example({json.dumps(script)}, {where!r})")
    return "\n".join(parts) + "\n", skipped


def _run_doc(doc: Path, tmp_path: Path) -> None:
    _write_user_files(doc.name, tmp_path)
    script, _ = _driver(doc)
    (tmp_path / "doc_driver.py").write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TQDM_DISABLE": "1"}
    result = subprocess.run(
        [sys.executable, "doc_driver.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"docs/{doc.name} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    )


@pytest.mark.timeout(400)
@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(doc, id=doc.stem, marks=[pytest.mark.slow] if FULL or doc.name in SLOW else [])
        for doc in DOCS
        if any(not _exclusion(doc, step) for step in _steps(doc))
    ],
)
def test_document_runs_as_written(doc: Path, tmp_path: Path) -> None:
    _run_doc(doc, tmp_path)
