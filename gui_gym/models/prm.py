"""Process reward models (GUI-Shepherd): scorers of one step ``(instruction, state, action)``.

Every scorer implements :class:`ProcessRewardModel`: ``score(queries, envs=None)`` returns,
for each :class:`~gui_gym.rewards.prm.PRMQuery`, the probability in [0, 1] that its action
is correct. Three are provided:

* :class:`TransformersPRM`: a causal LM read at the label position. GUI-Shepherd maps the
  positive and negative labels to two tokens of the vocabulary and trains with cross-entropy
  over them (Sec. 3, Eq. 2; App. A.3 uses ``True``/``False``), so the score is
  ``p(pos) / (p(pos) + p(neg)) = sigmoid(logit_pos - logit_neg)``. Optionally the model first
  writes a rationale (the paper's CoT variant) and the label is read after it. Scoring is
  batched with explicit position ids, so a score does not depend on batch size or padding
  side. Checkpoints are safetensors.
* :class:`RulePRM`: a reference judge from the task's expert and env milestones (an action is
  correct when it is the expert's or when it reaches a new milestone or success). It needs the
  env in the state before the action (``requires_env``).
* :class:`OpenAICompatPRM`: any OpenAI-compatible server (vLLM, ...), reading the two label
  tokens' log-probabilities from the completion (GUI-Shepherd serves its PRM with vLLM, App.
  B.2). Bad responses (no logprobs, no label token, timeouts) give a clear error, or, by
  default, a documented neutral score with a warning, so a rollout never dies mid-episode.

torch, transformers and openai are imported inside the classes that need them.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from gui_gym.core.actions import ActionParseError, parse_action
from gui_gym.core.files import write_folder_atomically
from gui_gym.core.trajectory import check_replaceable_folder, errors_naming
from gui_gym.rewards.prm import LabelledStep, PRMQuery, PromptTemplate

__all__ = [
    "OpenAICompatPRM",
    "PRMOutputError",
    "PRMResponseWarning",
    "ProcessRewardModel",
    "RulePRM",
    "TransformersPRM",
    "build_tokenizer",
    "tiny_causal_lm",
    "verification_scores",
    "write_folder_atomically",
]

CHECKPOINT_FORMAT = "gui-gym/prm"
CHECKPOINT_VERSION = 1


class PRMOutputError(RuntimeError):
    """A PRM produced something that is not a usable score (non-finite logits, a server
    response without the label tokens' log-probabilities, a timeout)."""


class PRMResponseWarning(UserWarning):
    """A PRM server response was unusable and a neutral score was used instead."""


@runtime_checkable
class ProcessRewardModel(Protocol):
    """Scores steps: the probability in [0, 1] that each query's action is correct.

    ``requires_env`` is True for scorers that inspect the environment (rule-based ones); they
    are then given, aligned with ``queries``, envs in the state *before* each action, which
    they must not change (fork them instead).
    """

    requires_env: bool

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """One float64 score in [0, 1] per query."""
        ...


def _check_queries(queries: Sequence[PRMQuery]) -> list[PRMQuery]:
    if isinstance(queries, PRMQuery):
        raise TypeError("score() takes a sequence of PRMQuery; wrap a single query in a list")
    out = list(queries)
    for i, q in enumerate(out):
        if not isinstance(q, PRMQuery):
            raise TypeError(f"queries[{i}] is a {type(q).__name__}, expected a PRMQuery")
    return out


def verification_scores(
    prm: ProcessRewardModel, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None
) -> np.ndarray:
    """What best-of-N ranks candidates by, following GUI-Shepherd (Sec. 4.2, Alg. 2): the
    positive label's logit where the PRM exposes it (``prm.positive_logits``, as
    :class:`TransformersPRM` does), else its score. A server PRM (:class:`OpenAICompatPRM`)
    returns log-probabilities, not logits, and :class:`RulePRM` has no logits: both rank by
    :meth:`ProcessRewardModel.score`.
    """
    positive_logits = getattr(prm, "positive_logits", None)
    if callable(positive_logits):
        return np.asarray(positive_logits(queries, envs=envs), dtype=np.float64)
    return np.asarray(prm.score(queries, envs=envs), dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Rule-based reference


class RulePRM:
    """The reference judge: the task's expert and the env's milestones decide.

    An action scores ``oracle_score`` when it equals the expert's action in that state
    (canonical action strings), ``milestone_score`` when, tried on a fork of the env, it
    completes the task or reaches a milestone not reached before, and ``other_score``
    otherwise (including actions that do not parse or that the env rejects). These are the
    same rules that label the training data (:mod:`gui_gym.models.prm_training`), so a
    learned PRM is measured against them.

    Args:
        oracle_score: Score of the expert's action.
        milestone_score: Score of another action that makes env progress.
        other_score: Score of any other action.

    Raises:
        ValueError: when a score is outside [0, 1].
    """

    requires_env = True

    def __init__(
        self, oracle_score: float = 1.0, milestone_score: float = 1.0, other_score: float = 0.0
    ):
        for name, value in (
            ("oracle_score", oracle_score),
            ("milestone_score", milestone_score),
            ("other_score", other_score),
        ):
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {value!r}")
        self.oracle_score = float(oracle_score)
        self.milestone_score = float(milestone_score)
        self.other_score = float(other_score)
        self.last_reasons: list[str] = []

    def judge(self, query: PRMQuery, env: Any) -> tuple[float, str]:
        """Score one step and say why (``"expert"``, ``"milestone"``, ``"success"``,
        ``"unparsable"``, ``"rejected"`` or ``"no progress"``).

        Raises:
            TypeError: when ``env`` is not a gui-gym env with ``oracle_action`` and ``fork``.
        """
        base = getattr(env, "unwrapped", env)
        if not (hasattr(base, "oracle_action") and hasattr(base, "fork")):
            raise TypeError(
                f"RulePRM needs a gui-gym env (oracle_action() and fork()), got {type(env).__name__}"
            )
        try:
            action = parse_action(query.action)
        except ActionParseError:
            return self.other_score, "unparsable"
        if str(action) == str(base.oracle_action()):
            return self.oracle_score, "expert"
        probe = base.fork()
        before = set(probe.milestones)
        _, _, _, _, info = probe.step(action)
        if not info["action_valid"]:
            return self.other_score, "rejected"
        if info["success"]:
            return self.milestone_score, "success"
        if set(info["milestones"]) - before:
            return self.milestone_score, "milestone"
        return self.other_score, "no progress"

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """Scores of ``queries``, each judged in its env (state before the action).

        Raises:
            ValueError: when ``envs`` is missing or not aligned with ``queries``.
        """
        queries = _check_queries(queries)
        if envs is None:
            raise ValueError(
                "RulePRM judges with the env's expert and milestones: pass envs=[env, ...] "
                "(the env in the state before each action)"
            )
        envs = list(envs)
        if len(envs) != len(queries):
            raise ValueError(f"got {len(envs)} envs for {len(queries)} queries")
        results = [self.judge(q, e) for q, e in zip(queries, envs)]
        self.last_reasons = [reason for _, reason in results]
        return np.array([s for s, _ in results], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Local causal LM


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            f"TransformersPRM needs torch ({err}); pip install 'gui-gym[llm]'"
        ) from err
    return torch


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            f"TransformersPRM needs transformers ({err}); pip install 'gui-gym[llm]'"
        ) from err
    return transformers


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
        self.positive_id = self._single_token_id(positive_token, "positive_token")
        self.negative_id = self._single_token_id(negative_token, "negative_token")
        if self.positive_id == self.negative_id:
            raise ValueError(
                f"positive_token {positive_token!r} and negative_token {negative_token!r} "
                f"are the same token (id {self.positive_id})"
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

    def _single_token_id(self, text: str, name: str) -> int:
        if not isinstance(text, str) or not text:
            raise ValueError(f"{name} must be a non-empty string, got {text!r}")
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(
                f"{name} {text!r} is {len(ids)} tokens {ids} in this tokenizer; the label must be "
                "exactly one token (try it with or without a leading space)"
            )
        return int(ids[0])

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
        queries = _check_queries(queries)
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

        Raises:
            FileNotFoundError: when the folder or its safetensors weights are missing.
            ValueError: when ``prm.json`` is not a gui-gym PRM config.
        """
        transformers = _transformers()
        path = Path(path)
        if not path.is_dir():
            raise FileNotFoundError(f"no PRM checkpoint folder at {path}")
        if not any(path.glob("*.safetensors")):
            raise FileNotFoundError(
                f"{path} has no .safetensors weights (pickled checkpoints are not loaded)"
            )
        settings: dict[str, Any] = {}
        config_file = path / "prm.json"
        if config_file.exists():
            try:
                data = json.loads(config_file.read_text())
            except json.JSONDecodeError as err:
                raise ValueError(f"{config_file}: not valid JSON ({err})") from None
            if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
                raise ValueError(f"{config_file}: not a {CHECKPOINT_FORMAT} config")
            if data.get("version") != CHECKPOINT_VERSION:
                raise ValueError(
                    f"{config_file}: version {data.get('version')!r}, expected {CHECKPOINT_VERSION}"
                )
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
            model = transformers.AutoModelForCausalLM.from_pretrained(path, use_safetensors=True)
        return cls(model, tokenizer, device=device, **settings)


# ---------------------------------------------------------------------------------------------
# OpenAI-compatible server


class OpenAICompatPRM:
    """A PRM served by any OpenAI-compatible endpoint, scored from token log-probabilities.

    The prompt (same template as :class:`TransformersPRM`) is sent to ``/completions``
    (``api="completions"``, batched: one request per ``batch_size`` prompts) or
    ``/chat/completions`` (``api="chat"``, one request per prompt, ``concurrency`` at a
    time) with ``temperature=0`` and the top ``top_logprobs`` log-probabilities per token.
    At the label position, the probabilities of all returned token variants whose text,
    stripped of spaces, equals a label are summed: ``p_pos`` and ``p_neg``; the score is
    ``p_pos / (p_pos + p_neg)``. When only one label is among the top tokens, the other is
    bounded by the smallest listed probability and that bound is used (a conservative
    score). The label position is the first generated token without a rationale, and the
    first label token after the verdict marker with one.

    Bad responses: a timeout, a connection or HTTP error, a missing ``logprobs`` field, or
    no label token at the label position. With ``on_error="raise"`` they raise
    :class:`PRMOutputError`; with ``on_error="neutral"`` (default) the query gets
    ``neutral_score`` (0.5: no preference), a :class:`PRMResponseWarning` is issued, and the
    reason is kept in ``last_errors`` (the wrapper shows it in ``info["prm"]``), so a
    rollout is never interrupted by the server.

    Args:
        model: Model name on the server.
        base_url: Server URL including ``/v1`` (e.g. ``http://localhost:8000/v1``).
        api_key: Key sent to the server (``"EMPTY"`` for local vLLM).
        api: ``"completions"`` or ``"chat"``.
        positive_token, negative_token: Label texts (matched after stripping spaces).
        rationale: Let the model reason before the label.
        template: The prompt template.
        max_rationale_tokens: Completion budget with a rationale.
        top_logprobs: How many alternatives per token to ask for (the API allows up to 20).
        timeout: Seconds per request.
        max_retries: Retries of the client on connection errors and 5xx.
        batch_size: Prompts per ``/completions`` request.
        concurrency: Parallel ``/chat/completions`` requests.
        on_error: ``"neutral"`` or ``"raise"``.
        neutral_score: Score of a query whose response was unusable.
        client: An ``openai.OpenAI`` client to use instead of building one.

    Raises:
        ValueError: for bad arguments.
        gymnasium.error.DependencyNotInstalled: without the ``openai`` package.
    """

    requires_env = False

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str = "EMPTY",
        *,
        api: str = "completions",
        positive_token: str = " True",
        negative_token: str = " False",
        rationale: bool = False,
        template: PromptTemplate | None = None,
        max_rationale_tokens: int = 256,
        top_logprobs: int = 20,
        timeout: float = 30.0,
        max_retries: int = 2,
        batch_size: int = 16,
        concurrency: int = 8,
        on_error: str = "neutral",
        neutral_score: float = 0.5,
        client: Any = None,
    ):
        if api not in ("completions", "chat"):
            raise ValueError(f"api must be 'completions' or 'chat', got {api!r}")
        if on_error not in ("neutral", "raise"):
            raise ValueError(f"on_error must be 'neutral' or 'raise', got {on_error!r}")
        if not 0.0 <= neutral_score <= 1.0:
            raise ValueError(f"neutral_score must be in [0, 1], got {neutral_score!r}")
        if not 1 <= top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be in 1..20, got {top_logprobs}")
        if positive_token.strip() == negative_token.strip() or not positive_token.strip():
            raise ValueError(
                f"positive_token {positive_token!r} and negative_token {negative_token!r} "
                "must be distinct, non-blank texts"
            )
        if batch_size < 1 or concurrency < 1 or timeout <= 0:
            raise ValueError("batch_size and concurrency must be >= 1 and timeout > 0")
        if client is None:
            try:
                import openai
            except ImportError as err:
                import gymnasium as gym

                raise gym.error.DependencyNotInstalled(
                    f"OpenAICompatPRM needs the openai package ({err}); pip install 'gui-gym[llm]'"
                ) from err
            client = openai.OpenAI(
                base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
            )
        self.client = client
        self.model = model
        self.api = api
        self.positive_token = positive_token
        self.negative_token = negative_token
        self.rationale = bool(rationale)
        self.template = template or PromptTemplate()
        self.max_rationale_tokens = int(max_rationale_tokens)
        self.top_logprobs = int(top_logprobs)
        self.batch_size = int(batch_size)
        self.concurrency = int(concurrency)
        self.on_error = on_error
        self.neutral_score = float(neutral_score)
        self.last_errors: list[str | None] = []
        self.last_rationales: list[str] = []

    def prompt(self, query: PRMQuery) -> str:
        """The text sent for ``query``."""
        return self.template.render(
            query, self.positive_token, self.negative_token, rationale=self.rationale
        )

    # -- response parsing ------------------------------------------------------------------

    def _label_probability(
        self, tokens: list[str], tops: list[dict[str, float]]
    ) -> tuple[float, str]:
        """``(score, rationale)`` from one completion's tokens and top log-probabilities.

        Raises:
            PRMOutputError: when no label token is found where the label should be.
        """
        pos, neg = self.positive_token.strip(), self.negative_token.strip()
        if not tokens:
            raise PRMOutputError("the completion has no tokens")
        index = 0
        if self.rationale:
            marker = self.template.verdict_marker.strip()
            text = ""
            index = -1
            for i, tok in enumerate(tokens):
                if tok.strip() in (pos, neg) and text.rstrip().endswith(marker):
                    index = i
                    break
                text += tok
            if index < 0:
                raise PRMOutputError(
                    f"no {pos!r}/{neg!r} token after {marker!r} in the completion "
                    f"{''.join(tokens)[:200]!r}"
                )
        top = tops[index] if index < len(tops) else None
        if not top:
            raise PRMOutputError(f"no top log-probabilities at the label position {index}")
        p_pos = sum(math.exp(lp) for t, lp in top.items() if t.strip() == pos)
        p_neg = sum(math.exp(lp) for t, lp in top.items() if t.strip() == neg)
        if p_pos == 0.0 and p_neg == 0.0:
            listed = ", ".join(repr(t) for t in list(top)[:8])
            raise PRMOutputError(
                f"neither {pos!r} nor {neg!r} among the top tokens at the label position "
                f"({listed}); is the server running a PRM with these label tokens?"
            )
        floor = min(math.exp(lp) for lp in top.values())
        if p_pos == 0.0:
            p_pos = floor
        if p_neg == 0.0:
            p_neg = floor
        rationale = "".join(tokens[:index]).split(self.template.verdict_marker)[0].strip()
        return p_pos / (p_pos + p_neg), rationale

    @staticmethod
    def _completion_logprobs(choice: Any) -> tuple[list[str], list[dict[str, float]]]:
        logprobs = getattr(choice, "logprobs", None)
        if logprobs is None:
            raise PRMOutputError("the response has no logprobs (does the server support them?)")
        tokens = getattr(logprobs, "tokens", None)
        tops = getattr(logprobs, "top_logprobs", None)
        if not tokens or tops is None:
            raise PRMOutputError("the response's logprobs lack tokens or top_logprobs")
        clean: list[dict[str, float]] = []
        for top in tops:
            if top is None:
                clean.append({})
                continue
            if not isinstance(top, dict):
                raise PRMOutputError(
                    f"top_logprobs entries must be objects, got {type(top).__name__}"
                )
            clean.append({str(k): _finite_logprob(v) for k, v in top.items()})
        return [str(t) for t in tokens], clean

    @staticmethod
    def _chat_logprobs(choice: Any) -> tuple[list[str], list[dict[str, float]]]:
        logprobs = getattr(choice, "logprobs", None)
        content = getattr(logprobs, "content", None) if logprobs is not None else None
        if not content:
            raise PRMOutputError(
                "the response has no logprobs.content (does the server support logprobs?)"
            )
        tokens: list[str] = []
        tops: list[dict[str, float]] = []
        for entry in content:
            tokens.append(str(entry.token))
            alternatives = {
                str(a.token): _finite_logprob(a.logprob) for a in (entry.top_logprobs or [])
            }
            alternatives.setdefault(str(entry.token), _finite_logprob(entry.logprob))
            tops.append(alternatives)
        return tokens, tops

    # -- requests --------------------------------------------------------------------------

    def _max_tokens(self) -> int:
        return self.max_rationale_tokens + 8 if self.rationale else 1

    def _complete_batch(self, prompts: list[str]) -> list[tuple[float, str] | PRMOutputError]:
        try:
            response = self.client.completions.create(
                model=self.model,
                prompt=prompts,
                max_tokens=self._max_tokens(),
                temperature=0.0,
                logprobs=self.top_logprobs,
            )
            choices = sorted(response.choices, key=lambda c: c.index)
            if len(choices) != len(prompts):
                raise PRMOutputError(f"asked {len(prompts)} prompts, got {len(choices)} choices")
        except Exception as err:
            return [_as_output_error(err)] * len(prompts)
        results: list[tuple[float, str] | PRMOutputError] = []
        for choice in choices:
            try:
                results.append(self._label_probability(*self._completion_logprobs(choice)))
            except PRMOutputError as err:
                results.append(err)
        return results

    def _chat_one(self, prompt: str) -> tuple[float, str] | PRMOutputError:
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                max_tokens=self._max_tokens(),
                temperature=0.0,
                logprobs=True,
                top_logprobs=self.top_logprobs,
            )
            if not response.choices:
                raise PRMOutputError("the response has no choices")
            return self._label_probability(*self._chat_logprobs(response.choices[0]))
        except Exception as err:
            return _as_output_error(err)

    def score(self, queries: Sequence[PRMQuery], envs: Sequence[Any] | None = None) -> np.ndarray:
        """Scores in [0, 1]; see the class docstring for bad responses.

        Raises:
            PRMOutputError: for an unusable response when ``on_error="raise"``.
        """
        queries = _check_queries(queries)
        prompts = [self.prompt(q) for q in queries]
        results: list[tuple[float, str] | PRMOutputError] = []
        if self.api == "completions":
            for start in range(0, len(prompts), self.batch_size):
                results.extend(self._complete_batch(prompts[start : start + self.batch_size]))
        elif prompts:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(prompts))) as pool:
                results = list(pool.map(self._chat_one, prompts))
        scores = np.empty(len(prompts), dtype=np.float64)
        self.last_errors = []
        self.last_rationales = []
        for i, result in enumerate(results):
            if isinstance(result, PRMOutputError):
                if self.on_error == "raise":
                    raise result
                warnings.warn(
                    f"PRM server response unusable ({result}); using neutral score "
                    f"{self.neutral_score}",
                    PRMResponseWarning,
                    stacklevel=2,
                )
                scores[i] = self.neutral_score
                self.last_errors.append(str(result))
                self.last_rationales.append("")
            else:
                scores[i] = result[0]
                self.last_errors.append(None)
                self.last_rationales.append(result[1])
        return scores


def _finite_logprob(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PRMOutputError(f"log-probability {value!r} is not a number") from None
    if math.isnan(number) or number > 1e-6:
        raise PRMOutputError(f"log-probability {value!r} is not <= 0")
    return number


def _as_output_error(err: Exception) -> PRMOutputError:
    if isinstance(err, PRMOutputError):
        return err
    name = type(err).__name__
    with contextlib.suppress(ImportError):
        import openai

        if isinstance(err, openai.APITimeoutError):
            return PRMOutputError(f"PRM server timed out ({name})")
        if isinstance(err, openai.APIConnectionError):
            return PRMOutputError(f"cannot reach the PRM server ({name}: {err})")
        if isinstance(err, openai.APIStatusError):
            return PRMOutputError(f"PRM server answered HTTP {err.status_code} ({name})")
        if isinstance(err, openai.APIResponseValidationError):
            return PRMOutputError(f"PRM server sent a malformed response ({name})")
        if isinstance(err, openai.OpenAIError):
            return PRMOutputError(f"PRM request failed ({name}: {err})")
    if isinstance(err, AttributeError | TypeError | KeyError | ValueError):
        return PRMOutputError(f"malformed PRM server response ({name}: {err})")
    raise err
