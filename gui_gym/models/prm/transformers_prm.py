"""A local causal LM as a process reward model (GUI-Shepherd Sec. 3, Eq. 2).

:class:`TransformersPRM` is read at the label position. GUI-Shepherd maps the positive and
negative labels to two tokens of the vocabulary and trains with cross-entropy over them
(Sec. 3, Eq. 2; App. A.3 uses ``True``/``False``), so the score is
``p(pos) / (p(pos) + p(neg)) = sigmoid(logit_pos - logit_neg)``. Optionally the model first
writes a rationale (the paper's CoT variant) and the label is read after it. Scoring is
batched with explicit position ids, so a score does not depend on batch size or padding
side. Checkpoints are safetensors.

torch and transformers are imported inside the functions that need them.
"""

from __future__ import annotations

import importlib
import json
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gui_gym.core.files import write_folder_atomically
from gui_gym.core.progress import library_bars_follow_the_rule
from gui_gym.core.trajectory import check_replaceable_folder, errors_naming
from gui_gym.models.prm.checkpoint import read_prm_config
from gui_gym.models.prm.protocol import (
    PRMOutputError,
    check_queries,
    label_token_ids,
)
from gui_gym.rewards.prm import LabelledStep, PRMQuery, PromptTemplate

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "TransformersPRM",
    "build_tokenizer",
    "tiny_causal_lm",
]


CHECKPOINT_FORMAT = "gui-gym/prm"
CHECKPOINT_VERSION = 1


def _llm_extra(module: str) -> Any:
    """``import module`` (torch or transformers), or the extra that installs it.

    Raises:
        gymnasium.error.DependencyNotInstalled: when it is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            f"TransformersPRM needs {module} ({err}); pip install 'gui-gym[llm]'"
        ) from err


def _torch() -> Any:
    return _llm_extra("torch")


def _transformers() -> Any:
    return _llm_extra("transformers")


def build_tokenizer(
    texts: Iterable[str],
    vocab_size: int = 1024,
    *,
    label_tokens: Sequence[str] = (" True", " False"),
    pad_token: str = "<|pad|>",
    eos_token: str = "<|eos|>",
) -> Any:
    """Train a small byte-level BPE tokenizer on ``texts`` (no download).

    The label tokens are added whole, so each is one token, as GUI-Shepherd's ``True`` and
    ``False`` are in Qwen2.5-VL's vocabulary (App. A.3).

    Args:
        texts: Training text (e.g. rendered PRM prompts).
        vocab_size: Target vocabulary size, byte alphabet and special tokens included
            (at least 270).
        label_tokens: Strings that must be single tokens.
        pad_token, eos_token: Special tokens (ids 0 and 1).

    Returns:
        A ``transformers.PreTrainedTokenizerFast``.
    """
    transformers = _transformers()
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    if vocab_size < 270:
        raise ValueError(f"vocab_size must be at least 270 (bytes + specials), got {vocab_size}")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[pad_token, eos_token, *label_tokens],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token=pad_token, eos_token=eos_token
    )


def tiny_causal_lm(
    tokenizer: Any,
    *,
    n_layer: int = 2,
    n_embd: int = 64,
    n_head: int = 2,
    n_positions: int = 1024,
    seed: int = 0,
) -> Any:
    """A small GPT-2 built from a config (random weights, CPU-friendly): the backbone of the
    tests' and benchmarks' PRMs. Its bos/eos/pad ids are the tokenizer's, inside its vocab."""
    torch = _torch()
    transformers = _transformers()
    eos = tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    config = transformers.GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=pad,
        # No dropout: small data, few epochs, and training that resumes bit-for-bit.
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    torch.manual_seed(seed)
    return transformers.GPT2LMHeadModel(config)


@dataclass
class _Encoded:
    """Token ids of one prompt (up to the label position) and its training targets."""

    ids: list[int]
    lm_start: int
    """Index of the first rationale/verdict token (language-model loss targets from here)."""


class TransformersPRM:
    """A causal LM as a process reward model, read from two label tokens (GUI-Shepherd Eq. 2).

    The prompt (:class:`~gui_gym.rewards.prm.PromptTemplate`) ends where the label goes; the
    score is the softmax of the positive and negative tokens' logits there, i.e.
    ``sigmoid(logit_pos - logit_neg)``. With ``rationale=True`` the model first writes a short
    rationale (greedy, up to ``max_rationale_tokens``, cut at the verdict marker), then the
    verdict marker is appended and the label read after it (the paper's Score + CoT variant).

    Long screens are cut in token space so the question and label position always fit in
    ``max_length``; when even that is not enough, the oldest earlier actions go next, and only
    then the beginning of the prompt (with a warning). Batches are padded on ``padding_side``
    with explicit position ids, so a query's score is the same alone or in any batch.

    Args:
        model: A ``transformers`` causal LM.
        tokenizer: Its tokenizer.
        positive_token: Text of the positive label; must be one token.
        negative_token: Text of the negative label; must be one token.
        rationale: Generate a rationale before the label.
        template: The prompt template.
        max_length: Longest sequence fed to the model, label position included.
        max_rationale_tokens: Budget of a generated rationale.
        batch_size: Queries per forward pass.
        padding_side: ``"left"`` or ``"right"`` (scores do not depend on it).
        device: ``"cpu"``, ``"cuda"``, ...; None keeps the model where it is.

    Raises:
        ValueError: when a label token is not exactly one token, the two are equal, or the
            tokenizer has neither a pad nor an eos token.
    """

    requires_env = False

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        positive_token: str = " True",
        negative_token: str = " False",
        rationale: bool = False,
        template: PromptTemplate | None = None,
        max_length: int = 1024,
        max_rationale_tokens: int = 48,
        batch_size: int = 16,
        padding_side: str = "left",
        device: str | None = None,
    ):
        self._torch = _torch()
        if padding_side not in ("left", "right"):
            raise ValueError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_rationale_tokens < 1:
            raise ValueError(f"max_rationale_tokens must be >= 1, got {max_rationale_tokens}")
        self.model = model
        self.tokenizer = tokenizer
        self.positive_token = positive_token
        self.negative_token = negative_token
        self.positive_id, self.negative_id = label_token_ids(
            self.tokenizer,
            positive_token,
            negative_token,
            " (try it with or without a leading space)",
        )
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id
        if pad is None:
            raise ValueError("the tokenizer has neither a pad token nor an eos token to pad with")
        self.pad_id = int(pad)
        self.eos_id = tokenizer.eos_token_id
        self.rationale = bool(rationale)
        self.template = template or PromptTemplate()
        self.max_rationale_tokens = int(max_rationale_tokens)
        limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        if limit is not None and max_length > limit:
            max_length = int(limit)
        min_length = 8 + (self.max_rationale_tokens if self.rationale else 0)
        if max_length < min_length:
            raise ValueError(f"max_length must be at least {min_length}, got {max_length}")
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.padding_side = padding_side
        if device is not None:
            self.model.to(device)
        self.model.eval()
        self.last_rationales: list[str] = []
        self._warned_cut = False
        self._supports_keep = True

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def tiny(
        cls,
        texts: Iterable[str],
        *,
        vocab_size: int = 1024,
        n_layer: int = 2,
        n_embd: int = 64,
        n_head: int = 2,
        n_positions: int = 1024,
        seed: int = 0,
        positive_token: str = " True",
        negative_token: str = " False",
        **kwargs: Any,
    ) -> TransformersPRM:
        """A PRM on a small GPT-2 built from a config, with a BPE tokenizer trained on
        ``texts``: no download, trains on a CPU (see :func:`build_tokenizer`,
        :func:`tiny_causal_lm`). Other keyword arguments go to the constructor."""
        tokenizer = build_tokenizer(
            texts, vocab_size, label_tokens=(positive_token, negative_token)
        )
        model = tiny_causal_lm(
            tokenizer,
            n_layer=n_layer,
            n_embd=n_embd,
            n_head=n_head,
            n_positions=n_positions,
            seed=seed,
        )
        kwargs.setdefault("max_length", n_positions)
        return cls(
            model,
            tokenizer,
            positive_token=positive_token,
            negative_token=negative_token,
            **kwargs,
        )

    # -- encoding --------------------------------------------------------------------------

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False)) if text else []

    def encode(self, query: PRMQuery, rationale_text: str | None = None) -> _Encoded:
        """Token ids of ``query``'s prompt, up to (not including) the label token.

        With ``rationale=True`` and ``rationale_text`` given, the rationale and the verdict
        marker follow the prompt (training, or scoring after generation); with
        ``rationale_text=None`` the ids end where the rationale is to be generated and room
        is kept for it.
        """
        suffix: list[int] = []
        reserve = 1  # the label position
        if self.rationale:
            verdict = self._ids(self.template.verdict_suffix())
            if rationale_text is None:
                reserve += self.max_rationale_tokens + len(verdict)
            else:
                suffix = self._ids(" " + rationale_text.strip()) + verdict
                reserve += len(suffix)
        # The screen is cut first; if the rest still does not fit, earlier actions are
        # dropped, oldest first, before anything else is cut.
        history = query.history
        while True:
            head, screen, tail = self.template.parts(
                replace(query, history=history),
                self.positive_token,
                self.negative_token,
                rationale=self.rationale,
            )
            head_ids = list(self.tokenizer.encode(head, add_special_tokens=True))
            tail_ids = self._ids(tail)
            if not history or len(head_ids) + len(tail_ids) + reserve <= self.max_length:
                break
            history = history[1:]
        screen_ids = self._ids(screen)
        budget = self.max_length - reserve - len(head_ids) - len(tail_ids)
        if len(screen_ids) > budget:
            screen_ids = screen_ids[: max(budget, 0)]
        prompt = head_ids + screen_ids + tail_ids
        ids = prompt + suffix
        if len(ids) + (reserve - len(suffix)) > self.max_length:
            # Even without a screen the question does not fit: keep its end (label side).
            if not self._warned_cut:
                warnings.warn(
                    f"PRM prompt longer than max_length={self.max_length} without its screen; "
                    "cutting its beginning",
                    stacklevel=3,
                )
                self._warned_cut = True
            keep = self.max_length - (reserve - len(suffix))
            cut = len(ids) - keep
            ids = ids[cut:]
            prompt = prompt[cut:] if cut < len(prompt) else []
        return _Encoded(ids=ids, lm_start=len(prompt))

    def _batch(self, sequences: Sequence[Sequence[int]], side: str) -> dict[str, Any]:
        torch = self._torch
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            if side == "left":
                ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
                mask[row, width - len(seq) :] = 1
            else:
                ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
                mask[row, : len(seq)] = 1
        # Explicit positions: a left-padded row must see the positions it would see alone.
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        device = self._device()
        return {
            "input_ids": ids.to(device),
            "attention_mask": mask.to(device),
            "position_ids": positions.to(device),
        }

    def _device(self) -> Any:
        try:
            return next(self.model.parameters()).device
        except StopIteration:  # a parameter-free test double
            return self._torch.device("cpu")

    # -- scoring ---------------------------------------------------------------------------

    def _logits(self, batch: dict[str, Any], keep: int) -> Any:
        """Logits of the last ``keep`` positions (all positions for ``keep=0``). Models that
        support ``logits_to_keep`` skip the vocabulary projection elsewhere, which is most
        of a small model's cost."""
        if keep and self._supports_keep:
            try:
                return self.model(**batch, logits_to_keep=keep).logits
            except TypeError:
                self._supports_keep = False
        logits = self.model(**batch).logits
        return logits[:, -keep:] if keep else logits

    def _label_logits(self, sequences: Sequence[Sequence[int]]) -> np.ndarray:
        """``(n, 2)`` logits ``[negative, positive]`` at the end of each sequence."""
        torch = self._torch
        out = np.empty((len(sequences), 2), dtype=np.float64)
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        pair = torch.tensor([self.negative_id, self.positive_id], dtype=torch.long)
        with torch.no_grad():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = self._batch([sequences[i] for i in chunk], self.padding_side)
                if self.padding_side == "left":
                    rows = self._logits(batch, keep=1)[:, -1]
                else:
                    logits = self._logits(batch, keep=0)
                    last = batch["attention_mask"].sum(-1) - 1
                    rows = logits[torch.arange(len(chunk), device=logits.device), last]
                values = rows[:, pair.to(rows.device)].float().cpu().numpy()
                out[chunk] = values
        if not np.isfinite(out).all():
            raise PRMOutputError(
                "the model produced non-finite label logits (NaN/inf): check its weights and dtype"
            )
        return out

    def _generate_rationales(self, encodings: Sequence[_Encoded]) -> list[str]:
        torch = self._torch
        texts: list[str] = [""] * len(encodings)
        marker = self.template.verdict_marker
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        with torch.no_grad():
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                batch = self._batch([encodings[i].ids for i in chunk], "left")
                batch.pop("position_ids")  # generate() derives them from the mask
                generated = self.model.generate(
                    **batch,
                    max_new_tokens=self.max_rationale_tokens,
                    do_sample=False,
                    pad_token_id=self.pad_id,
                    eos_token_id=self.eos_id,
                )
                new = generated[:, batch["input_ids"].shape[1] :].cpu().tolist()
                for row, i in enumerate(chunk):
                    tokens = [t for t in new[row] if t not in (self.pad_id, self.eos_id)]
                    text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                    texts[i] = text.split(marker, 1)[0].strip()
        return texts

    def label_logits(self, queries: Sequence[PRMQuery]) -> np.ndarray:
        """``(n, 2)`` float64 logits of ``[negative, positive]`` at each label position.

        With ``rationale=True`` a rationale is generated first (kept in
        ``last_rationales``).
        """
        queries = check_queries(queries)
        if not queries:
            self.last_rationales = []
            return np.empty((0, 2), dtype=np.float64)
        encodings = [self.encode(q) for q in queries]
        if self.rationale:
            rationales = self._generate_rationales(encodings)
            encodings = [self.encode(q, r) for q, r in zip(queries, rationales)]
            self.last_rationales = rationales
        else:
            self.last_rationales = [""] * len(queries)
        return self._label_logits([e.ids for e in encodings])

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """``p(pos) / (p(pos) + p(neg))`` for each query (float64 in [0, 1]); ``envs`` is
        ignored (this PRM reads text only).

        Raises:
            TypeError: when a query is not a :class:`PRMQuery`.
            PRMOutputError: when the model yields non-finite logits.
        """
        logits = self.label_logits(queries)
        return 1.0 / (1.0 + np.exp(logits[:, 0] - logits[:, 1]))

    def positive_logits(
        self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None
    ) -> np.ndarray:
        """The positive label token's logit for each query (float64): what GUI-Shepherd ranks
        best-of-N candidates by (Sec. 4.2, Alg. 2: "the PRM's output logit corresponding to
        'positive'"). It can order candidates differently from :meth:`score`: logits
        ``(neg, pos) = (4, 5)`` score 0.73 and ``(0, 3)`` scores 0.95, but 5 > 3.

        Raises:
            TypeError: when a query is not a :class:`PRMQuery`.
            PRMOutputError: when the model yields non-finite logits.
        """
        return self.label_logits(queries)[:, 1].copy()

    # -- training --------------------------------------------------------------------------

    def training_batch(
        self, steps: Sequence[LabelledStep], rationale_loss: bool = True, prompt_loss: bool = False
    ) -> dict:
        """Tensors for one supervised step: left-padded prompts (with rationales when the PRM
        uses them), so every row's label position is the last column; the labels; and
        next-token targets (``-100`` elsewhere) on the rationale and verdict tokens
        (``lm_targets``, when the PRM uses rationales and ``rationale_loss`` is set) and on
        the prompt tokens (``prompt_targets``, when ``prompt_loss`` is set).

        Raises:
            ValueError: when the PRM uses rationales and a step has none.
        """
        torch = self._torch
        sequences: list[list[int]] = []
        spans: list[int] = []
        for s in steps:
            if self.rationale:
                if not s.rationale:
                    raise ValueError(
                        f"a rationale PRM trains on steps with rationales; task {s.task_id!r} "
                        f"step {s.query.step} has none"
                    )
                enc = self.encode(s.query, s.rationale)
            else:
                enc = self.encode(s.query)
            sequences.append(enc.ids)
            spans.append(len(enc.ids) - enc.lm_start)  # rationale + verdict tokens at the end
        batch = self._batch(sequences, "left")
        ids = batch["input_ids"]
        lm_targets = torch.full_like(ids, -100)
        prompt_targets = torch.full_like(ids, -100)
        width = ids.shape[1]
        for row, (seq, span) in enumerate(zip(sequences, spans)):
            if self.rationale and rationale_loss and span:
                lm_targets[row, width - span :] = ids[row, width - span :]
            if prompt_loss:  # every prompt token but the first, which nothing predicts
                first = width - len(seq) + 1
                prompt_targets[row, first : width - span] = ids[row, first : width - span]
        batch["labels"] = torch.tensor(
            [s.label for s in steps], dtype=torch.long, device=ids.device
        )
        batch["lm_targets"] = lm_targets
        batch["prompt_targets"] = prompt_targets
        if prompt_loss:
            batch["keep"] = width
        else:
            batch["keep"] = 1 + (max(spans) if self.rationale and rationale_loss else 0)
        return batch

    def loss(
        self, batch: dict, rationale_weight: float = 1.0, prompt_weight: float = 0.0
    ) -> tuple[Any, Any]:
        """Cross-entropy over the two label tokens at the label position (GUI-Shepherd
        Eq. 2), plus ``rationale_weight`` times the next-token loss on the rationale and
        verdict tokens, plus ``prompt_weight`` times the next-token loss on the prompt (a
        stand-in for pretraining when the model starts from random weights), for the targets
        the batch has.

        Returns:
            ``(loss, label_logits)`` with ``label_logits`` of shape ``(batch, 2)``
            (``[negative, positive]``), for accuracy bookkeeping.
        """
        torch = self._torch
        keep = int(batch["keep"])
        inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "position_ids")}
        logits = self._logits(inputs, keep=keep)
        pair = logits[:, -1][:, [self.negative_id, self.positive_id]]
        loss = torch.nn.functional.cross_entropy(pair.float(), batch["labels"])
        for weight, name in ((rationale_weight, "lm_targets"), (prompt_weight, "prompt_targets")):
            targets = batch.get(name)
            if not weight or keep < 2 or targets is None:
                continue
            # the logits at column c predict the token at column c + 1
            targets = targets[:, -keep + 1 :]
            if bool((targets != -100).any()):
                lm = torch.nn.functional.cross_entropy(
                    logits[:, :-1].reshape(-1, logits.shape[-1]).float(),
                    targets.reshape(-1),
                    ignore_index=-100,
                )
                loss = loss + weight * lm
        return loss, pair.detach()

    # -- checkpoints -----------------------------------------------------------------------

    def config_dict(self) -> dict[str, Any]:
        """The PRM settings stored beside the weights (``prm.json``)."""
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "positive_token": self.positive_token,
            "negative_token": self.negative_token,
            "rationale": self.rationale,
            "max_length": self.max_length,
            "max_rationale_tokens": self.max_rationale_tokens,
            "template": self.template.to_dict(),
        }

    def save(self, path: str | Path) -> Path:
        """Write the model (safetensors), tokenizer and ``prm.json`` to the folder ``path``.

        The folder is built beside ``path`` and renamed into place, so a crash leaves the
        previous checkpoint or the new one, never a mix.

        Raises:
            FileExistsError: when ``path`` is a non-empty folder that is not a PRM
                checkpoint (its files would be deleted).
        """
        check_replaceable_folder(path, "prm.json", "PRM checkpoint")
        return write_folder_atomically(path, self.write_files)

    def write_files(self, folder: Path) -> None:
        """Write the checkpoint files into an existing ``folder`` (not atomic by itself)."""
        with library_bars_follow_the_rule():  # no "Writing model shards" bar in a log
            self.model.save_pretrained(folder, safe_serialization=True)
        self.tokenizer.save_pretrained(folder)
        (folder / "prm.json").write_text(json.dumps(self.config_dict(), indent=2) + "\n")

    @classmethod
    def load(
        cls, path: str | Path, *, device: str | None = None, **overrides: Any
    ) -> TransformersPRM:
        """Load a folder written by :meth:`save` (or any local causal LM folder with
        safetensors weights; then pass the label tokens in ``overrides``).

        Never unpickles: weights are read from safetensors only.

        A vision-language model folder (one with a processor config) loads as a
        :class:`~gui_gym.models.prm.vision_prm.VisionPRM`.

        Raises:
            FileNotFoundError: when the folder or its safetensors weights are missing.
            ValueError: when ``prm.json`` is not a gui-gym PRM config.
        """
        transformers = _transformers()
        path = Path(path)
        if not path.is_dir():
            raise FileNotFoundError(f"no PRM checkpoint folder at {path}")
        from gui_gym.models.prm.vision_prm import VisionPRM, has_processor

        if has_processor(path):  # an image-text model: GUI-Shepherd's VLM PRM
            return VisionPRM.load(path, device=device, **overrides)  # type: ignore[return-value]
        if not any(path.glob("*.safetensors")):
            raise FileNotFoundError(
                f"{path} has no .safetensors weights (pickled checkpoints are not loaded)"
            )
        settings: dict[str, Any] = {}
        data = read_prm_config(
            path / "prm.json",
            CHECKPOINT_FORMAT,
            ("positive_token", "negative_token", "rationale", "max_length", "max_rationale_tokens"),
            version=CHECKPOINT_VERSION,
        )
        if data is not None:
            settings = {
                "positive_token": data["positive_token"],
                "negative_token": data["negative_token"],
                "rationale": bool(data["rationale"]),
                "max_length": int(data["max_length"]),
                "max_rationale_tokens": int(data["max_rationale_tokens"]),
                "template": PromptTemplate.from_dict(data["template"]),
            }
        settings.update(overrides)
        with errors_naming(path):
            tokenizer = transformers.AutoTokenizer.from_pretrained(path)
            with library_bars_follow_the_rule():
                model = transformers.AutoModelForCausalLM.from_pretrained(
                    path, use_safetensors=True
                )
        return cls(model, tokenizer, device=device, **settings)
