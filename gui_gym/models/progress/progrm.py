"""ProgRM, the learned progress model: a transformers backbone, an MLP head and a sigmoid,
trained with binary cross-entropy on progress labels (ProgRM Sec. 2.3, Eq. 5). Trained on
final-step success only it is the ORM baseline. Its trainer is
:mod:`gui_gym.train.progress_model`.

torch, transformers, tokenizers and safetensors are imported inside the functions that need
them (``pip install 'gui-gym[llm]'``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gui_gym.core.files import write_folder_atomically
from gui_gym.core.trajectory import check_replaceable_folder, errors_naming
from gui_gym.core.untrusted_text import load_json
from gui_gym.models.progress.protocol import ProgressQuery, format_state

if TYPE_CHECKING:
    import torch

__all__ = [
    "KINDS",
    "ProgRM",
    "build_word_tokenizer",
    "tiny_backbone_config",
]

CHECKPOINT_FORMAT = "gui-gym/progress-model"
CHECKPOINT_VERSION = 1


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        import gymnasium as gym

        raise gym.error.DependencyNotInstalled(
            f"the learned progress model needs {module} ({err}); pip install 'gui-gym[llm]'"
        ) from err


SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[EOS]")


def build_word_tokenizer(
    texts: Iterable[str], vocab_size: int = 4000, min_frequency: int = 1
) -> Any:
    """A small word-level tokenizer trained on ``texts`` (lower-cased words and punctuation),
    wrapped as a ``transformers.PreTrainedTokenizerFast``. Every encoding ends with ``[EOS]``,
    which last-token pooling reads.

    Args:
        texts: Training texts (e.g. ``format_state`` of the training queries).
        vocab_size: Largest vocabulary, special tokens included.
        min_frequency: Fewest occurrences for a word to get its own id.

    Raises:
        ValueError: if ``vocab_size`` is too small for the special tokens.
    """
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed {len(SPECIAL_TOKENS)}, got {vocab_size}")
    tokenizers = _require("tokenizers")
    transformers = _require("transformers")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.Lowercase()
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS)
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
        single="$A [EOS]", special_tokens=[("[EOS]", tokenizer.token_to_id("[EOS]"))]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]"
    )


def tiny_backbone_config(
    vocab_size: int,
    kind: str = "gpt2",
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    max_positions: int = 512,
) -> Any:
    """A small transformers config to train from scratch on CPU (tests, benchmarks).

    Args:
        vocab_size: The tokenizer's vocabulary size.
        kind: ``"gpt2"`` (decoder, as the paper's LLM backbone) or ``"bert"`` (encoder).
        hidden: Hidden size.
        layers: Transformer layers.
        heads: Attention heads.
        max_positions: Longest input.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    transformers = _require("transformers")
    if kind == "gpt2":
        return transformers.GPT2Config(
            vocab_size=vocab_size,
            n_embd=hidden,
            n_layer=layers,
            n_head=heads,
            n_positions=max_positions,
            bos_token_id=None,
            eos_token_id=None,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
        )
    if kind == "bert":
        return transformers.BertConfig(
            vocab_size=vocab_size,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            max_position_embeddings=max_positions,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    raise ValueError(f"kind must be 'gpt2' or 'bert', got {kind!r}")


_NETWORK_CLASS: Any = None


def _network_class() -> Any:
    """The torch module (defined on first use so that importing this file needs no torch)."""
    global _NETWORK_CLASS
    if _NETWORK_CLASS is not None:
        return _NETWORK_CLASS
    torch = _require("torch")

    class ProgressNetwork(torch.nn.Module):
        """Backbone, pooled hidden state, MLP, one logit; ``sigmoid(logit)`` is Prog."""

        def __init__(self, backbone: Any, mlp_hidden: int, pooling: str):
            super().__init__()
            self.backbone = backbone
            self.pooling = pooling
            width = int(backbone.config.hidden_size)
            self.head = torch.nn.Sequential(
                torch.nn.Linear(width, mlp_hidden),
                torch.nn.GELU(),
                torch.nn.Linear(mlp_hidden, 1),
            )

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.backbone(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            if self.pooling == "mean":
                weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
            else:  # last real token (inputs are right-padded)
                last = attention_mask.sum(1).clamp(min=1) - 1
                pooled = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
            return self.head(pooled).squeeze(-1)

    _NETWORK_CLASS = ProgressNetwork
    return ProgressNetwork


KINDS = ("progrm", "orm")
"""What a :class:`ProgRM` is trained as: a progress model or the ORM baseline."""
_POOLINGS = ("last", "mean")


class ProgRM:
    """The learned progress model: ``Prog([g, s]) = sigmoid(MLP(LLM([g, s])))`` (ProgRM Eq. 5).

    Use :meth:`from_config` for a backbone built from a config (trained from scratch),
    :meth:`from_pretrained_backbone` for local pretrained weights, :meth:`load` for a saved
    model. ``kind="orm"`` marks the same model trained as an outcome reward model.

    Args:
        backbone: A transformers base model (``AutoModel``) returning ``last_hidden_state``.
        tokenizer: Its tokenizer (a pad token is set from EOS when missing).
        kind: ``"progrm"`` or ``"orm"`` (recorded in checkpoints).
        mlp_hidden: Width of the MLP head (default: the backbone's hidden size).
        pooling: ``"last"`` (last real token, as LLM reward heads do) or ``"mean"``.
        max_length: Tokens kept per state (the end of the screen is cut first).
        device: Torch device (default: CUDA when available, else CPU).

    Raises:
        ValueError: on an unknown kind or pooling, or a bad ``max_length``.
    """

    def __init__(
        self,
        backbone: Any,
        tokenizer: Any,
        *,
        kind: str = "progrm",
        mlp_hidden: int | None = None,
        pooling: str = "last",
        max_length: int = 384,
        device: str | None = None,
    ):
        torch = _require("torch")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if pooling not in _POOLINGS:
            raise ValueError(f"pooling must be one of {_POOLINGS}, got {pooling!r}")
        if not isinstance(max_length, int) or max_length < 2:
            raise ValueError(f"max_length must be an int >= 2, got {max_length!r}")
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                raise ValueError("the tokenizer has neither a pad nor an eos token")
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "right"
        self.kind = kind
        self.pooling = pooling
        self.max_length = max_length
        self.mlp_hidden = int(mlp_hidden or backbone.config.hidden_size)
        self.tokenizer = tokenizer
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.network = _network_class()(backbone, self.mlp_hidden, pooling).to(self.device)

    # ------------------------------------------------------------------------ construction

    @classmethod
    def from_config(cls, config: Any, tokenizer: Any, **kwargs: Any) -> ProgRM:
        """A model whose backbone is built (randomly initialised) from a transformers config."""
        transformers = _require("transformers")
        return cls(transformers.AutoModel.from_config(config), tokenizer, **kwargs)

    @classmethod
    def from_pretrained_backbone(cls, path: str | Path, **kwargs: Any) -> ProgRM:
        """A model on pretrained weights from a local folder (no download is attempted).

        Raises:
            OSError: if the folder holds no model or tokenizer.
        """
        transformers = _require("transformers")
        backbone = transformers.AutoModel.from_pretrained(str(path), local_files_only=True)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        return cls(backbone, tokenizer, **kwargs)

    # -------------------------------------------------------------------------- inference

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """Tokenize, truncate to ``max_length`` and right-pad ``texts`` as tensors."""
        batch = self.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        return {
            "input_ids": batch["input_ids"].to(self.device),
            "attention_mask": batch["attention_mask"].to(self.device),
        }

    def predict(self, queries: Sequence[ProgressQuery], batch_size: int = 32) -> np.ndarray:
        """Progress in ``[0, 1]`` for each query (no gradients, eval mode)."""
        torch = _require("torch")
        if not queries:
            return np.zeros(0, dtype=np.float64)
        texts = [format_state(q) for q in queries]
        out = np.empty(len(texts), dtype=np.float64)
        was_training = self.network.training
        self.network.eval()
        try:
            with torch.no_grad():
                for start in range(0, len(texts), batch_size):
                    batch = self.encode(texts[start : start + batch_size])
                    logits = self.network(**batch)
                    out[start : start + len(logits)] = torch.sigmoid(logits).double().cpu().numpy()
        finally:
            self.network.train(was_training)
        return out

    # --------------------------------------------------------------------- save and load

    def _meta(self) -> dict[str, Any]:
        config = self.network.backbone.config
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "kind": self.kind,
            "pooling": self.pooling,
            "max_length": self.max_length,
            "mlp_hidden": self.mlp_hidden,
            "backbone_config": config.to_dict(),
        }

    def _write(self, folder: Path) -> None:
        """Write the model's files into an existing (temporary) folder."""
        safetensors_torch = _require("safetensors.torch")
        safetensors_torch.save_model(self.network, str(folder / "model.safetensors"))
        self.tokenizer.save_pretrained(str(folder / "tokenizer"))
        (folder / "progress_model.json").write_text(
            json.dumps(self._meta(), indent=2, sort_keys=True), encoding="utf-8"
        )

    def save(self, path: str | Path) -> Path:
        """Save to the folder ``path`` (weights as safetensors, tokenizer, JSON metadata).

        The files are written to a temporary sibling folder that is then renamed into place;
        an existing folder at ``path`` is replaced only once the new one is complete.

        Raises:
            FileExistsError: when ``path`` is a non-empty folder that is not a progress-model
                checkpoint (its files would be deleted).
        """
        path = Path(path)
        check_replaceable_folder(path, "progress_model.json", "progress-model checkpoint")
        write_folder_atomically(path, self._write)
        return path

    @classmethod
    def load(cls, path: str | Path, device: str | None = None) -> ProgRM:
        """Load a model saved by :meth:`save`.

        Raises:
            FileNotFoundError: if ``path`` holds no saved model.
            ValueError: if its metadata is not a progress-model checkpoint.
        """
        transformers = _require("transformers")
        safetensors_torch = _require("safetensors.torch")
        path = Path(path)
        meta_path = path / "progress_model.json"
        if not meta_path.is_file():
            raise FileNotFoundError(f"{path} holds no progress model (no progress_model.json)")
        with errors_naming(meta_path):
            meta = load_json(meta_path.read_bytes())
        if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
            raise ValueError(f"{meta_path}: not a {CHECKPOINT_FORMAT} checkpoint")
        if meta.get("version") != CHECKPOINT_VERSION:
            raise ValueError(f"{meta_path}: unsupported version {meta.get('version')!r}")
        backbone_config = dict(meta["backbone_config"])
        model_type = backbone_config.pop("model_type")
        config = transformers.AutoConfig.for_model(model_type, **backbone_config)
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            str(path / "tokenizer"), local_files_only=True
        )
        model = cls.from_config(
            config,
            tokenizer,
            kind=meta["kind"],
            mlp_hidden=meta["mlp_hidden"],
            pooling=meta["pooling"],
            max_length=meta["max_length"],
            device=device,
        )
        with errors_naming(path / "model.safetensors"):
            safetensors_torch.load_model(
                model.network,
                str(path / "model.safetensors"),
                strict=True,
                device=str(model.device),
            )
        return model
