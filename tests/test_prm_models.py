"""GUI-Shepherd scorers on tiny models built in the test (no download) and a local HTTP
server: label-token arithmetic, batching, checkpoints, training, resume, the OpenAI-compatible
PRM and its bad responses, and ``gui-gym train-prm``."""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import gui_gym  # noqa: F401
from gui_gym.rewards.prm import LabelledStep, PRMQuery, PromptTemplate, action_type_of
from tests.conftest import require

WIKIHOW = "GuiGym/WikiHow-v0"

SCREEN = "\n".join(
    [
        "<input id=0 clickable editable>Search wikiHow</input>",
        "<button id=1 clickable>Search</button>",
        "<link id=2 clickable>How to Bake Bread</link>",
        "<link id=3 clickable>How to Tie a Bow Tie</link>",
    ]
)


def _queries() -> list[PRMQuery]:
    out = []
    for k in range(7):
        out.append(
            PRMQuery(
                instruction=f"Open the article number {k} about bread",
                screen="\n".join(SCREEN.splitlines()[: 1 + k % 4]) * (1 + k),
                action=f"CLICK({k % 4})",
                action_description=f"click element {k % 4}",
                history=tuple(f"step {i}" for i in range(k % 3)),
                step=k % 3,
            )
        )
    return out


@pytest.fixture(scope="module")
def tiny_prm() -> Any:
    require("torch", "llm")
    require("transformers", "llm")
    from gui_gym.models.prm import TransformersPRM

    template = PromptTemplate()
    texts = [
        template.render(q, " True", " False", rationale) for q in _queries() for rationale in (0, 1)
    ]
    return TransformersPRM.tiny(texts, vocab_size=300, n_positions=1024, max_length=1024)


# ------------------------------------------------------------------------------ TransformersPRM


def test_score_is_the_positive_share_of_the_two_label_token_probabilities(tiny_prm) -> None:
    import torch

    queries = _queries()
    scores = tiny_prm.score(queries)
    assert scores.dtype == np.float64 and ((scores > 0) & (scores < 1)).all()
    for query, score in zip(queries, scores):
        ids = torch.tensor([tiny_prm.encode(query).ids])
        with torch.no_grad():
            probs = torch.softmax(tiny_prm.model(input_ids=ids).logits[0, -1].double(), -1)
        p_pos, p_neg = probs[tiny_prm.positive_id], probs[tiny_prm.negative_id]
        assert score == pytest.approx(float(p_pos / (p_pos + p_neg)), abs=1e-6)
    assert tiny_prm.score([]).shape == (0,)


def test_scores_do_not_depend_on_batch_size_or_padding_side(tiny_prm) -> None:
    queries = _queries()
    lengths = {len(tiny_prm.encode(q).ids) for q in queries}
    assert len(lengths) == len(queries)  # rows really are padded
    together = tiny_prm.score(queries)
    one_by_one = np.array([tiny_prm.score([q])[0] for q in queries])
    assert np.allclose(together, one_by_one, atol=1e-6)
    try:
        tiny_prm.padding_side, tiny_prm.batch_size = "right", 3
        assert np.allclose(tiny_prm.score(queries), together, atol=1e-6)
    finally:
        tiny_prm.padding_side, tiny_prm.batch_size = "left", 16


def test_rationale_variant_generates_then_reads_the_label_and_batches_alike(tiny_prm) -> None:
    from gui_gym.models.prm import TransformersPRM

    prm = TransformersPRM(
        tiny_prm.model, tiny_prm.tokenizer, rationale=True, max_length=1024, max_rationale_tokens=6
    )
    queries = _queries()[:4]
    together = prm.score(queries)
    assert len(prm.last_rationales) == 4
    one_by_one = np.array([prm.score([q])[0] for q in queries])
    assert np.allclose(together, one_by_one, atol=1e-6)
    assert ((together > 0) & (together < 1)).all()
    # reading after a given rationale: the verdict marker precedes the label position
    enc = prm.encode(queries[0], "it is the search box")
    tail = prm.tokenizer.decode(enc.ids[enc.lm_start :])
    assert tail.strip().startswith("it is the search box") and tail.endswith("Verdict:")


def test_label_tokens_are_configurable_and_must_be_single_distinct_tokens(tiny_prm) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from gui_gym.models.prm import TransformersPRM, tiny_causal_lm

    words = ["<pad>", "<eos>", "<unk>", "good", "bad", "click", "Verdict:"]
    core = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    model = tiny_causal_lm(tokenizer, n_positions=512)
    prm = TransformersPRM(
        model, tokenizer, positive_token="good", negative_token="bad", max_length=512
    )
    assert (prm.positive_id, prm.negative_id) == (3, 4)
    assert 0 < prm.score(_queries()[:1])[0] < 1
    with pytest.raises(ValueError, match="exactly one token"):
        TransformersPRM(tiny_prm.model, tiny_prm.tokenizer, positive_token=" Correct!!")
    with pytest.raises(ValueError, match="same token"):
        TransformersPRM(tiny_prm.model, tiny_prm.tokenizer, negative_token=" True")
    with pytest.raises(ValueError, match="padding_side"):
        TransformersPRM(tiny_prm.model, tiny_prm.tokenizer, padding_side="middle")
    with pytest.raises(TypeError, match="PRMQuery"):
        tiny_prm.score(["CLICK(1)"])  # type: ignore[list-item]


def test_long_screens_are_cut_to_fit_and_keep_the_label_position(tiny_prm) -> None:
    from gui_gym.models.prm import TransformersPRM

    prm = TransformersPRM(tiny_prm.model, tiny_prm.tokenizer, max_length=600)
    long = PRMQuery("Find bread", SCREEN * 200, "CLICK(2)", "click bread")
    enc = prm.encode(long)
    assert len(enc.ids) == 599  # room for the label position
    assert tiny_prm.tokenizer.decode(enc.ids).endswith("Verdict:")
    assert 0 < prm.score([long])[0] < 1
    crowded = PRMQuery(
        "Find bread",
        SCREEN,
        "CLICK(2)",
        "click bread",
        tuple(f"did thing {i}. " * 12 for i in range(6)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # dropping earlier actions is enough: no cut, no warning
        text = tiny_prm.tokenizer.decode(prm.encode(crowded).ids)
    assert "Goal: Find bread" in text and "did thing 5" in text and "did thing 2" not in text


def test_non_finite_logits_are_a_clear_error(tiny_prm) -> None:
    import torch

    from gui_gym.models.prm import PRMOutputError, TransformersPRM

    class Broken(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self.config = inner.config

        def forward(self, **kwargs):
            out = self.inner(**kwargs)
            out.logits = out.logits * float("nan")
            return out

    prm = TransformersPRM(Broken(tiny_prm.model), tiny_prm.tokenizer)
    with pytest.raises(PRMOutputError, match="non-finite"):
        prm.score(_queries()[:2])


def test_checkpoint_round_trip_is_safetensors_and_gives_the_same_scores(tiny_prm, tmp_path) -> None:
    from gui_gym.models.prm import TransformersPRM

    path = tiny_prm.save(tmp_path / "prm")
    files = {p.name for p in path.iterdir()}
    assert "model.safetensors" in files and "prm.json" in files
    assert not any(name.endswith((".bin", ".pt", ".pkl")) for name in files)
    loaded = TransformersPRM.load(path)
    assert np.allclose(loaded.score(_queries()), tiny_prm.score(_queries()), atol=1e-6)
    tiny_prm.save(path)  # replacing a checkpoint leaves no temporary folders behind
    assert [p.name for p in tmp_path.iterdir()] == ["prm"]
    (path / "model.safetensors").unlink()
    with pytest.raises(FileNotFoundError, match="safetensors"):
        TransformersPRM.load(path)
    with pytest.raises(FileNotFoundError, match="no PRM checkpoint"):
        TransformersPRM.load(tmp_path / "missing")


# ------------------------------------------------------------------------------ training


@pytest.fixture
def one_thread() -> Iterator[None]:
    """Train on one thread: small models gain nothing from more, and on a busy 2-core CI
    machine OpenMP threads waiting on each other cost more than they give."""
    torch = require("torch", "llm")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def wikihow_dataset() -> Any:
    from gui_gym.train.prm_data import build_prm_dataset, collect_prm_steps

    steps = collect_prm_steps(WIKIHOW, max_tasks=40, random_rollouts=2, seed=0, max_steps=10)
    return build_prm_dataset(steps, eval_fraction=0.25, seed=0, balance_by=None)


@pytest.fixture(scope="module")
def balanced_wikihow_dataset() -> Any:
    from gui_gym.train.prm_data import build_prm_dataset, collect_prm_steps

    steps = collect_prm_steps(WIKIHOW, max_tasks=100, random_rollouts=2, seed=0, max_steps=10)
    # Balanced within each action type: the type alone says nothing about the label.
    return build_prm_dataset(steps, eval_fraction=0.25, seed=0)


def _small_prm(dataset, seed: int = 0) -> Any:
    from gui_gym.models.prm import TransformersPRM

    template = PromptTemplate(max_screen_chars=200, max_history=2)
    texts = [template.render(s.query, " True", " False") for s in dataset.train]
    return TransformersPRM.tiny(
        texts, vocab_size=1024, n_positions=256, max_length=256, template=template, seed=seed
    )


def test_tiny_prm_trains_above_chance_on_generated_steps(
    balanced_wikihow_dataset, one_thread
) -> None:
    require("torch", "llm")
    from gui_gym.models.prm import TransformersPRM
    from gui_gym.train.prm import PRMTrainConfig, evaluate_prm, train_prm

    dataset = balanced_wikihow_dataset
    # chance is 0.5 within every action type, on held-out tasks (512 steps)
    for split in (dataset.train, dataset.eval):
        per_type = Counter((action_type_of(s), s.label) for s in split)
        assert all(per_type[(t, 0)] == per_type[(t, 1)] for t, _ in per_type)
    # Short prompts (goal, last action, proposed action and the top of the screen) let a
    # model this small see enough steps in a test's budget.
    template = PromptTemplate(max_screen_chars=60, max_history=1)
    texts = [template.render(s.query, " True", " False") for s in dataset.train]
    prm = TransformersPRM.tiny(
        texts, vocab_size=1024, n_positions=160, max_length=160, template=template, seed=0
    )
    before = evaluate_prm(prm, dataset.eval)
    report = train_prm(
        prm,
        dataset.train,
        dataset.eval,
        config=PRMTrainConfig(
            epochs=5, batch_size=16, lr=5e-3, lr_schedule="linear", keep_best="accuracy"
        ),
        progress=False,
    )
    after = report["eval"]
    assert report["finished"] and report["updates"] == 5 * -(-len(dataset.train) // 16)
    assert 1 <= report["best_epoch"] <= 5 and report["selection"] == "eval_accuracy"
    assert after["accuracy"] > 0.58 and after["auc"] > 0.6
    assert after["auc"] > before["auc"]
    assert set(after["by_position"]) >= {"0", "1"}
    assert len(report["history"]) == 5


def test_training_resumes_from_a_checkpoint_exactly(wikihow_dataset, tmp_path, one_thread) -> None:
    require("torch", "llm")
    import torch

    from gui_gym.models.prm import TransformersPRM
    from gui_gym.train.prm import PRMTrainConfig, train_prm

    train = wikihow_dataset.train[:48]
    config = PRMTrainConfig(epochs=2, batch_size=8, lr=1e-3, checkpoint_every=2)
    straight = _small_prm(wikihow_dataset)
    train_prm(straight, train, config=config, progress=False)

    resumed = _small_prm(wikihow_dataset)
    first = train_prm(
        resumed, train, config=config, out_dir=tmp_path, max_updates=5, progress=False
    )
    assert not first["finished"] and first["updates"] == 5
    assert (tmp_path / "checkpoint" / "optimizer.safetensors").exists()
    fresh = _small_prm(wikihow_dataset, seed=1)  # different init: the checkpoint must win
    report = train_prm(fresh, train, config=config, out_dir=tmp_path, progress=False)
    assert report["finished"] and report["updates"] == 12
    for a, b in zip(straight.model.state_dict().values(), fresh.model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6)
    saved = TransformersPRM.load(tmp_path / "model")
    query = [s.query for s in train[:3]]
    assert np.allclose(saved.score(query), straight.score(query), atol=1e-6)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["updates"] == 12
    with pytest.raises(ValueError, match="same data"):
        train_prm(
            _small_prm(wikihow_dataset), train[:40], config=config, out_dir=tmp_path, progress=False
        )


def _as_previous_format(folder) -> None:
    """Rewrite a PRM training checkpoint as the PRM trainer wrote it before the trainers shared
    one format: the model's state dict unprefixed (tied weights once, as safetensors'
    ``save_model`` keeps them), the best epoch's whole state dict in ``best.safetensors``,
    torch's CPU stream as ``cpu``, and no ``algorithm``."""
    import torch
    from safetensors.torch import load_file, save_file, save_model

    from gui_gym.models.prm import TransformersPRM

    weights = load_file(str(folder / "weights.safetensors"))
    prm = TransformersPRM.load(folder.parent / "init")
    with torch.no_grad():
        for name, param in prm.model.named_parameters():
            param.copy_(weights[f"prm.{name}"])
    save_model(prm.model, str(folder / "weights.safetensors"))
    best = {k.removeprefix("best."): v for k, v in weights.items() if k.startswith("best.")}
    if best:
        with torch.no_grad():
            for name, param in prm.model.named_parameters():
                param.copy_(best[name])
        whole = {k: v.detach().clone() for k, v in prm.model.state_dict().items()}
        save_file(whole, str(folder / "best.safetensors"))
    rng = load_file(str(folder / "rng.safetensors"))
    save_file({"cpu": rng["torch_cpu"]}, str(folder / "rng.safetensors"))
    state = json.loads((folder / "trainer_state.json").read_text())
    del state["algorithm"]
    (folder / "trainer_state.json").write_text(json.dumps(state))


@pytest.mark.parametrize("checkpoint_format", ["current", "previous"])
def test_resume_keeps_the_best_epoch_in_either_checkpoint_format(
    wikihow_dataset, tmp_path, one_thread, checkpoint_format
) -> None:
    require("torch", "llm")
    import torch

    from gui_gym.train.checkpoint import CHECKPOINT_FILES
    from gui_gym.train.prm import PRMTrainConfig, train_prm

    train = wikihow_dataset.train[:48]
    config = PRMTrainConfig(epochs=2, batch_size=8, lr=1e-3, checkpoint_every=0, keep_best="auc")
    tie = {"select": lambda prm: 0.0}  # a tie keeps the first: epoch 1's weights are returned
    straight = _small_prm(wikihow_dataset)
    expected = train_prm(straight, train, config=config, progress=False, **tie)
    assert expected["best_epoch"] == 1

    resumed = _small_prm(wikihow_dataset)
    resumed.save(tmp_path / "init")
    first = train_prm(
        resumed, train, config=config, out_dir=tmp_path, max_updates=8, progress=False, **tie
    )
    assert not first["finished"] and first["updates"] == 8  # past epoch 1: a best epoch kept
    checkpoint = tmp_path / "checkpoint"
    assert set(CHECKPOINT_FILES) <= {p.name for p in checkpoint.iterdir()}
    if checkpoint_format == "previous":
        _as_previous_format(checkpoint)
        assert (checkpoint / "best.safetensors").is_file()
    fresh = _small_prm(wikihow_dataset, seed=1)  # different init: the checkpoint must win
    report = train_prm(fresh, train, config=config, out_dir=tmp_path, progress=False, **tie)
    assert report["finished"] and report["updates"] == 12 and report["best_epoch"] == 1
    for a, b in zip(straight.model.state_dict().values(), fresh.model.state_dict().values()):
        assert torch.equal(a, b)


def test_rationale_training_adds_a_language_model_loss(wikihow_dataset) -> None:
    require("torch", "llm")
    from gui_gym.models.prm import TransformersPRM

    base = _small_prm(wikihow_dataset)
    prm = TransformersPRM(
        base.model,
        base.tokenizer,
        rationale=True,
        template=base.template,
        max_length=320,
        max_rationale_tokens=8,
    )
    steps = wikihow_dataset.train[:4]
    batch = prm.training_batch(steps)
    assert batch["keep"] > 1 and (batch["lm_targets"] != -100).any()
    with_lm, _ = prm.loss(batch, rationale_weight=1.0)
    label_only, _ = prm.loss(batch, rationale_weight=0.0)
    assert with_lm.item() > label_only.item()
    bare = LabelledStep(steps[0].query, steps[0].label, "t", steps[0].source, rationale="")
    with pytest.raises(ValueError, match="rationale"):
        prm.training_batch([bare])


def test_train_prm_command_collects_trains_and_resumes(tmp_path, one_thread) -> None:
    require("torch", "llm")
    from typer.testing import CliRunner

    from gui_gym.cli import app

    args = [
        "train-prm", "--out", str(tmp_path), "--max-tasks", "4", "--random-rollouts", "1",
        "--epochs", "1", "--vocab-size", "1024", "--max-length", "256", "--no-progress",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and (tmp_path / "model" / "model.safetensors").exists()
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["data"]["train"] > 0 and "by_position" in metrics["eval"]
    again = CliRunner().invoke(app, args)  # everything done: reuses data and checkpoint
    assert again.exit_code == 0, again.output
    assert json.loads((tmp_path / "metrics.json").read_text())["data"]["reused"] is True


def test_train_prm_command_learns_from_a_replayed_expert_dataset(tmp_path, one_thread) -> None:
    # GUI-Shepherd's second data source from `gui-gym convert`/`record` output, no env rollouts.
    require("torch", "llm")
    from typer.testing import CliRunner

    from gui_gym.cli import app
    from gui_gym.envs.replay import SAMPLE_DATASET

    args = [
        "train-prm", "--out", str(tmp_path), "--replay-dataset", str(SAMPLE_DATASET),
        "--epochs", "1", "--vocab-size", "300", "--max-length", "256", "--no-progress",
        "--eval-fraction", "0.3",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert set(metrics["data"]["train_sources"]) == {"oracle", "proposal"}
    steps = [json.loads(line) for line in (tmp_path / "data" / "train.jsonl").open()]
    assert {s["env_id"] for s in steps} == {"GuiGym/SemiOnlineReplay-v0"}


# ------------------------------------------------------------------------------ OpenAI-compatible


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.respond: Callable[[str, dict[str, Any]], Any] = lambda path, body: {}
        self.requests: list[dict[str, Any]] = []


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        payload = self.server.respond(self.path, body)
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()


def _completion(choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "c", "object": "text_completion", "created": 0, "model": "m", "choices": choices}


def _choice(index: int, tokens: list[str], tops: list[dict[str, float]] | None) -> dict[str, Any]:
    logprobs = None
    if tops is not None:
        logprobs = {
            "tokens": tokens,
            "token_logprobs": [max(t.values()) if t else -1.0 for t in tops],
            "top_logprobs": tops,
            "text_offset": list(range(len(tokens))),
        }
    return {
        "index": index,
        "text": "".join(tokens),
        "finish_reason": "length",
        "logprobs": logprobs,
    }


def _prm(server: _Server, **kwargs: Any) -> Any:
    from gui_gym.models.prm import OpenAICompatPRM

    host, port = server.server_address[:2]
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("timeout", 5.0)
    return OpenAICompatPRM("prm", base_url=f"http://{host}:{port}/v1", **kwargs)


def test_openai_prm_reads_the_two_label_tokens_logprobs_in_order(server) -> None:
    def respond(path: str, body: dict[str, Any]) -> Any:
        assert path == "/v1/completions" and body["max_tokens"] == 1 and body["logprobs"] == 20
        choices = []
        for i, prompt in enumerate(body["prompt"]):
            good = "CLICK(2)" in prompt
            top = {" True": np.log(0.6 if good else 0.1), "True": np.log(0.2 if good else 0.0001),
                   " False": np.log(0.2 if good else 0.8)}  # fmt: skip
            choices.append(_choice(i, [" True"], [top]))
        return _completion(choices[::-1])  # servers may return choices out of order

    server.respond = respond
    prm = _prm(server, batch_size=2)
    queries = [PRMQuery("g", "s", f"CLICK({k})") for k in (1, 2, 3)]
    scores = prm.score(queries)
    assert scores == pytest.approx([0.1001 / 0.9001, 0.8, 0.1001 / 0.9001], rel=1e-4)
    assert len(server.requests) == 2 and prm.last_errors == [None] * 3
    assert server.requests[0]["prompt"][0].endswith("Verdict:")


def test_openai_prm_bounds_a_label_missing_from_the_top_tokens(server) -> None:
    server.respond = lambda path, body: _completion(
        [_choice(0, [" True"], [{" True": np.log(0.9), " Yes": np.log(0.05)}])]
    )
    score = _prm(server).score([PRMQuery("g", "s", "CLICK(1)")])[0]
    assert score == pytest.approx(0.9 / 0.95)


def test_openai_prm_with_rationale_reads_the_label_after_the_verdict_marker(server) -> None:
    tokens = [" The", " True", " button", "\n", "Verdict", ":", " False"]
    tops = [{t: -0.1} for t in tokens[:-1]] + [{" False": np.log(0.7), " True": np.log(0.3)}]
    server.respond = lambda path, body: _completion([_choice(0, tokens, tops)])
    prm = _prm(server, rationale=True)
    assert prm.score([PRMQuery("g", "s", "CLICK(1)")])[0] == pytest.approx(0.3)
    assert prm.last_rationales == ["The True button"]
    assert server.requests[0]["prompt"][0].endswith("Reasoning:")


def test_openai_prm_chat_api(server) -> None:
    def respond(path: str, body: dict[str, Any]) -> Any:
        assert path == "/v1/chat/completions" and body["logprobs"] is True
        alternatives = [{"token": "True", "logprob": np.log(0.25), "bytes": None},
                        {"token": "False", "logprob": np.log(0.75), "bytes": None}]  # fmt: skip
        content = [
            {"token": "False", "logprob": np.log(0.75), "bytes": None, "top_logprobs": alternatives}
        ]
        message = {"role": "assistant", "content": "False"}
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": "stop",
            "logprobs": {"content": content},
        }
        return {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [choice],
        }

    server.respond = respond
    scores = _prm(server, api="chat").score([PRMQuery("g", "s", "CLICK(1)")] * 3)
    assert scores == pytest.approx([0.25] * 3)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (_completion([_choice(0, [" Maybe"], None)]), "no logprobs"),
        (_completion([_choice(0, [" Maybe"], [{" Maybe": -0.1, " Perhaps": -3.0}])]), "neither"),
        ({"unexpected": "shape"}, "malformed|choices"),
        (_completion([_choice(0, [" True"], [{" True": "high"}])]), "not a number"),
    ],
)
def test_openai_prm_garbage_gives_a_neutral_score_with_a_warning_or_a_clear_error(
    server, payload, reason
) -> None:
    from gui_gym.models.prm import PRMOutputError, PRMResponseWarning

    server.respond = lambda path, body: payload
    prm = _prm(server)
    with pytest.warns(PRMResponseWarning, match=reason):
        assert prm.score([PRMQuery("g", "s", "CLICK(1)")])[0] == 0.5
    assert prm.last_errors[0] is not None
    with pytest.raises(PRMOutputError, match=reason):
        _prm(server, on_error="raise").score([PRMQuery("g", "s", "CLICK(1)")])


def test_openai_prm_timeout_and_unreachable_server_are_infrastructure_not_scores(server) -> None:
    # issue 33 item 4: no answer is never a (neutral) score, whatever on_error says
    from gui_gym.models.llm import ModelUnavailable
    from gui_gym.models.prm import OpenAICompatPRM

    def slow(path: str, body: dict[str, Any]) -> Any:
        time.sleep(1.0)
        return {}

    server.respond = slow
    with pytest.raises(ModelUnavailable, match=r"no answer within 0\.2s"):
        _prm(server, timeout=0.2).score([PRMQuery("g", "s", "CLICK(1)")])
    closed = OpenAICompatPRM("prm", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=1.0)
    with pytest.raises(ModelUnavailable, match="cannot connect"):
        closed.score([PRMQuery("g", "s", "CLICK(1)")])


def test_a_garbage_server_never_crashes_a_wrapped_rollout(server) -> None:
    from gui_gym.wrappers import PRMWrapper

    server.respond = lambda path, body: {"nothing": "useful"}
    env = PRMWrapper(gym.make(WIKIHOW, split="test"), _prm(server))
    env.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, reward, _, _, info = env.step(env.unwrapped.oracle_action())
    assert reward == pytest.approx(0.5 + 0.1)
    assert info["prm"]["score"] == 0.5 and "malformed" in info["prm"]["error"]


def test_a_broken_prm_config_names_the_file_and_what_is_wrong(tmp_path) -> None:
    """Both PRM kinds read ``prm.json`` through one check: unreadable JSON, another format,
    another version and a missing field are each one ValueError naming the file."""
    import json

    from gui_gym.models.prm.checkpoint import read_prm_config

    path = tmp_path / "prm.json"
    assert read_prm_config(path, "gui-gym/prm", ()) is None  # no config: defaults apply
    good = {"format": "gui-gym/prm", "version": 1, "positive_token": " T", "template": {}}
    untemplated = {k: v for k, v in good.items() if k != "template"}
    cases = [
        ("{oops", "not valid JSON"),
        (json.dumps({**good, "format": "other"}), "not a gui-gym/prm config"),
        (json.dumps({**good, "version": 7}), "version 7, expected 1"),
        (json.dumps({**untemplated, "negative_token": " F"}), "missing template$"),
        (json.dumps(good), "missing negative_token"),
    ]
    for text, message in cases:
        path.write_text(text)
        with pytest.raises(ValueError, match=message) as caught:
            read_prm_config(path, "gui-gym/prm", ("positive_token", "negative_token"), version=1)
        assert str(path) in str(caught.value)
    path.write_text(json.dumps({**good, "negative_token": " F"}))
    assert read_prm_config(path, "gui-gym/prm", ("negative_token",), version=1)["negative_token"]
